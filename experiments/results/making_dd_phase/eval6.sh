#!/bin/bash
# Z6 against ITER12 on tuning deals: whole agent (seed 47405), then by halves (seed 47406)
set -x
cd /work/ddz
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH=/work/ddz
PY=/work/main/.venv/bin/python
I12=/work/main/experiments/runs/making_playout_net/agents/iter_012.pt
Z6=/work/ddzrun/iter_006.pt
H=/work/main/experiments/results/making_gap/hybrid.py:agent
O=/work/ddzeval
$PY evaluate.py ppo:$Z6 ppo:$I12 --hands 20000 --seed 47405 --workers 2 --out $O/z6_vs_i12 --no-progress 2>&1 | tail -3
BIDS=$Z6 CARDS=$I12 $PY evaluate.py $H ppo:$I12 --hands 20000 --seed 47406 --workers 2 --out $O/z6bids_vs_i12 --no-progress 2>&1 | tail -3
BIDS=$I12 CARDS=$Z6 $PY evaluate.py $H ppo:$I12 --hands 20000 --seed 47406 --workers 2 --out $O/z6cards_vs_i12 --no-progress 2>&1 | tail -3
date
