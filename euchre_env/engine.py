"""`Engine`: the rules of Euchre for one `Rules` config and episode kind, over batches of games.

The rules themselves live once, as numba kernels over one game's record (`kernels.py`,
`observation.py`, `record.py`); this class validates what callers pass, raises the errors, and hands
the state's arrays to the kernels. A batch is an `EuchreState` (`state.py`); one game for the AEC
env is a `OneGame`, its record stepped by the same kernels. Deal keys: `deal_keys.py`; the options
and card tables the kernels read: `tables.py`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from euchre_env import kernels
from euchre_env.cards import HAND_SIZE, NUM_SEATS, Deck, deck_for
from euchre_env.deal_keys import game_key, game_keys
from euchre_env.observation import (
    CARD_CELLS,
    CARD_FIELDS,
    TAIL_FIELDS,
    observation_layout,
    observation_scale,
    observation_size,
)
from euchre_env.record import DEAL_COUNT, PHASE, TO_PLAY, blank_record, legal_mask
from euchre_env.rules import Rules
from euchre_env.state import (
    EPISODE_GAME,
    EPISODE_HAND,
    EPISODE_RUBBER,
    EPISODES,
    MAX_BIDS,
    NUM_DECISION_PHASES,
    REWARD_POINTS,
    REWARD_WIN,
    REWARDS,
    DealError,
    EuchreState,
    IllegalActionError,
    Phase,
)
from euchre_env.tables import PACKET_SEAT, kernel_table

__all__ = [
    "CARD_CELLS", "CARD_FIELDS", "EPISODE_GAME", "EPISODE_HAND", "EPISODE_RUBBER", "EPISODES", "MAX_BIDS",
    "NUM_DECISION_PHASES", "PACKET_SEAT", "REWARD_POINTS", "REWARD_WIN", "REWARDS", "TAIL_FIELDS", "DealError",
    "Engine", "EuchreState", "IllegalActionError", "OneGame", "Phase", "game_key", "game_keys",
]
OBSERVATION_DTYPES = (np.float32, np.uint8)


class OneGame:
    """One game as a game record (`record.py`), for the AEC env: the kernels take the record alone.

    `state` shows the game as a 1-row `EuchreState` (the same object each time, written from the
    record when read after a change); writing to it does not change the game (use `read`).
    """

    __slots__ = ("record", "_state", "_synced")

    def __init__(self, num_cards: int, num_actions: int):
        self.record = blank_record(num_cards)
        self._state = EuchreState.empty(1, num_cards, num_actions)
        self._synced = True

    @classmethod
    def from_state(cls, state: EuchreState, row: int = 0) -> "OneGame":
        """A copy of the game in `row` of a batched state."""
        game = cls(state.hand.shape[2], state.legal.shape[1])
        game.read(state, row)
        return game

    def read(self, state: EuchreState, row: int = 0) -> None:
        """Take every field from `row` of a batched state (same deck and actions)."""
        kernels.one_load(state.arrays(), row, self.record)
        self._synced = False

    def write(self, state: EuchreState, row: int = 0) -> None:
        """Put every field into `row` of a batched state (same deck and actions)."""
        kernels.one_store(self.record, state.arrays(), row)

    @property
    def state(self) -> EuchreState:
        """The game as a 1-row `EuchreState`."""
        if not self._synced:
            kernels.one_store(self.record, self._state.arrays(), 0)
            self._synced = True
        return self._state

    def changed(self) -> None:
        """The record was changed by a kernel: `state` must be written again when next read."""
        self._synced = False

    @property
    def phase(self) -> int:
        """The game's `Phase` value."""
        return self.record.item(PHASE)

    @property
    def to_play(self) -> int:
        """The seat to act, -1 once the episode is over."""
        return self.record.item(TO_PLAY)

    @property
    def deal_count(self) -> int:
        """Deals made with the game's key so far (every deal after the first ended a hand)."""
        return self.record.item(DEAL_COUNT)

    def legal(self) -> np.ndarray:
        """(A,) bool legal mask of the seat to act, as a new array."""
        return legal_mask(self.record, self._state.legal.shape[1])


