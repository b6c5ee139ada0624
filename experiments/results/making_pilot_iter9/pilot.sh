#!/bin/bash
# One iteration from the default table's iteration-8 agent, four ways; each judged head to head against it.
set -x
cd /work/tables
export OMP_WAIT_POLICY=PASSIVE
PY=/work/main/.venv/bin/python
A8=/work/main/experiments/runs/recipe/agents/iter_008.pt
P=/work/pilot
common="--stage distill --anneal-lr --max-grad-norm 1.0 --distill-batch-size 2048 --holdout-fraction 0.02 --save-interval 250 --keep-checkpoints 1 --eval-interval 0 --device cpu --init-checkpoint $A8 --runs-dir $P/runs --torch-threads 2 --no-progress"
$PY -m euchre_lab.training.teacher $P/data_rollout --shards 250 --games-per-shard 256 --workers 2 --epsilon 0.1 --seed 9001 --label rollout --rollout-agent ppo:$A8 --behaviour ppo:$A8=0.7,heuristic=0.3
$PY train.py $common --teacher-data $P/data_rollout --learning-rate 2.5e-4 --distill-epochs 2 --run-name A_method --seed 1
$PY train.py $common --teacher-data $P/data_rollout --learning-rate 2.5e-4 --distill-epochs 4 --run-name B_epochs4 --seed 1
$PY train.py $common --teacher-data $P/data_rollout --learning-rate 5e-4 --distill-epochs 2 --run-name C_lr5e-4 --seed 1
$PY -m euchre_lab.training.teacher $P/data_cards --shards 250 --games-per-shard 256 --workers 2 --epsilon 0.1 --seed 9001 --label rollout --rollout-cards --rollout-agent ppo:$A8 --behaviour ppo:$A8=0.7,heuristic=0.3
$PY train.py $common --teacher-data $P/data_cards --learning-rate 2.5e-4 --distill-epochs 2 --run-name D_cards --seed 1
for r in A_method B_epochs4 C_lr5e-4 D_cards; do
  $PY -m euchre_lab.training.export_policy $P/runs/$r/checkpoints/latest.pt $P/$r.pt
  $PY evaluate.py ppo:$P/$r.pt ppo:$A8 --hands 20000 --seed 46401 --workers 2 --no-plots --out $P/h2h_$r
done
echo done > $P/done
