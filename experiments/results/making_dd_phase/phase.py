"""A double-dummy phase of fewer, larger iterations at twice the distillation rate, against the default preset's
iterations 1-12 at about the same time (issue 46). From the default preset's bootstrap agent (its bytes as the
bid_share run exported them; the same weights, the same curve point), each iteration labels 192,000 hands of the
current agent's play, a third of them with their bids (64,000, as the default's iterations), the rest cards only,
and distils one pass over the last two iterations' labels, as the method does, at 5e-4 instead of 2.5e-4.
Then, with PLAYOUTS=4, the default preset's play-out phase from its sixth iteration: four iterations of 64,000
hands, every decision by the agent's own play-outs, every hand's bids, one pass at the method's 2.5e-4.
Usage: [PLAYOUTS=4] python phase.py ROOT (each step skips itself once its output is there; ROOT holds data, agents,
times)."""
import json
import os
import sys
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

ROOT = Path(sys.argv[1])
BOOTSTRAP = Path("/work/bs25_agents/bootstrap.pt")   # sha256 f5321e48…
BIG = {"hidden_size": 512, "num_layers": 3}
HANDS, BID_SHARE, ITERATIONS = 192_000, 1 / 3, 6
PLAYOUT_HANDS, PLAYOUTS = 64_000, int(os.environ.get("PLAYOUTS", 0))
RATES = {"double_dummy": 5e-4, "playouts": method.ITERATION_TRAINING["learning_rate"]}


def agent(k):
    return BOOTSTRAP if k == 0 else ROOT / f"iter_{k:03d}.pt"


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


def label(k):
    playouts = k > ITERATIONS
    hands = PLAYOUT_HANDS if playouts else HANDS
    settings = method.teacher_settings(k, str(agent(k - 1)), 0, hands, method.ROLLOUT_ALL if playouts else "rollout",
                                       bid_share=1.0 if playouts else BID_SHARE)
    shards, _ = method.shard_plan(hands)
    generate(ROOT / f"data_{k:03d}", shards, Rules(), settings, progress=False, run_jobs=task_runner(2))


def distil(k):
    method.ITERATION_TRAINING["learning_rate"] = RATES["playouts" if k > ITERATIONS else "double_dummy"]
    run = SimpleNamespace(args=SimpleNamespace(network=BIG, rules={}, seed=0, progress=False, torch_threads=2),
                          folder=ROOT / "runs")
    folders = [ROOT / f"data_{j:03d}" for j in range(max(1, k - 1), k + 1)]
    args = method.training_args(run, k, folders, str(agent(k - 1)), "")
    distill(args, check_args(args, None))
    export_policy(str(run.folder / "training" / method.iteration_name(k) / "checkpoints" / "latest.pt"), str(agent(k)))


if __name__ == "__main__":
    ROOT.mkdir(exist_ok=True)
    for k in range(1, ITERATIONS + PLAYOUTS + 1):
        timed(f"label_{k:03d}", lambda: label(k))
        timed(f"distil_{k:03d}", lambda: distil(k))
    print("ALL DONE", flush=True)
