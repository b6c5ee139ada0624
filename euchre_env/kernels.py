"""The rules of Euchre, written once, as numba kernels over one game's record.

Every transition (the cut for the first dealer, the deal, bids, naming trump, alone calls, the
discard, a card played, the end of a trick, hand and game, the rewards) and the legal mask is one
function of `(r, t)`: `r` the game's record (`record.py`: its whole state as one int32 vector),
`t` the engine's table (`tables.kernel_table`). The batched entry points (`*_rows`) take a state's
arrays as a tuple `s` (`EuchreState.arrays()`), load each game's row into a record, run these functions and store it back; the one-game
entry points (`one_*`) run the very same functions on a record the AEC env keeps (`OneGame`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from euchre_env.cards import ALONE_OFFSET, MAX_CARDS, NUM_SEATS, NUM_SUITS, NUM_TRICKS, PARTNER_OFFSET, SUIT_OFFSET
from euchre_env.deal_keys import deck_head, deck_order_into, deck_top
from euchre_env.observation import encode
from euchre_env.rows import row_view, stack_array, unowned
from euchre_env.record import (
    ACTIVE, BIDS, CARDS_IN_TRICK, DEAL_COUNT, DEALER, DEFENDER_ASKS, DISCARD, GAMES_WON, HAND, HAND_NUMBER,
    HAND_POINTS, LAST_TRICK_WINNER, LED_SUIT, LONE_DEFENDER, MAKER, MAKER_ALONE, NUM_BIDS, ORDERED_UP, PHASE, PICKED_UP,
    RUBBER_POINTS, SCORE, THROWN_IN, TO_PLAY, TRICK_CARDS, TRICK_INDEX, TRICK_LEADER, TRICK_WINNER, TRICKS_WON,
    TRUMP, UPCARD, RECORD_DTYPE, bit_set, card_player_at, card_trick_at, dealt_at, get_key, get_legal, load_rows,
    record_size, set_key, set_legal, unpack_legal,
    store_rows,
)
from euchre_env.state import HAND_POINTS_FIELD, LEGAL_FIELD, MAX_BIDS, PHASE_FIELD
from euchre_env.tables import (
    DEAL_SIZE, GAME_EPISODE, HAND_EPISODE, RUBBER_EPISODE, T_ALONE_WHEN_NAMING, T_EFFECTIVE_SUIT, T_EPISODE,
    T_FIRST_DEALER_CUT, T_LEAD_LEFT_OF_LONE, T_LONE_DEFENDER, T_LONE_DEFENDER_POINTS, T_MAY_BURY_UPCARD,
    T_NUM_ACTIONS, T_NUM_CARDS, T_PACKET_SEAT, T_RANK, T_REWARD_WIN, T_RUBBER_BONUS, T_RUBBER_GAMES, T_STICK_THE_DEALER,
    T_SUIT_CARDS, T_TARGET, T_THROW_IN_ENDS_HAND, T_THROW_IN_SAME_DEALER, T_TRICK_STRENGTH, T_UPCARD_SUIT,
)

BID_ROUND_1, BID_ROUND_2, MAKER_ALONE_PHASE, DEFENDER_ALONE_PHASE, DISCARD_PHASE, PLAY, HAND_OVER, GAME_OVER = range(8)
MAX_CUTS = 64
"""Bound on re-cuts for the first dealer (a tie needing more is astronomically unlikely)."""
ILLEGAL = -1
"""What `one_step` returns for an illegal action (the game is left unchanged)."""


# ------------------------------------------------------------------ dealing


# `fill` and `copy` loop over slices: numba's slice assignment costs seconds of compile time, and a loop
# indexing r[start + i] carries a negative-index wraparound per cell that the compiled loop turns into a
# scatter (slow); a slice's cells are plain stores.


@njit(cache=True, inline="always")
def fill(r, start, stop, value):
    """r[start:stop] = value."""
    block = r[start:stop]
    for i in range(block.shape[0]):
        block[i] = value


@njit(cache=True, inline="always")
def copy(r, source, target, size):
    """r[target:target + size] = r[source:source + size], for ranges that do not overlap."""
    source_block, target_block = r[source : source + size], r[target : target + size]
    for i in range(size):
        target_block[i] = source_block[i]


@njit(cache=True, inline="always")
def cut_cards(r, t):
    """The top four cards of the game's next deck order (seat s cuts card s); advances the deal count."""
    head = deck_head(get_key(r), np.int64(r[DEAL_COUNT]), t[T_NUM_CARDS])
    r[DEAL_COUNT] += 1
    return head


