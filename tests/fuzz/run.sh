#!/usr/bin/env bash
# Builds the libFuzzer targets with clang 16 (ASan + UBSan, the engine instrumented too) into build/fuzz and
# runs each for SECONDS, two at a time, then prints what each did and found.
#
#   tests/fuzz/run.sh SECONDS [TARGET...]     # e.g. tests/fuzz/run.sh 60, tests/fuzz/run.sh 600 image bpe
#   FUZZ_JOBS=1 tests/fuzz/run.sh 600         # one target at a time (default 2), leaving a core free
#
# Targets are the tests/fuzz/fuzz_<target>.cpp files (all of them when none is named). Each starts from its
# committed seeds, tests/fuzz/corpus/<target>/, copied into build/fuzz/corpus/<target>/, which grows from run
# to run while the committed corpus stays as it is. A crash, leak, timeout, out-of-memory or UBSan report
# stops that target and leaves the input in build/fuzz/artifacts/<target>/; reproduce it with
#   build/fuzz/tests/fuzz/fuzz_<target> build/fuzz/artifacts/<target>/crash-...
# and the log is build/fuzz/logs/<target>.log. Exits non-zero when any target reported a problem.
#
# Installs clang-16, libclang-rt-16-dev (libFuzzer and the sanitizer runtimes) and libomp-16-dev when they
# are missing (root or sudo); the engine's other dependencies are tools/setup.sh's.
set -euo pipefail

usage() { echo "usage: tests/fuzz/run.sh SECONDS [TARGET...]" >&2; exit 2; }
[[ $# -ge 1 && $1 =~ ^[0-9]+$ && $1 -gt 0 ]] || usage
seconds=$1
shift
parallel=${FUZZ_JOBS:-2}
[[ $parallel =~ ^[1-9][0-9]*$ ]] || { echo "FUZZ_JOBS must be a positive number, not \"$parallel\"" >&2; exit 2; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fuzz_src="$top/tests/fuzz"
build="$top/build/fuzz"

all=()
for f in "$fuzz_src"/fuzz_*.cpp; do
  name=$(basename "$f" .cpp)
  all+=("${name#fuzz_}")
done
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
for t in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $t "* ]] || { echo "no fuzz target \"$t\" (there are: ${all[*]})" >&2; exit 2; }
done

. "$top/tools/install_missing.sh"
install_missing clang-16 libclang-rt-16-dev libomp-16-dev

echo "== configuring and building $build (clang 16, ASan + UBSan + libFuzzer)"
# OpenBLAS off: every matrix product is Eigen's, compiled here and so instrumented.
CC=clang-16 CXX=clang++-16 cmake -S "$top" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DATTN_BUILD_FUZZ=ON -DATTN_BUILD_GUI=OFF -DATTN_BUILD_TESTS=OFF -DATTN_BUILD_BENCH=OFF \
  -DATTN_USE_OPENBLAS=OFF >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"

dict_for() {
  case "$1" in
    safetensors|attention_dump|attention_dump_v2) echo "$fuzz_src/safetensors.dict" ;;
    gguf) echo "$fuzz_src/gguf.dict" ;;
    image) echo "$fuzz_src/image.dict" ;;
    audio) echo "$fuzz_src/audio.dict" ;;
    *) echo "$fuzz_src/json.dict" ;;
  esac
}

# Leaks are reported (LeakSanitizer at exit of each input); UBSan stops at the first report with a trace.
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
# Leaks inside third-party libraries, each listed with what found it (not ours to fix; see the file).
export LSAN_OPTIONS="suppressions=$fuzz_src/lsan.supp:${LSAN_OPTIONS:-}"
export OMP_NUM_THREADS=1  # one core per target

run_one() {
  local t=$1
  local corpus="$build/corpus/$t" artifacts="$build/artifacts/$t/" log="$build/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$build/logs"
  cp -n "$fuzz_src/corpus/$t"/* "$corpus"/ 2>/dev/null || true
  touch "$build/logs/$t.start"  # artifacts newer than this are this run's
  local rc=0
  "$build/tests/fuzz/fuzz_$t" "$corpus" -max_total_time="$seconds" -dict="$(dict_for "$t")" -rss_limit_mb=2048 \
    -timeout=10 -detect_leaks=1 -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  echo "$rc" >"$build/logs/$t.rc"
}

echo "== fuzzing ${#targets[@]} target(s) for $seconds s each, $parallel at a time; logs in $build/logs"
for t in "${targets[@]}"; do
  rm -f "$build/logs/$t.rc"
  while (($(jobs -rp | wc -l) >= parallel)); do wait -n || true; done
  echo "   $(date -u +%H:%M:%S) $t"
  run_one "$t" &
done
wait

problems=0
printf '\n%-18s %12s %9s %8s %8s %6s %9s %5s  %s\n' target executions exec/s corpus crashes leaks timeouts ooms result
for t in "${targets[@]}"; do
  log="$build/logs/$t.log"
  rc=$(cat "$build/logs/$t.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  [[ -n $execs ]] || execs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  [[ -n $rate ]] || rate=$(grep -oE 'exec/s: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  corpus=$(find "$build/corpus/$t" -type f | wc -l)
  new=(-newer "$build/logs/$t.start")
  crashes=$(find "$build/artifacts/$t" "${new[@]}" -name 'crash-*' | wc -l)
  leaks=$(find "$build/artifacts/$t" "${new[@]}" -name 'leak-*' | wc -l)
  timeouts=$(find "$build/artifacts/$t" "${new[@]}" -name 'timeout-*' | wc -l)
  ooms=$(find "$build/artifacts/$t" "${new[@]}" -name 'oom-*' | wc -l)
  result=ok
  if ((rc != 0 || crashes + leaks + timeouts + ooms > 0)); then
    result="PROBLEM (exit $rc): see $log"
    problems=$((problems + 1))
  fi
  printf '%-18s %12s %9s %8s %8s %6s %9s %5s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$crashes" "$leaks" \
    "$timeouts" "$ooms" "$result"
done
echo "(corpus: inputs in build/fuzz/corpus/<target> after the run; crashes etc.: this run's artifacts)"
((problems == 0)) || { echo "$problems target(s) reported a problem" >&2; exit 1; }
