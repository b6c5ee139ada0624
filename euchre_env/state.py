"""The state arrays of a batch of games: one row per game, with the phases, errors and field specs.

`EuchreState` holds N games in numpy arrays (every field's first axis is the game). `FIELDS` lists
each field with its dtype, its shape after the game axis and the value it holds before a game is
dealt; `EuchreState.arrays()` is the same fields as the tuple the kernels take (`kernels.py`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from euchre_env.cards import NUM_SEATS, NUM_TRICKS

MAX_BIDS = 2 * NUM_SEATS
EPISODE_HAND = "hand"
EPISODE_GAME = "game"
EPISODE_RUBBER = "rubber"
EPISODES = (EPISODE_HAND, EPISODE_GAME, EPISODE_RUBBER)
REWARD_POINTS = "points"
REWARD_WIN = "win"
REWARDS = (REWARD_POINTS, REWARD_WIN)


class Phase(IntEnum):
    """What the game is waiting for. The first six are decisions; the last two are terminal."""

    BID_ROUND_1 = 0
    BID_ROUND_2 = 1
    MAKER_ALONE = 2
    DEFENDER_ALONE = 3
    DISCARD = 4
    PLAY = 5
    HAND_OVER = 6
    GAME_OVER = 7


NUM_DECISION_PHASES = 6


class IllegalActionError(ValueError):
    """An action that is not legal in the state it was applied to. The state is left unchanged."""


class DealError(ValueError):
    """A scripted deal that is malformed or impossible."""


C, A = "C", "A"
"""Placeholders in `FIELDS` shapes: the number of cards and of actions."""
FIELDS = (
    ("key", np.uint64, (), 0),  # the game's deal key
    ("deal_count", np.int64, (), 0),  # deals made with this key so far
    ("phase", np.int8, (), 0),  # Phase
    ("to_play", np.int8, (), -1),  # seat to act, -1 when terminal
    ("dealer", np.int8, (), 0),
    ("hand", np.bool_, (NUM_SEATS, C), False),  # cards each seat holds now
    ("dealt", np.bool_, (NUM_SEATS, C), False),  # the five cards each seat was dealt
    ("upcard", np.int16, (), -1),
    ("bids", np.int16, (MAX_BIDS,), -1),  # action per bid in order, -1 unused
    ("num_bids", np.int8, (), 0),
    ("trump", np.int8, (), -1),  # -1 before trump is made
    ("maker", np.int8, (), -1),  # seat that named trump, -1 before
    ("ordered_up", np.bool_, (), False),  # trump was made in round one
    ("maker_alone", np.bool_, (), False),
    ("lone_defender", np.int8, (), -1),  # seat, -1 if none
    ("defender_asks", np.int8, (), 0),  # defenders asked about going alone so far
    ("active", np.bool_, (NUM_SEATS,), True),  # seat plays this hand (False = sits out)
    ("picked_up", np.bool_, (), False),  # the dealer took the upcard into hand
    ("discard", np.int16, (), -1),  # card the dealer buried, -1 if none
    ("trick_cards", np.int16, (NUM_TRICKS, NUM_SEATS), -1),  # card played by seat in trick, -1 none
    ("trick_leader", np.int8, (NUM_TRICKS,), -1),
    ("trick_winner", np.int8, (NUM_TRICKS,), -1),
    ("card_player", np.int8, (C,), -1),  # seat that played the card, -1 unplayed
    ("card_trick", np.int8, (C,), -1),  # trick in which the card was played, -1 unplayed
    ("trick_index", np.int8, (), 0),
    ("cards_in_trick", np.int8, (), 0),
    ("led_suit", np.int8, (), -1),  # effective suit led to the current trick, -1 none
    ("tricks_won", np.int8, (2,), 0),  # by team (team = seat % 2)
    ("thrown_in", np.bool_, (), False),  # the last hand was thrown in
    ("hand_points", np.int16, (2,), 0),  # points each team scored in the last finished hand
    ("score", np.int16, (2,), 0),  # game score
    ("rubber_points", np.int32, (2,), 0),  # game points summed over the rubber's games
    ("games_won", np.int8, (2,), 0),
    ("hand_number", np.int32, (), 0),  # hands finished in this episode
    ("last_trick_winner", np.int8, (), -1),  # seat that took the episode's latest finished trick, kept through the next deal; -1 before
    ("legal", np.bool_, (A,), False),  # legal-action mask of the seat to act
)
"""Every field of a state: (name, dtype, shape after the game axis, value before a deal)."""
FIELD_NAMES = tuple(f[0] for f in FIELDS)

PHASE_FIELD, HAND_POINTS_FIELD, LEGAL_FIELD = (FIELD_NAMES.index(n) for n in ("phase", "hand_points", "legal"))
"""Positions in `EuchreState.arrays()` the batched kernels read directly."""


def field_shape(shape: tuple, num_cards: int, num_actions: int) -> tuple[int, ...]:
    """A `FIELDS` shape with its C and A placeholders filled in."""
    return tuple(num_cards if d == C else num_actions if d == A else d for d in shape)


@dataclass
class EuchreState:
    """N games, one row each (fields and dtypes: `FIELDS`). `Engine.step` updates the arrays in place."""

    key: np.ndarray
    deal_count: np.ndarray
    phase: np.ndarray
    to_play: np.ndarray
    dealer: np.ndarray
    hand: np.ndarray
    dealt: np.ndarray
    upcard: np.ndarray
    bids: np.ndarray
    num_bids: np.ndarray
    trump: np.ndarray
    maker: np.ndarray
    ordered_up: np.ndarray
    maker_alone: np.ndarray
    lone_defender: np.ndarray
    defender_asks: np.ndarray
    active: np.ndarray
    picked_up: np.ndarray
    discard: np.ndarray
    trick_cards: np.ndarray
    trick_leader: np.ndarray
    trick_winner: np.ndarray
    card_player: np.ndarray
    card_trick: np.ndarray
    trick_index: np.ndarray
    cards_in_trick: np.ndarray
    led_suit: np.ndarray
    tricks_won: np.ndarray
    thrown_in: np.ndarray
    hand_points: np.ndarray
    score: np.ndarray
    rubber_points: np.ndarray
    games_won: np.ndarray
    hand_number: np.ndarray
    last_trick_winner: np.ndarray
    legal: np.ndarray

    @classmethod
    def empty(cls, num_games: int, num_cards: int, num_actions: int) -> "EuchreState":
        """N games before their first deal (every field at its `FIELDS` value)."""
        return cls(
            **{
                name: np.full((num_games, *field_shape(shape, num_cards, num_actions)), value, dtype)
                for name, dtype, shape, value in FIELDS
            }
        )

    @property
    def num_games(self) -> int:
        """N, the number of games in the batch."""
        return int(self.phase.shape[0])

    def copy(self) -> "EuchreState":
        """A deep copy (every array copied)."""
        return EuchreState(**{f.name: getattr(self, f.name).copy() for f in dataclasses.fields(self)})

    def take(self, rows: np.ndarray | slice) -> "EuchreState":
        """A new state holding only the given rows (copied)."""
        return EuchreState(**{f.name: getattr(self, f.name)[rows].copy() for f in dataclasses.fields(self)})

    @classmethod
    def concat(cls, states: "list[EuchreState]") -> "EuchreState":
        """One new state holding the rows of every state in turn (the states' games, in order)."""
        return cls(**{f.name: np.concatenate([getattr(s, f.name) for s in states]) for f in dataclasses.fields(cls)})

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The fields in `FIELDS` order, as the kernels take them (each C-contiguous, of its `FIELDS` dtype)."""
        return tuple([getattr(self, name) for name in FIELD_NAMES])

    @property
    def done(self) -> np.ndarray:
        """(N,) bool: the episode of that row is over."""
        return self.phase >= Phase.HAND_OVER.value


assert tuple(f.name for f in dataclasses.fields(EuchreState)) == FIELD_NAMES
