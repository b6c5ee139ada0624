"""Teacher data for distillation: bots play hands, and every decision gets a value for every legal action.

`generate(out, settings, shards)` plays hands of the `Rules` with a mix of bots in the seats (each seat
of each game draws a bot from `settings.behaviour`, and a share `settings.epsilon` of all moves is a
uniformly random legal action, so that every action is visited) and labels every decision that has
more than one legal action with a value for *each* legal action, in points for the acting seat's side
(its side's points minus the other side's, for the hand). The label sources:

- `true`: the exact double-dummy value of the true layout after the action (one solver call per card
  decision, which scores every legal card at once; bids, alone calls and discards are valued by the
  same rollouts through the engine as `pimc`, on the one true layout). Averaged over the real
  distribution of deals this is what `pimc` would compute with a perfect posterior over hidden cards.
- `pimc`: `pimc`'s own action values (`PimcAgent.action_values`, `settings.pimc_worlds` sampled layouts).
- `rollout`: card decisions as `true`; bids, alone calls and discards valued by playing the rest of the
  hand out on the true layout with `settings.rollout_agent` in every seat. That is the action's value when
  the agent itself plays on (a sample of its Q-value), free of the double-dummy play's strategy fusion,
  which credits a bid with card play that no seat without the other hands can make. With
  `settings.rollout_cards`, card decisions are valued by the same play-outs.
- `search`: the `search` bot's own action values (`SearchAgent.action_values`, `settings.search_agent`): every
  action played out by its network over the layouts it infers from what the other seats did. Fair, like
  `pimc`, and a step of policy improvement on the network, averaged over many layouts where `rollout`
  samples the one true layout.
- `settings.bid_share` below 1 labels the bids, alone calls and discards of that share of the hands only (the rest
  record their card decisions): the cards get more hands' labels for the cost of a bid's play-outs.
- `people`: decisions people made at the web table, written by `euchre-play export` through `write_data`
  (never generated here): the action taken is valued 0 and every other legal action `-PEOPLE_MARGIN`,
  so that distillation's target puts nearly all its weight on what the person did.

The data's format, writing and loading are `euchre_agents.teacher_data`'s; the command line that writes
it is `python -m euchre_lab.training.teacher`.
"""

from __future__ import annotations

import dataclasses
import signal
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np

from euchre_agents.base import Agent
from euchre_agents.pimc import OracleAgent, Searcher
from euchre_agents.pool import pool_results
from euchre_agents.registry import make_agent, parse_weighted
from euchre_agents.teacher_data import (MANIFEST, TeacherDataError, TeacherSettings, differences, empty_arrays,
                                        manifest_identity, read_manifest, write_manifest, write_shard)
from euchre_agents.threads import one_thread, use_one_thread
from euchre_env.cards import NUM_SEATS
from euchre_env.engine import EPISODE_HAND, Engine, EuchreState, Phase
from euchre_env.play import play
from euchre_env.rules import Rules


BID_STREAM = 1
"""The entropy word that sets the stream choosing which hands' bids are labelled apart from the shard's own streams."""


# ---------------------------------------------------------------- labels


def true_values(oracle: OracleAgent, state: EuchreState, rows: np.ndarray) -> np.ndarray:
    """(len(rows), A) double-dummy value of each legal action on the true layout; NaN for illegal actions.

    Values are the acting seat's side's net points for the hand: card decisions are the oracle's own
    (one solver call each), the other decisions its rollouts, batched over all the rows at once.
    """
    rows = np.asarray(rows, np.int64)
    out = np.full((rows.size, oracle.engine.num_actions), np.nan)
    play = state.phase[rows] == Phase.PLAY
    for i in np.flatnonzero(play):
        out[i] = oracle.values(state, int(rows[i]))
    rest = np.flatnonzero(~play)
    if rest.size:
        out[rest] = _plan_values(oracle.search, state, rows[rest])
    return out


def _plan_values(searcher: Searcher, state: EuchreState, rows: np.ndarray) -> np.ndarray:
    """(len(rows), A) values of bids, alone calls and discards: `pimc`'s rollouts on the true layout, all
    rows and plans in one batch; a bid is worth its better plan (with the partner or alone)."""
    plans = [searcher.plans(state, int(r)) for r in rows]
    origin = np.repeat(rows, [len(p) for p in plans])
    which = np.repeat(np.arange(rows.size), [len(p) for p in plans])
    first = np.array([a for p in plans for a, _ in p], np.int64)
    follow = np.array([-1 if b is None else b for p in plans for _, b in p], np.int64)
    values = searcher.rollout_values(state, origin, state.to_play[origin].astype(np.int64), first, follow)
    out = np.full((rows.size, searcher.engine.num_actions), -np.inf)
    np.maximum.at(out, (which, first), values)
    return np.where(np.isfinite(out), out, np.nan)


