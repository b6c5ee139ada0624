"""A duplicate match between two bots: the deals, the chunks that play them, and their per-pair outcomes
joined into a `MatchResult` (`euchre_lab.evaluation.match_result`).

    from euchre_lab.evaluation.match import play_match
    match = play_match(engine, learner_agent, "heuristic", hands=2000, seed=0)
    match.margin_per_hand.value, match.margin_per_hand.half_width, match.points_per_hand_a

Duplicate deals: every deal key is played twice, once with bot A at seats 0/2 and B at 1/3, and once
with the partnerships swapped. Both games of a pair see the same cards at the same seats, the same
first dealer (from the cut in the key) and, in games to the target, the same sequence of deals, so
the luck of the cards cancels and the side that deals is swapped too. The unit of every interval
(`euchre_lab.evaluation.estimates`) is that pair of mirrored games.

Reproducible: deal keys come from the seed; each chunk of `chunk` pairs builds fresh bots seeded
from (seed, bot spec, side, chunk index), so a result depends on the seed and the chunk size, never
on the number of workers or on Ray (the same chunks as Ray tasks, `euchre_lab.evaluation.backends`), and a
pairing inside a round robin plays exactly as it would alone. For the same reason a match given a `journal`
folder (`euchre_lab.evaluation.journal`) keeps each finished chunk there and, started again, plays only the rest.
"""

from __future__ import annotations

import contextlib
import time
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from tqdm import tqdm

from euchre_agents.base import Agent
from euchre_agents.registry import make_agent
from euchre_env.cards import NUM_SEATS, NUM_TRICKS
from euchre_env.engine import EPISODE_GAME, EPISODE_HAND, Engine, EuchreState, game_keys
from euchre_env.play import play
from euchre_env.rules import Rules
from euchre_lab.evaluation.backends import run_tasks
from euchre_lab.evaluation.journal import Journal
from euchre_lab.evaluation.match_result import MatchResult

CALL_COUNTS = ("named", "euchred", "march", "alone", "named_margin")
"""What `trump_calls` counts for each side, in its order."""
TRUMP_CALL_KEYS = tuple(f"{side}_{k}" for side in ("a", "b") for k in CALL_COUNTS)
"""The per-pair counts `trump_calls` adds to a hands-mode chunk's outcomes."""
HANDS = "hands"
GAMES = "games"
DEFAULT_HANDS = 10_000
DEFAULT_CHUNK = 500
"""Pairs of mirrored games per chunk (one batch of 2 * chunk games, one task for a worker)."""

Bot = str | Agent
"""A bot spec (`"heuristic"`, `"ppo:runs/x/ckpt.pt"`) or an Agent instance."""


def deal_duplicates(engine: Engine, keys: np.ndarray) -> tuple[EuchreState, np.ndarray]:
    """2m games from m keys (each key twice) and A's team per game: 0 (seats 0/2) first, then 1 (seats 1/3)."""
    keys = np.asarray(keys, np.uint64)
    state = engine.init(np.concatenate([keys, keys]))
    a_team = np.repeat(np.array([0, 1], np.int64), keys.size)
    return state, a_team


def pair_outcomes(engine: Engine, state: EuchreState, points: np.ndarray, a_team: np.ndarray) -> dict[str, np.ndarray]:
    """Per-pair sums over the two mirrored games of finished `state`: A's and B's points, hands, and A's wins
    (games mode) or who named trump and how it went (hands mode, `trump_calls`)."""
    m = a_team.size // 2
    games = np.arange(a_team.size)

    def per_pair(per_game: np.ndarray) -> np.ndarray:
        per_game = per_game.astype(np.int64)
        return per_game[:m] + per_game[m:]

    out = {
        "a_points": per_pair(points[games, a_team]),
        "b_points": per_pair(points[games, 1 - a_team]),
        "hands": per_pair(state.hand_number),
    }
    if engine.episode == EPISODE_GAME:
        out["a_wins"] = per_pair(engine.game_winner(state) == a_team)
    else:
        out.update({k: per_pair(v) for k, v in trump_calls(state, points, a_team).items()})
    return out


