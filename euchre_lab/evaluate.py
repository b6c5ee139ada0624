"""Duplicate matches and round robins between Euchre bots, with confidence intervals and ratings.

    python evaluate.py heuristic random --hands 20000
    python evaluate.py heuristic random --games 2000 --rules target_points=5 stick_the_dealer=false
    python evaluate.py heuristic pimc --rules "{deck: 32, joker: true}" --seed 1 --out results/h_vs_p
    python evaluate.py --round-robin random heuristic pimc:worlds=20 oracle --hands 10000
    python evaluate.py --config configs/tournament.yaml
    python evaluate.py heuristic pimc --hands 10000 --ray auto         # chunks as tasks on a Ray cluster
    python evaluate.py --help

From Python (train.py's periodic evaluation):

    from euchre_lab.evaluate import play_match
    match = play_match(engine, learner_agent, "heuristic", hands=2000, seed=0)
    match.margin_per_hand.value, match.margin_per_hand.half_width, match.points_per_hand_a

Duplicate deals: every deal key is played twice, once with bot A at seats 0/2 and B at 1/3, and once
with the partnerships swapped. Both games of a pair see the same cards at the same seats, the same
first dealer (from the cut in the key) and, in games to the target, the same sequence of deals, so
the luck of the cards cancels and the side that deals is swapped too. The unit of every interval
below is that pair of mirrored games.

Reproducible: deal keys come from `--seed`; each chunk of `--chunk` pairs builds fresh bots seeded
from (seed, bot spec, side, chunk index), so a result depends on the seed and the chunk size, never
on `--workers` or `--ray` (the same chunks as Ray tasks), and a pairing inside a round robin plays
exactly as it would alone.

Statistics: points per hand, the A-B margin per hand and A's point share are ratio estimates
(sum over pairs / sum over pairs) with a delta-method standard error over pairs; the game win rate
likewise. Intervals are normal-approximation 95% intervals (fine for the hundreds of pairs or more
that a meaningful match has). Round-robin ratings are a Bradley-Terry fit by maximum likelihood on
points won (hands) or games won (games), on the Elo scale, with a bootstrap over the deals (shared by
every pairing) for their uncertainty. Bots that see hidden cards (`fair = False`, the oracle) play and are reported, but are
rated only afterwards against the fixed ratings of the fair bots and never ranked.
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import importlib
import inspect
import json
import logging
import math
import multiprocessing
import os
import re
import socket
import sys
import threading
import time
import typing
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist
from typing import Any, Sequence

import numpy as np
import yaml
from tqdm import tqdm

from euchre_agents.base import Agent
from euchre_agents.registry import make_agent
from euchre_env.engine import EPISODE_GAME, EPISODE_HAND, Engine, EuchreState, game_keys
from euchre_env.rules import Rules, RulesError
from euchre_lab.invocation import help_command, tool_name
from euchre_lab.presets import read_preset

HANDS = "hands"
GAMES = "games"
DEFAULT_HANDS = 10_000
DEFAULT_CHUNK = 500
"""Pairs of mirrored games per chunk (one batch of 2 * chunk games, one task for a worker)."""
CONFIDENCE = 0.95
Z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
ELO_PER_NAT = 400 / math.log(10)
ELO_MEAN = 1500.0
"""The fair bots' ratings average this."""
PRIOR_WINS = 0.5
"""Virtual wins each way added to every rated pairing, so that a clean sweep still has a finite rating."""
MAX_NEWTON = 100
MAX_NEWTON_STEP = 2.0
"""Largest change of a rating (in natural units) in one Newton step, for stability far from the optimum."""


@dataclass
class Args:
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
    """replace results of another match (other bots, counts, seed or rules) already in the results folder"""
    progress: bool = True
    """show a progress bar with the time left"""
    plots: bool = True
    """draw the plots"""


# ---------------------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class Estimate:
    """A value with its standard error and 95% interval."""

    value: float
    se: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"

    @property
    def half_width(self) -> float:
        """Half the width of the 95% normal interval, z * se (before any clipping to [0, 1])."""
        return Z * self.se

    def percent(self) -> str:
        """As a percentage with its interval."""
        return f"{100 * self.value:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"


def ratio_estimate(y: np.ndarray, x: np.ndarray, proportion: bool = False) -> Estimate:
    """sum(y) / sum(x) over independent units, with the delta-method standard error over units.

    For a proportion the interval is clipped to [0, 1].
    """
    y = np.asarray(y, np.float64)
    x = np.asarray(x, np.float64)
    n, total = y.size, x.sum()
    if n == 0 or total == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan)
    value = y.sum() / total
    residual = y - value * x
    se = math.sqrt(n / (n - 1) * float(residual @ residual)) / total if n > 1 else math.nan
    low, high = value - Z * se, value + Z * se
    if proportion:
        low, high = max(low, 0.0), min(high, 1.0)
    return Estimate(value, se, low, high)


def two_sided_p(estimate: Estimate) -> float:
    """Normal-approximation p-value of `value == 0`."""
    if estimate.se == 0 or math.isnan(estimate.se):
        return 1.0 if estimate.value == 0 or math.isnan(estimate.value) else 0.0
    return math.erfc(abs(estimate.value / estimate.se) / math.sqrt(2))


def _p_text(p: float) -> str:
    return "< 1e-12" if p < 1e-12 else f"= {p:.3g}"


def rules_changes(rules: dict[str, Any] | Rules) -> dict[str, Any]:
    """The rule options that differ from `Rules()`'s defaults (the primary document), in field order."""
    given, defaults = rules.to_dict() if isinstance(rules, Rules) else dict(rules), Rules().to_dict()
    return {k: v for k, v in given.items() if defaults.get(k) != v}


def rules_label(rules: dict[str, Any] | Rules) -> str:
    """`default` or the changed options as `deck=32 joker=true` (the values as --rules takes them)."""
    changes = rules_changes(rules)
    return " ".join(f"{k}={json.dumps(v).strip(chr(34))}" for k, v in changes.items()) or "default"


# ---------------------------------------------------------------------------------------- one match


