"""A game record: one game's whole state as one int32 vector, the form the rule kernels work on.

Handing a kernel one small array is cheap (to call and to compile); handing it the 36 arrays of a
state is not. The scalar fields sit at fixed positions (`KEY` ... `GAMES_WON`), then the fields
sized by the deck: the hands (`HAND`, seat-major), the dealt hands, who played each card and in which
trick (`dealt_at(c)` ...). The legal mask is a bit set in two cells (`LEGAL_LOW`, `LEGAL_HIGH`: bit a
is action a), next to the phase, so that checking an action and handing out the mask read one cache
line. `load_rows` and `store_rows` move rows of an `EuchreState` into records (rows of a small matrix)
and back, many rows per call: a call that takes the state's 36 arrays costs about 0.3 us, more than a
game's step.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from euchre_env.cards import NUM_SEATS, NUM_TRICKS
from euchre_env.rows import row_view
from euchre_env.state import FIELDS, MAX_BIDS

RECORD_DTYPE = np.int32
"""The cells' type: every field fits in 32 bits but the 64-bit deal key, which takes two cells."""
(KEY, DEAL_COUNT, PHASE, TO_PLAY, DEALER, UPCARD, NUM_BIDS, TRUMP, MAKER, ORDERED_UP, MAKER_ALONE,
 LONE_DEFENDER, DEFENDER_ASKS, PICKED_UP, DISCARD, TRICK_INDEX, CARDS_IN_TRICK, LED_SUIT, THROWN_IN,
 HAND_NUMBER, KEY_HIGH, LEGAL_LOW, LEGAL_HIGH, LAST_TRICK_WINNER) = range(24)
BIDS = 24
LOW_32 = np.uint64(0xFFFFFFFF)
ACTIVE = BIDS + MAX_BIDS
TRICK_CARDS = ACTIVE + NUM_SEATS  # trick * 4 + seat
TRICK_LEADER = TRICK_CARDS + NUM_TRICKS * NUM_SEATS
TRICK_WINNER = TRICK_LEADER + NUM_TRICKS
TRICKS_WON = TRICK_WINNER + NUM_TRICKS
HAND_POINTS = TRICKS_WON + 2
SCORE = HAND_POINTS + 2
RUBBER_POINTS = SCORE + 2
GAMES_WON = RUBBER_POINTS + 2
HAND = GAMES_WON + 2
"""Seat s holds card k when r[HAND + s * C + k] is 1."""


@njit(cache=True)
def set_key(r, key):
    """Store a 64-bit deal key in the record's two key cells (low and high 32 bits)."""
    k = np.uint64(key)
    r[KEY] = np.int64(k & LOW_32)
    r[KEY_HIGH] = np.int64(k >> np.uint64(32))


@njit(cache=True)
def get_key(r):
    """The record's 64-bit deal key."""
    return (np.uint64(np.int64(r[KEY_HIGH])) << np.uint64(32)) | (np.uint64(np.int64(r[KEY])) & LOW_32)


@njit(cache=True, inline="always")
def set_legal(r, bits):
    """Store the legal actions (a bit set below 2**63) in the record's two legal cells."""
    r[LEGAL_LOW] = np.int32(np.uint32(bits & 0xFFFFFFFF))
    r[LEGAL_HIGH] = bits >> 32


@njit(cache=True, inline="always")
def get_legal(r):
    """The record's legal actions as a bit set (bit a: action a is legal)."""
    return (np.int64(r[LEGAL_HIGH]) << 32) | (np.int64(r[LEGAL_LOW]) & 0xFFFFFFFF)


def legal_mask(record: np.ndarray, num_actions: int, dtype: type = np.bool_) -> np.ndarray:
    """(A,) the legal mask of the game in `record`, as a new array of `dtype`."""
    out = np.empty(num_actions, dtype)
    unpack_legal(record, out)
    return out


@njit(cache=True, inline="always")
def unpack_legal(r, out):
    """out[a] = 1 where action a is in the record's legal bit set, else 0 (out: (A,), any numeric dtype)."""
    bits = get_legal(r)
    for action in range(out.shape[0]):
        out[action] = (bits >> action) & 1


@njit(cache=True, inline="always")
def bit_set(cells, start, count):
    """cells[start : start + count] (each 0 or 1) as a bit set: bit i is cells[start + i]."""
    # Read through a slice: indexed as cells[start + i], each read would carry numba's negative-index
    # wraparound, and the vectorized loop would become a gather (slow); a slice's reads are plain loads.
    block = cells[start : start + count]
    bits = np.int64(0)
    for i in range(count):
        bits |= np.int64(block[i]) << i
    return bits


@njit(cache=True, inline="always")
def dealt_at(c):
    """Offset of the dealt hands (seat-major, like HAND)."""
    return HAND + NUM_SEATS * c


@njit(cache=True, inline="always")
def card_player_at(c):
    """Offset of the seat that played each card (-1 unplayed)."""
    return HAND + 2 * NUM_SEATS * c


