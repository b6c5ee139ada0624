"""More hands in each play-out iteration (issue 46): the default preset's play-out phase (iterations 7-10, every
decision labelled by the agent's own play-outs, every hand's bids, one pass over the replay at 2.5e-4) with
HANDS hands each instead of 64,000, from the same sixth iteration as the phase measured with 64,000 (Z6 of
making_dd_phase: /work/ddzrun/iter_006.pt, its labels /work/ddzrun/data_006 in the replay of iteration 7). The
method's own functions and settings (`method.teacher_settings`, `method.training_args` with the preset's Args but
`rollout_hands`), at the current commit; each step skips itself once its time is in ROOT/times.json.
Usage: HANDS=96000 OMP_WAIT_POLICY=PASSIVE python phase.py ROOT"""
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
from euchre_lab.making.options import Args
from euchre_lab.training.distill import distill
from euchre_lab.training.train_checks import check_args

ROOT, Z = Path(sys.argv[1]), Path("/work/ddzrun")
HANDS = int(os.environ.get("HANDS", 96_000))
ARGS = Args(rollout_hands=HANDS, progress=False)
FIRST, LAST = ARGS.rollout_all_from, ARGS.iterations


def agent(k):
    return Z / "iter_006.pt" if k == FIRST - 1 else ROOT / f"iter_{k:03d}.pt"


def data(k):
    return Z / "data_006" if k == FIRST - 1 else ROOT / f"data_{k:03d}"


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
    assert method.is_playout_iteration(ARGS, k) and method.iteration_hands(ARGS, k) == HANDS
    settings = method.teacher_settings(k, str(agent(k - 1)), ARGS.seed, HANDS, method.ROLLOUT_ALL,
                                       bid_share=method.iteration_bid_share(ARGS, k))
    shards, _ = method.shard_plan(HANDS)
    generate(data(k), shards, Rules(), settings, progress=False, run_jobs=task_runner(2))


def distil(k):
    run = SimpleNamespace(args=ARGS, folder=ROOT / "runs")
    args = method.training_args(run, k, [data(k - 1), data(k)], str(agent(k - 1)), "")
    distill(args, check_args(args, None))
    export_policy(str(run.folder / "training" / method.iteration_name(k) / "checkpoints" / "latest.pt"), str(agent(k)))


if __name__ == "__main__":
    ROOT.mkdir(exist_ok=True)
    for k in range(FIRST, LAST + 1):
        timed(f"label_{k:03d}", lambda: label(k))
        timed(f"distil_{k:03d}", lambda: distil(k))
    print("ALL DONE", flush=True)
