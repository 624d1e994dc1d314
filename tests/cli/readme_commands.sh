#!/usr/bin/env bash
# Every command README.md shows must run as written. This test reads them from README.md (each line of a
# ```sh block, with its backslash continuations, and every inline example: `attnscope-cli ... --out FILE`, and
# spans that begin with tools/setup.sh, tests/fuzz/run.sh, tests/bench/run_, build/*/tests/bench/, cmake --preset,
# ctest --preset or /usr/bin/python3) and checks each the way its first word says:
#   attnscope-cli, build/dev/app/attnscope-cli   run for real; exit status 0
#   attnscope, build/dev/app/attnscope           the GUI, run offscreen with --screenshot; exit status 0
#   tools/setup.sh run                           run for real without a display, cmake replaced by a recorder: the
#                                                "no display" line must come first, the tree must be one that
#                                                exists, and the demo PNG files must be written
#   tools/setup.sh test|sanitize                 what CI runs (this test is part of it): the script parses
#   tests/fuzz/run.sh, tests/bench/run_*.sh      minutes long, need clang or torch: exists, executable, parses
#   build/*/tests/bench/*                        the benchmark is built in this tree (when benchmarks are built)
#   cmake --preset P, ctest --preset P           P is a preset of CMakePresets.json
#   /usr/bin/python3 tools/...                   the script exists
# A command that fits none of these fails the test, so a new kind of command in the README needs a rule here.
#
#   tests/cli/readme_commands.sh SOURCE_DIR BUILD_DIR BENCH_BUILT(ON|OFF)
# build/dev in a command stands for BUILD_DIR; commands run in order in a scratch folder where resources/,
# tests/ and tools/ point into SOURCE_DIR (so a later command can read what an earlier one wrote).
set -uo pipefail

src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
bench_built=${3:-ON}
readme="$src/README.md"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ln -s "$src/resources" "$work/resources"
ln -s "$src/tests" "$work/tests"
ln -s "$src/tools" "$work/tools"
# The GUI reads and autosaves its session under XDG folders: keep the user's own out of this.
export XDG_DATA_HOME="$work/.xdg-data" XDG_CONFIG_HOME="$work/.xdg-config" XDG_CACHE_HOME="$work/.xdg-cache"
export QT_QPA_PLATFORM=offscreen

