#!/bin/bash
# The applications of attention trained here (the word-by-word entailment model: a 11-word premise, a 12-word
# hypothesis, every attention row kept; ConvS2S on a date and the headline model on a 31-word sentence, beam 5, every
# map kept; the speech recogniser on a 2-second utterance, beam 5) in the engine and
# in torch (the training code) on the same shipped models, in the same run, with the same thread count; prints each
# one's medians, the ratio and the 20 ms target.
#
#   tests/bench/run_applications_vs_torch.sh <build-dir>
#
# Builds nothing: <build-dir> must hold tests/bench/bench_applications.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 <build-dir>" >&2
  exit 2
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)  # the torch peer runs from here as a module: it imports the tools package
BENCH="$1/tests/bench/bench_applications"
PY=/usr/bin/python3  # Debian's python3-torch lives here
THREADS=2
[[ -x "$BENCH" ]] || { echo "$0: no $BENCH (build the bench_applications target)" >&2; exit 2; }

unset OPENBLAS_CORETYPE  # a Haswell setting costs OpenBLAS about 30% here
export OMP_NUM_THREADS=$THREADS

echo "== applications vs torch ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "threads:  $THREADS on both sides (OMP_NUM_THREADS, bench_applications --threads=$THREADS, torch.set_num_threads($THREADS)); OPENBLAS_CORETYPE unset"
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) before"

engine_out=$("$BENCH" --threads=$THREADS --benchmark_filter=NONE 2>&1)
torch_json=$(cd "$ROOT" && "$PY" -m tests.bench.torch_applications_peer --threads $THREADS)
for app in entailment convs2s headlines speech; do
  echo "$engine_out" | sed -n "/^$app:/,/target:/p"
  engine_ms=$(echo "$engine_out" | sed -n "/^$app:/,/target:/p" | awk '/median:/ {print $2; exit}')
  engine_answer=$(echo "$engine_out" | sed -n "/^$app:/,/target:/p" | sed -n 's/^  answer: //p')
  torch_ms=$("$PY" -c 'import json,sys; print("%.3f" % json.loads(sys.argv[1])[sys.argv[2]]["median_ms"])' "$torch_json" $app)
  torch_answer=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]]["answer"])' "$torch_json" $app)
  echo "torch:    median $torch_ms ms (answer $torch_answer)"
  [[ "$engine_answer" == "$torch_answer" ]] || { echo "$0: $app: the engine says $engine_answer, torch $torch_answer" >&2; exit 1; }
  "$PY" - "$engine_ms" "$torch_ms" <<'PYEOF'
import sys
engine, torch = float(sys.argv[1]), float(sys.argv[2])
print(f"ratio:    torch / engine = {torch / engine:.0f}x; engine under 20 ms: {'MET' if engine < 20 else 'NOT MET'}")
PYEOF
done
# A typed sentence said and recognised (the engine alone: torch has no espeak-ng); the 150 ms target.
echo "$engine_out" | sed -n "/^say:/,/target:/p"
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) after"