@dataclass
class MatchResult:
    """Per-pair outcomes of a duplicate match of A against B, and the statistics over them."""

    a: str
    b: str
    mode: str
    """"hands" (one hand per game) or "games" (games to the target)."""
    seed: int
    chunk: int
    rules: dict[str, Any]
    keys: np.ndarray
    """(pairs,) the deal key each pair played twice."""
    a_points: np.ndarray
    """(pairs,) points A scored over the pair's two games."""
    b_points: np.ndarray
    hands: np.ndarray
    """(pairs,) hands played over the pair's two games (2 in hands mode)."""
    a_wins: np.ndarray | None
    """(pairs,) games A won of the pair's two (games mode only)."""
    seconds: float = 0.0
    """Time spent playing this match's chunks, summed over the processes that played them."""

    @property
    def num_pairs(self) -> int:
        """Pairs of mirrored games (the statistical unit)."""
        return int(self.keys.size)

    @property
    def num_hands(self) -> int:
        """Hands played in all."""
        return int(self.hands.sum())

    @property
    def num_games(self) -> int:
        """Games played in all (two per pair)."""
        return 2 * self.num_pairs

    @property
    def points_per_hand_a(self) -> Estimate:
        """Points A scores per hand."""
        return ratio_estimate(self.a_points, self.hands)

    @property
    def points_per_hand_b(self) -> Estimate:
        """Points B scores per hand."""
        return ratio_estimate(self.b_points, self.hands)

    @property
    def margin_per_hand(self) -> Estimate:
        """A's points minus B's, per hand: the headline number."""
        return ratio_estimate(self.a_points - self.b_points, self.hands)

    @property
    def point_share_a(self) -> Estimate:
        """A's share of all points scored."""
        return ratio_estimate(self.a_points, self.a_points + self.b_points, proportion=True)

    @property
    def win_rate_a(self) -> Estimate | None:
        """A's share of the games won (games mode), else None."""
        if self.a_wins is None:
            return None
        return ratio_estimate(self.a_wins, np.full(self.num_pairs, 2), proportion=True)

    @property
    def p_value(self) -> float:
        """Two-sided p-value of a zero margin."""
        return two_sided_p(self.margin_per_hand)

    @property
    def significant(self) -> bool:
        """The margin's 95% interval excludes zero."""
        return self.p_value < 1 - CONFIDENCE

    def summary(self) -> dict[str, Any]:
        """Everything reported about the match, JSON-ready."""
        out: dict[str, Any] = {
            "a": self.a,
            "b": self.b,
            "mode": self.mode,
            "seed": self.seed,
            "chunk": self.chunk,
            "pairs": self.num_pairs,
            "hands": self.num_hands,
            "games": self.num_games,
            "points_per_hand_a": dataclasses.asdict(self.points_per_hand_a),
            "points_per_hand_b": dataclasses.asdict(self.points_per_hand_b),
            "margin_per_hand": dataclasses.asdict(self.margin_per_hand),
            "point_share_a": dataclasses.asdict(self.point_share_a),
            "win_rate_a": None if self.win_rate_a is None else dataclasses.asdict(self.win_rate_a),
            "p_value": self.p_value,
            "significant": self.significant,
            "confidence": CONFIDENCE,
            "process_seconds": self.seconds,
            "hands_per_process_second": self.num_hands / self.seconds if self.seconds > 0 else None,
            "rules": self.rules,
        }
        return out

    def report(self) -> str:
        """A few lines for the terminal."""
        m = self.margin_per_hand
        leader = self.a if m.value > 0 else self.b
        verdict = f"{leader} is better" if self.significant else "no significant difference"
        lines = [
            f"{self.a} (A) vs {self.b} (B): {self.num_hands} hands in {self.num_games} games "
            f"({self.num_pairs} duplicate pairs, {self.mode} mode, seed {self.seed})",
            f"  rules              {rules_label(self.rules)}",
            f"  points per hand    A {self.points_per_hand_a}   B {self.points_per_hand_b}",
            f"  margin per hand    {m}   p {_p_text(self.p_value)}: {verdict}",
            f"  A's point share    {self.point_share_a.percent()}",
        ]
        if self.win_rate_a is not None:
            lines.append(f"  A's game win rate  {self.win_rate_a.percent()}")
        if self.seconds > 0:
            lines.append(f"  {self.num_hands / self.seconds:,.0f} hands/s per process ({self.seconds:.1f} s of play)")
        return "\n".join(lines)


def deal_duplicates(engine: Engine, keys: np.ndarray) -> tuple[EuchreState, np.ndarray]:
    """2m games from m keys (each key twice) and A's team per game: 0 (seats 0/2) first, then 1 (seats 1/3)."""
    keys = np.asarray(keys, np.uint64)
    state = engine.init(np.concatenate([keys, keys]))
    a_team = np.repeat(np.array([0, 1], np.int64), keys.size)
    return state, a_team


