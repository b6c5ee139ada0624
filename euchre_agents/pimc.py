"""Perfect-information Monte Carlo (`pimc`) and its cheating ceiling (`oracle`).

For each decision `pimc` samples layouts of the cards it has not seen, solves each layout exactly
with the double-dummy search in `euchre_agents.solver`, and takes the action with the best mean hand
score for its side (points won minus points conceded, from the engine's `kernels.hand_points`).

The layouts come from `euchre_agents.layouts` (`sample_hands`, uniform over those consistent with what
the seat has seen; its docstring says how).

Play decisions: each legal card is scored in every layout by the solver (the trick in progress,
tricks already won and the alone flags all count), then averaged. Ties go to the card the
`heuristic` bot would play.

Bidding, going alone, the lone-defender call and the discard are evaluated by rollouts through the
engine itself, so every table option is played by the rules engine and not re-implemented:
each layout becomes a full deal; the actions of the hand so far are replayed on it; then, for each
candidate plan, the seat's action is applied and the rest of the auction is played by a model of
the table (the `heuristic` bot for every other seat, and for this seat's own later bids) until
trump is made and the play begins; the position is then solved double-dummy and scored, and a
throw-in scores 0. A plan that names trump is tried both with the partner and alone, and is worth
the better of the two (the seat decides alone-ness itself right after naming). Approximations, by
design: the other seats' bids follow the heuristic rather than a model fitted to them; the play
after bidding is double-dummy (both sides see all cards), which favours the stronger hand's side;
and the plain sampler does not infer hands from the bids.

Inference (`pimc:infer=true`): `candidates` x `worlds` layouts are sampled uniformly as above, the
hand's public history is replayed on each by the engine (`replay`, batched over layouts), and each
layout is weighted by the likelihood of the other seats' bids and alone calls (and, with
`plays=true`, their cards) under a model of those seats (`euchre_agents.belief`: `model=heuristic` by
default, any registry bot such as `model=ppo:PATH`; a policy's probabilities sharpened by `temp`, 0
being its greedy choice; then softened by `eps` towards uniform play).
Systematic resampling then keeps `worlds` draws, and the search weighs each distinct layout kept by
how often it was drawn. A first bidder, who has seen no other seat act, searches uniform layouts.

Both bots expose `action_values(...)`: the (n, A) mean points per hand of every legal action (NaN
for illegal ones; a bid is worth its best plan), the labels a learned agent can imitate; `act` is
their argmax with the heuristic's tie-break.

`oracle` runs the same evaluation on the one true layout (it reads the engine state): a labelled
cheating ceiling, never a fair opponent.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from euchre_agents.base import Agent, Seed
from euchre_agents.belief import ActionModel, resample
from euchre_agents.heuristic import HeuristicAgent
from euchre_agents.layouts import Layouts, View, replay, sample_hands
from euchre_agents.solver import DoubleDummy, hand_masks
from euchre_agents.spec_options import SpecOptions
from euchre_env import kernels
from euchre_env.cards import NUM_SEATS, NUM_TRICKS
from euchre_env.engine import EPISODE_HAND, Engine, EuchreState, Phase
from euchre_env.infoset import InfoSet, decode

DEFAULT_WORLDS = 30
EPSILON = 1e-9


OPTIONS = SpecOptions(
    bot="pimc",
    types={"worlds": int, "infer": bool, "candidates": int, "eps": float, "model": str, "temp": float, "plays": bool},
    help="options: worlds=N, infer=true|false, candidates=K, eps=E, model=BOT, temp=T, plays=true|false",
    notes={
        "candidates": "layouts drawn per world kept",
        "eps": "the model's share of uniform play",
        "temp": "the model policy's temperature; 0 = its greedy choice",
    },
    switch="infer",
    switch_default=False,
    switched=("candidates", "eps", "model", "temp", "plays"),
    switch_fix="add infer=true to",
    defaults={"worlds": DEFAULT_WORLDS},
    bare_number="worlds",
)
"""`pimc`'s spec options; those of `infer=true` are the module docstring's Inference."""
DEFAULT_CANDIDATES = 3
DEFAULT_EPS = 0.2
DEFAULT_MODEL = "heuristic"
DEFAULT_TEMPERATURE = 1.0


def parse_options(arg: str) -> dict:
    """`worlds=30,infer=true` (comma-separated key=value) -> {"worlds": 30, "infer": True}.

    Only `worlds` is filled in when absent; bad keys or values raise ValueError naming the fix.
    """
    return OPTIONS.parse(arg.split(","), arg)


def score_table(engine: Engine) -> np.ndarray:
    """[maker alone, lone defender, maker tricks] -> maker team's points minus the defenders', by the engine's kernel."""
    out = np.zeros((2, 2, NUM_TRICKS + 1))
    for alone, lone, tricks in np.ndindex(out.shape):
        makers, defenders = kernels.hand_points(engine.table, alone, 1 if lone else -1, tricks)
        out[alone, lone, tricks] = makers - defenders
    return out


