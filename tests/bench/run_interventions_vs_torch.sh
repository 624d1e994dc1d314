#!/bin/bash
# Interventions (issue 43, "Speed"): on a SmolLM2-135M-shaped BF16 checkpoint at 32 tokens, the zero ablation of
# each head alone (270 re-runs), the heads patching sweep (270 cells) and the layers x positions residual patching
# sweep (960 cells), in the engine (bench_interventions: TransformerRunner::rerun_cells, which recomputes nothing
# before a cell's patched layer nor, in a decoder, before its patched position, and stacks the rows of a batch of
# cells into one product per weight and layer) and in torch the TransformerLens
# way (torch_interventions_peer.py: a full forward with hooks per cell under torch.no_grad), on the same file, in the
# same run, with the same thread count; both sides' metric values compared. Then the engine alone: one ablated
# re-run after a click on GPT-2 small's shape at 128 tokens (head 0 of layer 0, 5, 11 zeroed).
#
#   tests/bench/run_interventions_vs_torch.sh <build-dir> [rounds]
#
# Builds nothing: <build-dir> must hold tests/bench/bench_interventions, and the SmolLM2 checkpoint must exist
# (`bench_decoder --prepare` writes it under $ATTN_BENCH_DIR, default /tmp/attnscope-bench; the GPT-2 one is written
# by bench_interventions when missing). Torch, engine, torch, engine, ... (`rounds` times each, default 1: a round of
# each side takes minutes); each side runs each sweep ATTN_BENCH_REPETITIONS times (default 3) per round
# (--benchmark_repetitions; one iteration is a whole sweep); the medians of all samples are compared.
# Targets (the issue): each sweep at least 3x faster than torch; the ablated re-run's layer in view under 100 ms.
# ATTN_BENCH_CELLS=N (SMOKE RUNS ONLY) stops every sweep of both sides after its first N cells (those of layer 0,
# the slowest); the output then says the figures are not the issue's.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 <build-dir> [rounds]" >&2
  exit 2
fi
BUILD_DIR=$1
ROUNDS=${2:-1}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)  # the torch peer runs from here as a module: it imports the tools package
BENCH="$BUILD_DIR/tests/bench/bench_interventions"
PY=/usr/bin/python3  # Debian's python3-torch lives here
# Every case of bench_interventions: the three sweeps (compared) and the click re-run (the engine alone).
FILTER='^BM_(SweepAblation|SweepHeads|SweepLayersPositions|ClickRerun/layer:(0|5|11))/'
THREADS=2
REPETITIONS=${ATTN_BENCH_REPETITIONS:-3}
CELLS=${ATTN_BENCH_CELLS:-0}
SMOL="${ATTN_BENCH_DIR:-/tmp/attnscope-bench}/smollm2-135m-bf16"

if [[ ! -x "$BENCH" ]]; then
  echo "error: $BENCH not found; build it first: cmake --build $BUILD_DIR --target bench_interventions" >&2
  exit 2
fi
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ && "$REPETITIONS" =~ ^[1-9][0-9]*$ && "$CELLS" =~ ^[0-9]+$ ]]; then
  echo "error: rounds, ATTN_BENCH_REPETITIONS and ATTN_BENCH_CELLS must be integers" >&2
  exit 2
fi
if [[ ! -f "$SMOL/model.safetensors" ]]; then
  echo "error: $SMOL/model.safetensors not found; write it with $BUILD_DIR/tests/bench/bench_decoder --prepare" >&2
  exit 2
fi

unset OPENBLAS_CORETYPE
export OMP_NUM_THREADS=$THREADS
unset ATTN_THREADS

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "== interventions: sweeps vs torch hooks, and the ablated re-run ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores online"
echo "threads:  $THREADS on both sides (OMP_NUM_THREADS=$OMP_NUM_THREADS, bench_interventions --threads=$THREADS," \
     "torch.set_num_threads($THREADS)); OPENBLAS_CORETYPE unset"
echo "blas:     libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
echo "method:   $ROUNDS rounds of (torch, engine); each side repeats each sweep $REPETITIONS times per round;" \
     "medians over all repetitions"
unset ATTN_BENCH_CELLS
if [[ "$CELLS" != 0 ]]; then
  export ATTN_BENCH_CELLS=$CELLS
  echo "SMOKE:    ATTN_BENCH_CELLS=$CELLS: every sweep stops after its first $CELLS cells; these figures are NOT" \
       "the issue's and say nothing about its targets"
fi
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) before the first run"
for ((r = 1; r <= ROUNDS; r++)); do
  echo "-- round $r/$ROUNDS: torch (load $(cut -d' ' -f1 /proc/loadavg))"
  (cd "$ROOT" && "$PY" -m tests.bench.torch_interventions_peer --checkpoint "$SMOL" --threads "$THREADS" \
    --repetitions "$REPETITIONS" --cells "$CELLS" --values "$WORK/torch_values.json") >"$WORK/torch.$r.json"
  echo "-- round $r/$ROUNDS: engine (load $(cut -d' ' -f1 /proc/loadavg))"
  "$BENCH" --threads="$THREADS" --benchmark_filter="$FILTER" --benchmark_repetitions="$REPETITIONS" --benchmark_out="$WORK/engine.$r.json" --benchmark_out_format=json --smol="$SMOL" --values="$WORK/engine_values.json" >"$WORK/engine.$r.out" 2>&1 ||
    { cat "$WORK/engine.$r.out" >&2; exit 1; }
