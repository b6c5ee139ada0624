"""A game record: one game's whole state as one int64 vector, the form the rule kernels work on.

Handing a kernel one small array is cheap (to call and to compile); handing it the 35 arrays of a
state is not. The scalar fields sit at fixed positions (`KEY` ... `GAMES_WON`), then the fields
sized by the deck: the hands (`HAND`, seat-major), the dealt hands, who played each card, in which
trick, and the legal mask (`dealt_at(c)` ...). `load` and `store` move one row of an `EuchreState`
(passed as its `GameArrays`) into a record and back.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from euchre_env.cards import NUM_SEATS, NUM_TRICKS
from euchre_env.state import MAX_BIDS

(KEY, DEAL_COUNT, PHASE, TO_PLAY, DEALER, UPCARD, NUM_BIDS, TRUMP, MAKER, ORDERED_UP, MAKER_ALONE,
 LONE_DEFENDER, DEFENDER_ASKS, PICKED_UP, DISCARD, TRICK_INDEX, CARDS_IN_TRICK, LED_SUIT, THROWN_IN,
 HAND_NUMBER) = range(20)
BIDS = 20
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
def dealt_at(c):
    """Offset of the dealt hands (seat-major, like HAND)."""
    return HAND + NUM_SEATS * c


@njit(cache=True)
def card_player_at(c):
    """Offset of the seat that played each card (-1 unplayed)."""
    return HAND + 2 * NUM_SEATS * c


@njit(cache=True)
def card_trick_at(c):
    """Offset of the trick in which each card was played (-1 unplayed)."""
    return HAND + (2 * NUM_SEATS + 1) * c


@njit(cache=True)
def legal_at(c):
    """Offset of the legal-action mask."""
    return HAND + (2 * NUM_SEATS + 2) * c


def record_size(num_cards: int, num_actions: int) -> int:
    """Entries in a record for this deck and action count."""
    return HAND + (2 * NUM_SEATS + 2) * num_cards + num_actions


@njit(cache=True)
def load(s, g, r, full):
    """Row g of the state arrays `s` into the record `r`; without `full`, not the dealt hands and the
    legal mask (no rule reads them: a deal writes one, every step rebuilds the other)."""
    c, a = s.hand.shape[2], s.legal.shape[1]
    r[KEY] = np.int64(s.key[g])
    r[DEAL_COUNT] = s.deal_count[g]
    r[PHASE] = s.phase[g]
    r[TO_PLAY] = s.to_play[g]
    r[DEALER] = s.dealer[g]
    r[UPCARD] = s.upcard[g]
    r[NUM_BIDS] = s.num_bids[g]
    r[TRUMP] = s.trump[g]
    r[MAKER] = s.maker[g]
    r[ORDERED_UP] = s.ordered_up[g]
    r[MAKER_ALONE] = s.maker_alone[g]
    r[LONE_DEFENDER] = s.lone_defender[g]
    r[DEFENDER_ASKS] = s.defender_asks[g]
    r[PICKED_UP] = s.picked_up[g]
    r[DISCARD] = s.discard[g]
    r[TRICK_INDEX] = s.trick_index[g]
    r[CARDS_IN_TRICK] = s.cards_in_trick[g]
    r[LED_SUIT] = s.led_suit[g]
    r[THROWN_IN] = s.thrown_in[g]
    r[HAND_NUMBER] = s.hand_number[g]
    for i in range(MAX_BIDS):
        r[BIDS + i] = s.bids[g, i]
    for seat in range(NUM_SEATS):
        r[ACTIVE + seat] = s.active[g, seat]
    for trick in range(NUM_TRICKS):
        r[TRICK_LEADER + trick] = s.trick_leader[g, trick]
        r[TRICK_WINNER + trick] = s.trick_winner[g, trick]
        for seat in range(NUM_SEATS):
            r[TRICK_CARDS + trick * NUM_SEATS + seat] = s.trick_cards[g, trick, seat]
    for side in range(2):
        r[TRICKS_WON + side] = s.tricks_won[g, side]
        r[HAND_POINTS + side] = s.hand_points[g, side]
        r[SCORE + side] = s.score[g, side]
        r[RUBBER_POINTS + side] = s.rubber_points[g, side]
        r[GAMES_WON + side] = s.games_won[g, side]
    dealt, player, trick, legal = dealt_at(c), card_player_at(c), card_trick_at(c), legal_at(c)
    hand = s.hand[g].reshape(NUM_SEATS * c)
    for i in range(NUM_SEATS * c):
        r[HAND + i] = hand[i]
    for card in range(c):
        r[player + card] = s.card_player[g, card]
        r[trick + card] = s.card_trick[g, card]
    if full:
        held = s.dealt[g].reshape(NUM_SEATS * c)
        for i in range(NUM_SEATS * c):
            r[dealt + i] = held[i]
        for action in range(a):
            r[legal + action] = s.legal[g, action]


@njit(cache=True)
def store(r, s, g, full):
    """The record `r` into row g of the state arrays `s`; without `full`, not the dealt hands (unchanged
    unless the game was dealt again: the caller knows from the deal count)."""
    c, a = s.hand.shape[2], s.legal.shape[1]
    s.key[g] = np.uint64(r[KEY])
    s.deal_count[g] = r[DEAL_COUNT]
    s.phase[g] = r[PHASE]
    s.to_play[g] = r[TO_PLAY]
    s.dealer[g] = r[DEALER]
    s.upcard[g] = r[UPCARD]
    s.num_bids[g] = r[NUM_BIDS]
    s.trump[g] = r[TRUMP]
    s.maker[g] = r[MAKER]
    s.ordered_up[g] = r[ORDERED_UP]
    s.maker_alone[g] = r[MAKER_ALONE]
    s.lone_defender[g] = r[LONE_DEFENDER]
    s.defender_asks[g] = r[DEFENDER_ASKS]
    s.picked_up[g] = r[PICKED_UP]
    s.discard[g] = r[DISCARD]
    s.trick_index[g] = r[TRICK_INDEX]
    s.cards_in_trick[g] = r[CARDS_IN_TRICK]
    s.led_suit[g] = r[LED_SUIT]
    s.thrown_in[g] = r[THROWN_IN]
    s.hand_number[g] = r[HAND_NUMBER]
    for i in range(MAX_BIDS):
        s.bids[g, i] = r[BIDS + i]
    for seat in range(NUM_SEATS):
        s.active[g, seat] = r[ACTIVE + seat]
    for trick in range(NUM_TRICKS):
        s.trick_leader[g, trick] = r[TRICK_LEADER + trick]
        s.trick_winner[g, trick] = r[TRICK_WINNER + trick]
        for seat in range(NUM_SEATS):
            s.trick_cards[g, trick, seat] = r[TRICK_CARDS + trick * NUM_SEATS + seat]
    for side in range(2):
        s.tricks_won[g, side] = r[TRICKS_WON + side]
        s.hand_points[g, side] = r[HAND_POINTS + side]
        s.score[g, side] = r[SCORE + side]
        s.rubber_points[g, side] = r[RUBBER_POINTS + side]
        s.games_won[g, side] = r[GAMES_WON + side]
    dealt, player, trick, legal = dealt_at(c), card_player_at(c), card_trick_at(c), legal_at(c)
    hand = s.hand[g].reshape(NUM_SEATS * c)
    for i in range(NUM_SEATS * c):
        hand[i] = r[HAND + i]
    if full:
        held = s.dealt[g].reshape(NUM_SEATS * c)
        for i in range(NUM_SEATS * c):
            held[i] = r[dealt + i]
    for card in range(c):
        s.card_player[g, card] = r[player + card]
        s.card_trick[g, card] = r[trick + card]
    for action in range(a):
        s.legal[g, action] = r[legal + action]
