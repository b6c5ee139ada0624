#!/bin/bash
# The tuning matches of EXPERIMENTS.md's section on fewer, larger double-dummy iterations: `eval.sh 6` judges Z6
# against ITER12 (whole agent seed 47405, by halves 47406); `eval.sh 10` judges Z10 against R16 (47407, by halves
# 47408) and Z10 and R16 against the shipped agent (47409). W: the worktree, Z: phase.py's ROOT.
set -x
W=${W:-/work/ddz}; Z=${Z:-/work/ddzrun}; O=${O:-/work/ddzeval}
cd $W
export OMP_WAIT_POLICY=PASSIVE PYTHONPATH=$W
PY=/work/main/.venv/bin/python
H=/work/main/experiments/results/making_gap/hybrid.py:agent
RUNS=/work/main/experiments/runs

judge() {  # NAME AGENT REFERENCE SEED SPLIT_SEED
  $PY evaluate.py ppo:$2 ppo:$3 --hands 20000 --seed $4 --workers 2 --out $O/$1_vs_$6 --no-progress | tail -1
  BIDS=$2 CARDS=$3 $PY evaluate.py $H ppo:$3 --hands 20000 --seed $5 --workers 2 --out $O/$1bids_vs_$6 --no-progress | tail -1
  BIDS=$3 CARDS=$2 $PY evaluate.py $H ppo:$3 --hands 20000 --seed $5 --workers 2 --out $O/$1cards_vs_$6 --no-progress | tail -1
}

if [ "$1" = 6 ]; then
  judge z6 $Z/iter_006.pt $RUNS/making_playout_net/agents/iter_012.pt 47405 47406 i12
else
  judge z10 $Z/iter_010.pt $RUNS/recipe16/agents/iter_016.pt 47407 47408 r16
  $PY evaluate.py ppo:$Z/iter_010.pt ppo --hands 20000 --seed 47409 --workers 2 --out $O/z10_vs_shipped --no-progress | tail -1
  $PY evaluate.py ppo:$RUNS/recipe16/agents/iter_016.pt ppo --hands 20000 --seed 47409 --workers 2 --out $O/r16_vs_shipped --no-progress | tail -1
fi
