#!/usr/bin/env bash
# Trains an experiment tensorized (early + late stage, rank truncation) and with every layer
# dense, for the same steps, once per seed, and prints a per-epoch comparison: with one seed the
# two runs side by side, with several the mean and standard error over seeds of each, and the
# gap (tensorized minus dense, paired by seed) with its standard error.
#   scripts/compare_dense.sh [--seeds N] [--jobs J] [--fixed-ranks] [--pretrain PRE.json] [CONFIG] [extra flags]
# --seeds N: seeds 1..N (the experiment's training.seed is overridden); default one run at the
#   experiment's own seed. --jobs J: J trainings at a time (give --threads 1 with J = 2 on 2 cores;
#   accuracy does not depend on it, timings do). --fixed-ranks: also train, per seed, the
#   tensorized model at the ranks its adaptive run ended at, kept from the first step (comera
#   train --fixed-ranks), and print it against the adaptive run at the same final size.
#   --pretrain: first train PRE.json (masked-LM
#   pre-training) in both builds, then start each build's run from its own checkpoint (--init).
# The extra flags go to every `comera train`. CONFIG defaults to experiments/small_two_encoder.json
# and needs the default task's data (`build/comera data build-wordnet`) unless the config or the
# flags point elsewhere. Runs are not recorded in the results database. COMERA names the comera
# binary (default build/comera).
set -euo pipefail
cd "$(dirname "$0")/.."
comera=${COMERA:-build/comera}
seeds=0
jobs=1
fixed=false
pretrain=
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --pretrain) pretrain=$2; shift 2 ;;
    --fixed-ranks) fixed=true; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[[ "$seeds" =~ ^[0-9]+$ ]] || { echo "compare_dense: --seeds $seeds is not a count (give 1 or more)" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "compare_dense: --jobs $jobs is not a count (give 1 or more)" >&2; exit 2; }
