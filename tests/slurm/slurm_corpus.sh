#!/usr/bin/env bash
# tools/slurm/corpus.sbatch on a real single-node Slurm (issue 46): this test starts munge (unless it runs),
# slurmctld and slurmd with a slurm.conf of its own (SLURM_CONF, every file under a temporary folder), submits the
# recipe as a user would (two shards of a corpus through the bundled induction-gpt2, then the merge that waits for
# them), compares the merged database with an unsharded run row for row, and tears everything down.
#
#   tests/slurm/slurm_corpus.sh SOURCE_DIR BUILD_DIR
#
# Exit 77 (ctest: skipped) with the reason where Slurm cannot start here (not root, slurm-wlm or munge not
# installed); under CI=true that is a failure instead: CI installs them (tools/setup.sh test).
set -uo pipefail

src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
cli="$build/app/attnscope-cli"

skip() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL (CI=true, where Slurm must run): $1"
    exit 1
  fi
  echo "SKIPPED: $1"
  exit 77
}
[ "$(id -u)" = 0 ] || skip "slurmctld and slurmd run as root here (SlurmUser=root); this user is $(id -un)"
for program in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged /usr/bin/sbatch /usr/bin/munge; do
  [ -x "$program" ] || skip "$program not found: apt-get install slurm-wlm munge"
done
[ -x "$cli" ] || { echo "FAIL: $cli not built"; exit 1; }

work=$(mktemp -d /tmp/attn-slurm.XXXXXX)
chmod 755 "$work"
started_munge=
teardown() {
  for daemon in slurmd slurmctld; do
    [ -f "$work/$daemon.pid" ] && kill "$(cat "$work/$daemon.pid")" 2>/dev/null
  done
  [ -n "$started_munge" ] && [ -f /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null
  sleep 1
  rm -rf "$work"
}
trap teardown EXIT
fail() {
  echo "FAIL: $1"
  for log in "$work"/slurmctld.log "$work"/slurmd.log "$work"/out/*.out; do
    [ -f "$log" ] && { echo "--- $log"; tail -15 "$log"; }
  done
  exit 1
}

# munge: the package's key, its socket folder owned by munge.
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  [ -f /etc/munge/munge.key ] || skip "no /etc/munge/munge.key (the munge package writes it at install)"
  mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
  runuser -u munge -- /usr/sbin/munged --force 2>/dev/null || /usr/sbin/munged --force 2>/dev/null ||
    skip "munged does not start"
  started_munge=yes
  for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n | unmunge >/dev/null 2>&1 || skip "munge credentials do not round-trip"
fi

host=$(hostname -s)
mkdir -p "$work/state" "$work/spool" "$work/out"
cat >"$work/slurm.conf" <<CONF
ClusterName=attnscope-test
SlurmctldHost=$host
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
SlurmctldPort=$((6900 + RANDOM % 50))
SlurmdPort=$((6960 + RANDOM % 30))
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
/usr/sbin/slurmctld || fail "slurmctld did not start"
/usr/sbin/slurmd || fail "slurmd did not start"
for _ in $(seq 100); do sinfo -h -o %t 2>/dev/null | grep -qx idle && break; sleep 0.2; done
sinfo -h -o %t | grep -qx idle || fail "the node is not idle after 20 s: $(sinfo 2>&1)"
echo "ok:   slurmctld and slurmd up, node $host idle"

# A corpus of 60 lines of letters (every third a string twice), an empty line among them.
model="$src/resources/models/induction-gpt2"
python3 - "$work/corpus.txt" <<'PY'
import random, sys
r = random.Random(46)
with open(sys.argv[1], "w") as f:
    for i in range(60):
        s = "".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(6, 20)))
        f.write(("" if i == 17 else s + (s if i % 3 == 0 else "")) + "\n")
PY

cd "$work/out" || fail "no out folder"
submitted=$(ATTNSCOPE_CLI="$cli" bash "$src/tools/slurm/corpus.sbatch" "$model" "$work/corpus.txt" "$work/out" 2) ||
  fail "corpus.sbatch did not submit: $submitted"
echo "ok:   $submitted"
merge=$(sed -n 's/.*merge \([0-9]*\) .*/\1/p' <<<"$submitted")
[ -n "$merge" ] || fail "no merge job id in: $submitted"
state=
for _ in $(seq 600); do
  state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL) break ;; esac
  sleep 0.2
done
[ "$state" = COMPLETED ] || fail "the merge job ended $state"
for i in 0 1; do [ -f "$work/out/shard-$i-of-2.sqlite" ] || fail "no shard-$i-of-2.sqlite"; done
echo "ok:   two shard tasks and the merge job completed"
for log in "$work"/out/attnscope-corpus-*_[01].out; do
  grep -q "inputs/s on 2 threads" "$log" || fail "a shard task did not run on its task's 2 CPUs: $(cat "$log")"
done
echo "ok:   each shard task ran on its --cpus-per-task (2 threads)"

# With the shards' threads (the recipe's --cpus-per-task): the thread count moves the sums' last bits.
"$cli" corpus --model "$model" --input "$work/corpus.txt" --db "$work/whole.sqlite" --threads 2 >"$work/whole.log" 2>&1 ||
  fail "the unsharded run failed: $(cat "$work/whole.log")"
python3 - "$work/out/corpus.sqlite" "$work/whole.sqlite" <<'PY' || fail "the merged database is not the unsharded run"
import sqlite3, sys
merged, whole = (sqlite3.connect(p) for p in sys.argv[1:])
for table, order in [("inputs", "id"), ("head_stats", "1, 2, 3"), ("top_pairs", "1, 2, 3, 4"), ("skipped", "id")]:
    a = merged.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
    b = whole.execute(f"SELECT * FROM {table} ORDER BY {order}").fetchall()
    if a != b or not b:
        sys.exit(f"{table}: {len(a)} rows merged, {len(b)} unsharded, first difference at "
                 f"{next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))}")
    print(f"ok:   {table}: {len(b)} rows, the same")
PY
echo "passed: the sbatch recipe's merge is the unsharded run, row for row"