def rollout_values(engine: Engine, bot: Agent, state: EuchreState, rows: np.ndarray) -> np.ndarray:
    """(len(rows), A) value of each legal action of `rows`: the acting side's net points of the hand when the
    action is made and `bot` then plays every seat to the end, on the true layout; NaN for illegal actions.
    All rows and actions are rolled out as one batch."""
    rows = np.asarray(rows, np.int64)
    row_of, first = np.nonzero(state.legal[rows])
    st = state.take(rows[row_of])
    me = st.to_play.astype(np.int64)
    returns = engine.step(st, first).astype(np.float64)
    play(engine, st, [bot], np.zeros(NUM_SEATS, np.int64), rewards=returns)
    out = np.full((rows.size, engine.num_actions), np.nan)
    out[row_of, first] = returns[np.arange(first.size), me]
    return out


def searched_values(bot: Agent, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(n, A) a fair search bot's (`pimc`'s or `search`'s) own mean value of each legal action over the layouts it
    samples; NaN for illegal actions."""
    return np.asarray(bot.action_values(obs, mask), np.float64)


# ---------------------------------------------------------------- playing and recording


class ShardPlayer:
    """Plays and labels shards for one settings/rules pair (one per worker process)."""

    def __init__(self, rules: Rules, settings: TeacherSettings):
        self.settings = settings
        self.engine = Engine(rules, EPISODE_HAND)
        self.mix = parse_weighted(settings.behaviour, "behaviour")
        self.weights = np.array([w for _, w in self.mix]) / sum(w for _, w in self.mix)
        self.bots = [make_agent(spec, self.engine, seed=settings.seed) for spec, _ in self.mix]
        self.oracle = OracleAgent(self.engine, settings.seed)
        self.pimc = make_agent(f"pimc:worlds={settings.pimc_worlds}", self.engine, seed=settings.seed)
        self.rollout_bot = make_agent(settings.rollout_agent, self.engine, seed=settings.seed) if settings.label == "rollout" else None
        self.search_bot = make_agent(settings.search_agent, self.engine, seed=settings.seed) if settings.label == "search" else None

    def reseed(self, shard: int) -> np.random.Generator:
        """Every random source of the player from (seed, shard): the shard is a pure function of them."""
        seq = np.random.SeedSequence([self.settings.seed, shard])
        children = seq.spawn(len(self.bots) + 5)
        for bot, child in zip(self.bots, children):
            bot.reseed(child)
        self.oracle.reseed(children[-1])
        self.pimc.reseed(children[-2])  # children[-3] and [-4] are left unused, so the streams stay apart
        for labeller in (self.rollout_bot, self.search_bot):  # spawned after the others, so `true` and `pimc` shards stay as they were
            if labeller is not None:
                labeller.reseed(seq.spawn(1)[0])
        return np.random.default_rng(children[-5])

    def play_shard(self, shard: int) -> dict[str, np.ndarray]:
        """The labelled decisions of shard `shard`'s hands, as the arrays stored in a shard file."""
        rng = self.reseed(shard)
        n = self.settings.games_per_shard
        engine = self.engine
        state = engine.init(rng.integers(0, 2**63, size=n, dtype=np.uint64))
        seat_bot = rng.choice(len(self.bots), size=(n, 4), p=self.weights)
        bids_labelled = self._bids_labelled(shard, n)
        records: list[dict[str, np.ndarray]] = []

        def explore_and_record(bot_index, rows, obs, mask, actions) -> np.ndarray:
            actions = self._explore(mask, actions, rng)
            labelled = bids_labelled[rows] | (state.phase[rows] == Phase.PLAY)
            choice = np.flatnonzero((mask.sum(axis=1) > 1) & labelled)
            if choice.size:
                records.append(self._record(state, rows[choice], obs[choice], mask[choice], actions[choice]))
            return actions

        points = play(engine, state, self.bots, seat_bot, on_decision=explore_and_record)
        return _finish(records, points, engine)

    def _bids_labelled(self, shard: int, n: int) -> np.ndarray:
        """(n,) whether each hand's bids, alone calls and discards are labelled: `bid_share` of the hands, drawn from
        a stream of their own (so that the hands played, and their card labels, are the same for every share)."""
        if self.settings.bid_share >= 1.0:
            return np.ones(n, bool)
        stream = np.random.default_rng(np.random.SeedSequence([self.settings.seed, shard, BID_STREAM]))
        return stream.random(n) < self.settings.bid_share

    def _explore(self, mask: np.ndarray, actions: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The behaviour policy's moves: the seat bots' `actions` with a share epsilon made random legal moves."""
        actions = actions.copy()
        explore = rng.random(actions.size) < self.settings.epsilon
        if explore.any():
            noise = np.where(mask[explore], rng.random(mask[explore].shape), -1.0)
            actions[explore] = noise.argmax(axis=1)
        return actions

    def _record(self, state, rows, obs, mask, actions) -> dict[str, np.ndarray]:
        """One step's labelled decisions (the outcome is filled in when the hands end)."""
        if self.settings.label == "true":
            values = true_values(self.oracle, state, rows)
        elif self.settings.label == "pimc":
            values = searched_values(self.pimc, obs, mask)
        elif self.settings.label == "search":
            values = searched_values(self.search_bot, obs, mask)
        else:
            values = np.full((rows.size, self.engine.num_actions), np.nan)
            play = (state.phase[rows] == Phase.PLAY) & (not self.settings.rollout_cards)
            if play.any():
                values[play] = true_values(self.oracle, state, rows[play])
            if not play.all():
                values[~play] = rollout_values(self.engine, self.rollout_bot, state, rows[~play])
        return {
            "obs_bits": np.packbits(obs.astype(bool), axis=1),
            "mask_bits": np.packbits(mask, axis=1),
            "values": values.astype(np.float16),
            "phase": state.phase[rows].astype(np.int8),
            "action": actions.astype(np.int16),
            "game": rows,
            "seat": state.to_play[rows].astype(np.int64),
        }


def _finish(records: list[dict[str, np.ndarray]], points: np.ndarray, engine: Engine) -> dict[str, np.ndarray]:
    """Concatenate a shard's steps and add each decision's outcome (its side's net points of the hand, from
    `points` (n, 2) per team)."""
    if not records:
        return empty_arrays(engine)
    data = {k: np.concatenate([r[k] for r in records]) for k in records[0]}
    game, team = data.pop("game"), data.pop("seat") % 2
    data["outcome"] = (points[game, team] - points[game, 1 - team]).astype(np.int8)
    return data


# ---------------------------------------------------------------- generating shards


def check_settings(rules: Rules, settings: TeacherSettings, shards: int) -> None:
    """What generation needs, checked before anything is written: a shard count of 1 or more, and a bot
    that builds for these rules from every behaviour spec (and from `rollout_agent` for `label=rollout`, a
    `search` bot from `search_agent` for `label=search`)."""
    if not isinstance(shards, (int, np.integer)) or isinstance(shards, bool) or shards < 1:
        raise TeacherDataError(f"shards must be a whole number of 1 or more, got {shards!r}")
    engine = Engine(rules, EPISODE_HAND)
    specs = [("behaviour", spec) for spec, _ in parse_weighted(settings.behaviour, "behaviour")]
    if settings.label == "rollout":
        specs.append(("rollout_agent", settings.rollout_agent))
    if settings.label == "search":
        specs.append(("search_agent", settings.search_agent))
    for option, spec in specs:
        try:
            bot = make_agent(spec, engine, seed=settings.seed)
        except ValueError as e:  # an unknown bot, bad options, a checkpoint that is missing or for other rules
            raise TeacherDataError(f"{option} {spec!r}: {e}") from None
        if option == "search_agent" and not _is_search(bot):
            raise TeacherDataError(f"search_agent {spec!r} is not a search bot; give search[:PATH][,worlds=N,...]")


def _is_search(bot: Agent) -> bool:
    from euchre_agents.search import SearchAgent  # torch, only where a search bot labels the data

    return isinstance(bot, SearchAgent)


_WORKER: ShardPlayer | None = None


def _init_worker(rules_dict: dict[str, Any], settings_dict: dict[str, Any], pooled: bool = False) -> None:
    global _WORKER
    if pooled:  # Ctrl-C reaches the parent, which stops the pool; finished shards are kept
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    use_one_thread()
    _WORKER = ShardPlayer(Rules.from_dict(rules_dict), TeacherSettings(**settings_dict))


def _play_in_worker(job: tuple[str, int]) -> tuple[int, int]:
    folder, shard = job
    data = _WORKER.play_shard(shard)
    write_shard(Path(folder), shard, data)
    return shard, int(data["phase"].size)


def play_and_write(job: tuple[str, int, dict[str, Any], dict[str, Any]]) -> tuple[int, int]:
    """One self-contained job (folder, shard, rules, settings): play, label and write the shard in this process,
    reusing this process's player when the rules and settings are the same; (shard, decisions written).
    It pickles by reference, so any executor (a process pool, Ray tasks) can run it."""
    folder, shard, rules_dict, settings_dict = job
    wanted = (Rules.from_dict(rules_dict), TeacherSettings(**settings_dict))
    if _WORKER is None or (_WORKER.engine.rules, _WORKER.settings) != wanted:
        _init_worker(rules_dict, settings_dict)
    return _play_in_worker((folder, shard))


def generate(
    out: str | Path,
    shards: int,
    rules: Rules | None = None,
    settings: TeacherSettings | None = None,
    workers: int = 1,
    progress: bool = True,
    run_jobs: Callable[[Callable, list], Iterable[tuple[int, int]]] | None = None,
) -> dict[str, Any]:
    """Write shards 0..shards-1 of teacher data into `out` (skipping those already there); the manifest.

    Bad settings (`check_settings`) are refused before anything is written. An existing folder must hold
    data of the same rules, observation layout and settings: anything else is refused, naming each
    difference, and nothing is written. `run_jobs(play_and_write, jobs)`,
    when given, runs the shards' jobs wherever it likes (the lab's backends: a pool, Ray) and yields
    each job's result as it lands; else `workers` processes here run them. Either way the files are the same.
    """
    rules = rules or Rules()
    settings = settings or TeacherSettings()
    if settings.label == "people":
        raise TeacherDataError("label=people is data of the web table's games (euchre-play export), not generated")
    check_settings(rules, settings, shards)
    folder = Path(out)
    identity = manifest_identity(rules, settings, Engine(rules, EPISODE_HAND))
    if (folder / MANIFEST).exists():
        manifest = read_manifest(folder)
        problems = differences(manifest, identity)
        if problems:
            raise TeacherDataError(f"{folder} holds teacher data of another kind: " + "; ".join(problems))
    else:
        folder.mkdir(parents=True, exist_ok=True)
        manifest = {**identity, "shards": {}}
        write_manifest(folder, manifest)
    done = {int(k) for k in manifest["shards"]}
    todo = [k for k in range(shards) if k not in done]
    if run_jobs is None:
        results = _local_results(folder, todo, rules, settings, workers)
    else:
        results = run_jobs(play_and_write, [(str(folder), k, rules.to_dict(), dataclasses.asdict(settings)) for k in todo])
    _record_results(folder, manifest, results, len(todo), progress)
    return manifest


def _local_results(folder: Path, todo: list[int], rules: Rules, settings: TeacherSettings, workers: int) -> Iterator[tuple[int, int]]:
    """(shard, decisions) for each missing shard as it lands, played here or in `workers` spawned processes."""
    jobs = [(str(folder), k) for k in todo]
    init_args = (rules.to_dict(), dataclasses.asdict(settings))
    if workers <= 1:
        with one_thread():
            _init_worker(*init_args)
            yield from map(_play_in_worker, jobs)
        return
    yield from pool_results(_play_in_worker, jobs, workers, _init_worker, (*init_args, True), method="spawn")


def _record_results(folder: Path, manifest: dict[str, Any], results: Iterable[tuple[int, int]], total: int, progress: bool) -> None:
    """Record each landed shard in the manifest (written after each), with a progress bar over `total` shards."""
    from tqdm import tqdm

    bar = tqdm(total=total, unit="shard", disable=not progress, desc="teacher data")
    try:
        for shard, count in results:
            manifest["shards"][str(shard)] = count
            write_manifest(folder, manifest)
            bar.update(1)
            bar.set_postfix(decisions=sum(manifest["shards"].values()))
    finally:
        bar.close()
        if hasattr(results, "close"):
            results.close()
