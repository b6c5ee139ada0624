"""Regret of bots on held-out teacher data: the teacher value each loses per decision, by phase.

    python benchmarks/teacher_regret.py data/teacher_true --shards 15 --decisions 4000 ppo pimc heuristic
    python benchmarks/teacher_regret.py data/teacher_w32 --shards 40 --decisions 100000 ppo --other-labels data/teacher_w8

Reads the last `--shards` shards of the folder (those a distillation run holds out by default), draws
`--decisions` of their decisions at random, and for each bot spec prints the mean, over those decisions,
of (best teacher value - teacher value of the bot's choice), overall and per decision phase. Each
`--other-labels` folder, written with the same seed and behaviour (so holding the same decisions) but
labelled another way, is scored the same way by the action its own labels rank best, with how often that
action is DATA's best and how far its values are from DATA's: how much two labellings disagree.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from euchre_agents.teacher_data import TeacherData, TeacherDataError, load, read_manifest
from euchre_env import Engine, Phase
from euchre_lab.cli import OptionError, at_least, check_ranges, checked_agent, fail, script_options

SCRIPT = "benchmarks/teacher_regret.py"

TEACHER_HINT = "pass a folder written by python -m euchre_lab.training.teacher"


@dataclass
class Options:
    """The command line of the teacher-regret table (field docstrings are its --help)."""

    data: str = ""
    """teacher-data folder (python -m euchre_lab.training.teacher)"""
    bots: list[str] = field(default_factory=list)
    """bot specs, e.g. ppo pimc heuristic"""
    shards: int = 15
    """the last N shards are read"""
    decisions: int = 4000
    """decisions drawn from them"""
    seed: int = 0
    """seed of the draw and of the bots"""
    other_labels: list[str] = field(default_factory=list)
    """teacher folders with the same decisions labelled otherwise, scored by their own best action"""


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
    for folder in args.other_labels:
        if not Path(folder).is_dir():
            raise OptionError(f"--other-labels {folder} is not a folder; {TEACHER_HINT}")
    engine = Engine()
    bots = [checked_agent(spec, "bot spec", engine, seed=args.seed) for spec in args.bots]
    return args, engine, shards, bots


def other_labels(folder: str, data: TeacherData, rows: np.ndarray, engine: Engine, shards: list[int]) -> np.ndarray:
    """`folder`'s values of the same decisions as `data`'s `rows`; an OptionError if it holds other decisions."""
    try:
        other = load(folder, engine, shards=shards)
    except TeacherDataError as e:
        raise OptionError(f"--other-labels {folder}: {e}") from None
    if len(other) != len(data) or any(not np.array_equal(other.arrays[k][rows], data.arrays[k][rows])
                                      for k in ("obs_bits", "mask_bits", "action")):
        raise OptionError(f"--other-labels {folder} holds other decisions than the data's shards "
                          f"{shards[0]}-{shards[-1]}; pass a folder written with the same --seed, --behaviour and --epsilon")
    return other.arrays["values"][rows].astype(np.float64)


def regret_line(name: str, regret: np.ndarray, phase: np.ndarray) -> str:
    """`name: regret R points per decision (PHASE r, ...)`."""
    by_phase = ", ".join(f"{Phase(p).name} {regret[phase == p].mean():.3f}" for p in np.unique(phase))
    return f"{name}: regret {regret.mean():.4f} points per decision ({by_phase})"


def main(argv: list[str] | None = None) -> int:
    """Print one line per bot, then one per other labelling."""
    try:
        args, engine, shards, bots = setup(argv)
        data = load(args.data, engine, shards=shards)
        rng = np.random.default_rng(args.seed)
        rows = np.sort(rng.choice(len(data), size=min(len(data), args.decisions), replace=False))
        others = [other_labels(folder, data, rows, engine, shards) for folder in args.other_labels]
    except (OptionError, TeacherDataError) as e:
        return fail(SCRIPT, e)
    obs, mask = data.observations(rows), data.masks(rows)
    values = data.arrays["values"][rows].astype(np.float64)
    best = np.nanmax(values, axis=1)
    phase = data.arrays["phase"][rows]
    print(f"{rows.size} decisions from shards {shards[0]}-{shards[-1]} of {args.data}")
    for spec, bot in zip(args.bots, bots):
        actions = np.concatenate([bot.act(obs[i : i + 256], mask[i : i + 256]) for i in range(0, rows.size, 256)])
        print(regret_line(spec, best - values[np.arange(rows.size), actions], phase), flush=True)
    choice = mask.sum(axis=1) > 1
    for folder, other in zip(args.other_labels, others):
        actions = np.nanargmax(other, axis=1)
        agree = np.mean((actions == np.nanargmax(values, axis=1))[choice])
        gap = np.abs(other - values)[mask].mean()
        print(f"{regret_line(f'labels of {folder}', best - values[np.arange(rows.size), actions], phase)}; "
              f"the same best action in {agree:.1%} of the {choice.sum()} decisions with a choice, "
              f"legal actions' values {gap:.3f} points apart on average")
    return 0


if __name__ == "__main__":
    sys.exit(main())
