#!/bin/bash
# The big iteration's data (256,000 hands from iteration 8), distilled one pass instead of two.
set -x
cd /work/bigwt
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH=/work/bigwt
PY=/work/main/.venv/bin/python
A8=/work/big/iter_008.pt
P=/work/big
common="--stage distill --anneal-lr --max-grad-norm 1.0 --distill-batch-size 2048 --holdout-fraction 0.02 --save-interval 250 --keep-checkpoints 1 --eval-interval 0 --device cpu --init-checkpoint $A8 --runs-dir $P/runs --torch-threads 2 --no-progress --canonical-suits true --action-values true"
date
$PY train.py $common --teacher-data $P/data_big --learning-rate 2.5e-4 --distill-epochs 1 --run-name big_1pass --seed 1
date
$PY -m euchre_lab.training.export_policy $P/runs/big_1pass/checkpoints/latest.pt $P/big_1pass.pt
$PY evaluate.py ppo:$P/big_1pass.pt ppo:$A8 --hands 20000 --seed 46401 --workers 2 --no-plots --out $P/h2h_big_1pass_vs_iter8
$PY evaluate.py ppo:$P/big_1pass.pt ppo:$P/big.pt --hands 20000 --seed 46402 --workers 2 --no-plots --out $P/h2h_big_1pass_vs_big
date
