"""The default preset's play-out phase (iterations 13-16, 64,000 hands each, every decision by the agent's own
play-outs) again from its iteration-12 agent, with `bid_share: 0`: the play-out iterations label their card decisions
only. The sixteen-iteration run (experiments/runs/recipe16) is the reference: the same agent at iteration 12
(making_playout_net's iteration 12 reproduced its curve to the last digit), the same deals.
Iteration 12's labels, which iteration 13's replay holds, are refilled by the iteration-12 agent, as the method
refills a moved run's replay. Usage: python phase.py (each step skips itself once its output is there)."""
import dataclasses
import json
import time
from pathlib import Path
from types import SimpleNamespace

from euchre_agents.checkpoint import export_policy
from euchre_agents.teacher import generate
from euchre_env import Rules
from euchre_lab.evaluation.backends import task_runner
from euchre_lab.making import method
from euchre_lab.training.distill import distill
from euchre_lab.training.train_checks import check_args

ROOT = Path(__file__).parent / "phase"
START = Path("/work/main/experiments/runs/making_playout_net/agents/iter_012.pt")
BIG = {"hidden_size": 512, "num_layers": 3}
HANDS = 64_000


def agent(k):
    return START if k == 12 else ROOT / f"iter_{k:03d}.pt"


def timed(name, fn):
    log_path = ROOT / "times.json"
    log = json.loads(log_path.read_text()) if log_path.exists() else {}
    if name in log:
        return
    start = time.time()
    fn()
    log[name] = time.time() - start
    log_path.write_text(json.dumps(log, indent=1))
    print(name, f"{log[name]:.1f} s", flush=True)


def label(k, settings):
    shards, _ = method.shard_plan(HANDS)
    generate(ROOT / f"data_{k:03d}", shards, Rules(), settings, progress=False, run_jobs=task_runner(1))


def distil(k):
    run = SimpleNamespace(args=SimpleNamespace(network=BIG, rules={}, seed=0, progress=False, torch_threads=1), folder=ROOT / "runs")
    folders = [ROOT / f"data_{k - 1:03d}", ROOT / f"data_{k:03d}"]
    args = method.training_args(run, k, folders, str(agent(k - 1)), "")
    distill(args, check_args(args, None))
    export_policy(str(run.folder / "training" / method.iteration_name(k) / "checkpoints" / "latest.pt"), str(agent(k)))


if __name__ == "__main__":
    ROOT.mkdir(exist_ok=True)
    refill = method.teacher_settings(12, str(START), 0, HANDS, "rollout", refill=True)
    timed("refill_012", lambda: label(12, refill))
    for k in range(13, 17):
        settings = method.teacher_settings(k, str(agent(k - 1)), 0, HANDS, method.ROLLOUT_ALL, bid_share=0.0)
        timed(f"label_{k:03d}", lambda: label(k, settings))
        timed(f"distil_{k:03d}", lambda: distil(k))
    print("ALL DONE", flush=True)
