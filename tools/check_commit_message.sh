#!/usr/bin/env bash
# A commit message's rule, one place for the commit-msg hook and CI:
#   the subject is "<area>: <what>" (area: lower case letters, digits, '/', '-', '_', '.', ',' or spaces), at most
#   72 characters; when there is a body, the second line is blank.
#
#   tools/check_commit_message.sh FILE            # a message in a file (the commit-msg hook's argument)
#   tools/check_commit_message.sh --since-rule    # every commit of HEAD from the one that brought this rule in
# Exit status 0 when every message keeps the rule; otherwise each offence is printed.
set -uo pipefail

check_message() {  # check_message NAME < message; prints the offences, returns 1 if any
  local name=$1 subject second bad=0
  # git strips comment lines before storing; the hook sees them, so drop them here too.
  mapfile -t lines < <(grep -v '^#')
  subject=${lines[0]:-}
  second=${lines[1]-}
  if [ -z "$subject" ]; then
    echo "$name: empty subject"; return 1
  fi
  if ((${#subject} > 72)); then
    echo "$name: subject is ${#subject} characters, at most 72: \"$subject\""; bad=1
  fi
  if ! [[ $subject =~ ^[a-z0-9][a-z0-9/_.,\ -]*:\ [^[:space:]] ]]; then
    echo "$name: subject is not \"<area>: <what>\" (e.g. \"ui/lab: open capsule routing on its last iteration\"): \"$subject\""; bad=1
  fi
  if ((${#lines[@]} > 1)) && [ -n "$second" ]; then
    echo "$name: the second line must be blank (the body starts on the third)"; bad=1
  fi
  return $bad
}

if [ "${1:-}" = --since-rule ]; then
  top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  cd "$top"
  git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: no commits to check"; exit 1; }
  first=$(git log --diff-filter=A --format=%H -- tools/check_commit_message.sh | tail -1)
  [ -n "$first" ] || { echo "this rule is not committed yet: no commits to check"; exit 0; }
  failed=0 count=0
  while read -r commit; do
    count=$((count + 1))
    [ "$(git rev-list --parents -n 1 "$commit" | wc -w)" -gt 2 ] && continue  # merges keep git's subject
    git log -1 --format=%B "$commit" | check_message "$(git log -1 --format=%h "$commit")" || failed=$((failed + 1))
  done < <(git rev-list "$first^..HEAD" 2>/dev/null || git rev-list HEAD)
  echo "commit messages since the rule came in: $((count - failed)) passed, $failed failed"
  ((failed == 0))
  exit
fi
[ $# -eq 1 ] && [ -f "$1" ] || { echo "usage: tools/check_commit_message.sh FILE | --since-rule" >&2; exit 2; }
check_message "commit message" <"$1"
