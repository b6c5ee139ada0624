# The play-out phase with 96,000 hands (W10) against the one with 64,000 (Z10), tuning deals, 10,000 pairs each.
python evaluate.py ppo:experiments/runs/playout_hands/agents/iter_010.pt ppo:experiments/runs/dd_phase/agents/iter_010.pt --hands 20000 --seed 47413 --workers 2 --out tuning/w10_vs_z10
python evaluate.py ppo:experiments/runs/playout_hands/agents/iter_010.pt ppo --hands 20000 --seed 47414 --workers 2 --out tuning/w10_vs_shipped
python evaluate.py ppo:experiments/runs/dd_phase/agents/iter_010.pt ppo --hands 20000 --seed 47414 --workers 2 --out tuning/z10_vs_shipped
