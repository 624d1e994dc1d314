#!/bin/bash
# Multi-head self-attention (d_model 768, 12 heads, every head's weights kept) against
# torch.nn.MultiheadAttention, in the same run, on the same machine, with the same thread count.
#
#   tests/bench/run_mha_vs_torch.sh <build-dir> [rounds]
#
# Builds nothing: <build-dir> must already hold tests/bench/bench_mha (cmake --build <build-dir> --target
# bench_mha). Runs torch, engine, torch, engine, ... (`rounds` times each, default 2) so that drift of the
# machine hits both sides alike, pools every sample of each side and compares medians.
# Target (the issue): no slower than torch at every length, at least 2x faster at 2048.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 <build-dir> [rounds]" >&2
  exit 2
fi
BUILD_DIR=$1
ROUNDS=${2:-2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH="$BUILD_DIR/tests/bench/bench_mha"
PEER="$HERE/torch_mha_peer.py"
PY=/usr/bin/python3  # Debian's python3-torch lives here, not in a pyenv interpreter
THREADS=2
LENGTHS=32,128,512,2048
REPETITIONS=${ATTN_BENCH_REPETITIONS:-5}
MIN_TIME=${ATTN_BENCH_MIN_TIME:-0.3}
# The lengths torch runs, with a result reused and a new one each call; nothing else of bench_mha.
FILTER="^BM_SelfAttentionKeepWeights/L:(${LENGTHS//,/|})/reuse:[01]/"

if [[ ! -x "$BENCH" ]]; then
  echo "error: $BENCH not found; build it first: cmake --build $BUILD_DIR --target bench_mha" >&2
  exit 2
fi
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
  echo "error: rounds must be a positive integer, got '$ROUNDS'" >&2
  exit 2
fi

# Same threads on both sides, said out loud. OPENBLAS_CORETYPE would pin OpenBLAS to a kernel other
# than the one it detects for this CPU.
unset OPENBLAS_CORETYPE
export OMP_NUM_THREADS=$THREADS
unset ATTN_THREADS

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "== multi-head self-attention vs torch ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores online"
echo "threads:  $THREADS on both sides (OMP_NUM_THREADS=$OMP_NUM_THREADS, bench_mha --threads=$THREADS," \
     "torch.set_num_threads($THREADS)); OPENBLAS_CORETYPE unset"
echo "blas:     libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
echo "engine:   $BENCH"
echo "method:   $ROUNDS rounds of (torch, engine); each side $REPETITIONS samples of >= ${MIN_TIME}s per length" \
     "per round; medians over all samples"
load_before=$(cut -d' ' -f1 /proc/loadavg)
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min) before the first run"

for ((r = 1; r <= ROUNDS; r++)); do
  echo "-- round $r/$ROUNDS: torch (load $(cut -d' ' -f1 /proc/loadavg))"
  "$PY" "$PEER" --threads "$THREADS" --lengths "$LENGTHS" --repetitions "$REPETITIONS" \
    --min-time "$MIN_TIME" >"$WORK/torch_$r.json"
  echo "-- round $r/$ROUNDS: engine (load $(cut -d' ' -f1 /proc/loadavg))"
  "$BENCH" --threads="$THREADS" --benchmark_filter="$FILTER" --benchmark_format=json \
    --benchmark_repetitions="$REPETITIONS" --benchmark_min_time="$MIN_TIME" >"$WORK/engine_$r.json" \
    2>"$WORK/engine_$r.err"
  sed 's/^/   /' "$WORK/engine_$r.err"
done
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) after the last run"

"$PY" - "$WORK" "$ROUNDS" "$THREADS" <<'EOF'
import glob, json, re, statistics, sys

work, rounds, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
E = 768

def flops(L):
    return 4.0 * 2.0 * L * E * E + 2.0 * 2.0 * L * L * E

