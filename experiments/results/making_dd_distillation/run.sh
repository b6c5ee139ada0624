#!/bin/bash
# Does the double-dummy phase's card play lack labels or distillation? From the default preset's iteration 12 (the
# double-dummy phase's end): 400,000 hands of its play with card labels only (bid_share 0), then four distillations
# of them from iteration 12's weights: one or three passes, at the method's 2.5e-4 or the records' round-6 5e-4.
# Each is judged by its cards (experiments/results/making_gap/hybrid.py) on tuning deals (EXPERIMENTS.md).
# Run as it was: the labels and `light`, `heavy` first (17:50-18:09), then `light_hi_lr`, `heavy_lo_lr`.
set -x
W=${W:-/work/bs25}
P=${P:-/work/ddpool}
cd $W
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH=$W
PY=/work/main/.venv/bin/python
A12=/work/main/experiments/runs/making_playout_net/agents/iter_012.pt

distil() {  # NAME LEARNING_RATE PASSES
  $PY train.py --stage distill --anneal-lr --max-grad-norm 1.0 --distill-batch-size 2048 --holdout-fraction 0.02 \
    --save-interval 250 --keep-checkpoints 1 --eval-interval 0 --device cpu --init-checkpoint $A12 --runs-dir $P/runs \
    --torch-threads 2 --no-progress --canonical-suits true --action-values true \
    --teacher-data $P/data --learning-rate $2 --distill-epochs $3 --run-name $1 --seed 1
  $PY -m euchre_lab.training.export_policy $P/runs/$1/checkpoints/latest.pt $P/$1.pt
  date
}

date
$PY -m euchre_lab.training.teacher $P/data --shards 1563 --games-per-shard 256 --workers 2 --epsilon 0.1 --seed 9101 \
  --label rollout --bid-share 0 --rollout-agent ppo:$A12 --behaviour ppo:$A12=0.7,heuristic=0.3
date
distil light 2.5e-4 1
distil heavy 5e-4 3
distil light_hi_lr 5e-4 1
distil heavy_lo_lr 2.5e-4 3
