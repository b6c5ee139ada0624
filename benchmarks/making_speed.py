"""The two rates that set a run of `train.py --stage make`: labelled decisions per second and distillation samples
per second, each beside a peer measured in the same run.

- **Labels**, one process on one core, over the same shards of hands: `true` (every decision valued double-dummy on
  the open hands: the bootstrap's labels), `rollout` (bids, alone calls and discards valued by an agent's play-outs,
  cards double-dummy: an iteration's labels) and, as the peer, `pimc` (every decision valued by `pimc`'s own search
  over 30 layouts, the fair search teacher).
- **Distillation**, one update of the method's batch (2,048 decisions of the `true` shards) at a time: the method's
  3 x 512 network beside train.py's PPO default, 2 x 256, on `--threads` torch threads.

    python benchmarks/making_speed.py                      # 2 shards of 64 hands per label, 8 s per network
    python benchmarks/making_speed.py --quick              # a fast smoke run
    python benchmarks/making_speed.py --agent ppo:runs/recipe/agent.pt --threads 2

The labels' rollout agent (`--agent`, the shipped agent by default) sets the cost of `rollout` labels: each
play-out runs its network.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from euchre_lab.cli import OptionError, above, check_ranges, fail, script_options

SCRIPT = "benchmarks/making_speed.py"
PEER_LABEL = "pimc"
NETWORKS = {"3 x 512 (the method's)": (512, 3), "2 x 256 (PPO's default)": (256, 2)}


@dataclass
class Args:
    """The benchmark's options: each field is a flag, its docstring the flag's help."""

    shards: int = 2
    """shards labelled per label kind"""
    hands: int = 64
    """hands per shard"""
    agent: str = "ppo"
    """the agent whose play-outs value the `rollout` labels (and which plays 70% of their seats)"""
    seconds: float = 8.0
    """seconds of distillation updates per network"""
    threads: int = 1
    """torch threads while distilling"""
    quick: bool = False
    """a smoke run: one shard of 8 hands per label, 1 s per network"""


def label_rate(label: str, agent: str, folder: Path, args: Args) -> tuple[float, int]:
    """(decisions labelled per second, decisions) for `args.shards` shards of one label kind, one process."""
    from euchre_agents.teacher import generate
    from euchre_agents.teacher_data import TeacherSettings

    behaviour = f"{agent}=0.7,heuristic=0.3" if label == "rollout" else "heuristic=1"
    settings = TeacherSettings(label=label, behaviour=behaviour, rollout_agent=agent, epsilon=0.1,
                               games_per_shard=args.hands, seed=1)
    generate(folder / f"warm_{label}", 1, settings=TeacherSettings(**{**settings.__dict__, "games_per_shard": 2}), progress=False)
    start = time.process_time()
    manifest = generate(folder / label, args.shards, settings=settings, progress=False)
    decisions = sum(manifest["shards"].values())
    return decisions / (time.process_time() - start), decisions


def distill_rate(folder: Path, hidden_size: int, num_layers: int, args: Args) -> float:
    """Distillation samples per second of one network, on batches of the `true` shards."""
    import numpy as np
    import torch

    from euchre_agents.network import ActorCritic
    from euchre_agents.teacher_data import load
    from euchre_env import Engine
    from euchre_lab.training.distill import TeacherSplit, distill_update, teacher_batch
    from euchre_lab.training.train_options import Args as TrainArgs

    engine = Engine()
    data = load(folder / "true", engine)
    split = TeacherSplit(data, np.arange(len(data)), np.arange(0), [])
    net = ActorCritic(engine, hidden_size, num_layers, canonical_suits=True, action_values=True)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-5)
    train_args = TrainArgs(max_grad_norm=1.0)
    rng = np.random.default_rng(0)
    batch = lambda: teacher_batch(split, np.sort(rng.choice(len(data), 2048)), torch.device("cpu"))  # noqa: E731
    distill_update(net, optimizer, batch(), train_args)
    samples, start = 0, time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        distill_update(net, optimizer, batch(), train_args)
        samples += 2048
    return samples / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    """Print labels per second by kind (beside pimc's) and distillation samples per second by network."""
    try:
        args = script_options(Args, SCRIPT, __doc__.split("\n\n")[0], argv)
        if args.quick:
            args = Args(shards=1, hands=8, agent=args.agent, seconds=1.0, threads=args.threads)
        check_ranges(args, {"shards": above(0), "hands": above(0), "seconds": above(0), "threads": above(0)})
        from euchre_agents.registry import make_agent
        from euchre_env import Engine

        make_agent(args.agent, Engine())
    except (OptionError, ValueError) as e:
        return fail(SCRIPT, e)
    import torch

    from euchre_agents.threads import one_thread

    with tempfile.TemporaryDirectory() as scratch, one_thread():
        print(f"labels, one process, {args.shards} shard(s) of {args.hands} hands (CPU time):")
        rates = {}
        for label in ("true", "rollout", PEER_LABEL):
            rates[label], decisions = label_rate(label, args.agent, Path(scratch), args)
            print(f"  {label:8s} {rates[label]:9,.0f} decisions/s  ({decisions:,} decisions)")
        for label in ("true", "rollout"):
            print(f"  {label} labels: {rates[label] / rates[PEER_LABEL]:.1f}x pimc's rate")
        torch.set_num_threads(args.threads)
        print(f"distillation, batches of 2,048, {args.threads} torch thread(s), {args.seconds:g} s each (wall time):")
        for name, (width, depth) in NETWORKS.items():
            print(f"  {name:24s} {distill_rate(Path(scratch), width, depth, args):9,.0f} samples/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