torch_ms, engine_ms, fresh_ms = {}, {}, {}
for r in range(1, rounds + 1):
    t = json.load(open(f"{work}/torch_{r}.json"))
    if t["torch_threads"] != threads:
        sys.exit(f"torch ran with {t['torch_threads']} threads, not {threads}")
    if r == 1:
        for path, info in t["blas_info"].items():
            print(f"torch:    {t['torch_version']}, BLAS {path}: {info['config'] if info else 'not OpenBLAS'}")
    for row in t["results"]:
        torch_ms.setdefault(row["L"], []).extend(row["samples_ms"])
    if r == 1:
        print(f"torch:    timed path: {', '.join(sorted({row['torch_path'] for row in t['results']}))}")
    e = json.load(open(f"{work}/engine_{r}.json"))
    ctx = e["context"]
    if int(ctx.get("attn_threads", -1)) != threads:
        sys.exit(f"bench_mha ran with {ctx.get('attn_threads')} threads, not {threads}")
    if r == 1:
        print(f"engine:   bench_mha threads={ctx['attn_threads']} ({ctx['attn_threads_source']}),"
              f" google-benchmark library_build_type={ctx.get('library_build_type', '?')}")
    for b in e["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"bench_mha reported an error for {b['name']}: {b.get('error_message')}")
        if b.get("run_type") != "iteration":
            continue
        m = re.search(r"/L:(\d+)/reuse:([01])/", b["name"])
        assert b["time_unit"] == "ms", b["time_unit"]
        side = engine_ms if m.group(2) == "1" else fresh_ms
        side.setdefault(int(m.group(1)), []).append(b["real_time"])

print()
print("engine ms: one result reused across runs (the viewer's steady state, multi_head_attention_into);")
print("fresh ms:  a new result every call, as torch allocates its outputs (ratio torch/fresh beside it)")
hdr = f"{'length':>6} | {'engine ms':>10} | {'engine GFLOP/s':>14} | {'torch ms':>10} | {'torch GFLOP/s':>13} | {'ratio torch/engine':>18} | {'target':>8} | met | {'fresh ms':>9} | {'torch/fresh':>11}"
print(hdr)
print("-" * len(hdr))
all_met = True
for L in sorted(set(torch_ms) | set(engine_ms)):
    if L not in torch_ms or L not in engine_ms:
        sys.exit(f"length {L} is missing from one side")
    em, tm = statistics.median(engine_ms[L]), statistics.median(torch_ms[L])
    ratio = tm / em
    target = 2.0 if L >= 2048 else 1.0
    met = ratio >= target
    all_met &= met
    fm = statistics.median(fresh_ms[L])
    print(f"{L:>6} | {em:>10.3f} | {flops(L) / em * 1e-6:>14.2f} | {tm:>10.3f} | {flops(L) / tm * 1e-6:>13.2f} |"
          f" {ratio:>18.2f} | {'>= %.1fx' % target:>8} | {'yes' if met else 'no ':>3} | {fm:>9.3f} | {tm / fm:>11.2f}")
print()
spread = {L: (min(v), max(v)) for L, v in engine_ms.items()}
print("samples:  engine min..max ms " + ", ".join(f"L{L}: {a:.3f}..{b:.3f}" for L, (a, b) in sorted(spread.items())))
spread = {L: (min(v), max(v)) for L, v in torch_ms.items()}
print("          torch  min..max ms " + ", ".join(f"L{L}: {a:.3f}..{b:.3f}" for L, (a, b) in sorted(spread.items())))
# The fastest sample of each side is the least disturbed by other work on a shared machine; it is shown
# for diagnosis only, the verdict above uses the medians.
print("best:     torch/engine ratio of the fastest samples " +
      ", ".join(f"L{L}: {min(torch_ms[L]) / min(engine_ms[L]):.2f}" for L in sorted(engine_ms)))
print(f"target:   {'MET' if all_met else 'NOT MET'} (no slower than torch at every length, >= 2x at 2048)")
EOF

load_after=$(cut -d' ' -f1 /proc/loadavg)
# Alone, this run puts about THREADS runnable threads on the machine; more means others shared the CPU.
if awk -v b="$load_before" -v a="$load_after" -v t="$THREADS" 'BEGIN { exit !(b > 1 || a > t + 1) }'; then
  echo "warning:  load $load_before before / $load_after after on $(nproc) cores: other work shared the CPU;" \
       "treat these figures as unreliable and rerun on a quiet machine"
fi
