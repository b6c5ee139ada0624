"""Would labelling only the decisions the agent is unsure of concentrate the play-out labels' information?

Plays shards of the method's play-out labels (every decision by the agent's own play-outs, the agent in every seat,
epsilon 0.1) and, for each decision, compares the agent's policy margin (its top logit minus the next, in points:
the method distils at temperature 1) with what the label says: whether its best action differs from the agent's
choice, and by how much (the label's value of its best action minus that of the agent's choice, on the one true
layout), beside a play-out's cost (legal actions times the cards left to play).

    OMP_NUM_THREADS=1 python experiments/results/making_label_confidence/confidence.py AGENT [SHARDS]
"""
import sys

import numpy as np
import torch

from euchre_agents.teacher import ShardPlayer
from euchre_agents.teacher_data import TeacherSettings
from euchre_agents.threads import one_thread
from euchre_env.rules import Rules

agent, shards = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2
settings = TeacherSettings(label="rollout", rollout_cards=True, rollout_agent=agent, behaviour=f"{agent}=1.0",
                           epsilon=0.1, games_per_shard=256, seed=7)
with one_thread():
    player = ShardPlayer(Rules(), settings)
    data = [player.play_shard(k) for k in range(shards)]
engine = player.engine
d = {k: np.concatenate([x[k] for x in data]) for k in data[0]}
obs = np.unpackbits(d["obs_bits"], axis=1)[:, : engine.observation_size].astype(np.float32)
mask = np.unpackbits(d["mask_bits"], axis=1)[:, : engine.num_actions].astype(bool)
values = d["values"].astype(np.float64)
with torch.no_grad():
    logits = player.rollout_bot.net(torch.from_numpy(obs), torch.from_numpy(mask))[0].numpy()
top2 = np.sort(logits, axis=1)[:, -2:]
margin = top2[:, 1] - top2[:, 0]
choice = logits.argmax(axis=1)
gain = np.nanmax(np.where(mask, values, np.nan), axis=1) - values[np.arange(len(values)), choice]
cards_left = 20 - obs[:, engine.observation_layout["played_by"]].sum(axis=1)
cost = mask.sum(axis=1) * np.maximum(1, cards_left)
print(f"{len(values):,} decisions of {shards * 256} hands; the label's best differs from the agent's choice in "
      f"{np.mean(gain > 0):.1%}, by {gain.mean():.3f} points a decision on average")
print("agent's margin   share of decisions   of play-out cost   of the label's gain   label differs")
for q in (0.25, 0.5, 0.75):
    cut = np.quantile(margin, q)
    sure = margin > cut
    print(f"  > {cut:5.3f} (top {1 - q:.0%})   {sure.mean():17.0%}   {cost[sure].sum() / cost.sum():16.0%}   "
          f"{gain[sure].sum() / gain.sum():19.0%}   {np.mean(gain[sure] > 0):5.1%} (else {np.mean(gain[~sure] > 0):.1%})")
