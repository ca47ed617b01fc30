#!/usr/bin/env bash
# The main job: set up, build, build the default task (WordNet glosses -> lexicographer files),
# then a small sweep on it: a dense and an early-stage baseline, then late-stage trials proposed
# by an adaptive search over the embedding's ranks and the (L0, S0) targets. Prints every trial with the Pareto front marked, accuracy against size and
# eval loss against size, and draws both (results/quickstart_accuracy.png,
# results/quickstart_loss.png); trials go to results/quickstart.db, and the HTML report (open it
# in a browser) to results/quickstart.html. Re-running it resumes the
# sweep: complete trials are kept, an interrupted one is run again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh comera
[ -s data/wordnet/train.jsonl ] && [ -s data/wordnet/dev.jsonl ] || ./build/comera data build-wordnet
./build/comera sweep experiments/sweeps/quickstart.json --db results/quickstart.db --no-front \
  --report results/quickstart.html
for objective in accuracy:max eval_loss:min; do
  name=${objective%%:*}
  echo
  echo "== ${name} against size (* = on the Pareto front)"
  ./build/comera pareto --db results/quickstart.db --study quickstart --all \
    --objectives "size:min,$objective" --plot "results/quickstart_${name/eval_loss/loss}.png"
done