def _act(agent: Agent, label: str, engine: Engine, obs: np.ndarray, state: EuchreState, rows: np.ndarray) -> np.ndarray:
    """One bot's actions for `rows`, checked to be legal."""
    mask = state.legal[rows]
    if agent.needs_full_state:
        actions = agent.act(obs[rows], mask, state, rows)
    else:
        actions = agent.act(obs[rows], mask)
    actions = np.asarray(actions)
    if actions.shape != (rows.size,) or not np.issubdtype(actions.dtype, np.integer):
        raise ValueError(f"bot {label!r} returned {actions.shape} {actions.dtype} actions for {rows.size} decisions")
    bad = np.flatnonzero(~mask[np.arange(rows.size), np.clip(actions, 0, engine.num_actions - 1)] | (actions < 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"bot {label!r} chose the illegal action {engine.action_label(int(actions[i]))}; legal: "
            + ", ".join(engine.action_label(int(a)) for a in np.flatnonzero(mask[i]))
        )
    return actions.astype(np.int64)


def play_chunk(
    engine: Engine, agent_a: Agent, agent_b: Agent, keys: np.ndarray, labels: tuple[str, str] = ("A", "B")
) -> dict[str, np.ndarray]:
    """Play every key twice (partnerships swapped) to the end of the episode; per-pair outcomes."""
    state, a_team = deal_duplicates(engine, keys)
    n = a_team.size
    points = np.zeros((n, 2), np.int64)
    obs = np.empty((n, engine.observation_size), np.float32)
    while True:
        live = ~state.done
        if not live.any():
            break
        engine.observe(state, out=obs)
        actions = np.zeros(n, np.int64)
        a_turn = live & (state.to_play % 2 == a_team)
        for agent, label, turn in ((agent_a, labels[0], a_turn), (agent_b, labels[1], live & ~a_turn)):
            rows = np.flatnonzero(turn)
            if rows.size:
                actions[rows] = _act(agent, label, engine, obs, state, rows)
        engine.step(state, actions)
        points += state.hand_points  # non-zero only in the rows whose hand was scored in this step
    games = np.arange(n)
    a_points, b_points = points[games, a_team], points[games, 1 - a_team]
    m = keys.size
    out = {
        "a_points": a_points[:m] + a_points[m:],
        "b_points": b_points[:m] + b_points[m:],
        "hands": (state.hand_number[:m] + state.hand_number[m:]).astype(np.int64),
    }
    if engine.episode == EPISODE_GAME:
        a_won = (state.score[games, a_team] >= engine.rules.target_points).astype(np.int64)
        out["a_wins"] = a_won[:m] + a_won[m:]
    return out


def _agent_seed(seed: int, spec: str | Agent, side: int, chunk_index: int) -> int:
    """The seed of one bot in one chunk: a pure function of (seed, spec, side, chunk)."""
    name = spec if isinstance(spec, str) else spec.name
    entropy = [seed, zlib.crc32(name.encode()), side, chunk_index]
    return int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0] >> np.uint64(1))


@lru_cache(maxsize=8)
def _engine(rules: Rules, episode: str) -> Engine:
    return Engine(rules, episode=episode)


def _episode(mode: str) -> str:
    return EPISODE_HAND if mode == HANDS else EPISODE_GAME


@dataclass(frozen=True)
class _Task:
    """One chunk of one match."""

    match: int
    index: int
    rules: Rules
    mode: str
    specs: tuple[Any, Any]
    seeds: tuple[int, int]
    keys: np.ndarray


def _run_task(task: _Task) -> tuple[int, int, dict[str, np.ndarray]]:
    start = time.perf_counter()
    engine = _engine(task.rules, _episode(task.mode))
    agents = []
    for spec, seed in zip(task.specs, task.seeds):
        if isinstance(spec, Agent):
            spec.rng = np.random.default_rng(seed)
            agents.append(spec)
        else:
            agents.append(make_agent(spec, engine, seed=seed))
    labels = tuple(_label(s) for s in task.specs)
    out = play_chunk(engine, agents[0], agents[1], task.keys, labels)
    out["seconds"] = np.array(time.perf_counter() - start)
    return task.match, task.index, out


def _init_worker() -> None:
    """One thread per worker process: the parallelism is across processes."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _start_method() -> str:
    """fork on Linux (workers inherit what this process imported); spawn where CUDA or Ray is live here, or off Linux."""
    torch, ray = sys.modules.get("torch"), sys.modules.get("ray")
    cuda_live = torch is not None and torch.cuda.is_initialized()
    ray_live = ray is not None and ray.is_initialized()  # its threads and sockets do not survive a fork
    return "fork" if sys.platform.startswith("linux") and not cuda_live and not ray_live else "spawn"


def _label(spec: str | Agent) -> str:
    return spec if isinstance(spec, str) else spec.name


def _rules_of(engine_or_rules: Engine | Rules | dict | None) -> Rules:
    if isinstance(engine_or_rules, Engine):
        return engine_or_rules.rules
    if isinstance(engine_or_rules, dict):
        return Rules.from_dict(engine_or_rules)
    if engine_or_rules is None:
        return Rules()
    if isinstance(engine_or_rules, Rules):
        return engine_or_rules
    raise TypeError(f"expected an Engine, Rules, a dict of rules or None, got {type(engine_or_rules).__name__}")


def _mode_and_pairs(hands: int | None, games: int | None) -> tuple[str, int]:
    if hands is not None and games is not None:
        raise ValueError("give either hands or games, not both")
    if games is not None:
        mode, count = GAMES, games
    else:
        mode, count = HANDS, DEFAULT_HANDS if hands is None else hands
    if not isinstance(count, (int, np.integer)) or count < 2:
        raise ValueError(f"{mode} must be a whole number >= 2 (every deal is played twice), got {count!r}")
    return mode, (int(count) + 1) // 2


@lru_cache(maxsize=64)
def _spec_is_fair(rules: Rules, mode: str, spec: str) -> bool:
    return bool(make_agent(spec, _engine(rules, _episode(mode)), seed=0).fair)


def check_bots(rules: Rules, specs: Sequence[str | Agent], mode: str = HANDS) -> list[bool]:
    """Build each bot once with this match's engine (so a bad spec fails early); its `fair` flag per spec."""
    fair = []
    for spec in specs:
        if isinstance(spec, Agent):
            if spec.engine.rules != rules:
                raise ValueError(f"bot {spec.name!r} was built for other rules than this match's")
            fair.append(bool(spec.fair))
        elif isinstance(spec, str):
            fair.append(_spec_is_fair(rules, mode, spec))
        else:
            raise TypeError(f"a bot is a spec string or an Agent, got {type(spec).__name__}")
    return fair


