#!/bin/bash
# Long inputs (issue 21): the SmolLM2-135M-shaped BF16 checkpoint (32,768 positions) forward keeping its attention
# on demand (bench_decoder's BM_SmolLongForward: queries, keys and row statistics kept, every map recomputable,
# statistics streamed) against torch computing the same forward keeping no map at all (torch_decoder_peer.py's
# long:N: softmax(Q K^T / sqrt(d)) V per layer over blocks of 1,024 query rows), one forward each per length, torch
# first, the same thread count on both sides. Then, at the longest length, one head's whole map at the level that
# fits 1,024 pixels: the preview and the exact max-pooled map (BM_SmolLongPreview, BM_SmolLongWholeMap, which reuse
# that length's forward when it is the one just run).
#
#   tests/bench/run_long_vs_torch.sh <build-dir> [lengths...]     # default lengths: 4096 8192
#
# Target (the issue): the engine's forward within 1.3x torch's time at 8,192 tokens. A forward at 16,384 tokens
# takes minutes on each side, at 32,768 tens of minutes: give those lengths explicitly.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 <build-dir> [lengths...]" >&2
  exit 2
fi
BUILD_DIR=$1
shift
LENGTHS=("${@:-4096 8192}")
read -r -a LENGTHS <<< "${LENGTHS[*]}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)  # the torch peer runs from here as a module: it imports the tools package
BENCH="$BUILD_DIR/tests/bench/bench_decoder"
PY=/usr/bin/python3
THREADS=2
if [[ ! -x "$BENCH" ]]; then
  echo "error: $BENCH not found; build it first: cmake --build $BUILD_DIR --target bench_decoder" >&2
  exit 2
fi
for n in "${LENGTHS[@]}"; do
  case "$n" in 512|1024|2048|4096|8192|16384|32768) ;; *) echo "error: length $n is not one bench_decoder runs" >&2; exit 2 ;; esac
done
unset OPENBLAS_CORETYPE
export OMP_NUM_THREADS=$THREADS
unset ATTN_THREADS
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "== long inputs: forward on demand vs torch keeping no map ($(date -u '+%Y-%m-%d %H:%M:%SZ'))"
echo "cpu:      $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores online"
echo "threads:  $THREADS on both sides (OMP_NUM_THREADS, bench_decoder --threads, torch.set_num_threads); OPENBLAS_CORETYPE unset"
echo "blas:     libblas.so.3 -> $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (before)"
folder=$("$BENCH" --prepare --threads=$THREADS | sed -n 's/^smollm2 folder: //p')
long_folder=$(realpath -m "${folder}-32k")  # absolute: the peer runs from $ROOT
# BM_SmolLongForward writes its checkpoint on first use; make sure the peer can read it.
if [[ ! -f "$long_folder/model.safetensors" ]]; then
  "$BENCH" --threads=$THREADS --benchmark_filter='BM_SmolLongForward/L:512/' > /dev/null
fi
printf '%-8s %12s %12s %8s %14s %10s\n' tokens "torch s" "engine s" ratio "on-demand MB" "peak MB"
for n in "${LENGTHS[@]}"; do
  torch_ms=$(cd "$ROOT" && "$PY" -m tests.bench.torch_decoder_peer --checkpoint "$long_folder" --threads $THREADS --cases "long:$n" \
               --repetitions 1 --min-time 0 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["results"][0]["median_ms"])')
  filter="BM_SmolLongForward/L:$n/"
  [[ $n == 32768 ]] && filter="BM_SmolLong(Forward|Preview|WholeMap)/L:$n/"  # the whole map reuses this forward
  out=$(/usr/bin/time -o "$WORK/time" -f '%M' "$BENCH" --threads=$THREADS --benchmark_filter="$filter" \
          --benchmark_format=json 2> "$WORK/stderr")
  [[ $n == 32768 ]] && whole="$out"
  engine_s=$(echo "$out" | "$PY" -c 'import json,sys; j=json.load(sys.stdin); b=j["benchmarks"][0]; print(b["real_time"] if b["time_unit"]=="s" else b["real_time"]/1e3)')
  mb=$(echo "$out" | "$PY" -c 'import json,sys; j=json.load(sys.stdin); print(round(j["benchmarks"][0]["on_demand_MB"]))')
  peak=$(tail -1 "$WORK/time")
  "$PY" -c "import sys; t=$torch_ms/1e3; e=$engine_s; print(f'{$n:<8} {t:12.2f} {e:12.2f} {e/t:7.2f}x {$mb:14} {$peak/1024:10.0f}')"
done
if [[ -n "${whole:-}" ]]; then
  echo "one head's whole map at 32,768 tokens (layer 15, the level that fits 1,024 pixels):"
  echo "$whole" | "$PY" -c 'import json,sys; j=json.load(sys.stdin)
for b in j["benchmarks"][1:]:
    name, t, unit, f, rate = b["name"], b["real_time"], b["time_unit"], b["factor"], b["GFLOP/s"]
    print(f"  {name:<40} {t:9.1f} {unit}  factor {f:.0f}  {rate:.1f} GFLOP/s")'
fi
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (after)"
echo "target:   engine/torch <= 1.3x at 8,192 tokens"