@njit(cache=True)
def first_dealer(r, t):
    """The first dealer: by cut (the high card deals, tied seats cut again) or uniformly at random
    (the top card of the deck order, mod 4)."""
    if not t[T_FIRST_DEALER_CUT]:
        top = deck_top(get_key(r), np.int64(r[DEAL_COUNT]), t[T_NUM_CARDS])
        r[DEAL_COUNT] += 1
        return top % NUM_SEATS
    cut = cut_cards(r, t)
    rank = t[T_RANK]
    cutting = (1 << NUM_SEATS) - 1  # bit s: seat s is still cutting
    for _ in range(MAX_CUTS):
        best = -1
        for seat in range(NUM_SEATS):
            if cutting >> seat & 1:
                best = max(best, t[rank + cut[seat]])
        tied = 0
        for seat in range(NUM_SEATS):
            if cutting >> seat & 1 and t[rank + cut[seat]] == best:
                tied |= 1 << seat
        cutting = tied
        if tied & (tied - 1) == 0:  # one seat
            break
        cut = cut_cards(r, t)
    for seat in range(NUM_SEATS):
        if cutting >> seat & 1:
            return seat
    return 0


@njit(cache=True)
def start_hand(r, t):
    """Reset the per-hand fields of a freshly dealt game and open round one of the bidding."""
    c = t[T_NUM_CARDS]
    r[PHASE] = BID_ROUND_1
    r[TO_PLAY] = (r[DEALER] + 1) % NUM_SEATS
    fill(r, BIDS, BIDS + MAX_BIDS, -1)
    r[NUM_BIDS] = 0
    r[TRUMP] = -1
    r[MAKER] = -1
    r[ORDERED_UP] = 0
    r[MAKER_ALONE] = 0
    r[LONE_DEFENDER] = -1
    r[DEFENDER_ASKS] = 0
    fill(r, ACTIVE, ACTIVE + NUM_SEATS, 1)
    r[PICKED_UP] = 0
    r[DISCARD] = -1
    fill(r, TRICK_CARDS, TRICK_WINNER + NUM_TRICKS, -1)  # trick cards, leaders, winners
    fill(r, card_player_at(c), card_trick_at(c) + c, -1)  # who played each card, in which trick
    r[TRICK_INDEX] = 0
    r[CARDS_IN_TRICK] = 0
    r[LED_SUIT] = -1
    fill(r, TRICKS_WON, TRICKS_WON + 2, 0)


@njit(cache=True)
def deal(r, t):
    """Shuffle and deal five cards to each seat in packets from the dealer's left; turn the upcard."""
    c = t[T_NUM_CARDS]
    perm, hashes = stack_array(MAX_CARDS, np.int64), stack_array(MAX_CARDS, np.uint64)
    deck_order_into(get_key(r), np.int64(r[DEAL_COUNT]), c, hashes, perm)  # the deck order of the next deal
    r[DEAL_COUNT] += 1
    seats = t[T_PACKET_SEAT] + r[DEALER] * DEAL_SIZE
    fill(r, HAND, HAND + NUM_SEATS * c, 0)
    for pos in range(DEAL_SIZE):
        r[HAND + t[seats + pos] * c + perm[pos]] = 1
    copy(r, HAND, dealt_at(c), NUM_SEATS * c)
    r[UPCARD] = perm[DEAL_SIZE]
    start_hand(r, t)