def play_matches(
    engine_or_rules: Engine | Rules | dict | None,
    pairings: Sequence[tuple[str | Agent, str | Agent]],
    *,
    hands: int | None = None,
    games: int | None = None,
    seed: int = 0,
    workers: int = 1,
    chunk: int = DEFAULT_CHUNK,
    progress: bool = False,
    ray: str | None = None,
) -> list[MatchResult]:
    """Duplicate matches for several pairings on the same deal keys, all chunks sharing one process pool
    (or, with `ray` = an address or "local", one Ray cluster: the same chunks, the same results)."""
    rules = _rules_of(engine_or_rules)
    mode, pairs = _mode_and_pairs(hands, games)
    if not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be a positive int, got {chunk!r}")
    bots = list(dict.fromkeys(s for p in pairings for s in p))
    check_bots(rules, bots, mode)
    keys = game_keys(seed, pairs)
    starts = range(0, pairs, chunk)
    tasks = [
        _Task(m, c, rules, mode, (a, b), (_agent_seed(seed, a, 0, c), _agent_seed(seed, b, 1, c)), keys[lo : lo + chunk])
        for m, (a, b) in enumerate(pairings)
        for c, lo in enumerate(starts)
    ]
    in_process = any(isinstance(s, Agent) for s in bots)
    if in_process and ray is not None:
        raise ValueError("bots given as Agent instances play in this process; give bot specs to play on Ray")
    workers = 1 if in_process or ray is not None else max(1, min(int(workers), len(tasks)))
    chunks: dict[tuple[int, int], dict[str, np.ndarray]] = {}
    pool = None if workers == 1 else multiprocessing.get_context(_start_method()).Pool(workers, _init_worker)
    results = ray_results(tasks, ray) if ray is not None else None
    bar = tqdm(total=2 * pairs * len(pairings), unit="hand" if mode == HANDS else "game", disable=not progress)
    try:
        if results is None:
            results = pool.imap_unordered(_run_task, tasks) if pool else map(_run_task, tasks)
        for m, c, out in results:
            chunks[m, c] = out
            bar.update(2 * out["a_points"].size)
    finally:
        bar.close()
        if hasattr(results, "close"):
            results.close()
        if pool is not None:
            pool.terminate()
            pool.join()
    matches = []
    for m, (a, b) in enumerate(pairings):
        parts = [chunks[m, c] for c in range(len(starts))]
        seconds = sum(float(p.pop("seconds")) for p in parts)
        joined = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        matches.append(
            MatchResult(
                a=_label(a),
                b=_label(b),
                mode=mode,
                seed=seed,
                chunk=chunk,
                rules=rules.to_dict(),
                keys=keys,
                a_points=joined["a_points"],
                b_points=joined["b_points"],
                hands=joined["hands"],
                a_wins=joined.get("a_wins"),
                seconds=seconds,
            )
        )
    return matches


def play_match(
    engine_or_rules: Engine | Rules | dict | None,
    spec_a: str | Agent,
    spec_b: str | Agent,
    *,
    hands: int | None = None,
    games: int | None = None,
    seed: int = 0,
    workers: int = 1,
    chunk: int = DEFAULT_CHUNK,
    progress: bool = False,
    ray: str | None = None,
) -> MatchResult:
    """A duplicate match of A against B: `hands` single hands or `games` games to the target.

    Bots are specs (`"heuristic"`, `"ppo:runs/x/ckpt.pt"`) built with the match's rules in each
    chunk, or Agent instances (played in this process, their `rng` reseeded per chunk). With
    workers > 1 chunks run in worker processes (spawned where CUDA is live in this process: then
    call it under `if __name__ == "__main__":`). With `ray` (an address, or "local" for a Ray started
    for the call) chunks run as Ray tasks instead, with the same results.
    """
    options = dict(hands=hands, games=games, seed=seed, workers=workers, chunk=chunk, progress=progress, ray=ray)
    return play_matches(engine_or_rules, [(spec_a, spec_b)], **options)[0]


# ---------------------------------------------------------------------------------------- on Ray


RAY_LOCAL = "local"
"""`--ray` without an address: a Ray started on this machine for the run."""
RAY_MAX_RETRIES = 3
"""Times a chunk is run again after its worker process or node died."""
RAY_CONNECT_TIMEOUT = 20.0
"""Seconds to wait for a cluster to answer before giving up (ray.init itself may wait much longer)."""
RAY_HINT = "start one with `ray start --head`, or give --ray without an address for a local Ray"
RAY_OBJECT_STORE = 200 * 2**20
"""Object store of a local Ray, in bytes: results are a few arrays per chunk."""


def ray_runtime_env() -> dict[str, Any]:
    """Ray's job-level runtime_env that ships the engine, the bots and this module to every worker (py_modules).

    `connect_ray` passes it to `ray.init`; a program that starts Ray itself passes it too.
    """
    import euchre_agents
    import euchre_env

    modules = [Path(euchre_agents.__file__).parent, Path(euchre_env.__file__).parent, Path(__file__).resolve().parent]
    return {"py_modules": [str(p) for p in modules], "excludes": ["__pycache__", "*.pyc"]}


def _probe(address: str, timeout: float) -> None:
    """Raise ConnectionError unless something listens at HOST:PORT (or ray://HOST:PORT); `auto` is left to Ray."""
    where = address.removeprefix("ray://")
    host, sep, port = where.rpartition(":")
    if address == "auto":
        return
    if not sep or not port.isdigit():
        raise ValueError(f"--ray: {address!r} is not an address; give HOST:PORT, ray://HOST:PORT, auto, or no value for a local Ray")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        raise ConnectionError(f"cannot reach a Ray cluster at {address}: {error.strerror or error}; {RAY_HINT}") from None


def _use_auth_token() -> None:
    """Send this machine's Ray token (~/.ray/auth_token, RAY_AUTH_TOKEN) when RAY_AUTH_MODE is unset, as `ray start` does:
    clusters of Ray 2.60 require one by default, and without it ray.init waits on the refusals."""
    try:
        from ray._private.authentication.authentication_token_setup import maybe_enable_token_auth_if_token_available
    except ImportError:  # another Ray version: RAY_AUTH_MODE is then the user's to set
        return
    maybe_enable_token_auth_if_token_available(warn_if_disabled=False)


def _drop_sigterm_note(record: logging.LogRecord) -> bool:
    return "SIGTERM handler is not set" not in record.getMessage()


