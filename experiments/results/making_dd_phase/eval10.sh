#!/bin/bash
# Z10 (the play-out phase from Z6) against R16 (the sixteen-iteration preset's iteration 16, before its fine-tune)
set -x
cd /work/ddz
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH=/work/ddz
PY=/work/main/.venv/bin/python
R16=/work/main/experiments/runs/recipe16/agents/iter_016.pt
Z10=/work/ddzrun/iter_010.pt
H=/work/main/experiments/results/making_gap/hybrid.py:agent
O=/work/ddzeval
$PY evaluate.py ppo:$Z10 ppo:$R16 --hands 20000 --seed 47407 --workers 2 --out $O/z10_vs_r16 --no-progress 2>&1 | tail -1
BIDS=$Z10 CARDS=$R16 $PY evaluate.py $H ppo:$R16 --hands 20000 --seed 47408 --workers 2 --out $O/z10bids_vs_r16 --no-progress 2>&1 | tail -1
BIDS=$R16 CARDS=$Z10 $PY evaluate.py $H ppo:$R16 --hands 20000 --seed 47408 --workers 2 --out $O/z10cards_vs_r16 --no-progress 2>&1 | tail -1
$PY evaluate.py ppo:$Z10 ppo --hands 20000 --seed 47409 --workers 2 --out $O/z10_vs_shipped --no-progress 2>&1 | tail -1
$PY evaluate.py ppo:$R16 ppo --hands 20000 --seed 47409 --workers 2 --out $O/r16_vs_shipped --no-progress 2>&1 | tail -1
date