@njit(cache=True)
def restart(r, t):
    """A fresh episode (cut, deal, first bid), continuing the game's deal stream."""
    fill(r, SCORE, SCORE + 2, 0)
    fill(r, RUBBER_POINTS, RUBBER_POINTS + 2, 0)
    fill(r, GAMES_WON, GAMES_WON + 2, 0)
    r[HAND_NUMBER] = 0
    fill(r, HAND_POINTS, HAND_POINTS + 2, 0)
    r[THROWN_IN] = 0
    r[LAST_TRICK_WINNER] = -1
    r[DEALER] = first_dealer(r, t)
    deal(r, t)
    update_legal(r, t)


# ------------------------------------------------------------------ legal actions


@njit(cache=True, inline="always")
def legal_actions(r, t):
    """The legal actions of the seat to act, as a bit set (bit a: action a; 0 once the hand is over)."""
    c = t[T_NUM_CARDS]
    phase = r[PHASE]
    one = np.int64(1)
    if phase == PLAY:
        held = bit_set(r, HAND + r[TO_PLAY] * c, c)  # the cards the seat holds (bit k: card k)
        led = r[LED_SUIT]
        if led >= 0:  # a card of the suit led must be played if held
            follows = held & t[t[T_SUIT_CARDS] + r[TRUMP] * NUM_SUITS + led]
            if follows != 0:
                return follows
        return held
    if phase == BID_ROUND_1 or phase == BID_ROUND_2:
        suit0 = c + SUIT_OFFSET
        upcard_suit = one << (suit0 + t[t[T_UPCARD_SUIT] + r[UPCARD]])
        if phase == BID_ROUND_1:
            return (one << c) | upcard_suit
        may_pass = not (r[TO_PLAY] == r[DEALER] and t[T_STICK_THE_DEALER])
        return ((np.int64(2**NUM_SUITS - 1) << suit0) & ~upcard_suit) | (np.int64(may_pass) << c)
    if phase == MAKER_ALONE_PHASE or phase == DEFENDER_ALONE_PHASE:
        return (one << (c + ALONE_OFFSET)) | (one << (c + PARTNER_OFFSET))
    if phase == DISCARD_PHASE:
        return buriable(t, bit_set(r, HAND + r[DEALER] * c, c), r[UPCARD])
    return np.int64(0)


@njit(cache=True, inline="always")
def buriable(t, held, upcard):
    """The cards of the dealer's bit set `held` (after the pickup) that it may bury: all, or all but the upcard."""
    return held if t[T_MAY_BURY_UPCARD] else held & ~(np.int64(1) << upcard)


@njit(cache=True, inline="always")
def update_legal(r, t):
    """Rebuild the legal actions of the seat to act (`legal_actions`, the record's legal bit set)."""
    set_legal(r, legal_actions(r, t))


# ------------------------------------------------------------------ bidding, alone calls, discard


@njit(cache=True)
def bid(r, t, action):
    """A bid in round one or two; True if a thrown-in hand ended the episode (it is then scored)."""
    c = t[T_NUM_CARDS]
    r[BIDS + r[NUM_BIDS]] = action
    r[NUM_BIDS] += 1
    round_one = r[PHASE] == BID_ROUND_1
    if action != c:
        if round_one:
            r[ORDERED_UP] = 1
            name_trump(r, t, t[t[T_UPCARD_SUIT] + r[UPCARD]])
        else:
            name_trump(r, t, action - c - SUIT_OFFSET)
        return False
    r[TO_PLAY] = (r[TO_PLAY] + 1) % NUM_SEATS
    if round_one:
        if r[NUM_BIDS] == NUM_SEATS:
            r[PHASE] = BID_ROUND_2
        return False
    if r[NUM_BIDS] < MAX_BIDS:
        return False
    r[THROWN_IN] = 1
    if t[T_EPISODE] == HAND_EPISODE and t[T_THROW_IN_ENDS_HAND]:
        r[PHASE] = HAND_OVER
        r[TO_PLAY] = -1
        r[HAND_NUMBER] += 1
        return True
    if not t[T_THROW_IN_SAME_DEALER]:
        r[DEALER] = (r[DEALER] + 1) % NUM_SEATS
    deal(r, t)
    return False