def trump_calls(state: EuchreState, points: np.ndarray, a_team: np.ndarray) -> dict[str, np.ndarray]:
    """Per game of one hand each, for each side X (`a`, `b`): whether X's team named trump (`X_named`); of those
    hands, the ones the defenders scored on (`X_euchred`), the ones X took every trick in (`X_march`) and the
    ones X played alone (`X_alone`); and A's points minus B's on the hands X named (`X_named_margin`)."""
    games = np.arange(a_team.size)
    maker_team = state.maker.astype(np.int64) % 2
    named = (state.maker >= 0) & ~state.thrown_in
    maker_tricks = state.tricks_won[games, maker_team]
    defenders_scored = points[games, 1 - maker_team] > 0
    a_margin = points[games, a_team] - points[games, 1 - a_team]
    out = {}
    for side, team in (("a", a_team), ("b", 1 - a_team)):
        mine = named & (maker_team == team)
        counts = (mine, mine & defenders_scored, mine & (maker_tricks == NUM_TRICKS), mine & state.maker_alone,
                  np.where(mine, a_margin, 0))
        out.update(zip((f"{side}_{k}" for k in CALL_COUNTS), counts))
    return out


def play_chunk(
    engine: Engine, agent_a: Agent, agent_b: Agent, keys: np.ndarray, labels: tuple[str, str] = ("A", "B")
) -> dict[str, np.ndarray]:
    """Play every key twice (partnerships swapped) to the end of the episode; per-pair outcomes."""
    state, a_team = deal_duplicates(engine, keys)
    seat_bot = np.where(np.arange(NUM_SEATS)[None, :] % 2 == a_team[:, None], 0, 1)
    points = play(engine, state, [agent_a, agent_b], seat_bot, labels=labels)
    return pair_outcomes(engine, state, points, a_team)


# ---------------------------------------------------------------------------------------- the bots


def bot_label(bot: Bot) -> str:
    """A bot's name in results: the spec as given, or the Agent's name."""
    return bot if isinstance(bot, str) else bot.name


def bot_seed(seed: int, bot: Bot, side: int, chunk_index: int) -> int:
    """The seed of one bot in one chunk: a pure function of (seed, spec, side, chunk)."""
    entropy = [seed, zlib.crc32(bot_label(bot).encode()), side, chunk_index]
    return int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0] >> np.uint64(1))


def build_bot(bot: Bot, engine: Engine, seed: int) -> Agent:
    """The one place a match gets its bots: a spec built for `engine` with `seed`, or an Agent reseeded with it."""
    if isinstance(bot, Agent):
        bot.reseed(seed)
        return bot
    return make_agent(bot, engine, seed=seed)


@lru_cache(maxsize=8)
def match_engine(rules: Rules, mode: str) -> Engine:
    """The engine of a match in `mode` (one per process for each rules and mode)."""
    return Engine(rules, episode=EPISODE_HAND if mode == HANDS else EPISODE_GAME)


@lru_cache(maxsize=64)
def _spec_is_fair(rules: Rules, mode: str, spec: str) -> bool:
    return bool(build_bot(spec, match_engine(rules, mode), seed=0).fair)


def check_bots(rules: Rules, bots: Sequence[Bot], mode: str = HANDS) -> list[bool]:
    """Build each bot once with this match's engine (so a bad spec fails early); its `fair` flag per bot."""
    fair = []
    for bot in bots:
        if isinstance(bot, Agent):
            if bot.engine.rules != rules:
                raise ValueError(f"bot {bot.name!r} was built for other rules than this match's")
            fair.append(bool(bot.fair))
        elif isinstance(bot, str):
            fair.append(_spec_is_fair(rules, mode, bot))
        else:
            raise TypeError(f"a bot is a spec string or an Agent, got {type(bot).__name__}")
    return fair


def bot_weights(rules: Rules, bots: Sequence[Bot], mode: str = HANDS) -> dict[str, str]:
    """`Agent.weights_sha256` of each bot that plays weights, by label, from a bot built now in this process
    (worker processes build their own from the same spec)."""
    engine = match_engine(rules, mode)
    built = [bot if isinstance(bot, Agent) else build_bot(bot, engine, seed=0) for bot in bots]
    return {bot_label(bot): agent.weights_sha256 for bot, agent in zip(bots, built) if agent.weights_sha256 is not None}


# ---------------------------------------------------------------------------------------- chunk tasks


