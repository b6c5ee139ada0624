"""One play-out iteration (the method's iteration 17, from the sixteen-iteration run's iteration-16 agent) whose
play-outs label the card decisions only: bids, alone calls and discards are not recorded, so each hand costs about a
third of the method's play-out labels and three times the hands fit in the same labelling time (arm F). Arm A (the
method: every decision by play-outs, 64,000 hands) is the previous experiment's (experiments/results/making_playout_nets).
Usage: python exp.py rate | label_F HANDS | distil_F"""
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import dataclasses

from euchre_agents import teacher
from euchre_agents.checkpoint import export_policy
from euchre_agents.teacher import ShardPlayer, generate
from euchre_agents.threads import one_thread
from euchre_env import Rules
from euchre_env.state import Phase
from euchre_lab.evaluation.backends import task_runner
from euchre_lab.making import method
from euchre_lab.training.distill import distill
from euchre_lab.training.train_checks import check_args

ROOT = Path(__file__).parent
PREV = Path("/work/smallnet")
AGENT = PREV / "iter_016.pt"
OLD = PREV / "data_016"
K = 17
BIG = {"hidden_size": 512, "num_layers": 3}
_record = ShardPlayer._record


def record_cards_only(self, state, rows, obs, mask, actions):
    """The method's record of one step, its bids, alone calls and discards left out (cards only)."""
    keep = state.phase[rows] == Phase.PLAY
    if keep.all():
        return _record(self, state, rows, obs, mask, actions)
    if keep.any():
        return _record(self, state, rows[keep], obs[keep], mask[keep], actions[keep])
    return {k: v[:0] for k, v in _record(self, state, rows[:1], obs[:1], mask[:1], actions[:1]).items()}


def settings(hands):
    return method.teacher_settings(K, str(AGENT), 0, hands, method.ROLLOUT_ALL)


def rate():
    """CPU seconds per hand of the method's labels and of the cards-only labels, the same 2 shards, one process."""
    s = dataclasses.replace(settings(64_000), games_per_shard=256)
    with one_thread():
        player = ShardPlayer(Rules(), s)
        player.play_shard(99)
        out = {}
        for name in ("all", "cards", "all", "cards"):
            ShardPlayer._record = _record if name == "all" else record_cards_only
            start = time.process_time()
            decisions = sum(len(player.play_shard(k)["values"]) for k in (0, 1))
            out.setdefault(name, []).append((time.process_time() - start) / 512)
            print(name, f"{out[name][-1] * 1000:.2f} ms/hand, {decisions / 512:.1f} decisions/hand", flush=True)
    ShardPlayer._record = _record
    return out


def label(hands):
    ShardPlayer._record = record_cards_only
    shards, _ = method.shard_plan(hands)
    generate(ROOT / "data_F", shards, Rules(), settings(hands), progress=False, run_jobs=task_runner(1))


def distil():
    run = SimpleNamespace(args=SimpleNamespace(network=BIG, rules={}, seed=0, progress=False, torch_threads=1), folder=ROOT / "run_F")
    args = method.training_args(run, K, [OLD, ROOT / "data_F"], str(AGENT), "")
    distill(args, check_args(args, None))
    export_policy(str(run.folder / "training" / method.iteration_name(K) / "checkpoints" / "latest.pt"), str(ROOT / "iter17_F.pt"))


def timed(name, fn):
    start = time.time()
    fn()
    log = json.loads((ROOT / "times.json").read_text()) if (ROOT / "times.json").exists() else {}
    log[name] = time.time() - start
    (ROOT / "times.json").write_text(json.dumps(log, indent=1))
    print(name, f"{log[name]:.1f} s", flush=True)


if __name__ == "__main__":
    step = sys.argv[1]
    if step == "rate":
        rate()
    elif step.startswith("label"):
        timed(step, lambda: label(int(sys.argv[2])))
    else:
        timed(step, distil)
