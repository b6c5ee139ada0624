"""`search`: one step of policy improvement at play time, on top of the learned network.

At each decision with more than one legal action the bot:

1. samples layouts of the cards it has not seen, consistent with its observation, as `pimc` does
   (`layouts.sample_hands`: its own hand, the cards played, the voids shown, the upcard the dealer
   holds);
2. with `weighted=true` (the default), replays the hand's public history on each layout
   (`layouts.replay`) and weighs the layout by the probability the network gives every bid, alone call and
   card of the other seats there (`belief.ActionModel` on the policy: its probabilities sharpened by
   `temp`, as the distilled policy is flatter than its greedy play, then softened by `eps` towards
   uniform so no layout is ruled out); `candidates` x `worlds` layouts are drawn and systematic
   resampling (`belief.resample`) keeps `worlds` draws. `weighted=false` samples `worlds` uniform
   layouts: the baseline that says whether learned inference about the hidden cards lifts search;
3. plays every legal action out in every layout kept: all (layout x action) games form one
   `EuchreState` batch, the action is applied, and the network plays all four seats to the end of
   the hand through the one play loop (`euchre_env.play.play`: one batched forward pass per step).
   The play-outs are greedy (the network's most probable action, as the `ppo` bot plays), so a
   layout's value is that of the policy the search improves on, with no sampling noise;
4. takes the action with the best mean outcome over the layouts (each weighted by how often it was
   drawn): points won minus points conceded by the acting seat's team in the hand, a throw-in 0.
   Near-ties go to the network's own choice, and with `z=Z` the best action replaces the network's
   only where its gain, paired layout by layout, is more than Z standard errors (`confident_choice`):
   a few layouts' noise then no longer overrides the policy.

The rollouts of every decision in one `act` call share one batch. The bot sees only its observation
(`fair`). Specs: `search` (the shipped agent, as the bare `ppo` plays it) or
`search:PATH[,worlds=N,z=Z,weighted=true|false,candidates=K,eps=E,temp=T]`, and `search:worlds=N,...` for the
shipped agent with options.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from euchre_agents.base import Agent, Seed, file_sha256
from euchre_agents.belief import ActionModel, resample
from euchre_agents.layouts import Layouts, View, replay, sample_hands
from euchre_agents.pimc import choose
from euchre_agents.ppo import PPOAgent, say_once, shipped_for
from euchre_agents.spec_options import SpecOptions
from euchre_env.engine import EPISODE_HAND, Engine, EuchreState
from euchre_env.infoset import decode
from euchre_env.play import play

DEFAULT_WORLDS = 16
DEFAULT_CANDIDATES = 3
DEFAULT_EPS = 0.1
DEFAULT_TEMPERATURE = 0.25
DEFAULT_Z = 0.0
USAGE = "search[:PATH][,worlds=N][,z=Z][,weighted=true|false][,candidates=K][,eps=E][,temp=T]"
OPTIONS = SpecOptions(
    bot="search",
    types={"worlds": int, "z": float, "weighted": bool, "candidates": int, "eps": float, "temp": float},
    help=f"usage: {USAGE}",
    notes={
        "candidates": "layouts drawn per world kept",
        "eps": "uniform play's share in the weights",
        "temp": "the policy's temperature in the weights; 0 = its greedy choice",
        "z": "standard errors by which the best play-out must beat the network's choice",
    },
    switch="weighted",
    switch_default=True,
    switched=("candidates", "eps", "temp"),
    switch_fix="drop them from",
)
"""`search`'s spec options after the checkpoint's path; candidates, eps and temp only apply with weighted=true."""


def parse_spec(arg: str) -> tuple[str, dict]:
    """`PATH,worlds=16,weighted=false` -> (PATH or "" for the shipped agent, options); ValueError naming the fix."""
    items = [part.strip() for part in arg.split(",")]
    path = items.pop(0) if items and "=" not in items[0] else ""
    return path, OPTIONS.parse(items, arg)


@dataclasses.dataclass
class Worlds:
    """The layouts one decision searches: each replayed to the decision point (observer = seat 0), and its weight."""

    states: EuchreState  # (W,) rows
    weights: np.ndarray  # (W,) how often each layout was drawn (1.0 each when unweighted)
    layouts: Layouts


class SearchAgent(Agent):
    """Plays each legal action out with the learned policy over sampled (and weighted) layouts; takes the best."""

    name = "search"

    def __init__(
        self,
        engine: Engine,
        policy: PPOAgent,
        seed: int | None = None,
        worlds: int = DEFAULT_WORLDS,
        weighted: bool = True,
        candidates: int = DEFAULT_CANDIDATES,
        eps: float = DEFAULT_EPS,
        temp: float = DEFAULT_TEMPERATURE,
        z: float = DEFAULT_Z,
    ):
        """`policy` plays every seat in the play-outs and, with `weighted`, models the other seats."""
        super().__init__(engine, seed)
        self.policy = policy
        self.worlds = worlds
        self.z = z
        self.weighted = weighted
        self.candidates = candidates if weighted else 1
        self.belief = ActionModel(policy, eps, temp) if weighted else None
        self.model_engine = Engine(dataclasses.replace(engine.rules, throw_in_ends_hand_episode=True), EPISODE_HAND)
        """One hand per game, a throw-in ending it at 0 points: where layouts are replayed and played out."""

    def reseed(self, seed: Seed) -> None:
        """Restart its own stream and the policy's from `seed`."""
        super().reseed(seed)
        self.policy.reseed(seed)

    def act(self, obs, mask, state=None, rows=None):
        """(n,) actions: per decision with a choice, the legal action of best weighted mean play-out value."""
        mask = np.asarray(mask, bool)
        out = np.argmax(mask, axis=1).astype(np.int64)
        choices = np.flatnonzero(mask.sum(axis=1) > 1)
        if not choices.size:
            return out
        info = decode(self.engine, obs)
        preferred = self.policy.act(obs[choices], mask[choices])
        searched = [self.sample_worlds(View.from_info(info, int(i)), self._seed()) for i in choices]
        for i, worlds, points, p in zip(choices, searched, self.outcomes(searched, mask[choices]), preferred):
            out[i] = confident_choice(points, worlds.weights, np.flatnonzero(mask[i]), int(p), self.z)
        return out

    def _seed(self) -> int:
        return int(self.rng.integers(0, 2**63))

    def sample_worlds(self, view: View, seed: int) -> Worlds:
        """The layouts searched at one decision: `worlds` draws, uniform or resampled by likelihood."""
        layouts = sample_hands(self.engine, view, self.worlds * self.candidates, seed)
        if not self.weighted:
            states = replay(self.model_engine, view, layouts, self.policy)
            return Worlds(states, np.ones(states.num_games), layouts)
        seen: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

        def record(states: EuchreState, actions: np.ndarray) -> None:
            rows = np.flatnonzero(states.legal.sum(axis=1) > 1)  # a forced action has probability 1 in every layout
            if rows.size:
                seen.append((rows, self.model_engine.observe(states)[rows], states.legal[rows], actions[rows]))

        states = replay(self.model_engine, view, layouts, self.policy, record)
        log_w = self.log_likelihood(layouts.hands.shape[0], seen)
        keep, counts = resample(log_w, self.worlds, np.random.default_rng(seed))
        kept = Layouts(layouts.hands[keep], layouts.pool[keep], layouts.dealer_has_upcard)
        return Worlds(states.take(keep), counts, kept)

    def log_likelihood(self, count: int, seen: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]) -> np.ndarray:
        """(count,) log-probability of each layout's (rows, observations, masks, actions) seen, in one forward pass."""
        log_w = np.zeros(count)
        if seen:
            rows, obs, mask, actions = (np.concatenate(part) for part in zip(*seen))
            np.add.at(log_w, rows, self.belief.log_prob(obs, mask, actions))
        return log_w

    def action_values(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n, A) weighted mean play-out points for the acting seat's team of each legal action; NaN if illegal.

        Every decision is searched, the ones with a choice first, so that from the same seed they see the
        layouts `act` would, whose choice is the best of these values (subject to `z`). Teacher data labelled
        `search` is made of them.
        """
        mask = np.asarray(mask, bool)
        info = decode(self.engine, obs)
        order = np.argsort(mask.sum(axis=1) == 1, kind="stable")
        searched = [self.sample_worlds(View.from_info(info, int(i)), self._seed()) for i in order]
        out = np.full(mask.shape, np.nan)
        for i, worlds, points in zip(order, searched, self.outcomes(searched, mask[order])):
            out[i] = mean_values(points, worlds.weights, np.flatnonzero(mask[i]), mask.shape[1])
        return out

    def outcomes(self, searched: list[Worlds], mask: np.ndarray) -> list[np.ndarray]:
        """Per decision, (W, k) play-out points for the acting team of each of its k legal actions (in id order)
        in each of its W layouts: every decision's play-outs in one batch."""
        games, first, widths = [], [], []
        for worlds, legal in zip(searched, mask):
            actions = np.flatnonzero(legal)
            w = worlds.states.num_games
            games.append(worlds.states.take(np.repeat(np.arange(w), actions.size)))
            first.append(np.tile(actions, w))
            widths.append(actions.size)
        points = self.play_out(EuchreState.concat(games), np.concatenate(first))
        net = (points[:, 0] - points[:, 1]).astype(np.float64)
        parts = np.split(net, np.cumsum([f.size for f in first])[:-1])
        return [part.reshape(-1, k) for part, k in zip(parts, widths)]

    def play_out(self, games: EuchreState, first: np.ndarray) -> np.ndarray:
        """(n, 2) points per team (team 0: the searching seat's) of each game after `first`, the policy then playing every seat."""
        self.model_engine.step(games, first)
        points = games.hand_points.astype(np.int64)
        return points + play(self.model_engine, games, [self.policy], np.zeros(4, np.int64))