@dataclass(frozen=True)
class ChunkTask:
    """One chunk of one match: what a worker process or a Ray task plays."""

    match: int
    index: int
    rules: Rules
    mode: str
    specs: tuple[Bot, Bot]
    seeds: tuple[int, int]
    keys: np.ndarray


def run_chunk(task: ChunkTask) -> tuple[int, int, dict[str, np.ndarray]]:
    """Play one chunk with freshly seeded bots: (match, chunk index, per-pair outcomes and "seconds")."""
    start = time.perf_counter()
    engine = match_engine(task.rules, task.mode)
    agents = [build_bot(bot, engine, seed) for bot, seed in zip(task.specs, task.seeds)]
    labels = (bot_label(task.specs[0]), bot_label(task.specs[1]))
    out = play_chunk(engine, agents[0], agents[1], task.keys, labels)
    out["seconds"] = np.array(time.perf_counter() - start)
    return task.match, task.index, out


def chunk_tasks(
    rules: Rules, mode: str, pairings: Sequence[tuple[Bot, Bot]], keys: np.ndarray, seed: int, chunk: int
) -> list[ChunkTask]:
    """Every pairing's chunks of `chunk` deal keys, each bot seeded by `bot_seed`."""
    return [
        ChunkTask(m, c, rules, mode, (a, b), (bot_seed(seed, a, 0, c), bot_seed(seed, b, 1, c)), keys[lo : lo + chunk])
        for m, (a, b) in enumerate(pairings)
        for c, lo in enumerate(range(0, keys.size, chunk))
    ]


# ---------------------------------------------------------------------------------------- matches


def rules_of(engine_or_rules: Engine | Rules | dict | None) -> Rules:
    """The rules given as an Engine, Rules, a dict of options, or None (the defaults)."""
    if isinstance(engine_or_rules, Engine):
        return engine_or_rules.rules
    if isinstance(engine_or_rules, dict):
        return Rules.from_dict(engine_or_rules)
    if engine_or_rules is None:
        return Rules()
    if isinstance(engine_or_rules, Rules):
        return engine_or_rules
    raise TypeError(f"expected an Engine, Rules, a dict of rules or None, got {type(engine_or_rules).__name__}")


def mode_and_pairs(hands: int | None, games: int | None) -> tuple[str, int]:
    """The mode ("hands" or "games") and the number of mirrored pairs for a match of `hands` or `games`."""
    if hands is not None and games is not None:
        raise ValueError("give either hands or games, not both")
    if games is not None:
        mode, count = GAMES, games
    else:
        mode, count = HANDS, DEFAULT_HANDS if hands is None else hands
    if not isinstance(count, (int, np.integer)) or count < 2 or count % 2:
        fix = f"; give {count - 1} or {count + 1}" if isinstance(count, (int, np.integer)) and count > 2 else ""
        raise ValueError(f"{mode} must be an even number of at least 2 (every deal is played twice, mirrored), got {count!r}{fix}")
    return mode, int(count) // 2


def _play_tasks(
    tasks: list[ChunkTask], workers: int, ray: str | None, progress: bool, unit: str, journal: Journal | None = None,
    label: str | None = None,
) -> dict[tuple[int, int], dict[str, np.ndarray]]:
    """Every task's outcomes by (match, chunk), played on the chosen backend, with a progress bar (`label` in
    front of it); chunks the journal holds are read back, and each chunk played is recorded there as it arrives."""
    chunks: dict[tuple[int, int], dict[str, np.ndarray]] = {}
    if journal is not None:
        chunks = {(t.match, t.index): out for t in tasks if (out := journal.load(t.match, t.index)) is not None}
    todo = [t for t in tasks if (t.match, t.index) not in chunks]
    total, done = 2 * sum(t.keys.size for t in tasks), 2 * sum(out["a_points"].size for out in chunks.values())
    with tqdm(total=total, initial=done, unit=unit, disable=not progress, desc=label) as bar:
        if not todo:
            return chunks
        with contextlib.closing(run_tasks(run_chunk, todo, workers=workers, ray=ray)) as results:
            for m, c, out in results:
                chunks[m, c] = out
                if journal is not None:
                    journal.save(m, c, out)
                bar.update(2 * out["a_points"].size)
    return chunks


