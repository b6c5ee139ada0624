#!/bin/bash
set -e
cd /work/cardwt
export PYTHONPATH=/work/cardwt OMP_WAIT_POLICY=PASSIVE
PY=/work/main/.venv/bin/python
E=/work/cardexp
[ -f $E/data_F/done ] || { $PY $E/exp.py label_F 99200 && touch $E/data_F/done; }
[ -f $E/iter17_F.pt ] || $PY $E/exp.py distil_F
m() { [ -f $E/$1/match.json ] || $PY evaluate.py $2 $3 --hands 20000 --seed $4 --workers 1 --out $E/$1; }
m h2h_F_vs_16 ppo:$E/iter17_F.pt ppo:/work/smallnet/iter_016.pt 47201
m h2h_F_vs_A ppo:$E/iter17_F.pt ppo:/work/smallnet/iter17_A.pt 47202
echo ALL DONE
