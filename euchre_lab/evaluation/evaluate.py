"""Duplicate matches and round robins between Euchre bots, with confidence intervals and ratings.

    python evaluate.py heuristic random --hands 20000
    python evaluate.py heuristic random --games 2000 --rules target_points=5 stick_the_dealer=false
    python evaluate.py heuristic pimc --rules "{deck: 32, joker: true}" --seed 1 --out results/h_vs_p
    python evaluate.py --round-robin random heuristic pimc:worlds=20 oracle --hands 10000
    python evaluate.py --config configs/tournament.yaml
    python evaluate.py heuristic pimc --hands 10000 --ray auto         # chunks as tasks on a Ray cluster
    python evaluate.py --list-tasks                                     # the named tasks and their spaces
    python evaluate.py --task standard-v1 ppo --out results/ppo_score   # the scoring protocol: score.json
    python evaluate.py --task standard-v1 my_bot.py:policy --quick      # a smaller run for development
    python evaluate.py --help

A match keeps each finished chunk in OUT/chunks/ until its results are written: stopped part way (Ctrl-C, a
lost machine), the same command continues it and plays only the chunks it lacks.

This module is the command line; the work is done, in reading order, by
- `euchre_lab.evaluation.match`: duplicate deals, the chunks that play them (through `euchre_env.play`), `play_match`;
- `euchre_lab.evaluation.match_result`: a match's per-pair outcomes and every statistic reported on them;
- `euchre_lab.evaluation.estimates`: ratio estimates with their intervals and p-values;
- `euchre_lab.evaluation.ratings`: round robins and their Bradley-Terry ratings;
- `euchre_lab.evaluation.backends`: where chunks run (this process, a process pool, Ray);
- `euchre_lab.evaluation.report`: the JSON and CSV files and the plots.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import yaml

from euchre_agents.pool import WorkerDied
from euchre_env.play import BotError
from euchre_env.rules import Rules, RulesError
from euchre_lab.evaluation.backends import RAY_LOCAL, connect_ray
from euchre_lab.evaluation import journal, scoring
from euchre_lab.cli import at_least, check_ranges, fail, given_options, interrupted, layered, option_parser, read_options
from euchre_lab.evaluation.match import (
    DEFAULT_CHUNK,
    DEFAULT_HANDS,
    GAMES,
    HANDS,
    bot_weights,
    check_bots,
    mode_and_pairs,
    play_match,
)
from euchre_lab.evaluation.match_result import rules_changes, rules_label
from euchre_lab.evaluation.protocol import VERSIONS, task_listing, versions
from euchre_lab.evaluation.ratings import round_robin
from euchre_lab.evaluation.report import save_match, save_tournament


@dataclass
class Args:
    """evaluate.py's options: each field is a flag, its docstring the flag's help."""

    bots: list[str] = field(default_factory=list)
    """two bot specs for one match, e.g. `heuristic random` (A first)"""
    round_robin: list[str] = field(default_factory=list)
    """bot specs for a round robin (every pairing once), e.g. `random heuristic pimc oracle`"""
    config: str | None = None
    """YAML file whose keys are these options (`bots`, `round_robin`, `hands`, `rules`: {...}, ...)"""
    hands: int | None = None
    """hands per match, half of them mirrors of the other half (default 10000 unless --games)"""
    games: int | None = None
    """games to the target per match, half of them mirrors of the other half"""
    rules: dict[str, Any] = field(default_factory=dict)
    """rule options as key=value (YAML values) or a YAML mapping: `target_points=5` or `"{deck: 32}"`"""
    seed: int = 0
    """seed of the deal keys and of the bots' randomness"""
    workers: int = os.cpu_count() or 1
    """processes to play chunks in; results do not depend on it"""
    ray: str | None = None
    """play the chunks as Ray tasks: `--ray` alone starts a local Ray (with --workers CPUs), `--ray ADDRESS` joins the cluster there (`auto`, HOST:PORT, ray://HOST:PORT); results are the same"""
    chunk: int = DEFAULT_CHUNK
    """pairs of mirrored games per chunk (results depend on it: it sets the bots' random streams)"""
    bootstrap: int = 1000
    """bootstrap resamples for the rating intervals"""
    out: str | None = None
    """results folder (default results/<a>_vs_<b>_seed<seed> or results/round_robin_seed<seed>, then _<changed rules> for other rules)"""
    overwrite: bool = False
    """replace results of another match (other bots, weights, counts, seed or rules) already in the results folder, and another match's unfinished chunks"""
    progress: bool = True
    """show a progress bar with the time left"""
    plots: bool = True
    """draw the plots"""
    task: str | None = None
    """score one BOT by the scoring protocol on this task (`--list-tasks`): fixed ladder, seeds and pairs; writes OUT/score.json"""
    quick: bool = False
    """with --task: 1/20 of the pairs, for development; its results say they are not comparable"""
    dev: bool = False
    """with --task: play the published development seed instead of the evaluation seed (tune on it, report the other)"""
    list_tasks: bool = False
    """print the named tasks with their observation and action spaces, and exit"""