def _match_result(
    a: Bot, b: Bot, parts: list[dict[str, np.ndarray]], mode: str, seed: int, chunk: int, rules: Rules, keys: np.ndarray,
    weights: dict[str, str],
) -> MatchResult:
    """One pairing's chunks joined into its MatchResult."""
    seconds = sum(float(p.pop("seconds")) for p in parts)
    shared = set.intersection(*(set(p) for p in parts))   # a journal's chunks from before trump_calls lack them
    joined = {k: np.concatenate([p[k] for p in parts]) for k in shared}
    return MatchResult(
        a=bot_label(a),
        b=bot_label(b),
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
        weights={label: weights[label] for label in (bot_label(a), bot_label(b)) if label in weights},
        trump_calls={k: joined[k] for k in TRUMP_CALL_KEYS} if set(TRUMP_CALL_KEYS) <= set(joined) else None,
    )


def match_identity(rules: Rules, mode: str, pairs: int, seed: int, chunk: int, pairings: Sequence[tuple[Bot, Bot]],
                   weights: dict[str, str]) -> dict[str, Any]:
    """What fixes every chunk of these matches: the settings, the bots and the weights they play."""
    return {"rules": rules.to_dict(), "mode": mode, "pairs": pairs, "seed": seed, "chunk": chunk,
            "pairings": [[bot_label(a), bot_label(b)] for a, b in pairings], "weights": weights}


def play_matches(
    engine_or_rules: Engine | Rules | dict | None,
    pairings: Sequence[tuple[Bot, Bot]],
    *,
    hands: int | None = None,
    games: int | None = None,
    seed: int = 0,
    workers: int = 1,
    chunk: int = DEFAULT_CHUNK,
    progress: bool = False,
    ray: str | None = None,
    journal: str | Path | None = None,
    label: str | None = None,
) -> list[MatchResult]:
    """Duplicate matches for several pairings on the same deal keys: `hands` single hands or `games` games to the target.

    Bots are specs (`"heuristic"`, `"ppo:runs/x/ckpt.pt"`) built with the match's rules in each
    chunk, or Agent instances (played in this process, reseeded per chunk). Every chunk shares one
    process pool: with workers > 1 chunks run in worker processes (spawned where CUDA is live in this
    process: then call it under `if __name__ == "__main__":`). With `ray` (an address, or "local" for
    a Ray started for the call) chunks run as Ray tasks instead, with the same results. With `journal` (a
    folder; bots given as specs) each finished chunk is kept there, and a call with the same settings plays
    only the chunks it lacks; a journal of other settings is refused (`euchre_lab.evaluation.journal.JournalError`).
    `label` goes in front of the progress bar.
    """
    rules = rules_of(engine_or_rules)
    mode, pairs = mode_and_pairs(hands, games)
    if not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be a positive int, got {chunk!r}")
    bots = list(dict.fromkeys(s for p in pairings for s in p))
    check_bots(rules, bots, mode)
    weights = bot_weights(rules, bots, mode)
    in_process = any(isinstance(s, Agent) for s in bots)
    if in_process and ray is not None:
        raise ValueError("bots given as Agent instances play in this process; give bot specs to play on Ray")
    if in_process and journal is not None:
        raise ValueError("a match's journal needs bots given as specs: Agent instances cannot be identified across runs")
    keys = game_keys(seed, pairs)
    tasks = chunk_tasks(rules, mode, pairings, keys, seed, chunk)
    record = None if journal is None else Journal(journal, match_identity(rules, mode, pairs, seed, chunk, pairings, weights))
    chunks = _play_tasks(tasks, 1 if in_process else workers, ray, progress, "hand" if mode == HANDS else "game", record, label)
    num_chunks = len(range(0, pairs, chunk))
    return [
        _match_result(a, b, [chunks[m, c] for c in range(num_chunks)], mode, seed, chunk, rules, keys, weights)
        for m, (a, b) in enumerate(pairings)
    ]


def play_match(
    engine_or_rules: Engine | Rules | dict | None,
    spec_a: Bot,
    spec_b: Bot,
    **options: Any,
) -> MatchResult:
    """A duplicate match of A against B: `play_matches` of the one pairing, with its keywords
    (hands or games, seed, workers, chunk, progress, ray, journal, label)."""
    return play_matches(engine_or_rules, [(spec_a, spec_b)], **options)[0]