def connect_ray(address: str, num_cpus: int | None = None, timeout: float = RAY_CONNECT_TIMEOUT) -> bool:
    """Join the cluster at `address`, or start a local Ray (`RAY_LOCAL`, with `num_cpus`); False if already connected.

    The job's runtime_env ships the code (`ray_runtime_env`). Raises ConnectionError with a one-line
    message when the cluster cannot be reached within `timeout`.
    """
    import ray

    if ray.is_initialized():
        return False
    if address == RAY_LOCAL:
        ray.init(
            num_cpus=num_cpus,
            object_store_memory=RAY_OBJECT_STORE,
            include_dashboard=False,
            log_to_driver=False,
            runtime_env=ray_runtime_env(),
        )
        return True
    _probe(address, timeout)
    _use_auth_token()
    outcome: dict[str, BaseException | None] = {}

    def join() -> None:
        try:
            quiet = {} if address.startswith("ray://") else {"log_to_driver": False}  # Ray Client takes no such options
            ray.init(address=address, runtime_env=ray_runtime_env(), **quiet)
            outcome["error"] = None
        except BaseException as error:  # noqa: BLE001 - reported below as one line
            outcome["error"] = error

    # ray.init runs in a thread so that a silent address cannot hang this one; off the main thread it
    # notes that it cannot set its SIGTERM handler, which changes nothing here, so the note is dropped.
    worker_log = logging.getLogger("ray._private.worker")
    worker_log.addFilter(_drop_sigterm_note)
    thread = threading.Thread(target=join, daemon=True)
    thread.start()
    thread.join(timeout)
    worker_log.removeFilter(_drop_sigterm_note)
    if "error" not in outcome:
        raise ConnectionError(f"cannot reach a Ray cluster at {address}: no answer in {timeout:.0f} s; {RAY_HINT}")
    if outcome["error"] is not None:
        lines = str(outcome["error"]).strip().splitlines() or [type(outcome["error"]).__name__]
        raise ConnectionError(f"cannot connect to Ray at {address}: {lines[0].rstrip('.')}; {RAY_HINT}")
    return True


def _ray_play(run: Any, task: _Task) -> tuple[int, int, dict[str, np.ndarray]]:
    """A Ray task: one chunk, played by `run` (`_run_task`)."""
    return run(task)


def ray_results(
    tasks: Sequence[_Task], address: str, run: Any = None, max_retries: int = RAY_MAX_RETRIES
) -> typing.Iterator[tuple[int, int, dict[str, np.ndarray]]]:
    """Each chunk's (match, chunk, outcomes) as its Ray task finishes; a task whose worker dies runs again.

    The tasks are those the process pool would play, so the results are the same. A Ray already
    running in this process is used as it is (its job must ship the code: `ray_runtime_env`); one
    started here is shut down when the iterator is exhausted or closed.
    """
    import ray

    module = sys.modules[__name__] if __name__ != "__main__" else importlib.import_module("evaluate")
    tasks = [module._Task(**{f.name: getattr(t, f.name) for f in dataclasses.fields(t)}) for t in tasks]
    started = connect_ray(address)
    remote = ray.remote(module._ray_play).options(num_cpus=1, max_retries=max_retries)
    pending = [remote.remote(run or module._run_task, task) for task in tasks]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


# ---------------------------------------------------------------------------------------- ratings


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * x))


def fit_bradley_terry(wins: np.ndarray, prior: float = PRIOR_WINS) -> np.ndarray:
    """Elo-scale ratings (mean 0) maximising the Bradley-Terry likelihood; wins[i, j] = i's wins over j.

    P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400)), a point or a game counting as one "win".
    Newton's method on the concave log-likelihood; every pairing that was played gets `prior` virtual
    wins each way. The pairings must connect all bots.
    """
    wins = np.asarray(wins, np.float64)
    k = wins.shape[0]
    w = wins + prior * ((wins + wins.T) > 0)
    n = w + w.T
    r = np.zeros(k)
    for _ in range(MAX_NEWTON):
        p = _sigmoid(r[:, None] - r[None, :])
        grad = (w - n * p).sum(axis=1)
        info = n * p * (1 - p)
        # The negative Hessian is a graph Laplacian (singular along all-ones); + 1/k pins the mean.
        hessian = np.diag(info.sum(axis=1)) - info + 1.0 / k
        step = np.clip(np.linalg.solve(hessian, grad), -MAX_NEWTON_STEP, MAX_NEWTON_STEP)
        r += step
        if np.abs(step).max() < 1e-10:
            break
    return (r - r.mean()) * ELO_PER_NAT


def fit_against(wins: np.ndarray, losses: np.ndarray, opponents: np.ndarray, prior: float = PRIOR_WINS) -> float:
    """Elo rating of one bot from its wins and losses against opponents whose Elo ratings are fixed."""
    wins = np.asarray(wins, np.float64)
    losses = np.asarray(losses, np.float64)
    played = (wins + losses) > 0
    w, n = wins + prior * played, wins + losses + 2 * prior * played
    opp = np.asarray(opponents, np.float64) / ELO_PER_NAT
    r = float(np.average(opp, weights=n)) if n.sum() else 0.0
    for _ in range(MAX_NEWTON):
        p = _sigmoid(r - opp)
        info = float((n * p * (1 - p)).sum())
        if info == 0:
            break
        step = float(np.clip((w - n * p).sum() / info, -MAX_NEWTON_STEP, MAX_NEWTON_STEP))
        r += step
        if abs(step) < 1e-10:
            break
    return r * ELO_PER_NAT


def _outcomes(match: MatchResult) -> tuple[np.ndarray, np.ndarray]:
    """Per-pair (A's, B's) rated outcomes: points won (hands mode) or games won (games mode)."""
    if match.a_wins is None:
        return match.a_points.astype(np.float64), match.b_points.astype(np.float64)
    return match.a_wins.astype(np.float64), (2 - match.a_wins).astype(np.float64)


def _ratings_from(totals: list[tuple[float, float]], matches: list[tuple[int, int]], fair: list[bool]) -> np.ndarray:
    """All bots' Elo ratings from total outcomes per match: fair bots fitted jointly, the others against them."""
    k = len(fair)
    ranked = [i for i in range(k) if fair[i]]
    index = {bot: j for j, bot in enumerate(ranked)}
    wins = np.zeros((len(ranked), len(ranked)))
    against = {i: (np.zeros(len(ranked)), np.zeros(len(ranked))) for i in range(k) if not fair[i]}
    for (i, j), (ti, tj) in zip(matches, totals):
        if fair[i] and fair[j]:
            wins[index[i], index[j]] += ti
            wins[index[j], index[i]] += tj
        elif fair[j]:
            against[i][0][index[j]] += ti
            against[i][1][index[j]] += tj
        elif fair[i]:
            against[j][0][index[i]] += tj
            against[j][1][index[i]] += ti
    out = np.full(k, math.nan)
    fitted = fit_bradley_terry(wins) if ranked else np.zeros(0)
    out[ranked] = fitted + ELO_MEAN
    for i, (w, l) in against.items():
        if ranked and (w + l).sum() > 0:
            out[i] = fit_against(w, l, fitted) + ELO_MEAN
    return out


