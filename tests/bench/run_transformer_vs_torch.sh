#!/bin/bash
# Whole transformers (BERT-base and GPT-2-small shapes) returning every attention map, against the same
# models in torch, in the same run, on the same machine, with the same thread count; then one BERT-base
# run at 2,048 tokens with float16 maps for the peak memory.
#
#   tests/bench/run_transformer_vs_torch.sh <build-dir> [rounds]
#
# Builds nothing: <build-dir> must hold tests/bench/bench_transformer. Runs torch, engine, torch, engine,
# ... (`rounds` times each, default 2) so that drift of the machine hits both sides alike, pools every
# sample of each side and compares medians. The random checkpoints (about 1 GB) are written under
# $ATTN_BENCH_DIR (default /tmp/attnscope-bench) by every engine run.
# Targets (the issue): no slower than torch at every length; >= 170 GFLOP/s at 512 tokens and beyond;
# peak memory at 2,048 tokens under 3 GB.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 <build-dir> [rounds]" >&2
  exit 2
fi
BUILD_DIR=$1
ROUNDS=${2:-2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)  # the torch peer runs from here as a module: it imports the tools package
BENCH="$BUILD_DIR/tests/bench/bench_transformer"
PEER=tests.bench.torch_transformer_peer
PY=/usr/bin/python3  # Debian's python3-torch lives here, not in a pyenv interpreter
THREADS=2
REPETITIONS=${ATTN_BENCH_REPETITIONS:-5}
MIN_TIME=${ATTN_BENCH_MIN_TIME:-0.5}
# torch_transformer_peer.py's default cases (bert:128, bert:512, gpt2:128, gpt2:1024) and the plain sgemm the
# engine's rate is set against; nothing else of bench_transformer.
FILTER='^BM_(Gemm/L:512|Bert/L:(128|512)|Gpt2/L:(128|1024))/'

if [[ ! -x "$BENCH" ]]; then
  echo "error: $BENCH not found; build it first: cmake --build $BUILD_DIR --target bench_transformer" >&2
  exit 2
fi
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
  echo "error: rounds must be a positive integer, got '$ROUNDS'" >&2
  exit 2
fi

unset OPENBLAS_CORETYPE
export OMP_NUM_THREADS=$THREADS
unset ATTN_THREADS

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "== transformers with every attention map vs torch ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores online"
echo "threads:  $THREADS on both sides (OMP_NUM_THREADS=$OMP_NUM_THREADS, bench_transformer --threads=$THREADS," \
     "torch.set_num_threads($THREADS)); OPENBLAS_CORETYPE unset"
echo "blas:     libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
echo "method:   $ROUNDS rounds of (torch, engine); each side $REPETITIONS samples of >= ${MIN_TIME}s per case" \
     "per round; medians over all samples"
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) before the first run"

for ((r = 1; r <= ROUNDS; r++)); do
  echo "-- round $r/$ROUNDS: torch (load $(cut -d' ' -f1 /proc/loadavg))"
  (cd "$ROOT" && "$PY" -m "$PEER" --threads "$THREADS" --repetitions "$REPETITIONS" --min-time "$MIN_TIME") \
    >"$WORK/torch_$r.json"
  echo "-- round $r/$ROUNDS: engine (load $(cut -d' ' -f1 /proc/loadavg))"
  "$BENCH" --threads="$THREADS" --benchmark_filter="$FILTER" --benchmark_format=json \
    --benchmark_repetitions="$REPETITIONS" --benchmark_min_time="$MIN_TIME" >"$WORK/engine_$r.json" \
    2>"$WORK/engine_$r.err"
  sed 's/^/   /' "$WORK/engine_$r.err"
done
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) after the last run"

"$PY" - "$WORK" "$ROUNDS" "$THREADS" <<'PYEOF'
import json, re, statistics, sys

work, rounds, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
LAYERS, D, F = 12, 768.0, 3072.0

def flops(n):
    return LAYERS * (2.0 * n * (4.0 * D * D + 2.0 * D * F) + 4.0 * n * n * D)