# ---------------------------------------------------------------------------------------- command line


SCRIPT = "evaluate.py"


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Args from defaults, then the --config file, then the command line (each overriding the last); bots
    or a round robin, and hands or games, given on the command line replace the preset's."""
    parser = option_parser(
        Args, SCRIPT, __doc__.split("\n\n")[0],
        positional={"bots": dict(nargs="*", metavar="BOT")},
        special={"ray": dict(nargs="?", const=RAY_LOCAL, metavar="ADDRESS")},
    )
    given = given_options(parser, Args, argv)
    if not given.get("bots", True):
        del given["bots"]
    preset = read_options(given["config"], Args, "configs/tournament.yaml") if "config" in given else {}
    for either in (("hands", "games"), ("bots", "round_robin")):
        if any(name in given for name in either):
            for name in either:
                preset.pop(name, None)
    return Args(**layered(preset, given))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text).strip("_")


MAX_SLUG = 60
"""Longer rule changes name the results folder by a hash instead."""


def rules_slug(rules: Rules) -> str:
    """The rules' part of a default results folder name: '' for the default rules, else `_deck=32_joker=true`
    (or `_rules-<hash>` when that would be long)."""
    changes = rules_changes(rules)
    if not changes:
        return ""
    slug = _slug("_".join(rules_label(rules).split()))
    if len(slug) > MAX_SLUG:
        slug = "rules-" + zlib.crc32(json.dumps(changes, sort_keys=True).encode()).to_bytes(4, "big").hex()
    return "_" + slug


def default_out(args: Args, rules: Rules) -> Path:
    """Where results go without --out: the bots, the seed and the rules name the folder."""
    if args.round_robin:
        return Path(f"results/round_robin_seed{args.seed}{rules_slug(rules)}")
    a, b = args.bots
    return Path(f"results/{_slug(a)}_vs_{_slug(b)}_seed{args.seed}{rules_slug(rules)}")


IDENTITY = ("bots", "round_robin", "hands", "games", "seed", "chunk", "rules")
"""What makes two results the same result (workers, progress and plots never change one), with the weights played."""
WEIGHTS = "weights_sha256"
"""The config key of the sha256 of the weights each learned bot plays, by spec."""


def _identity(config: dict[str, Any]) -> dict[str, Any]:
    """The IDENTITY fields of a results config, the rules as their label (so that {} equals the defaults)."""
    out = {k: config.get(k) for k in IDENTITY}
    out["rules"] = rules_label(config.get("rules") or {})
    return out


def _other_weights(held: dict[str, Any], here: dict[str, Any]) -> str | None:
    """The first spec that plays other weights here than in the `held` results, said with both digests; None if none."""
    old, new = held.get(WEIGHTS) or {}, here.get(WEIGHTS) or {}
    for spec in dict.fromkeys([*old, *new]):
        if old.get(spec) != new.get(spec):
            return f"{spec} played weights sha256 {old.get(spec, 'none')} there and plays {new.get(spec, 'none')} here"
    return None


