#!/bin/bash
# Does the double-dummy phase's card play lack labels or distillation? From the default preset's iteration 12 (the
# double-dummy phase's end), 400,000 hands of its play with card labels only (bid_share 0), then two distillations
# of them from iteration 12's weights: the method's (one pass, lr 2.5e-4) and a heavy one (three passes, lr 5e-4,
# as the records' round 6). Judged by their cards (experiments/results/making_gap/hybrid.py) on tuning deals.
set -x
W=${W:-/work/bs25}
P=${P:-/work/ddpool}
cd $W
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH=$W
PY=/work/main/.venv/bin/python
A12=/work/main/experiments/runs/making_playout_net/agents/iter_012.pt
common="--stage distill --anneal-lr --max-grad-norm 1.0 --distill-batch-size 2048 --holdout-fraction 0.02 --save-interval 250 --keep-checkpoints 1 --eval-interval 0 --device cpu --init-checkpoint $A12 --runs-dir $P/runs --torch-threads 2 --no-progress --canonical-suits true --action-values true"
date
$PY -m euchre_lab.training.teacher $P/data --shards 1563 --games-per-shard 256 --workers 2 --epsilon 0.1 --seed 9101 --label rollout --bid-share 0 --rollout-agent ppo:$A12 --behaviour ppo:$A12=0.7,heuristic=0.3
date
$PY train.py $common --teacher-data $P/data --learning-rate 2.5e-4 --distill-epochs 1 --run-name light --seed 1
$PY -m euchre_lab.training.export_policy $P/runs/light/checkpoints/latest.pt $P/light.pt
date
$PY train.py $common --teacher-data $P/data --learning-rate 5e-4 --distill-epochs 3 --run-name heavy --seed 1
$PY -m euchre_lab.training.export_policy $P/runs/heavy/checkpoints/latest.pt $P/heavy.pt
date
echo done > $P/done
