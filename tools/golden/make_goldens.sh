#!/bin/sh
# Rebuilds tests/data/tokenizers/golden/: the tokenizer.json files the golden tests run and golden.json, the ids,
# offsets and decoded texts Hugging Face's library gives for them. Real tokenizers are trimmed to what the golden
# texts reach (trim_tokenizer.py), and the trimmed files must give the full files' goldens, which is checked here.
#   cd tools/golden && npm ci && ./make_goldens.sh [SHARED_TOKENIZERS_DIR]
#
# With "gguf" it rebuilds tests/data/gguf/ instead (issue 45; tools/gguf/README.md): the GGUF files, written by
# tools/gguf/convert.py and by llama.cpp's own quantiser, checked against llama.cpp, and llama.cpp's goldens.
#   cd tools/golden && npm install --ignore-scripts && ./make_goldens.sh gguf [SMOLLM_TOKENIZER_DIR]
#
# llama.cpp's x86 CPU backend loads another build on a CPU with AMX-INT8 (ggml-cpu/amx), which sums in another order:
# tests/data/gguf's goldens are its AVX-512 build's (zen4's, the best it has for a CPU without AMX and with
# AVX512-BF16), and tests/data/gguf/amx's its AMX build's (sapphirerapids'), for the same files, made on a CPU with AMX by
#   cd tools/golden && npm install --ignore-scripts && ./make_goldens.sh gguf-amx
# On a CPU with AMX, "gguf" runs llama.cpp from a copy of node-llama-cpp without its AMX build (without_amx), so that
# it loads the AVX-512 one: this reproduced all 32 AVX-512 goldens of an AMD EPYC byte for byte (2026-12-01).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
has_amx() { grep -qw amx_int8 /proc/cpuinfo; }