class Searcher:
    """The shared machinery of `pimc` and `oracle`: layouts -> action values."""

    def __init__(self, engine: Engine, seed: int | None):
        self.engine = engine
        self.model_engine = Engine(dataclasses.replace(engine.rules, throw_in_ends_hand_episode=True), EPISODE_HAND)
        self.model = HeuristicAgent(self.model_engine, seed)
        self.solver = DoubleDummy(engine.deck)
        self.points = score_table(engine)
        # maker-trick counts k at which the score changes, per (maker alone, lone defender)
        steps = self.points[:, :, 1:] != self.points[:, :, :-1]
        self.steps = [[[k + 1 for k in np.flatnonzero(steps[a, l])] for l in range(2)] for a in range(2)]

    def need(self, alone: bool, lone: bool, maker_team: int, maker_won: int, remaining: int) -> int:
        """Solver question bits (team 0 takes >= t of the `remaining` tricks) that fix the score."""
        bits = 0
        for k in self.steps[int(alone)][int(lone)]:
            t = k - maker_won if maker_team == 0 else maker_won + remaining - k + 1
            if 0 < t <= remaining:
                bits |= 1 << t
        return bits

    # ------------------------------------------------------------------ play

    def play_values(
        self, hands, trump, leader, active, trick, maker, tricks_won, alone, lone, weights=None
    ) -> np.ndarray:
        """(C,) mean points for team 0 of each card the seat to act may play (-inf if illegal).

        hands (W, 4) uint64 in any seat frame whose team 0 is seats 0 and 2; tricks_won by team;
        weights (W,) per layout, or None for a plain mean.
        """
        remaining = NUM_TRICKS - sum(tricks_won)
        maker_team = maker % 2
        need = self.need(alone, lone, maker_team, tricks_won[maker_team], remaining)
        values = self.solver.move_values(hands, trump, leader, active, trick, need).astype(np.int64)
        legal = values[0] >= 0
        maker_tricks = tricks_won[maker_team] + (values if maker_team == 0 else remaining - values)
        net = self.points[int(alone), int(lone), np.clip(maker_tricks, 0, NUM_TRICKS)]
        mine = net if maker_team == 0 else -net
        return np.where(legal, np.average(mine, axis=0, weights=weights), -np.inf)

    # ------------------------------------------------------------------ bidding, alone, discard

    def plans(self, state: EuchreState, row: int = 0) -> list[tuple[int, int | None]]:
        """Candidate (action now, own alone decision right after naming or None) pairs for `row`."""
        legal = np.flatnonzero(state.legal[row]).tolist()
        phase = int(state.phase[row])
        e = self.engine
        if phase in (Phase.BID_ROUND_1, Phase.BID_ROUND_2):
            out: list[tuple[int, int | None]] = []
            for a in legal:
                if a == e.pass_action:
                    out.append((a, None))
                else:
                    out += [(a, e.partner_action), (a, e.alone_action)]
            return out
        return [(a, None) for a in legal]

    def plan_values(
        self, state: EuchreState, me: int, plans: list[tuple[int, int | None]], weights=None
    ) -> np.ndarray:
        """(P,) mean points for `me`'s team of each plan over the W rows (layouts) of `state`, each
        row weighted by `weights` (W,) or equally."""
        return np.average(self.plan_values_per_row(state, me, plans), axis=0, weights=weights)

    def plan_values_per_row(self, state: EuchreState, me: int, plans: list[tuple[int, int | None]]) -> np.ndarray:
        """(W, P) points for `me`'s team of each plan in each of the W rows of `state`."""
        w, p = state.num_games, len(plans)
        first = np.tile([a for a, _ in plans], w)
        follow = np.tile([-1 if b is None else b for _, b in plans], w)
        values = self.rollout_values(state, np.repeat(np.arange(w), p), np.full(w * p, me), first, follow)
        return values.reshape(w, p)

    def rollout_values(
        self, state: EuchreState, origin: np.ndarray, me: np.ndarray, first: np.ndarray, follow: np.ndarray
    ) -> np.ndarray:
        """(R,) points for seat me[r]'s team of rollout r: row origin[r] of `state`, action first[r] now, then
        the alone decision follow[r] (-1: the model's) if me[r] names trump, the model's bids for the rest."""
        eng = self.model_engine
        st = state.take(origin)
        ids = np.arange(origin.size)
        value = np.zeros(origin.size)
        eng.step(st, first)
        while True:
            done = st.phase >= Phase.PLAY
            if done.any():
                value[ids[done]] = self._contract_values(st, np.flatnonzero(done), me[ids[done]])
                keep = np.flatnonzero(~done)
                st, ids = st.take(keep), ids[keep]
            if ids.size == 0:
                break
            acts = np.empty(ids.size, np.int64)
            mine = (st.to_play == me[ids]) & (st.phase == Phase.MAKER_ALONE) & (follow[ids] >= 0)
            acts[mine] = follow[ids[mine]]
            rest = np.flatnonzero(~mine)
            if rest.size:
                acts[rest] = self.model.act(eng.observe(st)[rest], st.legal[rest])
            eng.step(st, acts)
        return value

    def _contract_values(self, st: EuchreState, rows: np.ndarray, me: np.ndarray | int) -> np.ndarray:
        """Points for `me`'s team (one seat, or a seat per row) of hands whose play is about to start (0 for a throw-in)."""
        out = np.zeros(rows.size)
        playing = st.phase[rows] == Phase.PLAY
        play = rows[playing]
        if play.size == 0:
            return out
        hands = hand_masks(st.hand[play])
        maker_team = st.maker[play] % 2
        alone, lone = st.maker_alone[play], st.lone_defender[play] >= 0
        need = [self.need(*row, 0, NUM_TRICKS) for row in zip(alone.tolist(), lone.tolist(), maker_team.tolist())]
        t0 = self.solver.values(hands, st.trump[play], st.to_play[play], st.active[play], None, need).astype(np.int64)
        maker_tricks = np.where(maker_team == 0, t0, NUM_TRICKS - t0)
        net = self.points[alone.astype(int), lone.astype(int), maker_tricks]
        my_team = np.broadcast_to(np.asarray(me) % 2, rows.shape)[playing]
        out[playing] = np.where(maker_team == my_team, net, -net)
        return out

    def plan_action_values(self, state: EuchreState, me: int, weights=None) -> np.ndarray:
        """(A,) value of each legal action now (its best plan, `plan_values`), NaN for illegal ones."""
        plans = self.plans(state)
        values = self.plan_values(state, me, plans, weights)
        out = np.full(self.engine.num_actions, -np.inf)
        for (a, _), v in zip(plans, values):
            out[a] = max(out[a], v)
        return np.where(np.isfinite(out), out, np.nan)