@njit(cache=True)
def name_trump(r, t, suit):
    """The seat to act names `suit` trump; next the maker decides on going alone, or the dealer picks up."""
    r[TRUMP] = suit
    r[MAKER] = r[TO_PLAY]
    r[THROWN_IN] = 0
    if not t[T_ALONE_WHEN_NAMING] and r[ORDERED_UP]:
        pick_up(r, t)
    else:
        r[PHASE] = MAKER_ALONE_PHASE  # to_play stays the maker


@njit(cache=True)
def pick_up(r, t):
    """The dealer takes the upcard into hand and must bury one card."""
    r[HAND + r[DEALER] * t[T_NUM_CARDS] + r[UPCARD]] = 1
    r[PICKED_UP] = 1
    r[PHASE] = DISCARD_PHASE
    r[TO_PLAY] = r[DEALER]


@njit(cache=True)
def maker_alone(r, t, action):
    """The maker goes alone (the partner sits out) or plays with the partner."""
    if action == t[T_NUM_CARDS] + ALONE_OFFSET:
        r[MAKER_ALONE] = 1
        r[ACTIVE + (r[MAKER] + 2) % NUM_SEATS] = 0
    if t[T_LONE_DEFENDER]:
        r[PHASE] = DEFENDER_ALONE_PHASE
        first = (r[DEALER] + 1) % NUM_SEATS
        if first % 2 == r[MAKER] % 2:
            first = (first + 1) % NUM_SEATS
        r[TO_PLAY] = first
    else:
        after_alone_calls(r, t)


@njit(cache=True)
def defender_alone(r, t, action):
    """A defender goes alone (its partner sits out) or declines; the second defender is asked next."""
    seat = r[TO_PLAY]
    r[DEFENDER_ASKS] += 1
    if action == t[T_NUM_CARDS] + ALONE_OFFSET:
        r[LONE_DEFENDER] = seat
        r[ACTIVE + (seat + 2) % NUM_SEATS] = 0
        after_alone_calls(r, t)
    elif r[DEFENDER_ASKS] < 2:
        r[TO_PLAY] = (seat + 2) % NUM_SEATS
    else:
        after_alone_calls(r, t)


@njit(cache=True)
def after_alone_calls(r, t):
    """Alone calls are made: the dealer picks up if still due (and plays), else play starts."""
    if t[T_ALONE_WHEN_NAMING] and r[ORDERED_UP] and r[ACTIVE + r[DEALER]]:
        pick_up(r, t)
    else:
        start_play(r, t)


@njit(cache=True)
def discard(r, t, card):
    """The dealer buries `card`; then play starts, or (alone calls after the discard) the maker decides."""
    r[HAND + r[DEALER] * t[T_NUM_CARDS] + card] = 0
    r[DISCARD] = card
    if t[T_ALONE_WHEN_NAMING]:
        start_play(r, t)
    else:
        r[PHASE] = MAKER_ALONE_PHASE
        r[TO_PLAY] = r[MAKER]


@njit(cache=True, inline="always")
def next_active(r, seat):
    """The first seat after `seat`, clockwise, that plays this hand."""
    out = (seat + 1) % NUM_SEATS
    while not r[ACTIVE + out]:
        out = (out + 1) % NUM_SEATS
    return out


@njit(cache=True)
def start_play(r, t):
    """The first trick: led from the dealer's left (the next seat that plays), or by the lone-lead rule."""
    leader = next_active(r, r[DEALER])
    if t[T_LEAD_LEFT_OF_LONE]:
        lone = r[LONE_DEFENDER]
        if r[MAKER_ALONE]:
            leader = (r[MAKER] + 1) % NUM_SEATS
        if lone >= 0:
            leader = lone if r[MAKER_ALONE] else (lone + 1) % NUM_SEATS
    r[PHASE] = PLAY
    r[TO_PLAY] = leader
    r[TRICK_LEADER] = leader