# A copy of this directory's scripts and node_modules in $1 whose llama.cpp has no AMX build (libggml-cpu-
# sapphirerapids.so, the one CPU build of llama.cpp's with AMX-INT8): node-llama-cpp and its x64 binaries copied,
# every other package a link. Checks that llama.cpp then reports no AMX.
without_amx() {
  mkdir -p "$1/node_modules/@node-llama-cpp"
  cp "$here"/*.mjs "$here/package.json" "$1/"
  for entry in "$here"/node_modules/* "$here"/node_modules/.[!.]*; do
    [ -e "$entry" ] || continue
    case $(basename "$entry") in
      node-llama-cpp) cp -r "$entry" "$1/node_modules/" ;;
      @node-llama-cpp) ;;
      *) ln -s "$entry" "$1/node_modules/" ;;
    esac
  done
  cp -r "$here/node_modules/@node-llama-cpp/linux-x64" "$1/node_modules/@node-llama-cpp/"
  rm "$1/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/libggml-cpu-sapphirerapids.so"
}

if [ "${1:-}" = gguf-amx ]; then
  has_amx || { echo "make_goldens.sh gguf-amx: this CPU has no AMX-INT8; llama.cpp would not run its AMX build" >&2; exit 1; }
  out="$root/tests/data/gguf/amx"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  ln -s "$root"/tests/data/gguf/*.gguf "$work/"
  node "$here/llama_goldens.mjs" "$work"/*.gguf
  node "$here/llama_goldens.mjs" --kv-cache F32 "$work"/*-F32.gguf "$work"/*-F16.gguf
  mkdir -p "$out"
  rm -f "$out"/*.golden.json
  cp "$work"/*.golden.json "$out/"
  exit 0
fi

if [ "${1:-}" = gguf ]; then
  # numpy is in the system Python, not in every python3 on PATH.
  py=${PYTHON:-/usr/bin/python3}
  # The scripts are modules of the tools package: found through the repository root, so that a relative
  # SMOLLM_TOKENIZER_DIR still means one relative to where this was started.
  export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
  out="$root/tests/data/gguf"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$out"
  llama=$here
  if has_amx; then
    llama=$work/golden
    without_amx "$llama"
  fi
  rm -f "$out"/*.gguf "$out"/*.golden.json
  "$py" -m tools.gguf.check_quantizers > "$work/quantizers.txt" || { cat "$work/quantizers.txt"; exit 1; }
  tail -n 1 "$work/quantizers.txt"
  "$py" -m tools.gguf.make_random_smollm "$work/smollm2-random" ${2:+--tokenizer "$2"}
  for model in "$root/resources/models/stories260k" "$work/smollm2-random"; do
    name=$(basename "$model")
    for type in F32 F16 BF16 Q8_0 Q4_K; do
      "$py" -m tools.gguf.convert "$model" "$out/$name-$type.gguf" --type "$type" --name "$name"
    done
    # Our F16, BF16, Q8_0 and Q4_K must be llama-quantize's bytes for the same F32 file.
    for type in F16 BF16 Q8_0 Q4_K; do
      "$py" -m tools.gguf.check_files "$out/$name-F32.gguf" "$out/$name-$type.gguf" "$type" 2> /dev/null
    done
  done
  # Gemma 2, Gemma 3, Phi-3, Llama 3 (RoPE factors: rope_freqs.weight) and GPT-2 as random checkpoints
  # (tools/gguf/make_random_archs.py) in F32, Gemma 2 and GPT-2 in Q8_0 too (GPT-2's as the converter writes it, its
  # position table in F32, which llama-quantize would quantise: no check_files for it).
  # Phi-3's general.name must not contain "phi3" or "phi-3": llama.cpp then gives Phi-3's special tokens (</s>,
  # <s>, <unk>, <|endoftext|>) attributes, and fails to load a vocabulary without them.
  "$py" -m tools.gguf.make_random_archs "$work" ${2:+--tokenizer "$2"}
  for arch in gemma2 gemma3 phi3 llama3 gpt2; do
    name=$arch-random
    [ "$arch" = phi3 ] && name=random-phi-three
    "$py" -m tools.gguf.convert "$work/$arch-random" "$out/$arch-random-F32.gguf" --type F32 --name "$name"
  done
  "$py" -m tools.gguf.convert "$work/gemma2-random" "$out/gemma2-random-Q8_0.gguf" --type Q8_0 --name gemma2-random
  "$py" -m tools.gguf.check_files "$out/gemma2-random-F32.gguf" "$out/gemma2-random-Q8_0.gguf" Q8_0 2> /dev/null
  "$py" -m tools.gguf.convert "$work/gpt2-random" "$out/gpt2-random-Q8_0.gguf" --type Q8_0 --name gpt2-random
  # The types only llama.cpp writes here, from the SmolLM2-shaped F32 file.
  for type in Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q5_K Q6_K; do
    "$py" -m tools.gguf.llama_quantize "$out/smollm2-random-F32.gguf" "$out/smollm2-random-llama-$type.gguf" "$type" \
      2> /dev/null
  done
  node "$llama/llama_goldens.mjs" "$out"/*.gguf
  # The F32 and F16 files again with a float key/value cache: llama.cpp without its half-precision rounding of keys
  # and values (the F32 files within a few 1e-6 of exact arithmetic, tools/gguf/check_dequantised.py).
  node "$llama/llama_goldens.mjs" --kv-cache F32 "$out"/*-F32.gguf "$out"/*-F16.gguf
  if grep -l AMX_INT8 "$out"/*.golden.json; then
    echo "make_goldens.sh gguf: llama.cpp ran its AMX build for the goldens above" >&2
    exit 1
  fi
  exit 0
fi

shared=${1:-/work/shared/data/tokenizers/modern}
out="$root/tests/data/tokenizers/golden"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
python3 "$here/make_tokenizers.py" "$work"
cp "$shared/llama2-spm/tokenizer.json" "$work/llama2_spm.json"
cp "$shared/smollm/tokenizer.json" "$work/smollm.json"
cp "$shared/qwen3/tokenizer.json" "$work/qwen3.json"
for name in llama2_spm smollm qwen3 bert gpt2; do
  node "$here/golden_tokens.mjs" "$work/$name.golden.json" "$work/$name.json" > /dev/null
  python3 "$here/trim_tokenizer.py" "$work/$name.json" "$work/$name.golden.json" "$out/$name.json"
  node "$here/golden_tokens.mjs" "$work/$name.trimmed.json" "$out/$name.json" > /dev/null
  cmp "$work/$name.golden.json" "$work/$name.trimmed.json" || { echo "trimmed $name differs"; exit 1; }
done
cp "$work"/small_*.json "$out/"
cd "$out"
node "$here/golden_tokens.mjs" golden.json llama2_spm.json smollm.json qwen3.json bert.json gpt2.json small_*.json