@njit(cache=True, inline="always")
def card_trick_at(c):
    """Offset of the trick in which each card was played (-1 unplayed)."""
    return HAND + (2 * NUM_SEATS + 1) * c


@njit(cache=True, inline="always")
def record_size(c):
    """Entries in a record for a deck of `c` cards."""
    return HAND + (2 * NUM_SEATS + 2) * c


def field_cells(num_cards: int) -> dict[str, np.ndarray]:
    """Where each `EuchreState` field sits in a record: its cells, in the order of the field's values
    (C order), as `load_rows` reads and `store_rows` writes them. The exceptions: `key` (64 bits, low
    cell then high) and `legal` (a bit set in two cells, low then high: see `get_legal`)."""
    c = num_cards
    scalars = {
        "deal_count": DEAL_COUNT, "phase": PHASE, "to_play": TO_PLAY, "dealer": DEALER, "upcard": UPCARD,
        "num_bids": NUM_BIDS, "trump": TRUMP, "maker": MAKER, "ordered_up": ORDERED_UP, "maker_alone": MAKER_ALONE,
        "lone_defender": LONE_DEFENDER, "defender_asks": DEFENDER_ASKS, "picked_up": PICKED_UP, "discard": DISCARD,
        "trick_index": TRICK_INDEX, "cards_in_trick": CARDS_IN_TRICK, "led_suit": LED_SUIT, "thrown_in": THROWN_IN,
        "hand_number": HAND_NUMBER, "last_trick_winner": LAST_TRICK_WINNER,
    }
    blocks = {  # the offset helpers' Python functions: calling the jitted ones would compile them
        "bids": (BIDS, MAX_BIDS), "active": (ACTIVE, NUM_SEATS), "trick_cards": (TRICK_CARDS, NUM_TRICKS * NUM_SEATS),
        "trick_leader": (TRICK_LEADER, NUM_TRICKS), "trick_winner": (TRICK_WINNER, NUM_TRICKS),
        "tricks_won": (TRICKS_WON, 2), "hand_points": (HAND_POINTS, 2), "score": (SCORE, 2),
        "rubber_points": (RUBBER_POINTS, 2), "games_won": (GAMES_WON, 2), "hand": (HAND, NUM_SEATS * c),
        "dealt": (dealt_at.py_func(c), NUM_SEATS * c), "card_player": (card_player_at.py_func(c), c),
        "card_trick": (card_trick_at.py_func(c), c),
    }
    cells = {"key": np.array([KEY, KEY_HIGH]), "legal": np.array([LEGAL_LOW, LEGAL_HIGH])}  # low, high 32 bits
    cells.update({name: np.array([at]) for name, at in scalars.items()})
    cells.update({name: np.arange(start, start + size) for name, (start, size) in blocks.items()})
    return cells


def blank_record(num_cards: int) -> np.ndarray:
    """The record of a game before its first deal: every field at its `FIELDS` value (no kernel call,
    so that making one compiles nothing)."""
    record = np.zeros(record_size.py_func(num_cards), RECORD_DTYPE)
    cells = field_cells(num_cards)
    for name, _, _, value in FIELDS:
        assert name != "legal" or not value, "a blank record's legal bit set is empty"
        record[cells[name]] = int(value)
    return record


@njit(cache=True)
def load_rows(
    key, deal_count, phase, to_play, dealer, hand, dealt, upcard, bids, num_bids, trump, maker,
    ordered_up, maker_alone, lone_defender, defender_asks, active, picked_up, discard, trick_cards,
    trick_leader, trick_winner, card_player, card_trick, trick_index, cards_in_trick, led_suit,
    tricks_won, thrown_in, hand_points, score, rubber_points, games_won, hand_number, last_trick_winner, legal,
    rows, records, full,
):
    """Rows `rows` of a state's arrays into `records` (one record per row); without `full`, not the
    dealt hands and the legal mask (no rule reads them: a deal writes one, every step rebuilds the other)."""
    c, a = hand.shape[2], legal.shape[1]
    for i in range(rows.shape[0]):
        g, r = rows[i], row_view(records, i)
        set_key(r, key[g])
        r[DEAL_COUNT] = deal_count[g]
        r[PHASE] = phase[g]
        r[TO_PLAY] = to_play[g]
        r[DEALER] = dealer[g]
        r[UPCARD] = upcard[g]
        r[NUM_BIDS] = num_bids[g]
        r[TRUMP] = trump[g]
        r[MAKER] = maker[g]
        r[ORDERED_UP] = ordered_up[g]
        r[MAKER_ALONE] = maker_alone[g]
        r[LONE_DEFENDER] = lone_defender[g]
        r[DEFENDER_ASKS] = defender_asks[g]
        r[PICKED_UP] = picked_up[g]
        r[DISCARD] = discard[g]
        r[TRICK_INDEX] = trick_index[g]
        r[CARDS_IN_TRICK] = cards_in_trick[g]
        r[LED_SUIT] = led_suit[g]
        r[THROWN_IN] = thrown_in[g]
        r[HAND_NUMBER] = hand_number[g]
        r[LAST_TRICK_WINNER] = last_trick_winner[g]
        for k in range(MAX_BIDS):
            r[BIDS + k] = bids[g, k]
        for seat in range(NUM_SEATS):
            r[ACTIVE + seat] = active[g, seat]
        for trick in range(NUM_TRICKS):
            r[TRICK_LEADER + trick] = trick_leader[g, trick]
            r[TRICK_WINNER + trick] = trick_winner[g, trick]
            for seat in range(NUM_SEATS):
                r[TRICK_CARDS + trick * NUM_SEATS + seat] = trick_cards[g, trick, seat]
        for side in range(2):
            r[TRICKS_WON + side] = tricks_won[g, side]
            r[HAND_POINTS + side] = hand_points[g, side]
            r[SCORE + side] = score[g, side]
            r[RUBBER_POINTS + side] = rubber_points[g, side]
            r[GAMES_WON + side] = games_won[g, side]
        at_dealt, at_player, at_trick = dealt_at(c), card_player_at(c), card_trick_at(c)
        for seat in range(NUM_SEATS):
            for card in range(c):
                r[HAND + seat * c + card] = hand[g, seat, card]
        for card in range(c):
            r[at_player + card] = card_player[g, card]
            r[at_trick + card] = card_trick[g, card]
        if full:
            for seat in range(NUM_SEATS):
                for card in range(c):
                    r[at_dealt + seat * c + card] = dealt[g, seat, card]
            set_legal(r, bit_set(legal[g], 0, a))


