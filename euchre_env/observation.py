"""The observation: one seat's whole information state as a vector, written by one kernel.

Card features come first, 16 cells per card (`CARD_FIELDS`), then the per-hand features
(`TAIL_FIELDS`). Seats are relative to the observer: 0 = itself, 1 = its left, 2 = its partner,
3 = its right. `observation_layout(C)[name]` lists each block's cells along its axes (`BLOCK_AXES`), the
one statement of the layout that decoders and relabellings derive from.
Every cell is 0 or 1 except the score cells of game and rubber episodes (points / target, and
games won). `encode` writes float32 or uint8 observations: the same cells, except that a uint8
observation holds the score in points (multiply by `observation_scale` for the float32 values). The encoder reads a game record (`record.py`);
record positions are imported with an `_AT` suffix where a cell block has the same name.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from euchre_env.cards import NUM_SEATS, NUM_SUITS, NUM_TRICKS, PASS_OFFSET, SUIT_OFFSET
from euchre_env.record import ACTIVE as ACTIVE_AT
from euchre_env.record import BIDS as BIDS_AT
from euchre_env.record import DEALER as DEALER_AT
from euchre_env.record import DISCARD as DISCARD_AT
from euchre_env.record import GAMES_WON as GAMES_WON_AT
from euchre_env.record import HAND as HAND_AT
from euchre_env.record import LONE_DEFENDER as LONE_DEFENDER_AT
from euchre_env.record import MAKER as MAKER_AT
from euchre_env.record import MAKER_ALONE as MAKER_ALONE_AT
from euchre_env.record import NUM_BIDS as NUM_BIDS_AT
from euchre_env.record import ORDERED_UP as ORDERED_UP_AT
from euchre_env.record import PHASE as PHASE_AT
from euchre_env.record import SCORE as SCORE_AT
from euchre_env.record import TRICK_INDEX
from euchre_env.record import TRICK_LEADER as TRICK_LEADER_AT
from euchre_env.record import TRICKS_WON as TRICKS_WON_AT
from euchre_env.record import TRUMP as TRUMP_AT
from euchre_env.record import UPCARD as UPCARD_AT
from euchre_env.record import card_player_at, card_trick_at
from euchre_env.state import MAX_BIDS, NUM_DECISION_PHASES
from euchre_env.tables import HAND_EPISODE, RUBBER_EPISODE, T_EPISODE, T_NUM_CARDS, T_TARGET

CARD_CELLS = 16
AXIS_SIZES = {
    "seat": NUM_SEATS,
    "trick": NUM_TRICKS,
    "suit": NUM_SUITS,
    "phase": NUM_DECISION_PHASES,
    "team": 2,
    "tricks": NUM_TRICKS + 1,
    "bid": MAX_BIDS,
    "bid_choice": 1 + NUM_SUITS,
}
"""The size of each axis a block is indexed by, besides `card` (the deck's size). Seats are relative to the
observer, teams are (own, other), `tricks` counts tricks won 0-5, and a `bid_choice` is a pass (cell
`PASS_OFFSET`) or a suit (cell `SUIT_OFFSET + suit`)."""
CARD_BLOCKS = (
    ("hand", ("card",)),
    ("upcard", ("card",)),
    ("own_discard", ("card",)),
    ("played_by", ("card", "seat")),
    ("played_in_trick", ("card", "trick")),
    ("current_trick", ("seat", "card")),
)
"""The blocks of per-card cells and their axes, in order; each card's cells sit together (`CARD_CELLS`)."""
TAIL_BLOCKS = (
    ("upcard_turned_down", ()),
    ("dealer", ("seat",)),
    ("trump", ("suit",)),
    ("maker", ("seat",)),
    ("alone", ("seat",)),
    ("sitting_out", ("seat",)),
    ("phase", ("phase",)),
    ("tricks_won", ("team", "tricks")),
    ("trick_leader", ("trick", "seat")),
    ("bids", ("bid", "bid_choice")),
    ("score", ("team",)),
    ("games_won", ("team",)),
)
"""The blocks after the card cells and their axes, in order."""
BLOCK_AXES: dict[str, tuple[str, ...]] = dict(CARD_BLOCKS + TAIL_BLOCKS)
"""Each block's axes, in the order `observation_layout` lists its cells (a block with no axis is one cell)."""


def _cells_per_card(axes: tuple[str, ...]) -> int:
    return int(np.prod([AXIS_SIZES[a] for a in axes if a != "card"], dtype=np.int64))


CARD_FIELDS = tuple((name, _cells_per_card(axes)) for name, axes in CARD_BLOCKS)
"""The observation's 16 cells per card, in order (seats relative to the observer)."""
TAIL_FIELDS = tuple((name, _cells_per_card(axes)) for name, axes in TAIL_BLOCKS)
"""The observation's cells after the card records, in order."""
assert sum(width for _, width in CARD_FIELDS) == CARD_CELLS


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


assert PASS_OFFSET == 0 and SUIT_OFFSET == 1, "encode writes a bid's choice (pass, suit) to cell action - C"


def observation_size(num_cards: int) -> int:
    """Cells in an observation for a deck of `num_cards`."""
    return CARD_CELLS * num_cards + TAIL_SIZE


def block_shapes(num_cards: int) -> dict[str, tuple[int, ...]]:
    """Each block's shape along its axes (`BLOCK_AXES`) for a deck of `num_cards`."""
    sizes = {**AXIS_SIZES, "card": num_cards}
    return {name: tuple(sizes[a] for a in axes) for name, axes in BLOCK_AXES.items()}


def observation_layout(num_cards: int) -> dict[str, np.ndarray]:
    """Each block's cells, in the order of its axes (`BLOCK_AXES`): `cells.reshape(block_shapes(C)[name])`."""
    cards = np.arange(num_cards)
    layout: dict[str, np.ndarray] = {}
    for name, width in CARD_FIELDS:
        cells = CARD_CELLS * cards[:, None] + _CARD[name] + np.arange(width)[None, :]  # (card, item)
        layout[name] = (cells if BLOCK_AXES[name][0] == "card" else cells.T).reshape(-1)
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
def encode(r, me, t, out, divide_score):
    """Write seat `me`'s observation of the game in record `r` into `out` (D,), float32 or uint8.

    `divide_score`: the score cells hold points / target (float32); else points (uint8).
    """
    c = t[T_NUM_CARDS]
    for cell in range(out.shape[0]):
        out[cell] = 0
    # The card cells in one pass over the cards, with no data-dependent branch: an unplayed card writes
    # its zeros to cells of its own (seat -1 and trick -1 still name cells of its blocks). The record's
    # blocks are read through slices, whose reads carry no negative-index wraparound (that would make
    # the compiled loop gather).
    held = r[HAND_AT + me * c : HAND_AT + (me + 1) * c]
    players = r[card_player_at(c) : card_player_at(c) + c]
    tricks = r[card_trick_at(c) : card_trick_at(c) + c]
    current = r[TRICK_INDEX]
    for card in range(c):
        base, seat, trick = card * CARD_CELLS, players[card], tricks[card]
        rel = (seat - me) & 3
        out[base + HAND] = held[card]
        out[base + PLAYED_BY + rel] = seat >= 0
        out[base + PLAYED_IN_TRICK + max(trick, 0)] = seat >= 0
        out[base + CURRENT_TRICK + rel] = trick == current
    # The writes below are branch-free too: where a feature is unset, its 0 goes to a cell of its own block.
    upcard = r[UPCARD_AT]
    out[(upcard if upcard >= 0 else 0) * CARD_CELLS + UPCARD] = upcard >= 0
    dealer, discard = r[DEALER_AT], r[DISCARD_AT]
    own_discard = (dealer == me) & (discard >= 0)
    out[(discard if own_discard else 0) * CARD_CELLS + OWN_DISCARD] = own_discard
    tail = out[CARD_CELLS * c :]  # the cells after the cards (a slice: its indices carry no wraparound)
    tail[UPCARD_TURNED_DOWN] = (r[NUM_BIDS_AT] >= NUM_SEATS) & (r[ORDERED_UP_AT] == 0)
    tail[DEALER + ((dealer - me) & 3)] = 1
    tail[TRUMP + (r[TRUMP_AT] & 3)] = r[TRUMP_AT] >= 0
    maker = r[MAKER_AT]
    tail[MAKER + ((maker - me) & 3)] = maker >= 0
    if maker >= 0 and r[MAKER_ALONE_AT]:  # two seats may be alone: these two stay branches
        tail[ALONE + ((maker - me) & 3)] = 1
    if r[LONE_DEFENDER_AT] >= 0:
        tail[ALONE + ((r[LONE_DEFENDER_AT] - me) & 3)] = 1
    for seat in range(NUM_SEATS):
        tail[SITTING_OUT + ((seat - me) & 3)] = not r[ACTIVE_AT + seat]
    phase = r[PHASE_AT]
    tail[PHASE + (phase if phase < NUM_DECISION_PHASES else 0)] = phase < NUM_DECISION_PHASES
    team = me & 1
    tail[TRICKS_WON + r[TRICKS_WON_AT + team]] = 1
    tail[TRICKS_WON + NUM_TRICKS + 1 + r[TRICKS_WON_AT + 1 - team]] = 1
    for trick in range(NUM_TRICKS):
        leader = r[TRICK_LEADER_AT + trick]
        tail[TRICK_LEADER + trick * NUM_SEATS + ((leader - me) & 3)] = leader >= 0
    for slot in range(MAX_BIDS):  # each bid made: a pass (action c) or a suit; an unmade bid (-1) writes a 0
        made = r[BIDS_AT + slot]
        tail[BIDS + slot * (1 + NUM_SUITS) + max(made - c, 0)] = made >= 0
    episode = t[T_EPISODE]
    if episode == HAND_EPISODE:
        return
    if divide_score:
        target = float(t[T_TARGET])
        tail[SCORE] = r[SCORE_AT + team] / target
        tail[SCORE + 1] = r[SCORE_AT + 1 - team] / target
    else:
        tail[SCORE] = r[SCORE_AT + team]
        tail[SCORE + 1] = r[SCORE_AT + 1 - team]
    if episode == RUBBER_EPISODE:
        tail[GAMES_WON] = r[GAMES_WON_AT + team]
        tail[GAMES_WON + 1] = r[GAMES_WON_AT + 1 - team]