# ------------------------------------------------------------------ play, tricks, hands, rewards


@njit(cache=True, inline="always")
def led_suit(t, trump, card):
    """The suit `card` leads under `trump`: its effective suit (the left bower and the joker lead trump)."""
    return t[t[T_EFFECTIVE_SUIT] + trump * t[T_NUM_CARDS] + card]


@njit(cache=True)
def trick_winner(t, trump, led, cards):
    """The seat whose card wins a trick: `cards[seat]` is each seat's card (-1 for a seat sitting out)."""
    strength = t[T_TRICK_STRENGTH] + (trump * NUM_SUITS + led) * t[T_NUM_CARDS]
    winner, best = 0, -2
    for seat in range(NUM_SEATS):
        value = t[strength + cards[seat]] if cards[seat] >= 0 else -1
        if value > best:
            winner, best = seat, value
    return winner


@njit(cache=True)
def play_card(r, t, card):
    """The seat to act plays `card`; completes the trick and the hand. True if the hand was scored."""
    c = t[T_NUM_CARDS]
    seat, trick, trump = r[TO_PLAY], r[TRICK_INDEX], r[TRUMP]
    r[HAND + seat * c + card] = 0
    r[TRICK_CARDS + trick * NUM_SEATS + seat] = card
    r[card_player_at(c) + card] = seat
    r[card_trick_at(c) + card] = trick
    if r[CARDS_IN_TRICK] == 0:
        r[LED_SUIT] = led_suit(t, trump, card)
    r[CARDS_IN_TRICK] += 1
    playing = r[ACTIVE] + r[ACTIVE + 1] + r[ACTIVE + 2] + r[ACTIVE + 3]
    if r[CARDS_IN_TRICK] < playing:
        r[TO_PLAY] = next_active(r, seat)
        return False
    winner = trick_winner(t, trump, r[LED_SUIT], r[TRICK_CARDS + trick * NUM_SEATS : TRICK_CARDS + (trick + 1) * NUM_SEATS])
    r[TRICK_WINNER + trick] = winner
    r[LAST_TRICK_WINNER] = winner
    r[TRICKS_WON + winner % 2] += 1
    r[TRICK_INDEX] = trick + 1
    r[CARDS_IN_TRICK] = 0
    r[LED_SUIT] = -1
    r[TO_PLAY] = winner
    if trick + 1 < NUM_TRICKS:
        r[TRICK_LEADER + trick + 1] = winner
        return False
    end_hand(r, t)
    return True


@njit(cache=True)
def hand_points(t, alone, lone_defender, maker_tricks):
    """(makers' points, defenders' points) of a finished hand; only one side scores."""
    if maker_tricks >= 3:
        return (4 if alone else 2) if maker_tricks == NUM_TRICKS else 1, 0
    if lone_defender >= 0:
        return 0, 4 if maker_tricks == 0 else t[T_LONE_DEFENDER_POINTS]
    return 0, 2


@njit(cache=True)
def end_hand(r, t):
    """Score the hand; end the episode, the game or the rubber, or deal the next hand."""
    team = r[MAKER] % 2
    makers, defenders = hand_points(t, r[MAKER_ALONE], r[LONE_DEFENDER], r[TRICKS_WON + team])
    r[HAND_POINTS + team] = makers
    r[HAND_POINTS + 1 - team] = defenders
    for side in range(2):
        r[SCORE + side] += r[HAND_POINTS + side]
        r[RUBBER_POINTS + side] += r[HAND_POINTS + side]
    r[HAND_NUMBER] += 1
    episode = t[T_EPISODE]
    if episode == HAND_EPISODE:
        r[PHASE] = HAND_OVER
        r[TO_PLAY] = -1
        return
    target = t[T_TARGET]
    if r[SCORE] >= target or r[SCORE + 1] >= target:  # at most one side can cross
        over = True
        if episode == RUBBER_EPISODE:
            for side in range(2):
                r[GAMES_WON + side] += r[SCORE + side] >= target
            over = max(r[GAMES_WON], r[GAMES_WON + 1]) >= t[T_RUBBER_GAMES]
            if not over:
                fill(r, SCORE, SCORE + 2, 0)
        if over:
            r[PHASE] = GAME_OVER
            r[TO_PLAY] = -1
            return
    r[DEALER] = (r[DEALER] + 1) % NUM_SEATS
    deal(r, t)


