#!/bin/bash
# One big double-dummy iteration from the default table's iteration-8 agent: 4x the method's hands (256,000), two
# passes over them; judged head to head against iteration 8 on the pilot's deals (seed 46401; the method's own
# iteration 9 there: +0.001 [-0.008, +0.010]).
set -x
cd /work/bigwt
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH=/work/bigwt
PY=/work/main/.venv/bin/python
A8=/work/big/iter_008.pt
P=/work/big
common="--stage distill --anneal-lr --max-grad-norm 1.0 --distill-batch-size 2048 --holdout-fraction 0.02 --save-interval 250 --keep-checkpoints 1 --eval-interval 0 --device cpu --init-checkpoint $A8 --runs-dir $P/runs --torch-threads 2 --no-progress --canonical-suits true --action-values true"
date
$PY -m euchre_lab.training.teacher $P/data_big --shards 1000 --games-per-shard 256 --workers 2 --epsilon 0.1 --seed 9001 --label rollout --rollout-agent ppo:$A8 --behaviour ppo:$A8=0.7,heuristic=0.3
date
$PY train.py $common --teacher-data $P/data_big --learning-rate 2.5e-4 --distill-epochs 2 --run-name big --seed 1
date
$PY -m euchre_lab.training.export_policy $P/runs/big/checkpoints/latest.pt $P/big.pt
$PY evaluate.py ppo:$P/big.pt ppo:$A8 --hands 20000 --seed 46401 --workers 2 --no-plots --out $P/h2h_big_vs_iter8
$PY evaluate.py ppo:$P/big.pt ppo --hands 20000 --seed 5 --workers 2 --no-plots --out $P/h2h_big_vs_shipped
date
echo done > $P/done