@dataclass
class Ratings:
    """Bradley-Terry ratings on the Elo scale with bootstrap uncertainty; unfair bots are not ranked."""

    bots: list[str]
    fair: list[bool]
    rating: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    outcome: str
    """What was rated: "points" or "games"."""
    bootstrap: int

    def table(self) -> list[dict[str, Any]]:
        """One row per bot, best first; fair bots ranked 1, 2, ... and unfair bots unranked."""

        def order(i: int) -> tuple[bool, float]:
            return (not self.fair[i], -self.rating[i] if np.isfinite(self.rating[i]) else math.inf)

        rows, rank = [], 0
        for i in sorted(range(len(self.bots)), key=order):
            rank += self.fair[i]
            rows.append(
                {
                    "rank": rank if self.fair[i] else None,
                    "bot": self.bots[i],
                    "fair": self.fair[i],
                    "rating": float(self.rating[i]),
                    "se": float(self.se[i]),
                    "low": float(self.low[i]),
                    "high": float(self.high[i]),
                }
            )
        return rows


def rate(
    bots: list[str], fair: list[bool], matches: list[MatchResult], bootstrap: int = 1000, seed: int = 0
) -> Ratings:
    """Fit ratings to the round robin's matches; bootstrap the deals for their spread.

    Every match of a round robin plays the same deal keys, so one resample of the deal indices is
    applied to all matches at once, keeping the correlation that the shared deals create.
    """
    where = {bot: i for i, bot in enumerate(bots)}
    pairs = [(where[m.a], where[m.b]) for m in matches]
    outcomes = [_outcomes(m) for m in matches]
    if len({m.keys.tobytes() for m in matches}) > 1:
        raise ValueError("the matches of a round robin must share their deal keys (one seed, one size)")
    rating = _ratings_from([(a.sum(), b.sum()) for a, b in outcomes], pairs, fair)
    rng = np.random.default_rng(seed)
    samples = np.empty((bootstrap, len(bots)))
    num_deals = matches[0].num_pairs if matches else 0
    for s in range(bootstrap):
        idx = rng.integers(0, num_deals, num_deals)
        samples[s] = _ratings_from([(a[idx].sum(), b[idx].sum()) for a, b in outcomes], pairs, fair)
    if bootstrap > 1:
        se = samples.std(axis=0, ddof=1)
        low, high = np.percentile(samples, [50 * (1 - CONFIDENCE), 50 * (1 + CONFIDENCE)], axis=0)
    else:
        se = low = high = np.full(len(bots), math.nan)
    outcome = "games" if matches and matches[0].a_wins is not None else "points"
    return Ratings(bots, list(fair), rating, se, low, high, outcome, bootstrap)


@dataclass
class Tournament:
    """A round robin: every pairing's duplicate match, and the ratings fitted to them."""

    bots: list[str]
    fair: list[bool]
    matches: list[MatchResult]
    ratings: Ratings

    def margins(self) -> tuple[np.ndarray, np.ndarray]:
        """(k, k) margin per hand of the row bot against the column bot, and its interval half-width."""
        k = len(self.bots)
        value, half = np.full((k, k), np.nan), np.full((k, k), np.nan)
        where = {bot: i for i, bot in enumerate(self.bots)}
        for m in self.matches:
            i, j, e = where[m.a], where[m.b], m.margin_per_hand
            value[i, j], value[j, i] = e.value, -e.value
            half[i, j] = half[j, i] = e.half_width
        return value, half

    def report(self) -> str:
        """Head-to-head lines and the rating table."""
        lines = [f"round robin, rules: {rules_label(self.matches[0].rules)}"] + [m.report() for m in self.matches]
        what = f"Bradley-Terry on {self.ratings.outcome} won, Elo scale, {CONFIDENCE:.0%} bootstrap interval"
        lines.append(f"\nratings ({what}):")
        for row in self.ratings.table():
            rank = f"{row['rank']:>2}" if row["rank"] else " -"
            note = "" if row["fair"] else "   (sees hidden cards: not ranked)"
            interval = f"[{row['low']:.0f}, {row['high']:.0f}]"
            lines.append(f"  {rank}  {row['bot']:<28} {row['rating']:7.0f}  {interval}{note}")
        return "\n".join(lines)


def round_robin(
    engine_or_rules: Engine | Rules | dict | None,
    specs: Sequence[str],
    *,
    hands: int | None = None,
    games: int | None = None,
    seed: int = 0,
    workers: int = 1,
    chunk: int = DEFAULT_CHUNK,
    bootstrap: int = 1000,
    progress: bool = False,
    ray: str | None = None,
) -> Tournament:
    """Every pairing of `specs` plays a duplicate match on the same deals; then the ratings."""
    specs = list(specs)
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ValueError(f"a round robin needs two or more different bots, got {specs}")
    rules = _rules_of(engine_or_rules)
    mode, _ = _mode_and_pairs(hands, games)
    fair = check_bots(rules, specs, mode)
    pairings = [(specs[i], specs[j]) for i in range(len(specs)) for j in range(i + 1, len(specs))]
    matches = play_matches(
        rules, pairings, hands=hands, games=games, seed=seed, workers=workers, chunk=chunk, progress=progress, ray=ray
    )
    return Tournament(specs, fair, matches, rate(specs, fair, matches, bootstrap=bootstrap, seed=seed))


# ---------------------------------------------------------------------------------------- output


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, default=_json_default) + "\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _flat(summary: dict[str, Any]) -> dict[str, Any]:
    """A match summary as one CSV row: each estimate becomes value/se/low/high columns."""
    row = {}
    for key, value in summary.items():
        if key == "rules":
            row["rules"] = rules_label(value)
            continue
        if isinstance(value, dict) or (value is None and key == "win_rate_a"):
            for part in ("value", "se", "low", "high"):
                row[f"{key}_{part}"] = None if value is None else value[part]
        else:
            row[key] = value
    return row


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _pair_rows(match: MatchResult) -> list[dict[str, Any]]:
    rows = []
    for p in range(match.num_pairs):
        row = {
            "a": match.a,
            "b": match.b,
            "pair": p,
            "key": int(match.keys[p]),
            "a_points": int(match.a_points[p]),
            "b_points": int(match.b_points[p]),
            "hands": int(match.hands[p]),
        }
        if match.a_wins is not None:
            row["a_wins"] = int(match.a_wins[p])
        rows.append(row)
    return rows