@njit(cache=True)
def store_rows(
    records,
    key, deal_count, phase, to_play, dealer, hand, dealt, upcard, bids, num_bids, trump, maker,
    ordered_up, maker_alone, lone_defender, defender_asks, active, picked_up, discard, trick_cards,
    trick_leader, trick_winner, card_player, card_trick, trick_index, cards_in_trick, led_suit,
    tricks_won, thrown_in, hand_points, score, rubber_points, games_won, hand_number, last_trick_winner, legal,
    rows, full,
):
    """`records` into rows `rows` of a state's arrays; without `full`, the dealt hands only where the
    deal count changed (the game was dealt again)."""
    c = hand.shape[2]
    for i in range(rows.shape[0]):
        g, r = rows[i], row_view(records, i)
        key[g] = get_key(r)
        phase[g] = r[PHASE]
        to_play[g] = r[TO_PLAY]
        dealer[g] = r[DEALER]
        upcard[g] = r[UPCARD]
        num_bids[g] = r[NUM_BIDS]
        trump[g] = r[TRUMP]
        maker[g] = r[MAKER]
        ordered_up[g] = r[ORDERED_UP]
        maker_alone[g] = r[MAKER_ALONE]
        lone_defender[g] = r[LONE_DEFENDER]
        defender_asks[g] = r[DEFENDER_ASKS]
        picked_up[g] = r[PICKED_UP]
        discard[g] = r[DISCARD]
        trick_index[g] = r[TRICK_INDEX]
        cards_in_trick[g] = r[CARDS_IN_TRICK]
        led_suit[g] = r[LED_SUIT]
        thrown_in[g] = r[THROWN_IN]
        hand_number[g] = r[HAND_NUMBER]
        last_trick_winner[g] = r[LAST_TRICK_WINNER]
        for k in range(MAX_BIDS):
            bids[g, k] = r[BIDS + k]
        for seat in range(NUM_SEATS):
            active[g, seat] = r[ACTIVE + seat]
        for trick in range(NUM_TRICKS):
            trick_leader[g, trick] = r[TRICK_LEADER + trick]
            trick_winner[g, trick] = r[TRICK_WINNER + trick]
            for seat in range(NUM_SEATS):
                trick_cards[g, trick, seat] = r[TRICK_CARDS + trick * NUM_SEATS + seat]
        for side in range(2):
            tricks_won[g, side] = r[TRICKS_WON + side]
            hand_points[g, side] = r[HAND_POINTS + side]
            score[g, side] = r[SCORE + side]
            rubber_points[g, side] = r[RUBBER_POINTS + side]
            games_won[g, side] = r[GAMES_WON + side]
        at_dealt, at_player, at_trick = dealt_at(c), card_player_at(c), card_trick_at(c)
        for seat in range(NUM_SEATS):
            for card in range(c):
                hand[g, seat, card] = r[HAND + seat * c + card]
        if full or r[DEAL_COUNT] != deal_count[g]:
            for seat in range(NUM_SEATS):
                for card in range(c):
                    dealt[g, seat, card] = r[at_dealt + seat * c + card]
        for card in range(c):
            card_player[g, card] = r[at_player + card]
            card_trick[g, card] = r[at_trick + card]
        unpack_legal(r, legal[g])
        deal_count[g] = r[DEAL_COUNT]  # last: the dealt hands are written when it changes
