"""Regret of bots on held-out teacher data: the teacher value each loses per decision, by phase.

    python benchmarks/teacher_regret.py data/teacher_true --shards 15 --decisions 4000 ppo pimc heuristic

Reads the last `--shards` shards of the folder (those a distillation run holds out by default), draws
`--decisions` of their decisions at random, and for each bot spec prints the mean, over those decisions,
of (best teacher value - teacher value of the bot's choice), overall and per decision phase.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from euchre_agents.teacher_data import TeacherDataError, load, read_manifest
from euchre_env import Engine, Phase
from euchre_lab.cli import OptionError, at_least, check_ranges, checked_agent, fail, script_options

SCRIPT = "benchmarks/teacher_regret.py"

TEACHER_HINT = "pass a folder written by python -m euchre_lab.teacher"


@dataclass
class Options:
    """The command line of the teacher-regret table (field docstrings are its --help)."""

    data: str = ""
    """teacher-data folder (python -m euchre_lab.teacher)"""
    bots: list[str] = field(default_factory=list)
    """bot specs, e.g. ppo pimc heuristic"""
    shards: int = 15
    """the last N shards are read"""
    decisions: int = 4000
    """decisions drawn from them"""
    seed: int = 0
    """seed of the draw and of the bots"""


def setup(argv: list[str] | None) -> tuple[Options, Engine, list[int], list]:
    """The options, the engine, the shards to read and the bots; an OptionError naming the first option
    that makes no sense (before any shard is read)."""
    args = script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv,
                          positional={"data": dict(metavar="DATA"), "bots": dict(nargs="+", metavar="BOT")})
    check_ranges(args, {"shards": at_least(1), "decisions": at_least(1), "seed": at_least(0)})
    if not Path(args.data).is_dir():
        raise OptionError(f"{args.data} is not a folder; {TEACHER_HINT}")
    try:
        shards = sorted(int(k) for k in read_manifest(args.data)["shards"])[-args.shards :]
    except TeacherDataError as e:
        raise OptionError(f"{e}; {TEACHER_HINT}") from None
    if not shards:
        raise OptionError(f"{args.data} lists no shards; {TEACHER_HINT}")
    engine = Engine()
    bots = [checked_agent(spec, "bot spec", engine, seed=args.seed) for spec in args.bots]
    return args, engine, shards, bots


def main(argv: list[str] | None = None) -> int:
    """Print one line per bot."""
    try:
        args, engine, shards, bots = setup(argv)
        data = load(args.data, engine, shards=shards)
    except (OptionError, TeacherDataError) as e:
        return fail(SCRIPT, e)
    rng = np.random.default_rng(args.seed)
    rows = np.sort(rng.choice(len(data), size=min(len(data), args.decisions), replace=False))
    obs, mask = data.observations(rows), data.masks(rows)
    values = data.arrays["values"][rows].astype(np.float64)
    best = np.nanmax(values, axis=1)
    phase = data.arrays["phase"][rows]
    print(f"{rows.size} decisions from shards {shards[0]}-{shards[-1]} of {args.data}")
    for spec, bot in zip(args.bots, bots):
        actions = np.concatenate([bot.act(obs[i : i + 256], mask[i : i + 256]) for i in range(0, rows.size, 256)])
        regret = best - values[np.arange(rows.size), actions]
        by_phase = ", ".join(f"{Phase(p).name} {regret[phase == p].mean():.3f}" for p in np.unique(phase))
        print(f"{spec}: regret {regret.mean():.4f} points per decision ({by_phase})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