class Engine:
    """The rules engine for one `Rules` config and episode kind, over batches of games."""

    def __init__(self, rules: Rules | None = None, episode: str = EPISODE_HAND, reward: str = REWARD_POINTS):
        if rules is None:
            rules = Rules()
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a euchre_env.Rules, got {type(rules).__name__}")
        if episode not in EPISODES:
            raise ValueError(f"episode={episode!r} is not one of {EPISODES}")
        if reward not in REWARDS:
            raise ValueError(f"reward={reward!r} is not one of {REWARDS}")
        self.rules = rules
        self.episode = episode
        self.reward = reward
        self.deck: Deck = deck_for(rules)
        d = self.deck
        self.num_cards = d.num_cards
        self.num_actions = d.num_actions
        self.pass_action = d.pass_action
        self.alone_action = d.alone_action
        self.partner_action = d.partner_action
        self.first_suit_action = d.suit_action(0)
        self.action_names = d.action_names()
        self.observation_layout: dict[str, np.ndarray] = observation_layout(self.num_cards)
        self.observation_size = observation_size(self.num_cards)
        self.table = kernel_table(rules, episode, reward, d)
        """What the kernels read: the options as numbers and the deck's tables (`tables.kernel_table`)."""
        self._one_rewards = np.zeros(NUM_SEATS, np.float32)

    # ------------------------------------------------------------------ creation

    def _empty(self, n: int) -> EuchreState:
        return EuchreState.empty(n, self.num_cards, self.num_actions)

    def init(self, keys: np.ndarray) -> EuchreState:
        """New episodes, one per key: cut for the first dealer, deal, and wait for the first bid."""
        keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
        state = self._empty(keys.shape[0])
        state.key[:] = keys
        self.restart(state, np.arange(keys.shape[0]))
        return state

    def restart(self, state: EuchreState, rows: np.ndarray) -> None:
        """Start a fresh episode in the given rows (autoreset), continuing each row's deal stream."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        if rows.size:
            kernels.prepare_rows(state.arrays(), self.table, rows, kernels.RESTART)

    def init_from_deal(self, dealer: int, hands: np.ndarray, upcard: int, key: int = 0) -> EuchreState:
        """One game (N=1) from an exact deal: dealer seat, 4x5 card ids, the upcard; the kitty is the rest."""
        if not isinstance(dealer, (int, np.integer)) or isinstance(dealer, bool) or not 0 <= dealer < NUM_SEATS:
            raise DealError(f"dealer must be a seat 0-3, got {dealer!r}")
        hands = np.asarray(hands)
        if hands.shape != (NUM_SEATS, HAND_SIZE):
            raise DealError(f"a deal needs 4 hands of 5 cards, got shape {hands.shape}")
        cards = np.concatenate([hands.reshape(-1), [upcard]]).astype(np.int64)
        if cards.min() < 0 or cards.max() >= self.num_cards:
            raise DealError(f"card ids must be in 0..{self.num_cards - 1} for this deck")
        if np.unique(cards).size != cards.size:
            dup = [self.deck.names[c] for c in np.unique(cards) if (cards == c).sum() > 1]
            raise DealError(f"a card is dealt twice: {', '.join(dup)}")
        state = self._empty(1)
        state.key[0] = np.uint64(key)
        state.dealer[0] = dealer
        state.hand[0, np.repeat(np.arange(NUM_SEATS), HAND_SIZE), hands.reshape(-1)] = True
        state.dealt[0] = state.hand[0]
        state.upcard[0] = upcard
        kernels.prepare_rows(state.arrays(), self.table, np.zeros(1, np.int64), kernels.START_DEALT_HAND)
        return state

    def legal_actions(self, state: EuchreState, row: int = 0) -> list[int]:
        """Legal action ids of one game, ascending."""
        return np.flatnonzero(state.legal[row]).tolist()

    # ------------------------------------------------------------------ stepping

    def check_actions(self, state: EuchreState, actions: np.ndarray) -> np.ndarray:
        """Validate one action per game (ignored for finished rows); raise IllegalActionError naming it."""
        actions = np.asarray(actions)
        n = state.num_games
        if actions.shape != (n,):
            raise IllegalActionError(f"expected {n} actions (one per game), got shape {actions.shape}")
        if not np.issubdtype(actions.dtype, np.integer):
            raise IllegalActionError(f"actions must be integers, got dtype {actions.dtype}")
        live = ~state.done
        in_range = (actions >= 0) & (actions < self.num_actions)
        ok = np.where(in_range, state.legal[np.arange(n), np.clip(actions, 0, self.num_actions - 1)], False)
        bad = np.flatnonzero(live & ~ok)
        if bad.size:
            g = int(bad[0])
            raise IllegalActionError(
                f"illegal action {self.action_label(int(actions[g]))} in game {g} "
                f"(seat {int(state.to_play[g])}, phase {Phase(int(state.phase[g])).name}); legal actions: "
                + ", ".join(self.action_label(a) for a in self.legal_actions(state, g))
                + (f" ({bad.size} games had illegal actions)" if bad.size > 1 else "")
            )
        return actions.astype(np.int64)

    def action_label(self, action: int) -> str:
        """`name (id)` for messages; out-of-range ids are shown as they are."""
        if 0 <= action < self.num_actions:
            return f"{self.action_names[action]} ({action})"
        return f"{action} (no such action; ids are 0..{self.num_actions - 1})"

    def step(self, state: EuchreState, actions: np.ndarray) -> np.ndarray:
        """Apply one action per game in place and return (N, 4) float32 rewards for every seat.

        Rows already finished are left alone (their action is ignored). Raises IllegalActionError,
        leaving the state untouched, if any live game gets an illegal action.
        """
        acts = self.action_ids(actions, state.num_games, lambda: state)
        rewards = np.zeros((state.num_games, NUM_SEATS), np.float32)
        if kernels.step_rows(state.arrays(), self.table, acts, rewards) >= 0:
            self.check_actions(state, acts)  # raises with the full message; nothing was applied
        return rewards

    def action_ids(self, actions: np.ndarray, n: int, state_for_errors: Callable[[], EuchreState]) -> np.ndarray:
        """(n,) int64 action ids for a batched step, without checking legality (the kernels do); an action
        array of another shape, a non-integer dtype or an out-of-range unsigned id raises IllegalActionError,
        with `check_actions`' message on `state_for_errors()`."""
        acts = np.asarray(actions)
        if acts.shape != (n,) or acts.dtype.kind not in "iu" or (
            acts.dtype.kind == "u" and acts.size and acts.max() > np.iinfo(np.int64).max
        ):
            self.check_actions(state_for_errors(), acts)  # raises with the full message
        return acts.astype(np.int64, copy=False)

    def hand_score(self, state: EuchreState, rows: np.ndarray) -> np.ndarray:
        """(m, 2) points each team scores for the finished hands in `rows`; only one side scores."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        out = np.zeros((rows.size, 2), np.int16)
        kernels.hand_points_rows(
            self.table, state.maker, state.maker_alone, state.lone_defender, state.tricks_won, rows, out
        )
        return out

    def game_winner(self, state: EuchreState) -> np.ndarray:
        """(N,) the team (0 = seats 0/2, 1 = seats 1/3) that won each game or rubber episode, else -1."""
        out = np.empty(state.num_games, np.int64)
        kernels.game_winner_rows(self.table, state.score, state.games_won, out)
        return out

    def rubber_score(self, state: EuchreState) -> np.ndarray:
        """(N, 2) rubber points: once a rubber is won, its winners get the bonus plus their point difference."""
        out = np.zeros((state.num_games, 2), np.int32)
        kernels.rubber_score_rows(self.table, state.games_won, state.rubber_points, out)
        return out

    # ------------------------------------------------------------------ observations

    def observe(
        self,
        state: EuchreState,
        seats: np.ndarray | None = None,
        out: np.ndarray | None = None,
        dtype: type = np.float32,
    ) -> np.ndarray:
        """(N, D) information state of `seats` (default: the seat to act), from that seat's view.

        Seats are relative: 0 = the observer, 1 = its left, 2 = its partner, 3 = its right.
        `dtype` float32 (default) or uint8: the same cells, the score in points (see `observation_scale`).
        """
        dtype = np.dtype(out.dtype if out is not None else dtype)
        if dtype not in OBSERVATION_DTYPES:
            raise ValueError(f"observations are float32 or uint8, got dtype {dtype}")
        n = state.num_games
        me = np.maximum(state.to_play, 0) if seats is None else np.asarray(seats)
        if me.shape != (n,) or me.dtype.kind not in "iu" or (n and (me.min() < 0 or me.max() >= NUM_SEATS)):
            raise ValueError(f"seats must be {n} seat numbers 0-3 (one per game)")
        shape = (n, self.observation_size)
        fits = out is not None and out.shape == shape and out.flags.c_contiguous
        buf = out if fits else np.empty(shape, dtype)
        kernels.observe_rows(state.arrays(), self.table, me.astype(np.int64, copy=False), buf, dtype == np.float32)
        if out is None or fits:
            return buf
        out[...] = buf
        return out

    @property
    def observation_scale(self) -> np.ndarray:
        """(D,) float32: a uint8 observation times this equals the float32 one (only the score cells differ)."""
        return observation_scale(self.num_cards, self.rules.target_points)

    # ------------------------------------------------------------------ one game (the AEC env's path)

    def new_game(self) -> OneGame:
        """A `OneGame` for this engine's deck, before its first deal."""
        return OneGame(self.num_cards, self.num_actions)

    def init_one(self, key: int, game: OneGame | None = None) -> OneGame:
        """`init` for one game: the same episode for the same key, as a `OneGame` (`game` is reused if given)."""
        if game is None:
            game = self.new_game()
        kernels.one_init(game.record, self.table, np.uint64(key))
        game.changed()
        return game

    def step_one(self, game: OneGame, action: int) -> np.ndarray | None:
        """`step` for one game and an int action: (1, 4) rewards, or None when this step pays nobody."""
        if type(action) is not int:
            action = int(action)
        if not 0 <= action < self.num_actions:
            self.check_actions(game.state, np.array([action]))  # raises unless the episode is over
            action = 0  # ignored: the episode is over
        code = kernels.one_step(game.record, self.table, action, self._one_rewards)
        if code == kernels.ILLEGAL:
            self.check_actions(game.state, np.array([action]))  # raises with the full message
        game.changed()
        return self._one_rewards[None].copy() if code == 1 else None

    def observe_one(self, game: OneGame, seat: int) -> np.ndarray:
        """(D,) float32 observation of `seat` in one game, as a new array."""
        out = np.empty(self.observation_size, np.float32)
        kernels.one_observe(game.record, self.table, seat, out, True)
        return out