def plot_match(match: MatchResult, path: Path) -> None:
    """The running margin per hand with its 95% band, as pairs accumulate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y = (match.a_points - match.b_points).astype(np.float64)
    x = match.hands.astype(np.float64)
    n = np.arange(1, y.size + 1)
    sy, sx = np.cumsum(y), np.cumsum(x)
    r = sy / sx
    # sum of (y - r x)^2 from running sums, for the delta-method standard error at every prefix
    ss = np.cumsum(y * y) - 2 * r * np.cumsum(x * y) + r * r * np.cumsum(x * x)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(np.maximum(ss, 0) * n / np.maximum(n - 1, 1)) / sx
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(np.cumsum(x), r, color="C0", label=f"{match.a} - {match.b}")
    ax.fill_between(np.cumsum(x), r - Z * se, r + Z * se, color="C0", alpha=0.25, label=f"{CONFIDENCE:.0%} interval")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("hands played")
    ax.set_ylabel("margin per hand (points)")
    ax.set_title(f"{match.a} vs {match.b}, duplicate deals\nrules: {rules_label(match.rules)}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_ratings(ratings: Ratings, path: Path, rules: dict[str, Any] | None = None) -> None:
    """Ratings with their 95% bootstrap intervals, best at the top; unranked bots in grey; the rules in the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in ratings.table() if not math.isnan(r["rating"])][::-1]
    fig, ax = plt.subplots(figsize=(7, 1 + 0.5 * len(rows)))
    for y, row in enumerate(rows):
        colour = "C0" if row["fair"] else "grey"
        err = None
        if not math.isnan(row["low"]):
            err = [[max(row["rating"] - row["low"], 0)], [max(row["high"] - row["rating"], 0)]]
        ax.errorbar(row["rating"], y, xerr=err, fmt="o", color=colour, capsize=4)
    ax.set_yticks(range(len(rows)), [r["bot"] + ("" if r["fair"] else " (unranked)") for r in rows])
    ax.set_xlabel(f"rating (Elo scale, Bradley-Terry on {ratings.outcome} won)")
    fig.suptitle(  # over the figure, not the axes: long bot names push the axes right and would clip it
        f"ratings with {CONFIDENCE:.0%} bootstrap intervals ({ratings.bootstrap} resamples)\nrules: {rules_label(rules or {})}",
        fontsize="medium",
    )
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_head_to_head(tournament: Tournament, path: Path) -> None:
    """The matrix of margins per hand, row bot against column bot, with interval half-widths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    value, half = tournament.margins()
    k = len(tournament.bots)
    limit = max(np.nanmax(np.abs(value)), 1e-9) if np.isfinite(value).any() else 1.0
    fig, ax = plt.subplots(figsize=(2 + 1.3 * k, 1.5 + 1.1 * k))
    image = ax.imshow(value, cmap="RdBu", vmin=-limit, vmax=limit)
    for i in range(k):
        for j in range(k):
            if i != j and np.isfinite(value[i, j]):
                star = "*" if abs(value[i, j]) > half[i, j] else ""
                colour = "white" if abs(value[i, j]) > 0.6 * limit else "black"
                text = f"{value[i, j]:+.2f}{star}\n±{half[i, j]:.2f}"
                ax.text(j, i, text, ha="center", va="center", fontsize=8, color=colour)
    ax.set_xticks(range(k), tournament.bots, rotation=30, ha="right")
    ax.set_yticks(range(k), tournament.bots)
    ax.set_title(f"margin per hand, row vs column (* = significant)\nrules: {rules_label(tournament.matches[0].rules)}")
    fig.colorbar(image, ax=ax, label="points per hand")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def save_match(match: MatchResult, out: Path, config: dict[str, Any], plots: bool = True) -> list[Path]:
    """match.json (summary and config), match.csv (one row), pairs.csv (per pair), margin.png."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "match.json", out / "match.csv", out / "pairs.csv"]
    _write_json(written[0], {"config": config, "match": match.summary()})
    _write_csv(written[1], [_flat(match.summary())])
    _write_csv(written[2], _pair_rows(match))
    if plots:
        written.append(out / "margin.png")
        plot_match(match, written[-1])
    return written


def save_tournament(tournament: Tournament, out: Path, config: dict[str, Any], plots: bool = True) -> list[Path]:
    """tournament.json, matches.csv, ratings.csv, pairs.csv, ratings.png and head_to_head.png."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "tournament.json", out / "matches.csv", out / "ratings.csv", out / "pairs.csv"]
    r = tournament.ratings
    _write_json(
        written[0],
        {
            "config": config,
            "matches": [m.summary() for m in tournament.matches],
            "ratings": {
                "outcome": r.outcome,
                "bootstrap": r.bootstrap,
                "elo_mean_of_fair_bots": ELO_MEAN,
                "table": r.table(),
            },
        },
    )
    _write_csv(written[1], [_flat(m.summary()) for m in tournament.matches])
    rules = tournament.matches[0].rules
    _write_csv(written[2], [{**row, "rules": rules_label(rules)} for row in r.table()])
    _write_csv(written[3], [row for m in tournament.matches for row in _pair_rows(m)])
    if plots:
        written += [out / "ratings.png", out / "head_to_head.png"]
        plot_ratings(r, written[-2], rules)
        plot_head_to_head(tournament, written[-1])
    return written


# ---------------------------------------------------------------------------------------- command line


def _field_docs(cls: type) -> dict[str, str]:
    """The docstring under each dataclass field (they become --help)."""
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {
        node.target.id: nxt.value.value
        for node, nxt in zip(body, body[1:])
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
    }


def _yaml_value(text: str) -> Any:
    """A --rules value read as YAML, or a one-line ValueError."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"--rules: {text!r} is not valid YAML ({getattr(e, 'problem', None) or 'unreadable'})") from None


