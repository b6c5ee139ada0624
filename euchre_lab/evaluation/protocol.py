"""The scoring protocol: one number, with its 95% interval, for a bot on a task (`evaluate.py --task TASK BOT`).

The bot plays duplicate matches (`euchre_lab.evaluation.match`) against a fixed ladder: `random`, `heuristic`, `pimc`
and the task's shipped learned agent (`Task.learned`; a task without one scores over the rungs it has, and
its `Task.protocol` is bumped when the agent comes). Every match uses the same deal keys from the
protocol's seed, the same chunk size and the rung's fixed number of pairs, so the score depends on nothing
but the bot (never on --workers or Ray). The headline is the equal-weight mean of the margins per hand
against the headline rungs, with a delta-method interval over the shared pairs
(`euchre_lab.evaluation.estimates.mean_of_ratios`); `random` is a sanity rung reported beside it.

The pair counts are sized so that a bot as fast as the shipped `ppo` is scored in under 15 minutes on 2 cores;
docs/tasks.md gives the arithmetic and the measured time.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable

from euchre_agents.registry import make_agent
from euchre_agents.threads import one_thread
from euchre_env import __version__
from euchre_env.engine import EPISODE_HAND, Engine, game_keys
from euchre_env.rules import Rules
from euchre_env.tasks import TASKS, Task, task_for
from euchre_lab.evaluation.estimates import Estimate, mean_of_ratios
from euchre_lab.evaluation.match import DEFAULT_CHUNK, bot_weights, play_chunk, play_match
from euchre_lab.evaluation.match_result import MatchResult

EVALUATION_SEED = 47_002
"""The seed of reported scores."""
DEVELOPMENT_SEED = 47_001
"""The seed to tune on (`--dev`): other deals than the evaluation seed's."""
CHUNK = DEFAULT_CHUNK
HEADLINE_PAIRS = 10_000
"""Pairs against each headline rung (heuristic, pimc, the learned agent)."""
SANITY_PAIRS = 1_000
"""Pairs against `random`."""
QUICK_DIVISOR = 20
"""`--quick` plays 1/20 of the pairs: for development, not comparable."""
QUICK_NOTE = "QUICK (not comparable): "
VERSIONS = "versions"
"""The key of every result file's versions (`versions`)."""
CALIBRATION_PAIRS = 256
CALIBRATION_SECONDS = 1.0
"""The ETA times each rung on batches of 1, 2, 4, ... pairs until one takes this long or holds `CALIBRATION_PAIRS`."""


@dataclass(frozen=True)
class Rung:
    """One opponent of the ladder."""

    name: str
    spec: str
    pairs: int
    headline: bool