config=experiments/small_two_encoder.json
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  config=$1
  shift
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One build (tensorized or dense) at one seed ("" = the experiment's own): pre-training first
# when asked, then the run; its --json result in $work/<build>_<seed>.json.
train() {
  local build=$1 seed=$2
  shift 2
  local flags=()
  [ "$build" = dense ] && flags+=(--dense)
  [ "$build" = fixed ] && flags+=(--fixed-ranks "$work/tensorized_${seed:-own}.json")
  [ -n "$seed" ] && flags+=(--seed "$seed")
  local name="${build}_${seed:-own}"
  if [ -n "$pretrain" ]; then
    echo "== $name pre-training: $comera train --config $pretrain ${flags[*]} $*" >&2
    "$comera" train --config "$pretrain" "${flags[@]}" --no-db --quiet --json \
      --checkpoint "$work/pre_$name.pt" "$@" > "$work/pre_$name.json"
    flags+=(--init "$work/pre_$name.pt")
  fi
  echo "== $name: $comera train --config $config ${flags[*]} $*" >&2
  "$comera" train --config "$config" "${flags[@]}" --no-db --quiet --json \
    --checkpoint "$work/$name.pt" "$@" > "$work/$name.json"
}

runs=()
if [ "$seeds" -eq 0 ]; then
  runs=("tensorized " "dense ")
else
  for ((s = 1; s <= seeds; s++)); do runs+=("tensorized $s" "dense $s"); done
fi
extra=("$@")
# Runs "BUILD SEED" items, at most $jobs at a time; any failure stops the comparison.
run_all() {
  local pids=() run build seed
  for run in "$@"; do
    read -r build seed <<< "$run"
    train "$build" "${seed:-}" "${extra[@]}" &
    pids+=($!)
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || { kill "${pids[@]}" 2>/dev/null; exit 1; }; done
  done
  for pid in "${pids[@]}"; do wait "$pid" || exit 1; done
}
run_all "${runs[@]}"
# The fixed-rank runs start from the ranks the adaptive runs ended at.
if $fixed; then
  fixed_runs=()
  for run in "${runs[@]}"; do
    read -r build seed <<< "$run"
    [ "$build" = tensorized ] && fixed_runs+=("fixed ${seed:-}")
  done
  run_all "${fixed_runs[@]}"
fi

python3 - "$work" "$pretrain" "$seeds" "$fixed" <<'EOF'
import json, math, os, sys

work, pretrain, seeds, fixed = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "true"
names = ["own"] if seeds == 0 else [str(s) for s in range(1, seeds + 1)]
tt = [json.load(open(os.path.join(work, f"tensorized_{n}.json"))) for n in names]
dense = [json.load(open(os.path.join(work, f"dense_{n}.json"))) for n in names]

def mean_se(values):
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, float("nan")
    var = sum((v - m) ** 2 for v in values) / (len(values) - 1)
    return m, math.sqrt(var / len(values))

def pm(values, scale=1.0, digits=2, sign=False):
    m, se = mean_se([scale * v for v in values])
    text = f"{m:+.{digits}f}" if sign else f"{m:.{digits}f}"
    return text if math.isnan(se) else f"{text} ± {se:.{digits}f}"

if pretrain:
    for build in ("tensorized", "dense"):
        for n in names:
            pre = json.load(open(os.path.join(work, f"pre_{build}_{n}.json")))
            last = pre["epochs"][-1]
            print(f"pre-training ({pre['experiment']['name']}, {build}, seed {n}): {pre['steps']} steps, "
                  f"masked-token accuracy {100 * last['accuracy']:.2f}%, eval loss {last['eval_loss']:.4f}, "
                  f"{last['compression']:.1f}x")
    print()
seed_text = "the experiment's own seed" if seeds == 0 else \
    f"{seeds} seeds (1..{seeds}); mean ± standard error over seeds, the gap paired by seed"
print(f"{tt[0]['experiment']['name']}: {tt[0]['steps']} steps each, {seed_text}\n")
print("| epoch | stage | tensorized acc (%) | dense acc (%) | gap (points) | tensorized eval loss | "
      "dense eval loss | parameters | compression | tensorized ms/step | dense ms/step |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
epochs = min(len(r["epochs"]) for r in tt + dense)
for e in range(epochs):
    a = [r["epochs"][e] for r in tt]
    b = [r["epochs"][e] for r in dense]
    print(f"| {e + 1} | {a[0]['stage']} | {pm([x['accuracy'] for x in a], 100)} | "
          f"{pm([x['accuracy'] for x in b], 100)} | "
          f"{pm([x['accuracy'] - y['accuracy'] for x, y in zip(a, b)], 100, sign=True)} | "
          f"{pm([x['eval_loss'] for x in a], digits=4)} | {pm([x['eval_loss'] for x in b], digits=4)} | "
          f"{pm([x['size'] for x in a], digits=0)} | {pm([x['compression'] for x in a], digits=1)}x | "
          f"{pm([x['step_time_ms'] for x in a], digits=0)} | {pm([x['step_time_ms'] for x in b], digits=0)} |")
print("\nranks at the end:")
for n, r in zip(names, tt):
    print(f"  seed {n}:")
    for layer in r["epochs"][-1]["layers"]:
        print(f"    {layer['name']}: {layer['ranks']}")

# Chance: the eval set's most frequent label (the classes of a task need not be balanced).
def eval_labels(data):
    folder = data["dir"] or ("data/wordnet" if data["format"] == "text" else "data/pairs/pystdlib")
    path = os.path.join(folder, data["eval"])
    if not path.endswith(".jsonl"):
        return []
    key = "label" if data["format"] == "text" else "gold_label"
    with open(path) as f:
        labels = [json.loads(line)[key] for line in f if line.strip()]
    # A format's own keys (a label subset for pairs) may sit under "settings".
    allowed = data.get("labels") or (data.get("settings") or {}).get("labels") or []
    labels = [l for l in labels if l != "-" and (not allowed or l in allowed)]
    return labels[:data.get("eval_limit") or None]

final_tt = [r["epochs"][-1] for r in tt]
final_dense = [r["epochs"][-1] for r in dense]
gap, gap_se = mean_se([100 * (x["accuracy"] - y["accuracy"]) for x, y in zip(final_tt, final_dense)])
acc_dense, _ = mean_se([y["accuracy"] for y in final_dense])
compression, _ = mean_se([x["compression"] for x in final_tt])
labels = eval_labels(tt[0]["experiment"]["data"])
chance = 100 * max(labels.count(l) for l in set(labels)) / len(labels) if labels else 100 / 3
if labels:
    stderr = 100 * (acc_dense * (1 - acc_dense) / len(labels)) ** 0.5
    print(f"\neval set: {len(labels):,} examples, the most frequent label {chance:.2f}%; "
          f"binomial standard error of one dense accuracy {stderr:.2f} points")
if 100 * acc_dense < chance + 1:
    verdict = f"not shown: the dense baseline did not learn (chance is {chance:.2f}%)"
else:
    verdict = "met" if gap >= -2 and compression >= 40 else "missed"
gap_text = f"{gap:+.2f}" + ("" if math.isnan(gap_se) else f" ± {gap_se:.2f}")
if seeds > 1:
    print("\nper seed (final): " + "; ".join(
        f"seed {n}: tensorized {100 * x['accuracy']:.2f}% at {x['compression']:.1f}x (train loss "
        f"{x['train_loss']:.3f}), dense {100 * y['accuracy']:.2f}%"
        for n, x, y in zip(names, final_tt, final_dense)))
print(f"\nfinal: tensorized {pm([x['accuracy'] for x in final_tt], 100)}% at {compression:.1f}x vs dense "
      f"{pm([y['accuracy'] for y in final_dense], 100)}%: gap {gap_text} points -> target (within 2 points at "
      f">= 40x) {verdict}")
if fixed:
    final_fixed = [json.load(open(os.path.join(work, f"fixed_{n}.json")))["epochs"][-1] for n in names]
    print("\nfixed ranks (the adaptive run's final ranks from the first step, no rank adaptation), "
          "same steps:")
    print(f"  fixed ranks {pm([x['accuracy'] for x in final_fixed], 100)}% at "
          f"{pm([x['compression'] for x in final_fixed], digits=1)}x; adaptive "
          f"{pm([x['accuracy'] for x in final_tt], 100)}% at {pm([x['compression'] for x in final_tt], digits=1)}x")
    print(f"  adaptive minus fixed: "
          f"{pm([x['accuracy'] - y['accuracy'] for x, y in zip(final_tt, final_fixed)], 100, sign=True)} "
          f"points (paired by seed); final sizes equal: "
          f"{all(x['size'] == y['size'] for x, y in zip(final_tt, final_fixed))}")
EOF