def _parse_rules(items: list[str]) -> dict[str, Any]:
    """`key=value` items (values read as YAML: `true`, `5`, `left_of_dealer`) or YAML mappings `{deck: 32}`."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if item.lstrip().startswith("{"):
            mapping = _yaml_value(item)
            if not isinstance(mapping, dict):
                raise ValueError(f"--rules: {item!r} is not a YAML mapping")
            out.update(mapping)
        elif sep and key.strip():
            out[key.strip()] = _yaml_value(value)
        else:
            raise ValueError(f"--rules takes key=value items or a YAML mapping such as '{{deck: 32}}', got {item!r}")
    return out


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Args from defaults, then the --config file, then the command line (each overriding the last)."""
    docs = _field_docs(Args)
    hints = typing.get_type_hints(Args)
    parser = _OneLineErrorParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False
    )
    for f in dataclasses.fields(Args):
        kind, flag = hints[f.name], "--" + f.name.replace("_", "-")
        kw: dict[str, Any] = {"help": docs.get(f.name), "default": argparse.SUPPRESS}
        if f.name == "bots":
            parser.add_argument("bots", nargs="*", metavar="BOT", **kw)
        elif f.name == "ray":
            parser.add_argument(flag, nargs="?", const=RAY_LOCAL, metavar="ADDRESS", **kw)
        elif kind is bool:
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **kw)
        elif kind in (list[str], dict[str, Any]):
            parser.add_argument(flag, nargs="+", metavar="VALUE", **kw)
        else:
            parser.add_argument(flag, type=int if int in typing.get_args(kind) or kind is int else str, **kw)
    given = vars(parser.parse_args(argv))
    if "bots" in given and not given["bots"]:
        del given["bots"]

    values: dict[str, Any] = {}
    if "config" in given:
        loaded = read_preset(given["config"], "configs/tournament.yaml")
        unknown = sorted(set(loaded) - {f.name for f in dataclasses.fields(Args)} - {"config"})
        if unknown:
            raise ValueError(f"unknown option(s) {unknown} in {given['config']}")
        values.update(loaded)
    if "hands" in given or "games" in given:
        values.pop("hands", None)
        values.pop("games", None)
    if "bots" in given or "round_robin" in given:
        values.pop("bots", None)
        values.pop("round_robin", None)
    rules = dict(values.pop("rules", None) or {})
    rules.update(_parse_rules(given.pop("rules", [])))
    values.update(given)
    return Args(**values, rules=rules)


class _OneLineErrorParser(argparse.ArgumentParser):
    """argparse with its errors on one line, pointing at --help."""

    def error(self, message: str) -> typing.NoReturn:
        """Print `evaluate.py: error: ...` (`euchre-evaluate: error: ...` when installed) with the pointer to --help; exit 2."""
        self.exit(2, f"{tool_name('evaluate.py')}: error: {message} ({help_command('evaluate.py')} lists every option)\n")


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
"""What makes two results the same result (workers, progress and plots never change one)."""


def _identity(config: dict[str, Any]) -> dict[str, Any]:
    """The IDENTITY fields of a results config, the rules as their label (so that {} equals the defaults)."""
    out = {k: config.get(k) for k in IDENTITY}
    out["rules"] = rules_label(config.get("rules") or {})
    return out


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
        held, here = _identity(held), _identity(config)
        differ = [k for k in IDENTITY if held[k] != here[k]]
        if differ:
            there = ", ".join(f"{k} {held[k]!r} there, {here[k]!r} here" for k in differ)
            raise ValueError(f"{out} already holds the results of another match ({there}); pass --out DIR or --overwrite")


def check_options(args: Args) -> None:
    """The numeric options in range, and a round robin of distinct bots."""
    for name, low in (("seed", 0), ("workers", 1), ("chunk", 1), ("bootstrap", 1)):
        value = getattr(args, name)
        if value < low:
            raise ValueError(f"--{name} must be {low} or more, got {value}")
    if args.round_robin and (len(args.round_robin) < 2 or len(set(args.round_robin)) != len(args.round_robin)):
        raise ValueError(f"--round-robin needs two or more different bots, got {args.round_robin}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run a match or a round robin from the command line; 0 on success, 2 on a usage error."""
    try:
        args = parse_args(argv)
        rules = Rules.from_dict(args.rules)
        if args.round_robin and args.bots:
            raise ValueError("give either two bots or --round-robin, not both")
        if not args.round_robin and len(args.bots) != 2:
            raise ValueError(f"a match takes exactly two bots (A and B), got {args.bots}; or use --round-robin")
        options = dict(hands=args.hands, games=args.games, seed=args.seed, workers=args.workers, chunk=args.chunk, ray=args.ray)
        if args.hands is None and args.games is None:
            options["hands"] = DEFAULT_HANDS
        _mode_and_pairs(options["hands"], options["games"])
        check_options(args)
        check_bots(rules, args.round_robin or args.bots, HANDS if args.games is None else GAMES)
        config = {**dataclasses.asdict(args), **options, "rules": rules.to_dict()}
        out = Path(args.out) if args.out else default_out(args, rules)
        check_out(out, config, args.overwrite)
        if args.ray is not None:
            connect_ray(args.ray, num_cpus=args.workers)
    except (ValueError, RulesError, OSError, yaml.YAMLError) as error:
        print(f"{tool_name('evaluate.py')}: error: {error}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    if args.round_robin:
        tournament = round_robin(rules, args.round_robin, bootstrap=args.bootstrap, progress=args.progress, **options)
        played, wall = sum(m.num_hands for m in tournament.matches), time.perf_counter() - start
        print(tournament.report())
        written = save_tournament(tournament, out, config, plots=args.plots)
    else:
        a, b = args.bots
        match = play_match(rules, a, b, progress=args.progress, **options)
        played, wall = match.num_hands, time.perf_counter() - start
        print(match.report())
        written = save_match(match, out, config, plots=args.plots)
    backend = f"{args.workers} workers" if args.ray is None else f"Ray ({args.ray})"
    print(f"{played:,} hands in {wall:.1f} s wall time: {played / wall:,.0f} hands/s with {backend}")
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
