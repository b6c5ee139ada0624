"""Exact double-dummy search of the tricks left in a hand, over batches of positions.

The search runs in a small C extension (`euchre_agents/_dds.c`, built by `pip install -e .`): alpha-beta on
the tricks team 0 (seats 0 and 2) takes, with a transposition table at trick boundaries and cards of
one hand that no live card separates searched once. It knows no rule of its own: following suit
and trick winners come from the engine's card tables (`Deck.effective_suit`, `Deck.trick_strength`).
Hands are uint64 bit masks (bit c = card c) in seat order; seats that sit out are marked inactive.
"""

from __future__ import annotations

import numpy as np

from euchre_env.cards import NUM_SEATS, Deck

try:
    from euchre_agents import _dds
except ImportError as error:  # pragma: no cover - only without a built extension
    raise ImportError(
        "the double-dummy solver extension euchre_agents._dds is not built; run `pip install -e .` in the repository"
    ) from error

NO_CARD = -1
sample_layouts = _dds.sample
"""sample(cards, groups, capacity, voids, out, seed): see `euchre_agents/_dds.c`; wrapped by `euchre_agents.pimc`."""


def hand_masks(hands: np.ndarray) -> np.ndarray:
    """(..., C) bool card sets -> (...) uint64 bit masks."""
    hands = np.asarray(hands, bool)
    bits = np.left_shift(np.uint64(1), np.arange(hands.shape[-1], dtype=np.uint64))
    return np.bitwise_or.reduce(np.where(hands, bits, np.uint64(0)), axis=-1)


def mask_cards(mask: int) -> list[int]:
    """Card ids in a bit mask, ascending."""
    mask = int(mask)
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class DoubleDummy:
    """The solver for one deck; holds the card tables and a transposition table."""

    def __init__(self, deck: Deck):
        self.deck = deck
        self.num_cards = deck.num_cards
        self._solver = _dds.Solver(
            np.ascontiguousarray(deck.effective_suit, np.int8).tobytes(),
            np.ascontiguousarray(deck.trick_strength, np.int16).tobytes(),
            deck.num_cards,
        )

    @staticmethod
    def _args(hands, trump, leader, active, trick, need):
        hands = np.ascontiguousarray(hands, np.uint64).reshape(-1, NUM_SEATS)
        r = hands.shape[0]
        trump = np.ascontiguousarray(np.broadcast_to(trump, (r,)), np.int8)
        leader = np.ascontiguousarray(np.broadcast_to(leader, (r,)), np.int8)
        active = np.asarray(active)
        if active.ndim >= 1 and active.shape[-1] == NUM_SEATS and active.dtype == bool:
            active = (active.astype(np.uint8) << np.arange(NUM_SEATS, dtype=np.uint8)).sum(-1)
        active = np.ascontiguousarray(np.broadcast_to(active, (r,)), np.uint8)
        if trick is None:
            trick = np.full((r, NUM_SEATS), NO_CARD, np.int16)
        trick = np.ascontiguousarray(np.broadcast_to(trick, (r, NUM_SEATS)), np.int16)
        need = np.ascontiguousarray(np.broadcast_to(need, (r,)), np.uint8)
        return hands, trump, leader, active, trick, need

    def values(self, hands, trump, leader, active=0b1111, trick=None, need=0) -> np.ndarray:
        """(R,) tricks team 0 takes from here under perfect play, for R positions.

        hands (R, 4) uint64; trump, leader per row or shared; active (R,) seat bits or (R, 4) bool;
        trick (R, 4) card each seat has put on the current trick (-1 none), led by `leader`.
        need (R,) bit masks: 0 for exact values; else only whether the value reaches each t with
        bit t set is decided, and the value returned is one that agrees on all of those.
        """
        hands, trump, leader, active, trick, need = self._args(hands, trump, leader, active, trick, need)
        out = np.empty(hands.shape[0], np.int8)
        self._solver.solve(hands, trump, leader, active, trick, need, out, False)
        return out

    def move_values(self, hands, trump, leader, active=0b1111, trick=None, need=0) -> np.ndarray:
        """(R, C) tricks team 0 takes from here after the seat to act plays each card; -1 if illegal."""
        hands, trump, leader, active, trick, need = self._args(hands, trump, leader, active, trick, need)
        out = np.empty((hands.shape[0], self.num_cards), np.int8)
        self._solver.solve(hands, trump, leader, active, trick, need, out, True)
        return out
