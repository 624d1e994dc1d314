#!/bin/sh
# Rebuilds tests/data/ggml_tensors/: llama.cpp's own intermediate tensors (layer 0 of a prompt and of the token
# generated after it) that tests/unit/test_ggml_math.cpp checks the engine's ggml_math.h against, bit for bit:
# stories260k-Q8_0 (head_dim 8: ggml_vec_dot_f16's order) and smollm2-random-llama-Q6_K (head_dim 64: tinyBLAS's),
# each on one of its golden prompts; gpt2-random-F32's LayerNorm (with its weight and bias) and table GELU; and
# smollm2-random-Q4_K's ffn_up product (its rows repacked by llama.cpp: the generated token's is its gemv). Needs node-llama-cpp (npm install --ignore-scripts), g++ and git.
#   cd tools/golden && ./llama_tensors.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bins="$here/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The headers of the very release node-llama-cpp's binaries were built from (its git bundle).
git clone -q "$here/node_modules/node-llama-cpp/llama/gitRelease.bundle" "$work/llama.cpp" 2> /dev/null
llama=$(basename "$(ls "$bins"/libllama.v*.so)")
ggml=$(basename "$(ls "$bins"/libggml.v*.so)")
g++ -O1 -std=c++17 "$here/llama_tensors.cpp" -I"$work/llama.cpp/include" -I"$work/llama.cpp/ggml/include" \
  -L"$bins" -l:"$llama" -l:"$ggml" -l:libggml-base.so -Wl,-rpath,"$bins" -o "$work/llama_tensors"
out="$root/tests/data/ggml_tensors"
rm -rf "$out"/*/  # the cases; SOURCES.md stays
for spec in stories260k-Q8_0:1 smollm2-random-llama-Q6_K:0 gpt2-random-F32:0 smollm2-random-Q4_K:0; do
  name=${spec%:*}
  ids=$(/usr/bin/python3 -c "import json,sys; print(' '.join(map(str, json.load(open(sys.argv[1]))['cases'][int(sys.argv[2])]['tokens'])))" \
    "$root/tests/data/gguf/$name.golden.json" "${spec#*:}")
  mkdir -p "$work/$name/prompt" "$work/$name/step"
  # shellcheck disable=SC2086
  LLAMA_BINS="$bins" "$work/llama_tensors" "$root/tests/data/gguf/$name.gguf" "$work/$name" $ids > /dev/null 2>&1
  for part in prompt step; do
    mkdir -p "$out/$name/$part"
    tensors="embd norm-0 Qcur-0 Qcur-0#2 Kcur-0#2 Vcur-0#1 kq_soft_max-0 kqv-0 ffn_gate-0 ffn_up-0 ffn_swiglu-0"
    [ "$name" = gpt2-random-F32 ] && tensors="inpL norm-0 attn_norm-0 ffn_up_b-0 ffn_gelu-0"
    [ "$name" = smollm2-random-Q4_K ] && tensors="ffn_norm-0 ffn_up-0"
    for t in $tensors; do
      cp "$work/$name/$part/$t.f32" "$out/$name/$part/"
    done
    cp "$work/$name/$part/index.txt" "$out/$name/$part/"
  done
done
du -sh "$out"