torch_ms, engine_ms, gemm = {}, {}, []
for r in range(1, rounds + 1):
    t = json.load(open(f"{work}/torch_{r}.json"))
    if t["torch_threads"] != threads:
        sys.exit(f"torch ran with {t['torch_threads']} threads, not {threads}")
    if r == 1:
        for path, info in t["blas_info"].items():
            print(f"torch:    {t['torch_version']}, BLAS {path}: {info['config'] if info else 'not OpenBLAS'}")
    for row in t["results"]:
        torch_ms.setdefault((row["family"], row["L"]), []).extend(row["samples_ms"])
    e = json.load(open(f"{work}/engine_{r}.json"))
    if int(e["context"].get("attn_threads", -1)) != threads:
        sys.exit(f"bench_transformer ran with {e['context'].get('attn_threads')} threads, not {threads}")
    for b in e["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"bench_transformer reported an error for {b['name']}: {b.get('error_message')}")
        if b.get("run_type") != "iteration":
            continue
        assert b["time_unit"] == "ms", b["time_unit"]
        if b["name"].startswith("BM_Gemm/L:512"):
            gemm.append(b["GFLOP/s"])
            continue
        m = re.match(r"BM_(Bert|Gpt2)/L:(\d+)", b["name"])
        engine_ms.setdefault((m.group(1).lower(), int(m.group(2))), []).append(b["real_time"])

print()
hdr = (f"{'model':>6} {'tokens':>6} | {'engine ms':>9} | {'GFLOP/s':>7} | {'torch ms':>9} | {'GFLOP/s':>7} |"
       f" {'torch/engine':>12} | targets")
print(hdr)
print("-" * len(hdr))
all_met = True
for key in sorted(torch_ms, key=lambda k: (k[0] != "bert", k[1])):
    if key not in engine_ms:
        sys.exit(f"{key} is missing from the engine's results")
    em, tm = statistics.median(engine_ms[key]), statistics.median(torch_ms[key])
    eg, tg = flops(key[1]) / em * 1e-6, flops(key[1]) / tm * 1e-6
    met = tm / em >= 1.0
    goals = ["faster than torch " + ("yes" if met else "NO")]
    if key[1] >= 512:
        met_rate = eg >= 170.0
        goals.append(">= 170 GFLOP/s " + ("yes" if met_rate else "NO"))
        met = met and met_rate
    all_met &= met
    print(f"{key[0]:>6} {key[1]:>6} | {em:>9.1f} | {eg:>7.1f} | {tm:>9.1f} | {tg:>7.1f} | {tm / em:>12.2f} |"
          f" {', '.join(goals)}")
print()
peak = statistics.median(gemm)
print(f"ceiling:  a plain 512 x 768 x 3072 sgemm (Eigen over OpenBLAS, 2 threads) runs at {peak:.1f} GFLOP/s here;")
print("          the engine reaches " + ", ".join(
    f"{k[0]} {k[1]}: {flops(k[1]) / statistics.median(v) * 1e-6 / peak * 100:.0f}%" for k, v in sorted(engine_ms.items()))
    + " of it")
print("samples:  engine min..max ms " + ", ".join(f"{k[0]}{k[1]}: {min(v):.1f}..{max(v):.1f}" for k, v in sorted(engine_ms.items())))
print("          torch  min..max ms " + ", ".join(f"{k[0]}{k[1]}: {min(v):.1f}..{max(v):.1f}" for k, v in sorted(torch_ms.items())))
print(f"target:   {'MET' if all_met else 'NOT MET'} (faster than torch everywhere, >= 170 GFLOP/s from 512 tokens)")
PYEOF

echo
"$BENCH" --threads="$THREADS" --memory=2048

load_after=$(cut -d' ' -f1 /proc/loadavg)
if awk -v b="$load_before" -v a="$load_after" -v t="$THREADS" 'BEGIN { exit !(b > 1 || a > t + 1) }'; then
  echo "warning:  load $load_before before / $load_after after on $(nproc) cores: other work shared the CPU;" \
       "treat these figures as unreliable and rerun on a quiet machine"
fi
