#!/bin/bash
# Which of the heavy distillation's two changes moves the cards: the learning rate (one pass at 5e-4) or the
# updates (three passes at the method's 2.5e-4)? The same 400,000 hands as pool.sh, from iteration 12's weights.
set -x
W=${W:-/work/bs25}
P=${P:-/work/ddpool}
cd $W
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH=$W
PY=/work/main/.venv/bin/python
A12=/work/main/experiments/runs/making_playout_net/agents/iter_012.pt
common="--stage distill --anneal-lr --max-grad-norm 1.0 --distill-batch-size 2048 --holdout-fraction 0.02 --save-interval 250 --keep-checkpoints 1 --eval-interval 0 --device cpu --init-checkpoint $A12 --runs-dir $P/runs --torch-threads 2 --no-progress --canonical-suits true --action-values true"
date
$PY train.py $common --teacher-data $P/data --learning-rate 5e-4 --distill-epochs 1 --run-name light_hi_lr --seed 1
$PY -m euchre_lab.training.export_policy $P/runs/light_hi_lr/checkpoints/latest.pt $P/light_hi_lr.pt
date
$PY train.py $common --teacher-data $P/data --learning-rate 2.5e-4 --distill-epochs 3 --run-name heavy_lo_lr --seed 1
$PY -m euchre_lab.training.export_policy $P/runs/heavy_lo_lr/checkpoints/latest.pt $P/heavy_lo_lr.pt
date
echo done > $P/done_arms
