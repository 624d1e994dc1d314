#!/bin/bash
# Corpus runs (issue 46): `attnscope-cli corpus` against a torch peer that computes the same statistics from
# output_attentions (tests/bench/torch_corpus_peer.py), in the same run, with the same thread count, both writing
# SQLite one transaction per input.
#   1. Speed: the SmolLM2-135M shape (bench_decoder's random BF16 checkpoint with SmolLM's real tokenizer) on
#      inputs of 128 tokens (lines of resources/samples/corpus/stories.txt joined, cut with --max-tokens 128),
#      inputs/s of each side's loop over the inputs (model load excluded), alternating, `rounds` times.
#   2. Memory flat in the corpus size: each side's peak resident set on 1,000 and on 100,000 inputs of the bundled
#      stories260K (the SmolLM2 shape would take hours per side at 100,000), same 128-token lines.
#   3. Merging 100 shard files of 10,000 inputs each (stories260K on resources/samples/corpus/stories.txt's 60 lines
#      repeated to 1,000,000: each input's rows are one per head and five pairs per head whatever its length; the
#      shards written by `attnscope-cli corpus --shard i/100`, two at a time: minutes): the merge's time and the
#      merged file's size, then the Corpus tab opening it: bench_corpus_open's time from openDatabase to the heads
#      map painted (the first picture) and to the first head's figures, the page cache dropped first where this
#      user may (root: /proc/sys/vm/drop_caches) and then warm; and `attnscope --screenshot` as a whole process.
#      ATTN_KEEP_SHARDS=1 keeps the shards and the merged file.
# Statistics agreement: the first inputs' head_stats of both sides printed as their largest difference.
#
#   tests/bench/run_corpus_vs_torch.sh <build-dir> [rounds] [parts]      parts: any of speed,memory,merge (default all)
#
# Needs <build-dir>/app/attnscope-cli and attnscope, <build-dir>/tests/bench/bench_decoder (for --prepare) and
# bench_corpus_open,
# Debian's python3-torch, python3-numpy and python3-sentencepiece, tools/golden/node_modules (cd tools/golden && npm
# install --ignore-scripts): the peer takes its ids from Hugging Face's tokenizer (SmolLM's tokenizer.json) and
# SentencePiece (stories260K's tokenizer.model, BOS first as its tokenizer_config.json asks), as the engine's
# tokenizers give them (their golden tests); /work/shared/data/tokenizers/modern/smollm
# (or ATTN_SMOLLM_TOKENIZER). Work files under $ATTN_BENCH_DIR (default /tmp/attnscope-bench; the merge part
# writes about 20 GB there and removes it).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 3 ]]; then
  echo "usage: $0 <build-dir> [rounds] [speed,memory,merge]" >&2
  exit 2
fi
BUILD_DIR=$(realpath "$1")
ROUNDS=${2:-2}
PARTS=${3:-speed,memory,merge}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=/usr/bin/python3
THREADS=2
CLI="$BUILD_DIR/app/attnscope-cli"
APP="$BUILD_DIR/app/attnscope"
TOKENIZER=${ATTN_SMOLLM_TOKENIZER:-/work/shared/data/tokenizers/modern/smollm}
BENCH_DIR=${ATTN_BENCH_DIR:-/tmp/attnscope-bench}
SPEED_INPUTS=${ATTN_CORPUS_SPEED_INPUTS:-200}
STORIES="$ROOT/resources/models/stories260k"

for program in "$CLI" "$APP" "$BUILD_DIR/tests/bench/bench_decoder"; do
  [[ -x "$program" ]] || { echo "error: $program not found; build it first" >&2; exit 2; }
done
[[ -d "$ROOT/tools/golden/node_modules/tokenizers" ]] ||
  { echo "error: cd tools/golden && npm install --ignore-scripts" >&2; exit 2; }
[[ -f "$TOKENIZER/tokenizer.json" ]] || { echo "error: no tokenizer.json in $TOKENIZER" >&2; exit 2; }
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "error: rounds must be a positive integer, got '$ROUNDS'" >&2; exit 2; }

