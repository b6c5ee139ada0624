"""The rates that set a run of `train.py --stage make`: labelled decisions per second and distillation samples per
second, each beside a peer measured in the same run.

- **Labels**, one process on one core, over the same shards of hands: `true` (every decision valued double-dummy on
  the open hands: the bootstrap's labels), `rollout` (bids, alone calls and discards valued by an agent's play-outs,
  cards double-dummy), `rollout_all` (cards by play-outs too: the later iterations' labels), each kind of play-out
  also with the agent's trunk in bfloat16 (`ppo:...,bf16`, what the method uses where the CPU has AMX), and,
  as the peer, `pimc` (every decision valued by `pimc`'s own search over 30 layouts, the fair search teacher).
- **Distillation**, one update of the method's batch (2,048 decisions of the `true` shards) at a time: the method's
  3 x 512 network in float32 and with `--distill-bf16`, beside train.py's PPO default, 2 x 256, on `--threads`
  torch threads.

    python benchmarks/making_speed.py                      # 2 shards of 64 hands per label, 8 s per network
    python benchmarks/making_speed.py --quick              # a fast smoke run
    python benchmarks/making_speed.py --agent ppo:runs/recipe/agent.pt --threads 2

The labels' rollout agent (`--agent`, the shipped agent by default) sets the cost of the play-out labels: each
play-out runs its network. The bfloat16 rows are left out on a CPU without AMX, where bfloat16 is slower than float32.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from euchre_lab.cli import OptionError, above, check_ranges, fail, script_options

SCRIPT = "benchmarks/making_speed.py"
PEER_LABEL = "pimc"
NETWORKS = {"3 x 512 (the method's)": (512, 3, False), "3 x 512, --distill-bf16": (512, 3, True),
            "2 x 256 (PPO's default)": (256, 2, False)}


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


def label_kinds(agent: str) -> dict[str, dict[str, Any]]:
    """The TeacherSettings fields of each kind of label measured, by its row name."""
    from euchre_agents.network import native_bfloat16

    bf16 = f"{agent}:,bf16" if ":" not in agent else f"{agent},bf16"
    kinds: dict[str, dict[str, Any]] = {"true": {"label": "true"}}
    for name, cards in (("rollout", False), ("rollout_all", True)):
        for suffix, player in (("", agent), (", bf16", bf16)) if native_bfloat16() else (("", agent),):
            kinds[name + suffix] = {"label": "rollout", "rollout_cards": cards, "rollout_agent": player,
                                    "behaviour": f"{agent}=0.7,heuristic=0.3"}
    kinds[PEER_LABEL] = {"label": PEER_LABEL}
    return kinds


def label_rate(fields: dict[str, Any], folder: Path, args: Args) -> tuple[float, int]:
    """(decisions labelled per second, decisions) for `args.shards` shards of one kind of label, one process."""
    from euchre_agents.teacher import generate
    from euchre_agents.teacher_data import TeacherSettings

    settings = TeacherSettings(**fields, epsilon=0.1, games_per_shard=args.hands, seed=1)
    generate(folder / "warm", 1, settings=TeacherSettings(**{**settings.__dict__, "games_per_shard": 2}), progress=False)
    start = time.process_time()
    manifest = generate(folder / "labels", args.shards, settings=settings, progress=False)
    decisions = sum(manifest["shards"].values())
    return decisions / (time.process_time() - start), decisions


def distill_rate(folder: Path, hidden_size: int, num_layers: int, bf16: bool, args: Args) -> float:
    """Distillation samples per second of one network, on batches of the `true` shards in `folder`."""
    import numpy as np
    import torch

    from euchre_agents.network import ActorCritic
    from euchre_agents.teacher_data import load
    from euchre_env import Engine
    from euchre_lab.training.distill import TeacherSplit, distill_update, teacher_batch
    from euchre_lab.training.train_options import Args as TrainArgs

    engine = Engine()
    data = load(folder, engine)
    split = TeacherSplit(data, np.arange(len(data)), np.arange(0), [])
    net = ActorCritic(engine, hidden_size, num_layers, canonical_suits=True, action_values=True)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, eps=1e-5)
    train_args = TrainArgs(max_grad_norm=1.0, distill_bf16=bf16)
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

    from euchre_agents.network import native_bfloat16
    from euchre_agents.threads import one_thread

    with tempfile.TemporaryDirectory() as scratch, one_thread():
        print(f"labels, one process, {args.shards} shard(s) of {args.hands} hands (CPU time):")
        rates = {}
        for name, fields in label_kinds(args.agent).items():
            rates[name], decisions = label_rate(fields, Path(scratch) / name, args)
            print(f"  {name:18s} {rates[name]:9,.0f} decisions/s  ({decisions:,} decisions)")
        for name in rates:
            if name != PEER_LABEL:
                print(f"  {name} labels: {rates[name] / rates[PEER_LABEL]:.1f}x pimc's rate")
        torch.set_num_threads(args.threads)
        print(f"distillation, batches of 2,048, {args.threads} torch thread(s), {args.seconds:g} s each (wall time):")
        for name, (width, depth, bf16) in NETWORKS.items():
            if bf16 and not native_bfloat16():
                continue
            rate = distill_rate(Path(scratch) / "true" / "labels", width, depth, bf16, args)
            print(f"  {name:26s} {rate:9,.0f} samples/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
