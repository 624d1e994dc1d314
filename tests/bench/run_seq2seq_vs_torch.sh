#!/bin/bash
# The Alignment workbench's decode (a 30-character date, beam 5, every hypothesis' attention kept) in the
# engine and in torch (the training code, tools/train/seq2seq_torch.py) on the same shipped model, in the
# same run, with the same thread count; prints both medians, the ratio and the 5 ms target.
#
#   tests/bench/run_seq2seq_vs_torch.sh <build-dir>
#
# Builds nothing: <build-dir> must hold tests/bench/bench_seq2seq.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <build-dir>" >&2
  exit 2
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)  # the torch peer runs from here as a module: it imports the tools package
BENCH="$1/tests/bench/bench_seq2seq"
PY=/usr/bin/python3  # Debian's python3-torch lives here
THREADS=2
[[ -x "$BENCH" ]] || { echo "$0: no $BENCH (build the bench_seq2seq target)" >&2; exit 2; }

unset OPENBLAS_CORETYPE  # a Haswell setting costs OpenBLAS about 30% here
export OMP_NUM_THREADS=$THREADS

echo "== seq2seq decode vs torch ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "threads:  $THREADS on both sides (OMP_NUM_THREADS, bench_seq2seq --threads=$THREADS, torch.set_num_threads($THREADS)); OPENBLAS_CORETYPE unset"
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) before"

engine_out=$("$BENCH" --threads=$THREADS --benchmark_filter=NONE 2>&1)
torch_json=$(cd "$ROOT" && "$PY" -m tests.bench.torch_seq2seq_peer --threads $THREADS)
echo "$engine_out" | sed -n '/seq2seq decode:/,$p'
engine_ms=$(echo "$engine_out" | awk '/median:/ {print $2; exit}')
torch_ms=$("$PY" -c 'import json,sys; print("%.3f" % json.loads(sys.argv[1])["median_ms"])' "$torch_json")
best=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["best"])' "$torch_json")
echo "torch:    median $torch_ms ms per decode (best hypothesis \"$best\")"
"$PY" - "$engine_ms" "$torch_ms" <<'PYEOF'
import sys
engine, torch = float(sys.argv[1]), float(sys.argv[2])
print(f"ratio:    torch / engine = {torch / engine:.0f}x; engine under 5 ms: {'MET' if engine < 5 else 'NOT MET'}")
PYEOF
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) after"
