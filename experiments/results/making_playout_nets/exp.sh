#!/bin/bash
# the experiment, in order; each step skips itself once its output is there
set -e
cd /work/bigwt
export PYTHONPATH=/work/bigwt OMP_WAIT_POLICY=PASSIVE
PY=/work/main/.venv/bin/python
S=/work/smallnet
[ -f $S/small.pt ] || $PY $S/exp.py small
for arm in A B C; do
  [ -f $S/data_$arm/done ] || { $PY $S/exp.py label_$arm && touch $S/data_$arm/done; }
done
for arm in A B C; do
  [ -f $S/iter17_$arm.pt ] || $PY $S/exp.py distil_$arm
done
m() { [ -f $S/$1/match.json ] || $PY evaluate.py $2 $3 --hands 20000 --seed $4 --workers 2 --out $S/$1; }
m h2h_A_vs_16 ppo:$S/iter17_A.pt ppo:$S/iter_016.pt 46801
m h2h_B_vs_A ppo:$S/iter17_B.pt ppo:$S/iter17_A.pt 46802
m h2h_C_vs_A ppo:$S/iter17_C.pt ppo:$S/iter17_A.pt 46803
m h2h_small_vs_16 ppo:$S/small.pt ppo:$S/iter_016.pt 46804
m h2h_B_vs_16 ppo:$S/iter17_B.pt ppo:$S/iter_016.pt 46805
m h2h_C_vs_16 ppo:$S/iter17_C.pt ppo:$S/iter_016.pt 46806
echo ALL DONE