unset OPENBLAS_CORETYPE
export OMP_NUM_THREADS=$THREADS
unset ATTN_THREADS
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# `lines` lines of 12 consecutive sample stories each (cyclically): more than 128 tokens for both tokenizers.
corpus() {
  "$PY" - "$ROOT/resources/samples/corpus/stories.txt" "$1" > "$2" <<'EOF'
import sys
stories = [l.strip() for l in open(sys.argv[1]) if l.strip()]
for i in range(int(sys.argv[2])):
    print(" ".join(stories[(i + j) % len(stories)] for j in range(12)))
EOF
}
# stories260K's ids of each line of a corpus file, BOS first, cut to 128: JSON Lines as corpus_ids.mjs writes them.
sp_ids() {
  "$PY" - "$STORIES/tokenizer.model" "$1" "$2" <<'EOF'
import json, sys
import sentencepiece
sp = sentencepiece.SentencePieceProcessor(model_file=sys.argv[1])
with open(sys.argv[2]) as corpus, open(sys.argv[3], "w") as out:
    for i, line in enumerate(corpus):
        if line.strip():
            out.write(json.dumps({"id": i, "ids": ([1] + sp.encode(line.rstrip("\n")))[:128]}) + "\n")
EOF
}
# The loop's inputs/s from the CLI's summary ("... N new inputs ... X inputs/s ...").
engine_rate() { sed -n 's/.* \([0-9.]*\) inputs\/s .*/\1/p' "$1" | tail -1; }
peak_kib() { sed -n 's/^\s*Maximum resident set size (kbytes): //p' "$1"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "== corpus runs: the engine against torch ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores online"
echo "threads:  $THREADS on both sides (OMP_NUM_THREADS, torch.set_num_threads); OPENBLAS_CORETYPE unset"
echo "blas:     libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
echo "load:     $(load) before"

if [[ ",$PARTS," == *,speed,* ]]; then
  SMOL=$("$BUILD_DIR/tests/bench/bench_decoder" --prepare | sed -n 's/^smollm2 folder: //p')
  MODEL="$BENCH_DIR/smollm2-135m-corpus"
  mkdir -p "$MODEL"
  for f in "$SMOL"/*; do ln -sf "$(realpath "$f")" "$MODEL/$(basename "$f")"; done
  cp "$TOKENIZER/tokenizer.json" "$MODEL/tokenizer.json"
  corpus "$SPEED_INPUTS" "$WORK/speed.txt"
  (cd "$ROOT/tools/golden" && node corpus_ids.mjs "$MODEL" "$WORK/speed.txt" "$WORK/speed.jsonl" 128) > /dev/null
  echo "-- speed: SmolLM2-135M shape, $SPEED_INPUTS inputs of 128 tokens, $ROUNDS rounds (torch, engine)"
  engine=() torch=()
  for ((r = 1; r <= ROUNDS; ++r)); do
    (cd "$ROOT" && "$PY" -m tests.bench.torch_corpus_peer --checkpoint "$MODEL" --ids "$WORK/speed.jsonl" \
      --db "$WORK/torch.sqlite" --threads $THREADS) > "$WORK/torch-$r.json"
    torch+=("$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["inputs_per_second"])' "$WORK/torch-$r.json")")
    rm -f "$WORK/engine.sqlite"
    "$CLI" corpus --model "$MODEL" --input "$WORK/speed.txt" --db "$WORK/engine.sqlite" --max-tokens 128 \
      > "$WORK/engine-$r.out" 2>&1
    engine+=("$(engine_rate "$WORK/engine-$r.out")")
    echo "   round $r: torch ${torch[-1]} inputs/s, engine ${engine[-1]} inputs/s (load $(load))"
  done
  "$PY" - "$WORK/engine.sqlite" "$WORK/torch.sqlite" "${engine[*]}" "${torch[*]}" <<'EOF'
import sqlite3, statistics, sys
e, t = sqlite3.connect(sys.argv[1]), sqlite3.connect(sys.argv[2])
cols = "entropy, mean_distance, first_token_mass, max_weight, previous_token"
q = f"SELECT input_id, layer, head, {cols} FROM head_stats WHERE input_id < 5 ORDER BY input_id, layer, head"
a, b = e.execute(q).fetchall(), t.execute(q).fetchall()
assert len(a) == len(b) and len(a) > 0, (len(a), len(b))
worst = max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra[3:], rb[3:]))
tokens = {r[0] for r in e.execute("SELECT tokens FROM inputs")} | {r[0] for r in t.execute("SELECT tokens FROM inputs")}
print(f"   the same statistics: inputs 0-4, {len(a)} head rows, largest difference {worst:.2e}; tokens per input {sorted(tokens)}")
me = statistics.median(float(x) for x in sys.argv[3].split())
mt = statistics.median(float(x) for x in sys.argv[4].split())
print(f"   median: engine {me:.1f} inputs/s, torch {mt:.1f} inputs/s: {me / mt:.2f}x (target >= 2x)")
EOF
fi

if [[ ",$PARTS," == *,memory,* ]]; then
  echo "-- memory: stories260K, inputs of 128 tokens, peak resident set"
  for n in 1000 100000; do
    corpus "$n" "$WORK/mem.txt"
    sp_ids "$WORK/mem.txt" "$WORK/mem.jsonl"
    rm -f "$WORK/engine.sqlite"
    /usr/bin/time -v -o "$WORK/mem-engine.time" "$CLI" corpus --model "$STORIES" --input "$WORK/mem.txt" \
      --db "$WORK/engine.sqlite" --max-tokens 128 > "$WORK/mem-engine.out" 2>&1
    (cd "$ROOT" && "$PY" -m tests.bench.torch_corpus_peer --checkpoint "$STORIES" --ids "$WORK/mem.jsonl" \
      --db "$WORK/torch.sqlite" --threads $THREADS) > "$WORK/mem-torch.json"
    "$PY" - "$n" "$(peak_kib "$WORK/mem-engine.time")" "$(engine_rate "$WORK/mem-engine.out")" "$WORK/mem-torch.json" <<'EOF'
import json, sys
n, engine_kib, engine_rate, t = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], json.load(open(sys.argv[4]))
print(f"   {n:>7,} inputs: engine peak {engine_kib / 1024:7.1f} MiB ({engine_rate} inputs/s); "
      f"torch peak {t['peak_rss_kib'] / 1024:7.1f} MiB ({t['inputs_per_second']:.1f} inputs/s)")
EOF
  done
fi

if [[ ",$PARTS," == *,merge,* ]]; then
  SHARDS="$BENCH_DIR/corpus-shards"
  rm -rf "$SHARDS"
  mkdir -p "$SHARDS"
  "$PY" -c 'import sys; s = [l for l in open(sys.argv[1]) if l.strip()]; sys.stdout.writelines(s[i % len(s)] for i in range(1000000))' \
    "$ROOT/resources/samples/corpus/stories.txt" > "$SHARDS/corpus.txt"
  echo "-- merge: 100 shards of 10,000 inputs (stories260K, the sample's lines), written two at a time, a thread each"
  start=$(date +%s)
  seq 0 99 | OMP_NUM_THREADS=1 xargs -P 2 -I{} "$CLI" corpus --model "$STORIES" --input "$SHARDS/corpus.txt" \
    --db "$SHARDS/shard-{}.sqlite" --shard {}/100 > /dev/null 2>&1
  echo "   shards written in $(( $(date +%s) - start )) s; $(du -sh "$SHARDS" | cut -f1) in all"
  /usr/bin/time -f "%e s, peak %M KiB" -o "$WORK/merge.time" "$CLI" corpus merge --db "$SHARDS/merged.sqlite" \
    "$SHARDS"/shard-*.sqlite > "$WORK/merge.out" 2>&1
  echo "   merge: $(cat "$WORK/merge.time"); merged file $(du -h "$SHARDS/merged.sqlite" | cut -f1)" \
       "(load $(load))"
  cold="warm page cache"
  if sync && echo 3 2> /dev/null > /proc/sys/vm/drop_caches; then cold="page cache dropped before round 1"; fi
  echo "   the Corpus tab opening the merged file, in the program ($cold; load $(load)):"
  QT_QPA_PLATFORM=offscreen "$BUILD_DIR/tests/bench/bench_corpus_open" "$SHARDS/merged.sqlite" --rounds 3 2> /dev/null
  for try in 1 2; do
    /usr/bin/time -f "%e" -o "$WORK/open.time" env QT_QPA_PLATFORM=offscreen "$APP" --tab corpus \
      --corpus "$SHARDS/merged.sqlite" --model "$STORIES" --screenshot "$WORK/open.png" > /dev/null 2>&1
    echo "   attnscope --tab corpus on the merged file, its screenshot written (whole process, try $try):" \
         "$(cat "$WORK/open.time") s"
  done
  [[ "${ATTN_KEEP_SHARDS:-}" == 1 ]] || rm -rf "$SHARDS"
fi
echo "load:     $(load) after"
