#!/bin/bash
set -e
cd /work/cardwt
export PYTHONPATH=/work/cardwt OMP_WAIT_POLICY=PASSIVE
PY=/work/main/.venv/bin/python
E=/work/cardexp
$PY $E/phase.py
m() { [ -f $E/phase/$1/match.json ] || $PY evaluate.py $2 $3 --hands 20000 --seed $4 --workers 1 --out $E/phase/$1; }
m h2h_16_vs_recipe16 ppo:$E/phase/iter_016.pt ppo:/work/main/experiments/runs/recipe16/agents/iter_016.pt 47301
m h2h_16_vs_12 ppo:$E/phase/iter_016.pt ppo:/work/main/experiments/runs/making_playout_net/agents/iter_012.pt 47302
echo MATCHES DONE