@njit(cache=True)
def write_rewards(r, t, out):
    """The rewards of a step that scored a hand (or ended the episode) into out (4,): the hand's points
    margin per seat, or with win rewards +-1 (0 for a draw) when the episode ends."""
    if not t[T_REWARD_WIN]:
        margin = r[HAND_POINTS] - r[HAND_POINTS + 1]
    else:
        episode = t[T_EPISODE]
        if episode == HAND_EPISODE:
            over = r[PHASE] == HAND_OVER
            lead = r[HAND_POINTS] - r[HAND_POINTS + 1]
        elif episode == GAME_EPISODE:
            over = r[PHASE] == GAME_OVER
            lead = r[SCORE] - r[SCORE + 1]
        else:
            over = r[PHASE] == GAME_OVER
            lead = r[GAMES_WON] - r[GAMES_WON + 1]
        margin = ((lead > 0) - (lead < 0)) if over else 0
    for seat in range(NUM_SEATS):
        out[seat] = margin if seat % 2 == 0 else -margin


@njit(cache=True, inline="always")
def is_legal(r, t, action):
    """The action is legal for the seat to act (False for any action once the episode is over)."""
    return 0 <= action < t[T_NUM_ACTIONS] and (get_legal(r) >> action) & 1 != 0


@njit(cache=True, inline="always")
def step_game(r, t, action):
    """Apply a legal `action` to a live game; True if the step scored (see `write_rewards`)."""
    fill(r, HAND_POINTS, HAND_POINTS + 2, 0)
    phase = r[PHASE]
    scored = False
    if phase == PLAY:
        scored = play_card(r, t, action)
    elif phase == BID_ROUND_1 or phase == BID_ROUND_2:
        scored = bid(r, t, action)
    elif phase == MAKER_ALONE_PHASE:
        maker_alone(r, t, action)
    elif phase == DEFENDER_ALONE_PHASE:
        defender_alone(r, t, action)
    else:
        discard(r, t, action)
    update_legal(r, t)
    return scored


# ------------------------------------------------------------------ batched entry points


CHUNK = 256
"""Games loaded into records together (the records stay in cache; a load or store call costs ~0.3 us)."""


@njit(cache=True)
def step_rows(s, t, actions, rewards):
    """`step_game` on every live row (finished rows are left alone); rewards (N, 4) must start at 0.

    Returns -1, or the first live row whose action is illegal: then nothing has been applied.
    """
    phase, legal, points = s[PHASE_FIELD], s[LEGAL_FIELD], s[HAND_POINTS_FIELD]
    t = unowned(t)
    n, c, a = phase.shape[0], t[T_NUM_CARDS], t[T_NUM_ACTIONS]
    for g in range(n):
        if phase[g] < HAND_OVER and not (0 <= actions[g] < a and legal[g, actions[g]]):
            return g
    records = np.empty((CHUNK, record_size(c)), RECORD_DTYPE)
    live = np.empty(n, np.int64)
    m = 0
    for g in range(n):
        if phase[g] >= HAND_OVER:
            points[g, 0] = 0
            points[g, 1] = 0
        else:
            live[m] = g
            m += 1
    for start in range(0, m, CHUNK):
        rows = live[start : min(start + CHUNK, m)]
        load_rows(*s, rows, records, False)
        for i in range(rows.shape[0]):
            r = row_view(records, i)
            if step_game(r, t, actions[rows[i]]):
                write_rewards(r, t, row_view(rewards, rows[i]))
        store_rows(records, *s, rows, False)
    return -1


