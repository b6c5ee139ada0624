"""The observation: one seat's whole information state as a vector, written by one kernel.

Card features come first, 16 cells per card (`CARD_FIELDS`), then the per-hand features
(`TAIL_FIELDS`). Seats are relative to the observer: 0 = itself, 1 = its left, 2 = its partner,
3 = its right. `observation_layout(C)[name]` lists each feature's cells in its logical order.
Every cell is 0 or 1 except the score cells of game and rubber episodes (points / target, and
games won). `encode` writes float32 or uint8 observations: the same cells, except that a uint8
observation holds the score in points (multiply by `observation_scale` for the float32 values).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from euchre_env.cards import NUM_SEATS, NUM_SUITS, NUM_TRICKS, SUIT_OFFSET
from euchre_env.state import MAX_BIDS, NUM_DECISION_PHASES
from euchre_env.tables import HAND_EPISODE, RUBBER_EPISODE, T_EPISODE, T_NUM_CARDS, T_TARGET

CARD_CELLS = 16
CARD_FIELDS = (
    ("hand", 1),
    ("upcard", 1),
    ("own_discard", 1),
    ("played_by", NUM_SEATS),
    ("played_in_trick", NUM_TRICKS),
    ("current_trick", NUM_SEATS),
)
"""The observation's 16 cells per card, in order (seats relative to the observer)."""
TAIL_FIELDS = (
    ("upcard_turned_down", 1),
    ("dealer", NUM_SEATS),
    ("trump", NUM_SUITS),
    ("maker", NUM_SEATS),
    ("alone", NUM_SEATS),
    ("sitting_out", NUM_SEATS),
    ("phase", NUM_DECISION_PHASES),
    ("tricks_won", 2 * (NUM_TRICKS + 1)),
    ("trick_leader", NUM_TRICKS * NUM_SEATS),
    ("bids", 2 * NUM_SEATS * (1 + NUM_SUITS)),
    ("score", 2),
    ("games_won", 2),
)
"""The observation's cells after the card records, in order."""


def _offsets(fields: tuple) -> dict[str, int]:
    out, at = {}, 0
    for name, width in fields:
        out[name] = at
        at += width
    return out


_CARD = _offsets(CARD_FIELDS)
_TAIL = _offsets(TAIL_FIELDS)
TAIL_SIZE = sum(width for _, width in TAIL_FIELDS)
# cell offsets as plain ints: the kernel reads them as compile-time constants
HAND, UPCARD, OWN_DISCARD, PLAYED_BY, PLAYED_IN_TRICK, CURRENT_TRICK = (_CARD[n] for n, _ in CARD_FIELDS)
(UPCARD_TURNED_DOWN, DEALER, TRUMP, MAKER, ALONE, SITTING_OUT, PHASE, TRICKS_WON, TRICK_LEADER, BIDS, SCORE,
 GAMES_WON) = (_TAIL[n] for n, _ in TAIL_FIELDS)


def observation_size(num_cards: int) -> int:
    """Cells in an observation for a deck of `num_cards`."""
    return CARD_CELLS * num_cards + TAIL_SIZE


def observation_layout(num_cards: int) -> dict[str, np.ndarray]:
    """Each feature's cells, in its logical order (card-major for card features; `current_trick` seat-major)."""
    cards = np.arange(num_cards)
    layout: dict[str, np.ndarray] = {}
    for name, width in CARD_FIELDS:
        cells = CARD_CELLS * cards[:, None] + _CARD[name] + np.arange(width)[None, :]  # (card, item)
        layout[name] = (cells.T if name == "current_trick" else cells).reshape(-1)
    tail = CARD_CELLS * num_cards
    for name, width in TAIL_FIELDS:
        layout[name] = tail + _TAIL[name] + np.arange(width)
    return layout