def ladder(task: Task, quick: bool = False) -> list[Rung]:
    """The task's ladder under its protocol version: random (sanity), heuristic, pimc, and its learned agent
    where the task has one. The one home of what the protocol plays."""
    divisor = QUICK_DIVISOR if quick else 1
    rungs = [Rung("random", "random", SANITY_PAIRS // divisor, False),
             Rung("heuristic", "heuristic", HEADLINE_PAIRS // divisor, True),
             Rung("pimc", "pimc", HEADLINE_PAIRS // divisor, True)]
    if task.learned is not None:
        rungs.append(Rung("learned", task.learned, HEADLINE_PAIRS // divisor, True))
    return rungs


def ladder_note(task: Task) -> str:
    """What the headline is over, said plainly (a task without a learned agent says so)."""
    names = [r.name for r in ladder(task) if r.headline]
    missing = "" if task.learned else f"; the {task.table} table has no shipped learned agent yet, so no learned rung"
    return f"mean of the margins per hand against {', '.join(names)}, equally weighted{missing}"


def check_ladder(task: Task) -> None:
    """Refuse to score when the learned rung plays other weights than the task's protocol version pins: the
    scores would not be comparable (a new agent is a new protocol version, `Task.protocol`)."""
    if task.learned is None:
        return
    played = bot_weights(task.rules, [task.learned]).get(task.learned)
    if played != task.learned_sha256:
        raise ValueError(f"the learned rung {task.learned!r} plays weights sha256 {played}, but {task.name} protocol "
                         f"{task.protocol} pins {task.learned_sha256}: restore those weights, or make a new protocol version")


def engine_of(task: Task) -> Engine:
    """The engine of the protocol's matches: the task's rules, one hand per game."""
    return Engine(task.rules, episode=EPISODE_HAND)


def eta_seconds(task: Task, bot: str, rungs: list[Rung], workers: int) -> float:
    """Seconds the ladder should take on `workers` processes, from timing each rung here: after two warm-up
    batches, batches of 1, 2, 4, ... pairs (a batched bot is slow per pair on a small batch) until they have
    one takes `CALIBRATION_SECONDS` or holds `CALIBRATION_PAIRS`; the last batch gives the rate. One thread, as
    the match's workers play."""
    engine = engine_of(task)
    keys = game_keys(DEVELOPMENT_SEED + 1, CALIBRATION_PAIRS)
    total = 0.0
    for rung in rungs:
        a, b = make_agent(bot, engine, seed=0), make_agent(rung.spec, engine, seed=1)
        for _ in range(2):
            play_chunk(engine, a, b, keys[:2])  # compiles and loads what the rung plays
        pairs = 1
        while True:
            start = time.perf_counter()
            with one_thread():
                play_chunk(engine, a, b, keys[:pairs])
            seconds = time.perf_counter() - start
            if seconds >= CALIBRATION_SECONDS or pairs >= CALIBRATION_PAIRS:
                break
            pairs *= 2
        total += seconds / pairs * rung.pairs / max(1, min(workers, -(-rung.pairs // CHUNK)))
    return total


def play_ladder(task: Task, bot: str, rungs: list[Rung], seed: int, *, workers: int = 1, ray: str | None = None,
                progress: bool = False, say: Callable[[str], None] = print, note: str = "") -> list[MatchResult]:
    """The bot (A) against each rung (B), one duplicate match each, saying each margin as it lands; `note` goes in
    front of each progress bar."""
    matches = []
    for rung in rungs:
        match = play_match(task.rules, bot, rung.spec, hands=2 * rung.pairs, seed=seed, workers=workers, chunk=CHUNK,
                           ray=ray, progress=progress, label=f"{note}vs {rung.name}")
        say(f"  vs {rung.name:<9} ({rung.spec}, {rung.pairs:,} pairs): margin per hand {match.margin_per_hand}"
            + ("" if rung.headline else "   (sanity rung, not in the score)"))
        matches.append(match)
    return matches


def headline(rungs: list[Rung], matches: list[MatchResult]) -> Estimate:
    """The score: the mean of the margins per hand against the headline rungs, its interval over the shared pairs."""
    chosen = [m for r, m in zip(rungs, matches) if r.headline]
    return mean_of_ratios([m.a_points - m.b_points for m in chosen], [m.hands for m in chosen])


def _estimate(e: Estimate) -> dict[str, float]:
    return dataclasses.asdict(e)


def score_record(task: Task, bot: str, rungs: list[Rung], matches: list[MatchResult], *, seed: int, quick: bool,
                 command: str, seconds: float, workers: int) -> dict[str, Any]:
    """score.json's content: what was scored, on what, the score and every rung's margin, with the versions;
    `seconds` the wall time of the matches on `workers` processes (which never changes the score)."""
    agent = make_agent(bot, engine_of(task), seed=0)
    weights = bot_weights(task.rules, [r.spec for r in rungs])
    return {
        "task": task.name,
        "task_version": task.version,
        "task_fingerprint": task.fingerprint,
        "protocol": task.protocol,
        "package_version": __version__,
        "comparable": not quick,
        "quick": quick,
        "seed": {"value": seed, "kind": "evaluation" if seed == EVALUATION_SEED else "development"},
        "score": _estimate(headline(rungs, matches)),
        "headline": ladder_note(task),
        "opponents": [
            {"rung": r.name, "spec": r.spec, "pairs": m.num_pairs, "in_score": r.headline,
             "margin": _estimate(m.margin_per_hand), "weights_sha256": weights.get(r.spec)}
            for r, m in zip(rungs, matches)
        ],
        "scored": {"spec": bot, "command": command, "file_sha256": agent.source_sha256, "weights_sha256": agent.weights_sha256},
        "rules": task.rules.to_dict(),
        "chunk": CHUNK,
        "wall_seconds": round(seconds, 1),
        "workers": workers,
        "play_seconds": round(sum(m.seconds for m in matches), 1),
    }


def versions(rules: Rules, episode: str = EPISODE_HAND) -> dict[str, Any]:
    """What every result file records: the package's version, and the task these rules are (with its version
    and its scoring protocol's), or None for rules that are no task."""
    task = task_for(rules, episode)
    return {"package": __version__, "task": task and task.name, "task_version": task and task.version,
            "protocol": task and task.protocol}


def task_listing() -> str:
    """The named tasks, one block each: the table, the spaces, the single-agent env's id and bots, the ladder."""
    lines = []
    for task in TASKS.values():
        engine = Engine(task.rules, episode=task.episode, reward=task.reward)
        learned = task.learned or "none yet"
        lines += [
            f"{task.name:<18} {task.description}",
            f"  {'':<16} observation Box(0, {max(4, task.rules.rubber_games)}, ({engine.observation_size},), float32) v{task.observation_version}, "
            f"actions Discrete({engine.num_actions}) v{task.action_version}; episode {task.episode}, reward {task.reward}",
            f"  {'':<16} gymnasium.make({task.gym_id!r}): partner {task.partner}, opponents {task.opponents}; "
            f"protocol {task.protocol}, learned rung {learned}",
        ]
    return "\n".join(lines)