# The commands, one per line: ```sh blocks (continuations joined, trailing "  # comment" dropped), then the
# inline examples.
mapfile -t commands < <(awk '
  /^```sh[[:space:]]*$/ { inblock = 1; next }
  /^```/ { inblock = 0; next }
  inblock {
    line = $0
    sub(/[[:space:]][[:space:]]+#.*$/, "", line)
    if (line ~ /\\$/) { sub(/\\$/, "", line); pending = pending line; next }
    line = pending line; pending = ""
    gsub(/^[[:space:]]+|[[:space:]]+$/, "", line); gsub(/[[:space:]]+/, " ", line)
    if (line != "") print line
    next
  }
  {
    rest = $0
    while (match(rest, /`(attnscope-cli [^`]*--out |tools\/setup\.sh |tests\/fuzz\/run\.sh|tests\/bench\/run_|build\/[a-z]+\/tests\/bench\/|cmake --preset|ctest --preset|\/usr\/bin\/python3 )[^`]*`/)) {
      print substr(rest, RSTART + 1, RLENGTH - 2)
      rest = substr(rest, RSTART + RLENGTH)
    }
  }' "$readme")

((${#commands[@]} > 0)) || { echo "no commands found in $readme"; exit 1; }
# "a && b" is two commands, checked in turn.
split=()
for cmd in "${commands[@]}"; do
  while [[ "$cmd" == *" && "* ]]; do
    split+=("${cmd%% && *}")
    cmd=${cmd#* && }
  done
  split+=("$cmd")
done
commands=("${split[@]}")

passed=0
failed=0
fail() { echo "FAIL: $cmd"; echo "      $1"; failed=$((failed + 1)); }
pass() { echo "ok:   $cmd${1:+  ($1)}"; passed=$((passed + 1)); }

run_logged() {  # runs "$@" in the scratch folder; prints its output on failure
  local log="$work/.log" status
  (cd "$work" && timeout 300 "$@") >"$log" 2>&1
  status=$?
  if ((status != 0)); then sed 's/^/      | /' "$log" | tail -20; fi
  return $status
}

check_setup_run() {
  local fake="$work/.fakebin" out="$work/.demo-out" log="$work/.setup-run.log"
  mkdir -p "$fake"
  # cmake only records its arguments: this test must not reconfigure or rebuild the tree it runs from.
  printf '#!/bin/sh\necho "cmake $*" >> "%s/.cmake-calls"\n' "$work" >"$fake/cmake"
  chmod +x "$fake/cmake"
  rm -f "$work/.cmake-calls"
  if ! (env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM PATH="$fake:$PATH" ATTN_DEMO_OUT="$out" \
          timeout 300 bash "$src/tools/setup.sh" run) >"$log" 2>&1; then
    sed 's/^/      | /' "$log" | tail -20
    fail "tools/setup.sh run failed without a display"
    return
  fi
  if ! head -1 "$log" | grep -q '^== no display'; then
    fail "its first line is not the no-display notice: $(head -1 "$log")"
    return
  fi
  local preset
  preset=$(sed -n 's/^cmake --preset \([a-z]*\)$/\1/p' "$work/.cmake-calls" | head -1)
  if [ -z "$preset" ] || [ ! -f "$src/build/$preset/build.ninja" ]; then
    fail "it configured build/${preset:-?}, which is not a configured tree (cmake calls: $(tr '\n' ';' <"$work/.cmake-calls"))"
    return
  fi
  local pngs
  pngs=$(find "$out" -name '*.png' | wc -l)
  ((pngs >= 2)) || { fail "it wrote $pngs PNG files to $out"; return; }
  pass "no display said first; reused build/$preset; $pngs PNG files"
}

for cmd in "${commands[@]}"; do
  # Word-split with the shell's own quoting rules (the README's quotes are shell quotes).
  eval "set -- $cmd" 2>/dev/null || { fail "cannot be split into words"; continue; }
  first=$1
  case "$first" in
    attnscope-cli | build/dev/app/attnscope-cli)
      shift
      if run_logged "$build/app/attnscope-cli" "$@"; then pass; else fail "exited non-zero"; fi
      ;;
    attnscope | build/dev/app/attnscope)
      shift
      if run_logged "$build/app/attnscope" "$@" --screenshot "$work/.gui.png"; then pass "screenshot saved"; else fail "exited non-zero"; fi
      ;;
    tools/setup.sh)
      case "${2:-}" in
        run) check_setup_run ;;
        test | sanitize)
          if bash -n "$src/tools/setup.sh"; then pass "parses; CI runs it"; else fail "does not parse"; fi ;;
        *) fail "unknown mode '${2:-}'" ;;
      esac
      ;;
    tests/fuzz/run.sh | tests/bench/run_*.sh)
      if [ -x "$src/$first" ] && bash -n "$src/$first"; then pass "exists and parses"; else fail "missing, not executable or does not parse"; fi
      ;;
    build/*/tests/bench/*)
      bench="$build/tests/bench/${first##*/}"
      if [ "$bench_built" != ON ]; then
        pass "benchmarks are not built in this tree"
      elif [ -x "$bench" ]; then
        pass "built"
      else
        fail "$bench is not built"
      fi
      ;;
    cmake | ctest)
      preset=$(printf '%s\n' "$@" | sed -n '/^--preset$/{n;p;q}')
      if [ -n "$preset" ] && grep -q "\"name\": \"$preset\"" "$src/CMakePresets.json"; then
        pass "preset $preset exists"
      else
        fail "no such preset '${preset}' in CMakePresets.json"
      fi
      ;;
    /usr/bin/python3)
      if [ -f "$src/${2:-}" ]; then pass "script exists"; else fail "no such script ${2:-}"; fi
      ;;
    *)
      fail "tests/cli/readme_commands.sh has no rule for commands beginning with '$first'"
      ;;
  esac
done

echo "$passed passed, $failed failed"
((failed == 0))
