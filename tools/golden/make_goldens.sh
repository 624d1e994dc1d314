#!/bin/sh
# Rebuilds tests/data/tokenizers/golden/: the tokenizer.json files the golden tests run and golden.json, the ids,
# offsets and decoded texts Hugging Face's library gives for them. Real tokenizers are trimmed to what the golden
# texts reach (trim_tokenizer.py), and the trimmed files must give the full files' goldens, which is checked here.
#   cd tools/golden && npm ci && ./make_goldens.sh [SHARED_TOKENIZERS_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
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
