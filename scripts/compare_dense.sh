#!/usr/bin/env bash
# Trains an experiment twice for the same steps, tensorized (early + late stage, rank
# truncation) and with every layer dense, and prints a per-epoch comparison table: the README's
# small-preset accuracy figures.
#   scripts/compare_dense.sh [--pretrain PRE.json] [experiments/small_two_encoder.json] [extra flags]
# --pretrain: first train PRE.json (masked-LM pre-training) in both builds, then start each
# build's run from its own pre-training checkpoint (--init). The extra flags go to every
# `comera train`. Needs the default task's data (`build/comera data build-wordnet`) unless the
# config or the flags point elsewhere. Runs are not recorded in the results database.
set -euo pipefail
cd "$(dirname "$0")/.."
pretrain=
if [ "${1:-}" = --pretrain ]; then
  pretrain=$2
  shift 2
fi
config=${1:-experiments/small_two_encoder.json}
shift || true
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for build in tensorized dense; do
  flags=()
  [ "$build" = dense ] && flags+=(--dense)
  if [ -n "$pretrain" ]; then
    echo "== $build pre-training: build/comera train --config $pretrain ${flags[*]} $*" >&2
    build/comera train --config "$pretrain" "${flags[@]}" --no-db --quiet --json \
      --checkpoint "$work/pre_$build.pt" "$@" > "$work/pre_$build.json"
    flags+=(--init "$work/pre_$build.pt")
  fi
  echo "== $build: build/comera train --config $config ${flags[*]} $*" >&2
  build/comera train --config "$config" "${flags[@]}" --no-db --quiet --json \
    --checkpoint "$work/$build.pt" "$@" > "$work/$build.json"
done

python3 - "$work" "$pretrain" <<'EOF'
import json, os, sys

work, pretrain = sys.argv[1:3]
tt, dense = (json.load(open(os.path.join(work, f"{b}.json"))) for b in ("tensorized", "dense"))
if pretrain:
    for build in ("tensorized", "dense"):
        pre = json.load(open(os.path.join(work, f"pre_{build}.json")))
        last = pre["epochs"][-1]
        print(f"pre-training ({pre['experiment']['name']}, {build}): {pre['steps']} steps, "
              f"masked-token accuracy {100 * last['accuracy']:.2f}%, eval loss {last['eval_loss']:.4f}, "
              f"{last['compression']:.1f}x")
    print()
print(f"{tt['experiment']['name']}: {tt['steps']} steps each\n")
print("| epoch | stage | tensorized acc | dense acc | gap (points) | tensorized eval loss | "
      "dense eval loss | parameters | compression | tensorized ms/step | dense ms/step |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for a, b in zip(tt["epochs"], dense["epochs"]):
    print(f"| {a['epoch'] + 1} | {a['stage']} | {100 * a['accuracy']:.2f}% | "
          f"{100 * b['accuracy']:.2f}% | {100 * (a['accuracy'] - b['accuracy']):+.2f} | "
          f"{a['eval_loss']:.4f} | {b['eval_loss']:.4f} | {a['size']:,} | "
          f"{a['compression']:.1f}x | {a['step_time_ms']:.0f} | {b['step_time_ms']:.0f} |")
a, b = tt["epochs"][-1], dense["epochs"][-1]
print("\nranks at the end:")
for layer in a["layers"]:
    print(f"  {layer['name']}: {layer['ranks']}")
gap = 100 * (a["accuracy"] - b["accuracy"])
# Chance: the eval set's most frequent label (the classes of a task need not be balanced).
def eval_labels(data):
    folder = data["dir"] or ("data/wordnet" if data["format"] == "text" else "data/pairs/pystdlib")
    path = os.path.join(folder, data["eval"])
    if not path.endswith(".jsonl"):
        return []
    key = "label" if data["format"] == "text" else "gold_label"
    with open(path) as f:
        labels = [json.loads(line)[key] for line in f if line.strip()]
    labels = [l for l in labels if l != "-" and (not data["labels"] or l in data["labels"])]
    return labels[:data["eval_limit"] or None]

labels = eval_labels(tt["experiment"]["data"])
chance = 100 * max(labels.count(l) for l in set(labels)) / len(labels) if labels else 100 / 3
if labels:
    stderr = 100 * (b["accuracy"] * (1 - b["accuracy"]) / len(labels)) ** 0.5
    print(f"\neval set: {len(labels):,} examples, the most frequent label {chance:.2f}%; "
          f"standard error of the dense accuracy {stderr:.2f} points")
if 100 * b["accuracy"] < chance + 1:
    verdict = f"not shown: the dense baseline did not learn (chance is {chance:.2f}%)"
else:
    ok = gap >= -2 and a["compression"] >= 40
    verdict = "met" if ok else "missed"
print(f"\nfinal: tensorized {100 * a['accuracy']:.2f}% at {a['compression']:.1f}x vs dense "
      f"{100 * b['accuracy']:.2f}%: gap {gap:+.2f} points -> target (within 2 points at >= 40x) "
      f"{verdict}")
EOF