done
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) after the last run"
load_after=$(cut -d' ' -f1 /proc/loadavg)

"$PY" - "$WORK" "$ROUNDS" "$THREADS" "$load_before" "$load_after" "$CELLS" <<'PYEOF'
import json, os, statistics, sys
work, rounds, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
load_before, load_after, cells = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
engine, torch = {}, {}
names = {"BM_SweepAblation": "ablation", "BM_SweepHeads": "heads", "BM_SweepLayersPositions": "resid"}
for r in range(1, rounds + 1):
    e = json.load(open(os.path.join(work, f"engine.{r}.json")))
    if int(e["context"]["attn_threads"]) != threads:
        sys.exit(f"bench_interventions ran {e['context']['attn_threads']} threads, not {threads}")
    for b in e["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        if b.get("error_occurred"):
            sys.exit(f"{b['name']}: {b.get('error_message')}")
        base = b["name"].split("/")[0]
        if base in names:
            engine.setdefault(names[base], []).append((b["real_time"], int(b["cells"])))
        else:  # BM_ClickRerun/layer:L/...: the time until the layer in view, and the whole re-run
            layer = int(b["name"].split("/")[1].split(":")[1])
            engine.setdefault(f"view{layer}", []).append((b["real_time"], 1))
            engine.setdefault(f"total{layer}", []).append((b["total_ms"], 1))
    t = json.load(open(os.path.join(work, f"torch.{r}.json")))
    if t["threads"] != threads:
        sys.exit(f"torch ran {t['threads']} threads, not {threads}")
    for name, v in t["results"].items():
        torch.setdefault(name, []).extend([(v["median_ms"], v["cells"])])
ev, tv = (json.load(open(os.path.join(work, f))) for f in ("engine_values.json", "torch_values.json"))
diffs = {}
for k in ("clean_metric", "corrupt_metric"):
    diffs[k] = abs(ev[k] - tv[k])
for k in names.values():
    a, b = ev[k], tv[k]
    diffs[k] = max((abs(x - y) for x, y in zip(a, b)), default=0.0) if len(a) == len(b) else f"{len(a)} vs {len(b)} cells"
print(f"torch:    {t['torch']}, BLAS {', '.join(sorted({i['config'].split()[1] + ' ' + i['corename'] for i in t['blas_info'].values() if i}))}")
print("check:    largest |engine - torch| over every cell (each side's first sample): " +
      ", ".join(f"{k} {v:.2e}" if isinstance(v, float) else f"{k}: {v}" for k, v in diffs.items()))
bad = [k for k, v in diffs.items() if not isinstance(v, float) or v > 1e-3]
if bad:
    print(f"warning:  the two sides disagree on {', '.join(bad)} (over 1e-3): the ratios below compare different work")

def med(rows):
    return statistics.median(r[0] for r in rows), min(r[0] for r in rows), max(r[0] for r in rows), rows[0][1]

print()
print(" sweep    | cells |  engine ms |   torch ms | torch/engine | target  | met")
labels = {"ablation": "zero ablation of each head alone", "heads": "heads patching (z)",
          "resid": "layers x positions (resid_pre)"}
for name in ("ablation", "heads", "resid"):
    e, t = med(engine[name]), med(torch[name])
    if e[3] != t[3]:
        sys.exit(f"{name}: the engine ran {e[3]} cells, torch {t[3]}")
    ratio = t[0] / e[0]
    print(f" {name:8} | {e[3]:5} | {e[0]:10.1f} | {t[0]:10.1f} | {ratio:12.2f} | >= 3.0x | {'yes' if ratio >= 3 else 'NO'}"
          f"   ({labels[name]}; engine {e[1]:.1f}..{e[2]:.1f}, torch medians {t[1]:.1f}..{t[2]:.1f})")
print()
print(" ablated re-run after a click, GPT-2 small shape, 128 tokens, head 0 of the layer zeroed (engine alone)")
print(" layer | layer in view ms | whole re-run ms | layer in view under 100 ms")
for layer in sorted(int(k[4:]) for k in engine if k.startswith("view")):
    v, w = med(engine[f"view{layer}"]), med(engine[f"total{layer}"])
    print(f" {layer:5} | {v[0]:16.1f} | {w[0]:14.1f} | {'MET' if v[0] < 100 else 'NOT MET'}")
print()
print("frames:   the GUI's frames during a sweep are bench_patching_frames' (the Transformer tab's Patching view"
      " running the layers x positions sweep of this checkpoint): QT_QPA_PLATFORM=offscreen"
      " <build-dir>/tests/bench/bench_patching_frames --threads 2")
if cells:
    print(f"SMOKE:    ATTN_BENCH_CELLS={cells}: NOT the issue's figures")
if max(load_before, load_after) > 1.5:
    print(f"warning:  load {load_before:.2f} before / {load_after:.2f} after on {os.cpu_count()} cores: other work"
          " shared the CPU; do not believe these figures")
PYEOF