def observation_scale(num_cards: int, target_points: int) -> np.ndarray:
    """(D,) float32: a uint8 observation times this is the float32 one (the score cells are divided by the target)."""
    scale = np.ones(observation_size(num_cards), np.float32)
    scale[observation_layout(num_cards)["score"]] = 1.0 / target_points
    return scale


@njit(cache=True)
def encode(s, g, me, t, out, divide_score):
    """Write seat `me`'s observation of game row g into `out` (D,), float32 or uint8.

    `divide_score`: the score cells hold points / target (float32); else points (uint8).
    """
    c = t[T_NUM_CARDS]
    out[:] = 0
    for card in range(c):
        if s.hand[g, me, card]:
            out[card * CARD_CELLS + HAND] = 1
        player = s.card_player[g, card]
        if player >= 0:
            rel = (player - me) & 3
            trick = s.card_trick[g, card]
            out[card * CARD_CELLS + PLAYED_BY + rel] = 1
            out[card * CARD_CELLS + PLAYED_IN_TRICK + trick] = 1
            if trick == s.trick_index[g]:
                out[card * CARD_CELLS + CURRENT_TRICK + rel] = 1
    if s.upcard[g] >= 0:
        out[s.upcard[g] * CARD_CELLS + UPCARD] = 1
    dealer = s.dealer[g]
    if dealer == me and s.discard[g] >= 0:
        out[s.discard[g] * CARD_CELLS + OWN_DISCARD] = 1
    tail = CARD_CELLS * c
    if s.num_bids[g] >= NUM_SEATS and not s.ordered_up[g]:
        out[tail + UPCARD_TURNED_DOWN] = 1
    out[tail + DEALER + ((dealer - me) & 3)] = 1
    if s.trump[g] >= 0:
        out[tail + TRUMP + s.trump[g]] = 1
    maker = s.maker[g]
    if maker >= 0:
        out[tail + MAKER + ((maker - me) & 3)] = 1
        if s.maker_alone[g]:
            out[tail + ALONE + ((maker - me) & 3)] = 1
    if s.lone_defender[g] >= 0:
        out[tail + ALONE + ((s.lone_defender[g] - me) & 3)] = 1
    for seat in range(NUM_SEATS):
        if not s.active[g, seat]:
            out[tail + SITTING_OUT + ((seat - me) & 3)] = 1
    if s.phase[g] < NUM_DECISION_PHASES:
        out[tail + PHASE + s.phase[g]] = 1
    team = me & 1
    out[tail + TRICKS_WON + s.tricks_won[g, team]] = 1
    out[tail + TRICKS_WON + NUM_TRICKS + 1 + s.tricks_won[g, 1 - team]] = 1
    for trick in range(NUM_TRICKS):
        leader = s.trick_leader[g, trick]
        if leader >= 0:
            out[tail + TRICK_LEADER + trick * NUM_SEATS + ((leader - me) & 3)] = 1
    for slot in range(MAX_BIDS):
        action = s.bids[g, slot]
        if action >= 0:
            choice = 0 if action == c else action - c - SUIT_OFFSET + 1
            out[tail + BIDS + slot * (1 + NUM_SUITS) + choice] = 1
    episode = t[T_EPISODE]
    if episode == HAND_EPISODE:
        return
    if divide_score:
        target = float(t[T_TARGET])
        out[tail + SCORE] = s.score[g, team] / target
        out[tail + SCORE + 1] = s.score[g, 1 - team] / target
    else:
        out[tail + SCORE] = s.score[g, team]
        out[tail + SCORE + 1] = s.score[g, 1 - team]
    if episode == RUBBER_EPISODE:
        out[tail + GAMES_WON] = s.games_won[g, team]
        out[tail + GAMES_WON + 1] = s.games_won[g, 1 - team]


@njit(cache=True)
def observe_rows(s, t, seats, out, divide_score):
    """`encode` every row g from seat seats[g] into out[g]."""
    for g in range(s.phase.shape[0]):
        encode(s, g, seats[g], t, out[g], divide_score)