def choose(values: np.ndarray, preferred: int) -> int:
    """The action with the highest value (NaN = illegal); near-ties go to `preferred`, else the lowest id."""
    top = np.nanmax(values)
    if values[preferred] >= top - EPSILON:
        return int(preferred)
    return int(np.argmax(values >= top - EPSILON))


def best_actions(info: InfoSet, mask: np.ndarray, heuristic: HeuristicAgent, values_of: Callable[[int], np.ndarray]) -> np.ndarray:
    """(n,) per decision the legal action of highest value, `values_of(i)` (A,) for row i, with near-ties going to
    the heuristic's choice; a forced decision takes its one legal action without calling `values_of`."""
    trick = info.current_trick()
    out = np.empty(mask.shape[0], np.int64)
    for i in range(mask.shape[0]):
        legal = np.flatnonzero(mask[i])
        if legal.size == 1:
            out[i] = legal[0]
            continue
        out[i] = choose(values_of(i), heuristic.decide(info, i, mask[i], trick[i]))
    return out


def card_action_values(engine: Engine, card_values: np.ndarray) -> np.ndarray:
    """(C,) play values (-inf illegal) -> (A,) action values (NaN for illegal and non-card actions)."""
    out = np.full(engine.num_actions, np.nan)
    out[: card_values.size] = np.where(np.isfinite(card_values), card_values, np.nan)
    return out