RESTART, START_DEALT_HAND = range(2)
"""What `prepare_rows` does to each row."""


@njit(cache=True)
def prepare_rows(s, t, rows, what):
    """For each row: a fresh episode (`RESTART`) or a hand from the cards already in `hand` (`START_DEALT_HAND`)."""
    t = unowned(t)
    records = np.empty((CHUNK, record_size(t[T_NUM_CARDS])), RECORD_DTYPE)
    for start in range(0, rows.shape[0], CHUNK):
        chunk = rows[start : min(start + CHUNK, rows.shape[0])]
        load_rows(*s, chunk, records, True)
        for i in range(chunk.shape[0]):
            r = row_view(records, i)
            if what == RESTART:
                restart(r, t)
            else:
                start_hand(r, t)
                update_legal(r, t)
        store_rows(records, *s, chunk, True)


@njit(cache=True)
def observe_rows(s, t, seats, out, divide_score):
    """`encode` every row g from seat seats[g] into out[g] (float32 or uint8)."""
    t = unowned(t)
    n = s[PHASE_FIELD].shape[0]
    records = np.empty((CHUNK, record_size(t[T_NUM_CARDS])), RECORD_DTYPE)
    for start in range(0, n, CHUNK):
        rows = np.arange(start, min(start + CHUNK, n))
        load_rows(*s, rows, records, False)
        for i in range(rows.shape[0]):
            encode(row_view(records, i), seats[rows[i]], t, row_view(out, rows[i]), divide_score)


@njit(cache=True)
def hand_points_rows(t, maker, alone, lone_defender, tricks_won, rows, out):
    """(m, 2) `hand_points` per team of the finished hands in `rows`."""
    for i, g in enumerate(rows):
        team = maker[g] % 2
        makers, defenders = hand_points(t, alone[g], lone_defender[g], tricks_won[g, team])
        out[i, team] = makers
        out[i, 1 - team] = defenders


@njit(cache=True)
def game_winner_rows(t, score, games_won, out):
    """(N,) the team that won each game episode (reached the target) or rubber episode (won its games),
    -1 where none has yet or the episode is one hand."""
    episode = t[T_EPISODE]
    for g in range(score.shape[0]):
        out[g] = -1
        for side in range(2):
            if episode == GAME_EPISODE and score[g, side] >= t[T_TARGET]:
                out[g] = side
            elif episode == RUBBER_EPISODE and games_won[g, side] >= t[T_RUBBER_GAMES]:
                out[g] = side


@njit(cache=True)
def rubber_score(t, games_won, rubber_points, out):
    """A rubber's score per side into out (2,): once a side has won the rubber, it takes the rubber bonus
    plus its points' difference over the other side (signed, 004_*); zeros while the rubber is on."""
    out[0] = 0
    out[1] = 0
    w = 0 if games_won[0] >= games_won[1] else 1
    if games_won[w] >= t[T_RUBBER_GAMES]:
        out[w] = t[T_RUBBER_BONUS] + rubber_points[w] - rubber_points[1 - w]


@njit(cache=True)
def rubber_score_rows(t, games_won, rubber_points, out):
    """(N, 2) `rubber_score` of every game."""
    for g in range(games_won.shape[0]):
        rubber_score(t, games_won[g], rubber_points[g], out[g])


# ------------------------------------------------------------------ one game (the AEC env's record)


@njit(cache=True)
def one_init(r, t, key):
    """Start the game in record `r` afresh from deal key `key` (as `init` does for a row)."""
    set_key(r, key)
    r[DEAL_COUNT] = 0
    restart(r, t)


@njit(cache=True)
def one_step(r, t, action, rewards):
    """Apply `action` to the game in `r`: ILLEGAL (nothing changed), 0, or 1 when rewards (4,) were written."""
    r, t = unowned(r), unowned(t)
    if r[PHASE] < HAND_OVER and not is_legal(r, t, action):
        return ILLEGAL
    return apply_step(r, t, action, rewards)


