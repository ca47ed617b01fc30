#!/usr/bin/env bash
# A sweep across hosts on Slurm: a job array whose task i runs shard i+1 of N of the sweep into
# its own database (SQLite must not be shared over a network file system), then a job that
# starts when every task has succeeded, merges the shards and prints the Pareto front.
#
#   scripts/slurm_sweep.sh SPEC [--tasks N] [--db-dir DIR] [-- SBATCH_OPTION...]   submit both jobs
#   scripts/slurm_sweep.sh --task SPEC --tasks N [--db-dir DIR]    one task (SLURM_ARRAY_TASK_ID)
#   scripts/slurm_sweep.sh --merge SPEC --tasks N [--db-dir DIR]   merge the N shards, print the front
#
# Task i writes DIR/<study>.<i>.db (DIR defaults to results/ under the repository); the merge
# writes DIR/<study>.db. Re-submitting resumes: each shard's sweep skips its complete trials.
# COMERA names the comera binary (default build/comera). docs/distributed.md has the same steps
# as a plain loop over hosts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
self="$root/scripts/slurm_sweep.sh"
comera=${COMERA:-$root/build/comera}

usage() {
  sed -n '2,14p' "$self" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

mode=submit
case "${1:-}" in
  --task) mode=task; shift ;;
  --merge) mode=merge; shift ;;
  -h|--help|"") usage ;;
esac
spec=${1:-}
[ -n "$spec" ] || usage
shift
tasks=4
db_dir="$root/results"
sbatch_extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tasks) tasks=$2; shift 2 ;;
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
[ -x "$comera" ] || { echo "slurm_sweep: $comera is not built (scripts/build.sh comera), or set COMERA" >&2; exit 2; }
study=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' "$spec") ||
  { echo "slurm_sweep: $spec has no \"name\" (the study's name)" >&2; exit 2; }
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
    array=$(sbatch --parsable --job-name "comera-$study" --array "0-$((tasks - 1))" "${sbatch_extra[@]}" \
      --wrap "$(printf '%q ' "$self" --task "$spec" "${common[@]}")")
    array=${array%%;*}
    merge=$(sbatch --parsable --job-name "comera-$study-merge" --dependency "afterok:$array" \
      "${sbatch_extra[@]}" --wrap "$(printf '%q ' "$self" --merge "$spec" "${common[@]}")")
    echo "submitted: job array $array ($tasks tasks, shards in $db_dir/$study.<i>.db), merge job ${merge%%;*} -> $db_dir/$study.db"
    ;;
esac