class PimcAgent(Agent):
    """Perfect-information Monte Carlo over sampled layouts of the unseen cards."""

    name = "pimc"

    def __init__(
        self,
        engine: Engine,
        seed: int | None = None,
        worlds: int = DEFAULT_WORLDS,
        infer: bool = False,
        candidates: int = DEFAULT_CANDIDATES,
        eps: float = DEFAULT_EPS,
        model: Agent | None = None,
        temp: float = DEFAULT_TEMPERATURE,
        plays: bool = False,
    ):
        """`model` is the bot that models the other seats under `infer` (default: the heuristic)."""
        super().__init__(engine, seed)
        self.worlds = worlds
        self.search = Searcher(engine, seed)
        self.heuristic = HeuristicAgent(engine, seed)
        self.infer = infer
        self.candidates = candidates
        self.plays = plays
        self.belief = None
        if infer:
            model = HeuristicAgent(engine, seed) if model is None else model
            if model.needs_full_state:
                raise ValueError(f"model={model.name} reads hidden cards; pick a fair bot such as model=heuristic")
            self.belief = ActionModel(model, eps, temp)
        self.forced_rng = self._forced_stream()
        """Seeds the search of forced decisions in `action_values`, so `act`'s stream stays its own."""

    def _forced_stream(self) -> np.random.Generator:
        return np.random.default_rng(self.rng.bit_generator.seed_seq.spawn(1)[0])

    def reseed(self, seed: Seed) -> None:
        """Restart its streams (its own, the forced decisions', the search and belief models') from `seed`."""
        super().reseed(seed)
        self.forced_rng = self._forced_stream()
        self.search.model.reseed(seed)
        if self.belief is not None:
            self.belief.agent.reseed(seed)

    def act(self, obs, mask, state=None, rows=None):
        """(n,) actions: per decision, the highest of `action_values` (near-ties: the heuristic's choice)."""
        info = decode(self.engine, obs)
        return best_actions(info, np.asarray(mask, bool), self.heuristic,
                            lambda i: self.values(View.from_info(info, i), self._seed(self.rng)))

    def action_values(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n, A) mean points per hand for the acting seat's team of each legal action; NaN if illegal.

        A bid's value is that of its best plan (with the partner or alone). Forced decisions are
        searched too, from their own random stream, so `act` is the argmax of these for the same seed.
        """
        info = decode(self.engine, obs)
        mask = np.asarray(mask, bool)
        out = np.empty(mask.shape, np.float64)
        for i in range(mask.shape[0]):
            forced = mask[i].sum() == 1
            out[i] = self.values(View.from_info(info, i), self._seed(self.forced_rng if forced else self.rng))
        return out

    @staticmethod
    def _seed(rng: np.random.Generator) -> int:
        return int(rng.integers(0, 2**63))

    def values(self, view: View, seed: int) -> np.ndarray:
        """(A,) action values of one information set from `worlds` layouts sampled with `seed`."""
        if self.infer:
            return self.inferred_values(view, seed)
        layouts = sample_hands(self.engine, view, self.worlds, seed)
        if view.phase == Phase.PLAY:
            return card_action_values(self.engine, self._play_values(view, layouts.hands))
        state = replay(self.search.model_engine, view, layouts, self.search.model)
        return self.search.plan_action_values(state, 0)

    def _play_values(self, view: View, hands: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        active = [not s for s in view.sitting_out]
        lone = any(view.alone[s] for s in range(NUM_SEATS) if s % 2 != view.maker % 2)
        return self.search.play_values(
            hands,
            view.trump,
            view.trick_leader[view.trick_index],
            np.array(active),
            np.array(view.current_trick()),
            view.maker,
            view.tricks_won,
            view.alone[view.maker],
            lone,
            weights,
        )

    def inferred_values(self, view: View, seed: int) -> np.ndarray:
        """(A,) action values over `worlds` draws, resampled by likelihood from `candidates` x `worlds` layouts."""
        layouts = sample_hands(self.engine, view, self.worlds * self.candidates, seed)
        state, log_w = self.weigh(view, layouts)
        keep, counts = resample(log_w, self.worlds, np.random.default_rng(seed))
        if view.phase != Phase.PLAY:
            return self.search.plan_action_values(state.take(keep), 0, counts)
        return card_action_values(self.engine, self._play_values(view, layouts.hands[keep], counts))

    def weigh(self, view: View, layouts: Layouts) -> tuple[EuchreState, np.ndarray]:
        """Each layout replayed to the decision point, and its log-likelihood of the other seats' public
        actions relative to the most likely layout's (0 = as likely as the likeliest)."""
        engine = self.search.model_engine
        log_w = np.zeros(layouts.hands.shape[0])

        def score(state: EuchreState, actions: np.ndarray) -> None:
            if self.plays or state.phase[0] != Phase.PLAY:
                log_w[:] += self.belief.log_prob(engine.observe(state), state.legal, actions)

        auction_only = view.phase == Phase.PLAY and not self.plays  # the state is not needed, only the weights
        state = replay(engine, view, layouts, self.search.model, score, until_play=auction_only)
        return state, log_w - log_w.max()


