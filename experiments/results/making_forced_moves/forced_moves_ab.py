# Labelled decisions per CPU-second, the same shards labelled with PPOAgent.act as it was (a forward pass for every
# decision) and as it is (none for forced moves), interleaved three times in one process:
#   OMP_NUM_THREADS=1 python experiments/results/making_forced_moves/forced_moves_ab.py
import time, numpy as np, torch
from euchre_env import Rules
from euchre_agents import ppo as P
from euchre_agents.network import MASKED_LOGIT
from euchre_agents.teacher import ShardPlayer
from euchre_agents.teacher_data import TeacherSettings
new_act = P.PPOAgent.act
@torch.no_grad()
def old_act(self, obs, mask, state=None, rows=None):
    obs_t = torch.as_tensor(np.asarray(obs, np.float32)); mask_t = torch.as_tensor(np.asarray(mask, bool))
    logits, _, q = self.net.heads(obs_t, mask_t)
    return logits.argmax(dim=-1).cpu().numpy()
players = {lab: ShardPlayer(Rules(), TeacherSettings(label="rollout", rollout_cards=lab=="rollout_all", rollout_agent="ppo", behaviour="ppo=0.7,heuristic=0.3", epsilon=0.1, games_per_shard=256, seed=7)) for lab in ("rollout","rollout_all")}
for p in players.values(): p.play_shard(0)
res = {}
for rep in range(3):
    for name, f in (("old", old_act), ("new", new_act)):
        P.PPOAgent.act = f
        for lab, p in players.items():
            t = time.process_time(); d = p.play_shard(1 + rep); dt = time.process_time() - t
            res.setdefault((lab, name), []).append(len(d["values"]) / dt)
for k, v in sorted(res.items()): print(k, [round(x) for x in v], round(np.median(v)))
