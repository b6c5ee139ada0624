"""CPU per hand of the double-dummy phase's labels (bids by play-outs, cards double-dummy), all decisions and cards only."""
import dataclasses, sys, time
sys.path.insert(0, "/work/cardexp")
import exp
from euchre_agents.teacher import ShardPlayer
from euchre_agents.threads import one_thread
from euchre_env import Rules
from euchre_lab.making import method
s = dataclasses.replace(method.teacher_settings(9, str(exp.AGENT), 0, 64_000, "rollout"), games_per_shard=256)
with one_thread():
    player = ShardPlayer(Rules(), s)
    player.play_shard(99)
    for name in ("all", "cards", "all", "cards"):
        ShardPlayer._record = exp._record if name == "all" else exp.record_cards_only
        start = time.process_time()
        decisions = sum(len(player.play_shard(k)["values"]) for k in (0, 1))
        print(name, f"{(time.process_time() - start) / 512 * 1000:.2f} ms/hand, {decisions / 512:.1f} decisions/hand", flush=True)