class OracleAgent(Agent):
    """CHEATING CEILING: the same search on the true layout, read from the engine state."""

    name = "oracle"
    fair = False
    needs_full_state = True

    def __init__(self, engine: Engine, seed: int | None = None):
        super().__init__(engine, seed)
        self.search = Searcher(engine, seed)
        self.heuristic = HeuristicAgent(engine, seed)

    def reseed(self, seed: Seed) -> None:
        """Restart its own stream and its search model's from `seed`."""
        super().reseed(seed)
        self.search.model.reseed(seed)

    def act(self, obs, mask, state=None, rows=None):
        """(n,) actions from the true layout of each game (`state` rows `rows`): the highest of
        `action_values`, near-ties to the heuristic's choice."""
        self._check_state(state, rows)
        rows = np.asarray(rows).tolist()
        return best_actions(decode(self.engine, obs), np.asarray(mask, bool), self.heuristic,
                            lambda i: self.values(state, rows[i]))

    def action_values(self, obs: np.ndarray, mask: np.ndarray, state: EuchreState, rows: np.ndarray) -> np.ndarray:
        """(n, A) points per hand for the acting seat's team of each legal action on the true layout; NaN if illegal."""
        self._check_state(state, rows)
        return np.stack([self.values(state, row) for row in np.asarray(rows).tolist()]).reshape(len(rows), -1)

    @staticmethod
    def _check_state(state: EuchreState | None, rows: np.ndarray | None) -> None:
        if state is None or rows is None:
            raise ValueError("the oracle reads the engine state: call act(obs, mask, state, rows)")

    def values(self, state: EuchreState, row: int) -> np.ndarray:
        """(A,) action values of the decision in `row` of `state`, solved on its true layout."""
        me = int(state.to_play[row])
        if state.phase[row] != Phase.PLAY:
            return self.search.plan_action_values(state.take(np.array([row])), me)
        t = int(state.trick_index[row])
        # team 0 of the solver is the absolute seats 0 and 2; flip the sign for the odd team
        values = self.search.play_values(
            hand_masks(state.hand[row])[None],
            int(state.trump[row]),
            int(state.trick_leader[row, t]),
            state.active[row][None],
            state.trick_cards[row, t][None],
            int(state.maker[row]),
            state.tricks_won[row].tolist(),
            bool(state.maker_alone[row]),
            bool(state.lone_defender[row] >= 0),
        )
        if me % 2:
            values = np.where(np.isfinite(values), -values, -np.inf)
        return card_action_values(self.engine, values)


def make_pimc(engine: Engine, arg: str, seed: int | None, build: Callable[[str, Engine, int | None], Agent]) -> PimcAgent:
    """`pimc[:worlds=N,infer=true,...]`; `build(spec, engine, seed)` makes the `model=` bot (the registry's `make_agent`)."""
    options = parse_options(arg)
    if options.get("infer", False):
        options["model"] = build(options.get("model", DEFAULT_MODEL), engine, seed)
    return PimcAgent(engine, seed, **options)