def check_out(out: Path, config: dict[str, Any], overwrite: bool) -> None:
    """Refuse to write over results of another match in `out` unless `overwrite`; the same match may be rewritten."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder; choose another --out")
    for name in ("match.json", "tournament.json"):
        if not (out / name).is_file() or overwrite:
            continue
        try:
            held = json.loads((out / name).read_text()).get("config", {})
        except (ValueError, AttributeError):
            held = {}
        ids = _identity(held), _identity(config)
        differ = [k for k in IDENTITY if ids[0][k] != ids[1][k]]
        there = ", ".join(f"{k} {ids[0][k]!r} there, {ids[1][k]!r} here" for k in differ) or _other_weights(held, config)
        if there:
            raise ValueError(f"{out} already holds the results of another match ({there}); pass --out DIR or --overwrite")


def check_options(args: Args) -> None:
    """The numeric options in range, and a round robin of distinct bots."""
    check_ranges(args, {"seed": at_least(0), "workers": at_least(1), "chunk": at_least(1), "bootstrap": at_least(1)})
    if args.round_robin and (len(args.round_robin) < 2 or len(set(args.round_robin)) != len(args.round_robin)):
        raise ValueError(f"--round-robin needs two or more different bots, got {args.round_robin}")


def play(args: Args, rules: Rules, options: dict[str, Any], chunks: Path) -> tuple[Any, int]:
    """The match or the round robin, its finished chunks kept in `chunks`; the result and the hands it holds."""
    if args.round_robin:
        tournament = round_robin(rules, args.round_robin, bootstrap=args.bootstrap, progress=args.progress, journal=chunks, **options)
        return tournament, sum(m.num_hands for m in tournament.matches)
    match = play_match(rules, *args.bots, progress=args.progress, journal=chunks, **options)
    return match, match.num_hands


def play_continuing(args: Args, rules: Rules, options: dict[str, Any], chunks: Path) -> tuple[Any, int, int]:
    """`play`, reading back the finished chunks a stopped run of the same command left in `chunks` (with
    --overwrite, another match's chunks there are dropped first): the result, its hands, the chunks read back."""
    (result, hands), read_back = journal.play_continuing(chunks, lambda: play(args, rules, options, chunks), args.overwrite)
    return result, hands, read_back


def checked_options(args: Args) -> tuple[Args, Rules, dict[str, Any], dict[str, Any], Path]:
    """Every option checked before anything is played: the args, rules, `play_match` keywords, the results'
    config and the results folder (connected to Ray when asked)."""
    rules = Rules.from_dict(args.rules)
    if args.quick or args.dev:
        raise ValueError(f"--{'quick' if args.quick else 'dev'} goes with --task TASK (the scoring protocol)")
    if args.round_robin and args.bots:
        raise ValueError("give either two bots or --round-robin, not both")
    if not args.round_robin and len(args.bots) != 2:
        raise ValueError(f"a match takes exactly two bots (A and B), got {args.bots}; or use --round-robin")
    options = dict(hands=args.hands, games=args.games, seed=args.seed, workers=args.workers, chunk=args.chunk, ray=args.ray)
    if args.hands is None and args.games is None:
        options["hands"] = DEFAULT_HANDS
    mode_and_pairs(options["hands"], options["games"])
    check_options(args)
    specs, mode = args.round_robin or args.bots, HANDS if args.games is None else GAMES
    check_bots(rules, specs, mode)
    config = {**dataclasses.asdict(args), **options, "rules": rules.to_dict(), WEIGHTS: bot_weights(rules, specs, mode),
              VERSIONS: versions(rules)}
    out = Path(args.out) if args.out else default_out(args, rules)
    check_out(out, config, args.overwrite)
    if args.ray is not None:
        connect_ray(args.ray, num_cpus=args.workers)
    return args, rules, options, config, out


def main(argv: Sequence[str] | None = None) -> int:
    """Run a match, a round robin or the scoring protocol from the command line; 0 on success, 2 on a usage
    error (a bot that fails while playing included), 130 on Ctrl-C (the finished chunks kept for the same
    command to continue)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = parse_args(argv)
        if args.list_tasks:
            print(task_listing())
            return 0
        if args.task is not None:
            return scoring.main(args, argv)
        args, rules, options, config, out = checked_options(args)
    except (ValueError, RulesError, OSError, yaml.YAMLError) as error:
        return fail(SCRIPT, error)
    chunks = out / "chunks"
    start = time.perf_counter()
    try:
        result, played, read_back = play_continuing(args, rules, options, chunks)
    except (journal.JournalError, BotError, WorkerDied) as error:
        if isinstance(error, BotError):
            journal.remove(chunks)
            if out.is_dir() and not any(out.iterdir()):
                out.rmdir()
        return fail(SCRIPT, error)
    except KeyboardInterrupt:
        return interrupted(SCRIPT, f"{journal.finished_chunks(chunks)} finished chunks are kept in {chunks}: "
                                   "run the same command to continue")
    wall = time.perf_counter() - start
    print(result.report())
    written = (save_tournament if args.round_robin else save_match)(result, out, config, plots=args.plots)
    journal.remove(chunks)
    backend = f"{args.workers} workers" if args.ray is None else f"Ray ({args.ray})"
    if read_back:
        print(f"{played:,} hands: {read_back} chunks read back from a stopped run, the rest played in {wall:.1f} s wall time with {backend}")
    else:
        print(f"{played:,} hands in {wall:.1f} s wall time: {played / wall:,.0f} hands/s with {backend}")
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