def mean_values(points: np.ndarray, weights: np.ndarray, actions: np.ndarray, num_actions: int) -> np.ndarray:
    """(num_actions,) the weighted mean over the layouts of the (W, k) play-out `points` of `actions`; NaN elsewhere."""
    values = np.full(num_actions, np.nan)
    values[actions] = np.average(points, axis=0, weights=weights)
    return values


def confident_choice(points: np.ndarray, weights: np.ndarray, actions: np.ndarray, preferred: int, z: float) -> int:
    """The legal action of best weighted mean play-out value (`choose`: near-ties go to `preferred`), taken over
    `preferred` only if its gain, paired layout by layout over the (W, k) `points` of `actions`, is more than `z`
    standard errors; `weights` count each layout's draws."""
    best = choose(mean_values(points, weights, actions, int(actions.max()) + 1), preferred)
    if best == preferred or z == 0:
        return best
    gain = points[:, np.searchsorted(actions, best)] - points[:, np.searchsorted(actions, preferred)]
    draws = float(weights.sum())
    mean = np.average(gain, weights=weights)
    variance = np.average((gain - mean) ** 2, weights=weights) * draws / max(draws - 1.0, 1.0)
    return best if mean > z * np.sqrt(variance / draws) else preferred


def make_search(engine: Engine, arg: str, seed: int | None) -> SearchAgent:
    """`search` (the shipped agent of the table), `search:PATH[,options]` or `search:options` (module docstring)."""
    path, options = parse_spec(arg)
    note = None
    if not path:
        shipped, note = shipped_for(engine.rules)
        path = str(shipped)
    checkpoint = path
    network = PPOAgent.from_checkpoint(engine, checkpoint, seed=seed, other_rules=note is not None)
    agent = SearchAgent(engine, network, seed, **options)
    say_once(note, "search")
    agent.weights_sha256 = file_sha256(checkpoint)
    return agent