@njit(cache=True, inline="always")
def apply_step(r, t, action, rewards):
    """`one_step` of an action already known to be legal (or of any action once the episode is over)."""
    if r[PHASE] >= HAND_OVER:
        fill(r, HAND_POINTS, HAND_POINTS + 2, 0)
        return 0
    if step_game(r, t, action):
        write_rewards(r, t, rewards)
        return 1
    return 0


@njit(cache=True)
def one_observe(r, t, seat, out, divide_score):
    """Seat `seat`'s observation of the game in `r` into `out` (D,), as `encode` (pass divide_score
    from Python, as the batched calls do: a constant would compile `encode` a second time)."""
    encode(unowned(r), seat, unowned(t), unowned(out), divide_score)


@njit(cache=True)
def one_load(s, row, r):
    """Row `row` of a state's arrays into the record `r`."""
    load_rows(*s, np.array([row]), r.reshape((1, r.shape[0])), True)


@njit(cache=True)
def one_store(r, s, row):
    """The record `r` into row `row` of a state's arrays."""
    store_rows(r.reshape((1, r.shape[0])), *s, np.array([row]), True)


# ------------------------------------------------------------------ games kept as records (the vector env)


@njit(cache=True)
def records_view(r, t, g, to_play, legal, obs, divide_score):
    """Row g of what the vector env returns for record r: the seat to act, its legal mask and its observation."""
    to_play[g] = r[TO_PLAY]
    unpack_legal(r, row_view(legal, g))
    encode(r, r[TO_PLAY] if r[TO_PLAY] > 0 else 0, t, row_view(obs, g), divide_score)


@njit(cache=True)
def records_init(records, t, keys, to_play, legal, obs, divide_score):
    """`one_init` on every record (rows of an (N, R) matrix, each holding an empty game) with its deal
    key, then `records_view`."""
    t, to_play, legal, obs = unowned(t), unowned(to_play), unowned(legal), unowned(obs)
    for g in range(records.shape[0]):
        r = row_view(records, g)
        one_init(r, t, keys[g])
        records_view(r, t, g, to_play, legal, obs, divide_score)


STEPPED, STEPPED_AND_ENDED = -1, -2
"""What `records_step` returns when every action was legal: no episode ended, or some did."""


@njit(cache=True)
def records_step(records, t, actions, rewards, first_deal, max_hands, terminated, truncated, final_score,
                 final_points, to_play, legal, obs, divide_score):
    """The vector env's step on games kept as records: `one_step` per game (rewards (N, 4) written for
    every game), then (same-step autoreset) `restart` of each game whose episode ended (terminated[g], or
    truncated[g] after `max_hands` hands, -1 for no limit; final_score[g] and final_points[g] = its score
    and hand points before the restart), then `records_view`.

    Returns STEPPED or STEPPED_AND_ENDED, or the first live game whose action is illegal: then nothing
    has been applied.
    """
    n = records.shape[0]
    t, to_play, legal, obs = unowned(t), unowned(to_play), unowned(legal), unowned(obs)
    final_score, final_points = unowned(final_score), unowned(final_points)
    for g in range(n):
        if records[g, PHASE] < HAND_OVER and not is_legal(row_view(records, g), t, actions[g]):
            return g
    code = STEPPED
    for g in range(n):
        r, paid = row_view(records, g), row_view(rewards, g)
        fill(paid, 0, NUM_SEATS, 0)
        apply_step(r, t, actions[g], paid)  # every action was checked above
        ended = r[PHASE] >= HAND_OVER
        cut = not ended and max_hands >= 0 and r[DEAL_COUNT] - first_deal[g] >= max_hands
        terminated[g], truncated[g] = ended, cut
        for side in range(2):
            final_score[g, side] = r[SCORE + side]
            final_points[g, side] = r[HAND_POINTS + side]
        if ended or cut:
            restart(r, t)
            first_deal[g] = r[DEAL_COUNT]
            code = STEPPED_AND_ENDED
        records_view(r, t, g, to_play, legal, obs, divide_score)
    return code
