# The share of a ppo bot's decisions in one labelling shard (256 hands) that are forced (one legal action):
#   OMP_NUM_THREADS=1 python experiments/results/making_forced_moves/forced_share.py
# (run at commit b4f8825, where the ppo bot still took a forward pass for them)
import numpy as np
from euchre_env import Rules
from euchre_agents import ppo as P
from euchre_agents.teacher import ShardPlayer
from euchre_agents.teacher_data import TeacherSettings
tot=[0,0]
orig=P.PPOAgent.act
def act(self, obs, mask, state=None, rows=None):
    m=np.asarray(mask); tot[0]+=m.shape[0]; tot[1]+=(m.sum(1)==1).sum()
    return orig(self, obs, mask, state, rows)
P.PPOAgent.act=act
for lab in ("rollout","rollout_all"):
    tot[:]=[0,0]
    s = TeacherSettings(label="rollout", rollout_cards=lab=="rollout_all", rollout_agent="ppo:,bf16", behaviour="ppo=0.7,heuristic=0.3", epsilon=0.1, games_per_shard=256, seed=7)
    p = ShardPlayer(Rules(), s); p.play_shard(1)
    print(lab, tot, tot[1]/tot[0])
