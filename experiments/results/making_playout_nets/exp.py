"""One play-out iteration (the method's iteration 17) from the sixteen-iteration run's iteration-16 agent, three ways:
play-outs by the agent (A, the method), by a 256 x 2 network distilled on iteration 16's labels (B), and by the
agent with its trunk in int8 (C). Usage: python exp.py STEP (small | label_A | label_B | label_C | distil_A ...)."""
import dataclasses
import json
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

ROOT = Path(__file__).parent
AGENT = ROOT / "iter_016.pt"
OLD = ROOT / "data_016"
K = 17
BIG = {"hidden_size": 512, "num_layers": 3}
SMALL = {"hidden_size": 256, "num_layers": 2}
ROLLOUT = {"A": f"ppo:{AGENT}", "B": f"ppo:{ROOT / 'small.pt'}", "C": f"{ROOT / 'int8_bot.py'}:agent",
           "D": "heuristic", "E": f"ppo:{ROOT / 'small.pt'}"}
HANDS = {"E": 256_000}


def latest_checkpoint(folder):
    return folder / "checkpoints" / "latest.pt"


def run_of(network, folder):
    return SimpleNamespace(args=SimpleNamespace(network=network, rules={}, seed=0, progress=False, torch_threads=2), folder=folder)


def timed(name, fn):
    start = time.time()
    fn()
    seconds = time.time() - start
    log = json.loads((ROOT / "times.json").read_text()) if (ROOT / "times.json").exists() else {}
    log[name] = seconds
    (ROOT / "times.json").write_text(json.dumps(log, indent=1))
    print(name, f"{seconds:.1f} s", flush=True)


def small():
    run = run_of(SMALL, ROOT / "small_run")
    args = dataclasses.replace(method.training_args(run, 0, [OLD], "", ""), distill_epochs=4.0)
    distill(args, check_args(args, None))
    export_policy(str(latest_checkpoint(run.folder / "training" / method.iteration_name(0))), str(ROOT / "small.pt"))


def label(arm):
    hands = HANDS.get(arm, 64_000)
    settings = method.teacher_settings(K, str(AGENT), 0, hands, method.ROLLOUT_ALL)
    settings = dataclasses.replace(settings, rollout_agent=ROLLOUT[arm])
    shards, _ = method.shard_plan(hands)
    generate(ROOT / f"data_{arm}", shards, Rules(), settings, progress=False, run_jobs=task_runner(2))


def distil(arm):
    run = run_of(BIG, ROOT / f"run_{arm}")
    args = method.training_args(run, K, [OLD, ROOT / f"data_{arm}"], str(AGENT), "")
    distill(args, check_args(args, None))
    export_policy(str(latest_checkpoint(run.folder / "training" / method.iteration_name(K))), str(ROOT / f"iter17_{arm}.pt"))


if __name__ == "__main__":
    step = sys.argv[1]
    if step == "small":
        timed(step, small)
    else:
        kind, arm = step.split("_")
        timed(step, lambda: {"label": label, "distil": distil}[kind](arm))
