#!/usr/bin/env bash
# A sweep across hosts on Slurm: a job array whose task i runs shard i+1 of N of the sweep into
# its own database (SQLite must not be shared over a network file system), then a job that
# starts when every task has succeeded, merges the shards and prints the Pareto front.
#
#   scripts/slurm_sweep.sh SPEC [--tasks N] [--rounds R] [--db-dir DIR] [-- SBATCH_OPTION...]   submit
#   scripts/slurm_sweep.sh --task SPEC --tasks N [--db-dir DIR]    one task (SLURM_ARRAY_TASK_ID)
#   scripts/slurm_sweep.sh --merge SPEC --tasks N [--db-dir DIR]   merge the N shards, print the front
#   scripts/slurm_sweep.sh --propose SPEC --tasks N [--db-dir DIR] an adaptive round's proposals
#
# Task i writes DIR/<study>.<i>.db (DIR defaults to results/ under the repository); the merge
# writes DIR/<study>.db. Re-submitting resumes: each shard's sweep skips its complete trials.
# An adaptive spec runs in R rounds (default 1) of three jobs: --propose proposes N trials into
# DIR/<study>.db (each seeing the others as pending) and copies it to every task's database;
# the array runs them, shard i/N of the queued trials each; the merge brings the results back,
# for the next round's proposals.
# COMERA names the comera binary (default build/comera). docs/distributed.md has the same steps
# as a plain loop over hosts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/scripts/slurm_sweep.sh"
comera=${COMERA:-$root/build/comera}

usage() {
  sed -n '2,19p' "$self" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

mode=submit
case "${1:-}" in
  --task) mode=task; shift ;;
  --merge) mode=merge; shift ;;
  --propose) mode=propose; shift ;;
  -h|--help|"") usage ;;
esac
spec=${1:-}
[ -n "$spec" ] || usage
shift
tasks=4
rounds=1
db_dir="$root/results"
sbatch_extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tasks) tasks=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --db-dir) db_dir=$2; shift 2 ;;
    --) shift; sbatch_extra=("$@"); break ;;
    *) echo "slurm_sweep: unknown option $1" >&2; usage ;;
  esac
done

[ -f "$spec" ] || { echo "slurm_sweep: no sweep spec at $spec" >&2; exit 2; }
spec=$(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")
case "$tasks" in
  ''|*[!0-9]*|0) echo "slurm_sweep: --tasks must be a positive integer, not '$tasks'" >&2; exit 2 ;;
esac
case "$rounds" in
  ''|*[!0-9]*|0) echo "slurm_sweep: --rounds must be a positive integer, not '$rounds'" >&2; exit 2 ;;
esac
[ -x "$comera" ] || { echo "slurm_sweep: $comera is not built (scripts/build.sh comera), or set COMERA" >&2; exit 2; }
study=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$spec") ||
  { echo "slurm_sweep: $spec has no \"name\" (the study's name)" >&2; exit 2; }
adaptive=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("sampling", {}).get("method") == "adaptive")' "$spec")
mkdir -p "$db_dir"
db_dir=$(cd "$db_dir" && pwd)
shard_db() { echo "$db_dir/$study.$1.db"; }

case "$mode" in
  task)
    i=${SLURM_ARRAY_TASK_ID:?slurm_sweep --task: SLURM_ARRAY_TASK_ID is not set (Slurm sets it in a job array)}
    [ "$i" -lt "$tasks" ] || { echo "slurm_sweep: task $i of $tasks does not exist" >&2; exit 2; }
    echo "slurm_sweep: task $i of $tasks on $(hostname): shard $((i + 1))/$tasks -> $(shard_db "$i")"
    exec "$comera" sweep "$spec" --shard "$((i + 1))/$tasks" --db "$(shard_db "$i")" \
      --threads "${SLURM_CPUS_PER_TASK:-0}" --quiet --no-front
    ;;
  propose)
    [ "$adaptive" = True ] || { echo "slurm_sweep: --propose needs an adaptive spec (\"sampling\": {\"method\": \"adaptive\"})" >&2; exit 2; }
    "$comera" sweep "$spec" --db "$db_dir/$study.db" --propose "$tasks" --quiet
    for ((i = 0; i < tasks; i++)); do
      rm -f "$(shard_db "$i")" "$(shard_db "$i")-wal" "$(shard_db "$i")-shm"
      "$comera" merge "$db_dir/$study.db" -o "$(shard_db "$i")" >/dev/null
    done
    echo "slurm_sweep: proposals in $db_dir/$study.db, copied to the $tasks tasks' databases"
    ;;
  merge)
    shards=()
    for ((i = 0; i < tasks; i++)); do
      [ -f "$(shard_db "$i")" ] || { echo "slurm_sweep: shard $(shard_db "$i") is missing (did task $i run?)" >&2; exit 1; }
      shards+=("$(shard_db "$i")")
    done
    "$comera" merge "${shards[@]}" -o "$db_dir/$study.db"
    exec "$comera" pareto --db "$db_dir/$study.db" --study "$study"
    ;;
  submit)
    command -v sbatch >/dev/null ||
      { echo "slurm_sweep: sbatch not found: run on a Slurm login node, or the loop in docs/distributed.md" >&2; exit 2; }
    common=(--tasks "$tasks" --db-dir "$db_dir")
    [ "$adaptive" = True ] || [ "$rounds" = 1 ] ||
      { echo "slurm_sweep: --rounds is for adaptive specs; a grid or random sweep runs in one round" >&2; exit 2; }
    after=()
    for ((round = 1; round <= rounds; round++)); do
      if [ "$adaptive" = True ]; then
        propose=$(sbatch --parsable --job-name "comera-$study-propose" "${after[@]}" "${sbatch_extra[@]}" \
          --wrap "$(printf '%q ' "$self" --propose "$spec" "${common[@]}")")
        after=(--dependency "afterok:${propose%%;*}")
      fi
      array=$(sbatch --parsable --job-name "comera-$study" --array "0-$((tasks - 1))" "${after[@]}" "${sbatch_extra[@]}" \
        --wrap "$(printf '%q ' "$self" --task "$spec" "${common[@]}")")
      array=${array%%;*}
      merge=$(sbatch --parsable --job-name "comera-$study-merge" --dependency "afterok:$array" \
        "${sbatch_extra[@]}" --wrap "$(printf '%q ' "$self" --merge "$spec" "${common[@]}")")
      after=(--dependency "afterok:${merge%%;*}")
      echo "submitted round $round: job array $array ($tasks tasks, shards in $db_dir/$study.<i>.db), merge job ${merge%%;*} -> $db_dir/$study.db"
    done
    ;;
esac
