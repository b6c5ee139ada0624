"""Decode observation vectors back into a structured information set.

The observation is the acting seat's whole information state, so a bot that acts on observations
alone cannot see a hidden card. Bots that reason about cards (the heuristic, the search bot) decode
the vector here instead of reading the engine's state. Seats are relative to the observer:
0 = itself, 1 = its left, 2 = its partner, 3 = its right.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from euchre_env.cards import NUM_SEATS, NUM_SUITS, PASS_OFFSET, SUIT_OFFSET
from euchre_env.engine import Engine
from euchre_env.observation import block_shapes

BID_NONE = -1
BID_PASS = NUM_SUITS
"""In `InfoSet.bids`: 0..3 names that suit (round one: orders it up), 4 is a pass, -1 no bid yet."""


@dataclass
class InfoSet:
    """What one seat knows, for n observations (one row each)."""

    hand: np.ndarray  # (n, C) bool
    upcard: np.ndarray  # (n,) int
    upcard_turned_down: np.ndarray  # (n,) bool
    dealer: np.ndarray  # (n,) relative seat
    bids: np.ndarray  # (n, 8) int: suit 0..3, BID_PASS, or BID_NONE
    trump: np.ndarray  # (n,) int, -1 before trump is made
    maker: np.ndarray  # (n,) relative seat, -1 before trump is made
    alone: np.ndarray  # (n, 4) bool
    sitting_out: np.ndarray  # (n, 4) bool
    own_discard: np.ndarray  # (n,) card, -1 unless the observer is the dealer and has buried
    phase: np.ndarray  # (n,) Phase value
    played_by: np.ndarray  # (n, C) relative seat that played the card, -1 unplayed
    played_in_trick: np.ndarray  # (n, C) trick index, -1 unplayed
    trick_leader: np.ndarray  # (n, 5) relative seat, -1 for tricks not started
    tricks_won: np.ndarray  # (n, 2) own team, other team
    score: np.ndarray  # (n, 2) own team, other team (game episodes)

    @property
    def trick_index(self) -> np.ndarray:
        """(n,) index of the trick being played (tricks completed so far)."""
        return self.tricks_won.sum(axis=1)

    def current_trick(self) -> np.ndarray:
        """(n, 4) card each relative seat has played to the current trick, -1 if none."""
        n = self.hand.shape[0]
        out = np.full((n, NUM_SEATS), -1, np.int64)
        r, c = np.nonzero((self.played_in_trick == self.trick_index[:, None]) & (self.played_by >= 0))
        out[r, self.played_by[r, c]] = c
        return out


def _onehot_index(block: np.ndarray) -> np.ndarray:
    """Index of the 1 in each one-hot row of the last axis, -1 where the row is all zero."""
    return np.where(block.any(axis=-1), block.argmax(axis=-1), -1)


def decode(engine: Engine, obs: np.ndarray) -> InfoSet:
    """Turn (n, D) or (D,) observations of `engine`'s layout into an `InfoSet` (always batched)."""
    obs = np.asarray(obs)
    if obs.ndim == 1:
        obs = obs[None]
    if obs.shape[1] != engine.observation_size:
        raise ValueError(f"observation has {obs.shape[1]} entries; this engine's layout has {engine.observation_size}")
    lay, shapes = engine.observation_layout, block_shapes(engine.num_cards)
    n = obs.shape[0]
    on = obs > 0.5

    def part(name: str) -> np.ndarray:
        """(n, *shape) the block's cells along its axes (`BLOCK_AXES`), as bools."""
        return on[:, lay[name]].reshape(n, *shapes[name])

    choice = _onehot_index(part("bids"))
    bids = np.where(choice == PASS_OFFSET, BID_PASS, np.where(choice >= SUIT_OFFSET, choice - SUIT_OFFSET, BID_NONE))
    score = obs[:, lay["score"]] * engine.rules.target_points
    return InfoSet(
        hand=part("hand"),
        upcard=_onehot_index(part("upcard")),
        upcard_turned_down=part("upcard_turned_down"),
        dealer=_onehot_index(part("dealer")),
        bids=bids,
        trump=_onehot_index(part("trump")),
        maker=_onehot_index(part("maker")),
        alone=part("alone"),
        sitting_out=part("sitting_out"),
        own_discard=_onehot_index(part("own_discard")),
        phase=_onehot_index(part("phase")),
        played_by=_onehot_index(part("played_by")),
        played_in_trick=_onehot_index(part("played_in_trick")),
        trick_leader=_onehot_index(part("trick_leader")),
        tricks_won=part("tricks_won").argmax(axis=-1),
        score=np.rint(score).astype(np.int64),
    )
