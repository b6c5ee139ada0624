#!/bin/bash
# heuristic play-outs (D) and four times the hands by the small network's play-outs (E)
set -e
cd /work/bigwt
export PYTHONPATH=/work/bigwt OMP_WAIT_POLICY=PASSIVE
PY=/work/main/.venv/bin/python
S=/work/smallnet
m() { [ -f $S/$1/match.json ] || $PY evaluate.py $2 $3 --hands 20000 --seed $4 --workers 2 --out $S/$1 --no-progress; }
[ -f $S/data_D/done ] || { $PY $S/exp.py label_D && touch $S/data_D/done; }
[ -f $S/iter17_D.pt ] || $PY $S/exp.py distil_D
m h2h_D_vs_A ppo:$S/iter17_D.pt ppo:$S/iter17_A.pt 46807
[ -f $S/data_E/done ] || { $PY $S/exp.py label_E && touch $S/data_E/done; }
[ -f $S/iter17_E.pt ] || $PY $S/exp.py distil_E
m h2h_E_vs_A ppo:$S/iter17_E.pt ppo:$S/iter17_A.pt 46808
m h2h_E_vs_16 ppo:$S/iter17_E.pt ppo:$S/iter_016.pt 46809
echo ALL DONE
