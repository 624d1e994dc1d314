#!/bin/bash
# GGUF files against llama.cpp (issue 45): the SmolLM2-135M shape (bench_decoder's random BF16 checkpoint, with
# SmolLM's real tokenizer) written as GGUF F16, BF16, Q8_0 and Q4_K by tools/gguf/convert.py; on each file the
# engine (bench_gguf: prompt of 512 tokens with every map, generating 128 and 256 tokens after 16) and llama.cpp
# through node-llama-cpp (tools/golden/llama_speed.mjs, the same ids, no maps), alternating, in the same run, with
# the same thread count; then each side's tokens/s, their ratio, and for generation how close each side is to the
# machine's memory bandwidth (the file's weight bytes x tokens/s against bench_gguf's STREAM-like copy).
#
#   tests/bench/run_gguf_vs_llama.sh <build-dir> [rounds] [smollm-tokenizer-dir]
#
# Needs: <build-dir>/tests/bench/bench_gguf and bench_decoder, tools/golden/node_modules (cd tools/golden && npm
# install --ignore-scripts), Debian's python3 with numpy. The GGUF files are written once under $ATTN_BENCH_DIR
# (default /tmp/attnscope-bench; about 1 GB in all) and reused. ATTN_GGUF_TYPES (default "F16 BF16 Q8_0 Q4_K")
# chooses the files. The tokenizer folder defaults to
# /work/shared/data/tokenizers/modern/smollm (SmolLM's tokenizer.json: the bench checkpoint's 49,152 ids).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
  echo "usage: $0 <build-dir> [rounds] [smollm-tokenizer-dir]" >&2
  exit 2
fi
BUILD_DIR=$1
ROUNDS=${2:-2}
TOKENIZER=${3:-/work/shared/data/tokenizers/modern/smollm}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
THREADS=2
REPS=${ATTN_BENCH_REPETITIONS:-3}
BENCH_DIR=${ATTN_BENCH_DIR:-/tmp/attnscope-bench}
read -ra TYPES <<< "${ATTN_GGUF_TYPES:-F16 BF16 Q8_0 Q4_K}"  # ATTN_GGUF_TYPES="BF16" for one type

for program in bench_gguf bench_decoder; do
  if [[ ! -x "$BUILD_DIR/tests/bench/$program" ]]; then
    echo "error: $BUILD_DIR/tests/bench/$program not found; build it first" >&2
    exit 2
  fi
done
if [[ ! -d "$ROOT/tools/golden/node_modules/node-llama-cpp" ]]; then
  echo "error: node-llama-cpp is not installed: cd tools/golden && npm install --ignore-scripts" >&2
  exit 2
fi
if [[ ! -f "$TOKENIZER/tokenizer.json" ]]; then
  echo "error: no tokenizer.json in $TOKENIZER (SmolLM's; pass its folder as the third argument)" >&2
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

echo "== GGUF files: the engine against llama.cpp ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
SMOL=$("$BUILD_DIR/tests/bench/bench_decoder" --prepare | sed -n 's/^smollm2 folder: //p')
SRC="$BENCH_DIR/smollm2-135m-gguf-source"
mkdir -p "$SRC"
for f in "$SMOL"/*; do ln -sf "$f" "$SRC/$(basename "$f")"; done
cp "$TOKENIZER/tokenizer.json" "$SRC/tokenizer.json"
for type in "${TYPES[@]}"; do
  out="$BENCH_DIR/smollm2-135m-$type.gguf"
  if [[ ! -s "$out" || "$out" -ot "$SMOL/model.safetensors" ]]; then
    echo "writing $out"
    (cd "$ROOT" && "$PY" -m tools.gguf.convert "$SRC" "$out" --type "$type" --name smollm2-135m-shape > /dev/null)
  fi
done

for ((round = 1; round <= ROUNDS; ++round)); do
  for type in "${TYPES[@]}"; do
    file="$BENCH_DIR/smollm2-135m-$type.gguf"
    "$BUILD_DIR/tests/bench/bench_gguf" "$file" --threads=$THREADS --benchmark_repetitions="$REPS" \
      --benchmark_format=json > "$WORK/engine-$type-$round.json" 2> "$WORK/engine-$type-$round.err" ||
      { cat "$WORK/engine-$type-$round.err" >&2; exit 1; }
    (cd "$ROOT/tools/golden" && node llama_speed.mjs "$file" $THREADS "$REPS") > "$WORK/llama-$type-$round.json"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

"$PY" - "$WORK" "$ROUNDS" "${TYPES[@]}" <<'EOF'
import json, statistics, sys, pathlib
work, rounds, types = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
def engine(type_):
    runs = {}
    for r in range(1, rounds + 1):
        for b in json.loads((work / f"engine-{type_}-{r}.json").read_text())["benchmarks"]:
            if b.get("run_type") == "iteration":
                runs.setdefault(b["run_name"].removesuffix("/real_time"), []).append(b)
    return runs
def llama(type_):
    cases = {}
    for r in range(1, rounds + 1):
        for k, v in json.loads((work / f"llama-{type_}-{r}.json").read_text())["cases"].items():
            cases.setdefault(k, []).append(v["tokens_per_second"])
    return cases
print(f"{'file':<6} {'case':<12} {'engine tok/s':>12} {'llama.cpp':>10} {'ratio':>6}   {'engine BW':>9} {'llama BW':>9}")
for t in types:
    e, l = engine(t), llama(t)
    stream = statistics.median(b["GB/s"] for b in e["BM_StreamCopy"]) * 1e9
    for name, case in (("BM_GgufPrompt/L:512", "prompt:512"), ("BM_GgufGenerate/new:128", "generate:128"),
                       ("BM_GgufGenerate/new:256", "generate:256")):
        et = statistics.median(b["tokens/s"] for b in e[name])
        lt = statistics.median(l[case])
        wb = e[name][0]["weight_bytes"]
        bw = "" if case.startswith("prompt") else f"{wb * et / stream:9.0%} {wb * lt / stream:9.0%}"
        print(f"{t:<6} {case:<12} {et:12.1f} {lt:10.1f} {et / lt:6.2f}   {bw}")
print(f"STREAM-like copy: {stream / 1e9:.1f} GB/s (bench_gguf BM_StreamCopy, {len(e['BM_StreamCopy'])} samples)")
EOF
