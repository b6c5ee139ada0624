"""The rules of Euchre, written once, as numba kernels over one game's row of the state arrays.

Every transition (the cut for the first dealer, the deal, bids, naming trump, alone calls, the
discard, a card played, the end of a trick, hand and game, the rewards) and the legal mask is one
function of `(s, g, t)`: `s` the state's arrays as a `GameArrays`, `g` the game's row, `t` the
engine's table (`tables.kernel_table`). The batched entry points below loop them over the games of
an `EuchreState`; the one-game entry points (`one_*`) run the very same functions on one game held
in a single byte buffer (`OneGame`), which is cheaper to hand to a kernel than 35 arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from euchre_env.cards import ALONE_OFFSET, NUM_SEATS, NUM_SUITS, NUM_TRICKS, PARTNER_OFFSET, SUIT_OFFSET
from euchre_env.deal_keys import deck_order
from euchre_env.observation import encode
from euchre_env.state import MAX_BIDS, GameArrays
from euchre_env.tables import (
    DEAL_SIZE,
    GAME_EPISODE,
    HAND_EPISODE,
    RUBBER_EPISODE,
    T_ALONE_WHEN_NAMING,
    T_EFFECTIVE_SUIT,
    T_EPISODE,
    T_FIRST_DEALER_CUT,
    T_LEAD_LEFT_OF_LONE,
    T_LONE_DEFENDER,
    T_LONE_DEFENDER_POINTS,
    T_MAY_BURY_UPCARD,
    T_NUM_ACTIONS,
    T_NUM_CARDS,
    T_ONE_GAME,
    T_PACKET_SEAT,
    T_RANK,
    T_REWARD_WIN,
    T_RUBBER_GAMES,
    T_STICK_THE_DEALER,
    T_TARGET,
    T_THROW_IN_ENDS_HAND,
    T_THROW_IN_SAME_DEALER,
    T_TRICK_STRENGTH,
    T_UPCARD_SUIT,
)

BID_ROUND_1, BID_ROUND_2, MAKER_ALONE, DEFENDER_ALONE, DISCARD, PLAY, HAND_OVER, GAME_OVER = range(8)
MAX_CUTS = 64
"""Bound on re-cuts for the first dealer (a tie needing more is astronomically unlikely)."""
ILLEGAL = -1
"""What `one_step` returns for an illegal action (the game is left unchanged)."""


# ------------------------------------------------------------------ card lookups


@njit(cache=True)
def effective_suit(t, trump, card):
    """The suit `card` follows as when `trump` is trump (bowers and the joker are trump)."""
    return t[t[T_EFFECTIVE_SUIT] + trump * t[T_NUM_CARDS] + card]


@njit(cache=True)
def upcard_suit(t, card):
    """The suit a turned-up `card` offers (a joker offers spades)."""
    return t[t[T_UPCARD_SUIT] + card]


@njit(cache=True)
def next_active(s, g, seat):
    """The first seat after `seat`, clockwise, that plays this hand."""
    out = (seat + 1) % NUM_SEATS
    while not s.active[g, out]:
        out = (out + 1) % NUM_SEATS
    return out


# ------------------------------------------------------------------ dealing


@njit(cache=True)
def shuffle(s, g, t):
    """The deck order of the game's next deal (from its key and deal count); advances the count."""
    perm = deck_order(s.key[g], s.deal_count[g], t[T_NUM_CARDS])
    s.deal_count[g] += 1
    return perm


@njit(cache=True)
def first_dealer(s, g, t):
    """The first dealer: by cut (the high card deals, tied seats cut again) or uniformly at random."""
    perm = shuffle(s, g, t)
    if not t[T_FIRST_DEALER_CUT]:
        return perm[0] % NUM_SEATS
    rank = t[T_RANK]
    cut = np.empty(NUM_SEATS, np.int64)
    cutting = np.ones(NUM_SEATS, np.bool_)
    for seat in range(NUM_SEATS):
        cut[seat] = t[rank + perm[seat]]
    for _ in range(MAX_CUTS):
        best = -1
        for seat in range(NUM_SEATS):
            if not cutting[seat]:
                cut[seat] = -1
            best = max(best, cut[seat])
        tied = 0
        for seat in range(NUM_SEATS):
            cutting[seat] = cut[seat] == best
            tied += cutting[seat]
        if tied == 1:
            return np.argmax(cutting)
        perm = shuffle(s, g, t)
        for seat in range(NUM_SEATS):
            cut[seat] = t[rank + perm[seat]]
    return np.argmax(cutting)


@njit(cache=True)
def start_hand(s, g):
    """Reset the per-hand fields of a freshly dealt game and open round one of the bidding."""
    s.phase[g] = BID_ROUND_1
    s.to_play[g] = (s.dealer[g] + 1) % NUM_SEATS
    s.bids[g, :] = -1
    s.num_bids[g] = 0
    s.trump[g] = -1
    s.maker[g] = -1
    s.ordered_up[g] = False
    s.maker_alone[g] = False
    s.lone_defender[g] = -1
    s.defender_asks[g] = 0
    s.active[g, :] = True
    s.picked_up[g] = False
    s.discard[g] = -1
    s.trick_cards[g, :, :] = -1
    s.trick_leader[g, :] = -1
    s.trick_winner[g, :] = -1
    s.card_player[g, :] = -1
    s.card_trick[g, :] = -1
    s.trick_index[g] = 0
    s.cards_in_trick[g] = 0
    s.led_suit[g] = -1
    s.tricks_won[g, :] = 0


@njit(cache=True)
def deal(s, g, t):
    """Shuffle and deal five cards to each seat in packets from the dealer's left; turn the upcard."""
    perm = shuffle(s, g, t)
    seats = t[T_PACKET_SEAT] + s.dealer[g] * DEAL_SIZE
    s.hand[g, :, :] = False
    for pos in range(DEAL_SIZE):
        s.hand[g, t[seats + pos], perm[pos]] = True
    s.dealt[g, :, :] = s.hand[g, :, :]
    s.upcard[g] = perm[DEAL_SIZE]
    start_hand(s, g)


@njit(cache=True)
def restart(s, g, t):
    """A fresh episode in row g (cut, deal, first bid), continuing the row's deal stream."""
    s.score[g, :] = 0
    s.rubber_points[g, :] = 0
    s.games_won[g, :] = 0
    s.hand_number[g] = 0
    s.hand_points[g, :] = 0
    s.thrown_in[g] = False
    s.dealer[g] = first_dealer(s, g, t)
    deal(s, g, t)
    update_legal(s, g, t)


# ------------------------------------------------------------------ legal actions


@njit(cache=True)
def update_legal(s, g, t):
    """Rebuild the legal-action mask of the seat to act in row g."""
    c = t[T_NUM_CARDS]
    legal = s.legal[g]
    legal[:] = False
    phase = s.phase[g]
    suit0 = c + SUIT_OFFSET
    if phase == BID_ROUND_1:
        legal[c] = True
        legal[suit0 + upcard_suit(t, s.upcard[g])] = True
    elif phase == BID_ROUND_2:
        legal[suit0 : suit0 + NUM_SUITS] = True
        legal[suit0 + upcard_suit(t, s.upcard[g])] = False
        legal[c] = not (s.to_play[g] == s.dealer[g] and t[T_STICK_THE_DEALER])
    elif phase == MAKER_ALONE or phase == DEFENDER_ALONE:
        legal[c + ALONE_OFFSET] = True
        legal[c + PARTNER_OFFSET] = True
    elif phase == DISCARD:
        legal[:c] = s.hand[g, s.dealer[g]]
        if not t[T_MAY_BURY_UPCARD]:
            legal[s.upcard[g]] = False
    elif phase == PLAY:
        held = s.hand[g, s.to_play[g]]
        led, trump = s.led_suit[g], s.trump[g]
        follows = False
        if led >= 0:  # a card of the suit led must be played if held
            for card in range(c):
                if held[card] and effective_suit(t, trump, card) == led:
                    legal[card] = True
                    follows = True
        if not follows:
            legal[:c] = held


# ------------------------------------------------------------------ bidding, alone calls, discard


@njit(cache=True)
def bid(s, g, t, action):
    """A bid in round one or two; True if a thrown-in hand ended the episode (it is then scored)."""
    c = t[T_NUM_CARDS]
    s.bids[g, s.num_bids[g]] = action
    s.num_bids[g] += 1
    round_one = s.phase[g] == BID_ROUND_1
    if action != c:
        if round_one:
            s.ordered_up[g] = True
            name_trump(s, g, t, upcard_suit(t, s.upcard[g]))
        else:
            name_trump(s, g, t, action - c - SUIT_OFFSET)
        return False
    s.to_play[g] = (s.to_play[g] + 1) % NUM_SEATS
    if round_one:
        if s.num_bids[g] == NUM_SEATS:
            s.phase[g] = BID_ROUND_2
        return False
    if s.num_bids[g] < MAX_BIDS:
        return False
    s.thrown_in[g] = True
    if t[T_EPISODE] == HAND_EPISODE and t[T_THROW_IN_ENDS_HAND]:
        s.phase[g] = HAND_OVER
        s.to_play[g] = -1
        s.hand_number[g] += 1
        return True
    if not t[T_THROW_IN_SAME_DEALER]:
        s.dealer[g] = (s.dealer[g] + 1) % NUM_SEATS
    deal(s, g, t)
    return False


@njit(cache=True)
def name_trump(s, g, t, suit):
    """The seat to act names `suit` trump; next the maker decides on going alone, or the dealer picks up."""
    s.trump[g] = suit
    s.maker[g] = s.to_play[g]
    s.thrown_in[g] = False
    if not t[T_ALONE_WHEN_NAMING] and s.ordered_up[g]:
        pick_up(s, g)
    else:
        s.phase[g] = MAKER_ALONE  # to_play stays the maker


@njit(cache=True)
def pick_up(s, g):
    """The dealer takes the upcard into hand and must bury one card."""
    dealer = s.dealer[g]
    s.hand[g, dealer, s.upcard[g]] = True
    s.picked_up[g] = True
    s.phase[g] = DISCARD
    s.to_play[g] = dealer


@njit(cache=True)
def maker_alone(s, g, t, action):
    """The maker goes alone (the partner sits out) or plays with the partner."""
    c = t[T_NUM_CARDS]
    if action == c + ALONE_OFFSET:
        s.maker_alone[g] = True
        s.active[g, (s.maker[g] + 2) % NUM_SEATS] = False
    if t[T_LONE_DEFENDER]:
        s.phase[g] = DEFENDER_ALONE
        first = (s.dealer[g] + 1) % NUM_SEATS
        if first % 2 == s.maker[g] % 2:
            first = (first + 1) % NUM_SEATS
        s.to_play[g] = first
    else:
        after_alone_calls(s, g, t)


@njit(cache=True)
def defender_alone(s, g, t, action):
    """A defender goes alone (its partner sits out) or declines; the second defender is asked next."""
    c = t[T_NUM_CARDS]
    seat = s.to_play[g]
    s.defender_asks[g] += 1
    if action == c + ALONE_OFFSET:
        s.lone_defender[g] = seat
        s.active[g, (seat + 2) % NUM_SEATS] = False
        after_alone_calls(s, g, t)
    elif s.defender_asks[g] < 2:
        s.to_play[g] = (seat + 2) % NUM_SEATS
    else:
        after_alone_calls(s, g, t)


@njit(cache=True)
def after_alone_calls(s, g, t):
    """Alone calls are made: the dealer picks up if still due (and plays), else play starts."""
    if t[T_ALONE_WHEN_NAMING] and s.ordered_up[g] and s.active[g, s.dealer[g]]:
        pick_up(s, g)
    else:
        start_play(s, g, t)


@njit(cache=True)
def discard(s, g, t, card):
    """The dealer buries `card`; then play starts, or (alone calls after the discard) the maker decides."""
    s.hand[g, s.dealer[g], card] = False
    s.discard[g] = card
    if t[T_ALONE_WHEN_NAMING]:
        start_play(s, g, t)
    else:
        s.phase[g] = MAKER_ALONE
        s.to_play[g] = s.maker[g]


@njit(cache=True)
def start_play(s, g, t):
    """The first trick: led from the dealer's left (the next seat that plays), or by the lone-lead rule."""
    leader = next_active(s, g, s.dealer[g])
    if t[T_LEAD_LEFT_OF_LONE]:
        lone = s.lone_defender[g]
        if s.maker_alone[g]:
            leader = (s.maker[g] + 1) % NUM_SEATS
        if lone >= 0:
            leader = lone if s.maker_alone[g] else (lone + 1) % NUM_SEATS
    s.phase[g] = PLAY
    s.to_play[g] = leader
    s.trick_leader[g, 0] = leader


# ------------------------------------------------------------------ play, tricks, hands, rewards


@njit(cache=True)
def play_card(s, g, t, card):
    """The seat to act plays `card`; completes the trick and the hand. True if the hand was scored."""
    seat = s.to_play[g]
    trick = s.trick_index[g]
    trump = s.trump[g]
    s.hand[g, seat, card] = False
    s.trick_cards[g, trick, seat] = card
    s.card_player[g, card] = seat
    s.card_trick[g, card] = trick
    if s.cards_in_trick[g] == 0:
        s.led_suit[g] = effective_suit(t, trump, card)
    s.cards_in_trick[g] += 1
    playing = 0
    for other in range(NUM_SEATS):
        playing += s.active[g, other]
    if s.cards_in_trick[g] < playing:
        s.to_play[g] = next_active(s, g, seat)
        return False
    strength = t[T_TRICK_STRENGTH] + (trump * NUM_SUITS + s.led_suit[g]) * t[T_NUM_CARDS]
    winner, best = 0, -2
    for other in range(NUM_SEATS):
        played = s.trick_cards[g, trick, other]
        value = t[strength + played] if played >= 0 else -1
        if value > best:
            winner, best = other, value
    s.trick_winner[g, trick] = winner
    s.tricks_won[g, winner % 2] += 1
    s.trick_index[g] = trick + 1
    s.cards_in_trick[g] = 0
    s.led_suit[g] = -1
    s.to_play[g] = winner
    if trick + 1 < NUM_TRICKS:
        s.trick_leader[g, trick + 1] = winner
        return False
    end_hand(s, g, t)
    return True


@njit(cache=True)
def hand_points(t, maker, alone, lone_defender, maker_tricks):
    """(makers' points, defenders' points) of a finished hand; only one side scores."""
    if maker_tricks >= 3:
        return (4 if alone else 2) if maker_tricks == NUM_TRICKS else 1, 0
    if lone_defender >= 0:
        return 0, 4 if maker_tricks == 0 else t[T_LONE_DEFENDER_POINTS]
    return 0, 2


@njit(cache=True)
def end_hand(s, g, t):
    """Score the hand; end the episode, the game or the rubber, or deal the next hand."""
    team = s.maker[g] % 2
    makers, defenders = hand_points(t, s.maker[g], s.maker_alone[g], s.lone_defender[g], s.tricks_won[g, team])
    s.hand_points[g, team] = makers
    s.hand_points[g, 1 - team] = defenders
    for side in range(2):
        s.score[g, side] += s.hand_points[g, side]
        s.rubber_points[g, side] += s.hand_points[g, side]
    s.hand_number[g] += 1
    episode = t[T_EPISODE]
    if episode == HAND_EPISODE:
        s.phase[g] = HAND_OVER
        s.to_play[g] = -1
        return
    target = t[T_TARGET]
    if s.score[g, 0] >= target or s.score[g, 1] >= target:  # at most one side can cross
        over = True
        if episode == RUBBER_EPISODE:
            for side in range(2):
                s.games_won[g, side] += s.score[g, side] >= target
            over = max(s.games_won[g, 0], s.games_won[g, 1]) >= t[T_RUBBER_GAMES]
            if not over:
                s.score[g, :] = 0
        if over:
            s.phase[g] = GAME_OVER
            s.to_play[g] = -1
            return
    s.dealer[g] = (s.dealer[g] + 1) % NUM_SEATS
    deal(s, g, t)


@njit(cache=True)
def write_rewards(s, g, t, out):
    """The rewards of a step that scored a hand (or ended the episode) into out (4,): the hand's points
    margin per seat, or with win rewards +-1 (0 for a draw) when the episode ends."""
    if not t[T_REWARD_WIN]:
        margin = s.hand_points[g, 0] - s.hand_points[g, 1]
    else:
        episode = t[T_EPISODE]
        if episode == HAND_EPISODE:
            over = s.phase[g] == HAND_OVER
            lead = s.hand_points[g, 0] - s.hand_points[g, 1]
        elif episode == GAME_EPISODE:
            over = s.phase[g] == GAME_OVER
            lead = s.score[g, 0] - s.score[g, 1]
        else:
            over = s.phase[g] == GAME_OVER
            lead = s.games_won[g, 0] - s.games_won[g, 1]
        margin = ((lead > 0) - (lead < 0)) if over else 0
    for seat in range(NUM_SEATS):
        out[seat] = margin if seat % 2 == 0 else -margin


@njit(cache=True)
def step_game(s, g, t, action):
    """Apply a legal `action` to a live game row g; True if the step scored (see `write_rewards`)."""
    s.hand_points[g, :] = 0
    phase = s.phase[g]
    scored = False
    if phase == PLAY:
        scored = play_card(s, g, t, action)
    elif phase == BID_ROUND_1 or phase == BID_ROUND_2:
        scored = bid(s, g, t, action)
    elif phase == MAKER_ALONE:
        maker_alone(s, g, t, action)
    elif phase == DEFENDER_ALONE:
        defender_alone(s, g, t, action)
    else:
        discard(s, g, t, action)
    update_legal(s, g, t)
    return scored


# ------------------------------------------------------------------ batched entry points


@njit(cache=True)
def step_rows(s, t, actions, rewards):
    """`step_game` on every live row (finished rows are left alone); rewards (N, 4) must start at 0.

    Returns -1, or the first live row whose action is illegal: then nothing has been applied.
    """
    n, num_actions = s.phase.shape[0], t[T_NUM_ACTIONS]
    for g in range(n):
        if s.phase[g] < HAND_OVER and not (0 <= actions[g] < num_actions and s.legal[g, actions[g]]):
            return g
    for g in range(n):
        if s.phase[g] >= HAND_OVER:
            s.hand_points[g, :] = 0
        elif step_game(s, g, t, actions[g]):
            write_rewards(s, g, t, rewards[g])
    return -1


RESTART, START_DEALT_HAND, UPDATE_LEGAL = range(3)
"""What `prepare_rows` does to each row."""


@njit(cache=True)
def prepare_rows(s, t, rows, what):
    """For each row: a fresh episode, a hand from the cards already in `hand`, or the legal mask."""
    for g in rows:
        if what == RESTART:
            restart(s, g, t)
        elif what == START_DEALT_HAND:
            start_hand(s, g)
            update_legal(s, g, t)
        else:
            update_legal(s, g, t)


@njit(cache=True)
def hand_points_rows(t, maker, alone, lone_defender, tricks_won, rows, out):
    """(m, 2) `hand_points` per team of the finished hands in `rows`."""
    for i, g in enumerate(rows):
        team = maker[g] % 2
        makers, defenders = hand_points(t, maker[g], alone[g], lone_defender[g], tricks_won[g, team])
        out[i, team] = makers
        out[i, 1 - team] = defenders


# ------------------------------------------------------------------ one game in one buffer


@njit(cache=True)
def one_game_arrays(buf, t):
    """The fields of the one game in `buf` as 1-row arrays (views at the offsets of `T_ONE_GAME`)."""
    c, a = t[T_NUM_CARDS], t[T_NUM_ACTIONS]
    off = t[t[T_ONE_GAME] :]
    return GameArrays(
        buf[off[0] : off[0] + 8].view(np.uint64),
        buf[off[1] : off[1] + 8].view(np.int64),
        buf[off[2] : off[2] + 1].view(np.int8),
        buf[off[3] : off[3] + 1].view(np.int8),
        buf[off[4] : off[4] + 1].view(np.int8),
        buf[off[5] : off[5] + NUM_SEATS * c].view(np.bool_).reshape((1, NUM_SEATS, c)),
        buf[off[6] : off[6] + NUM_SEATS * c].view(np.bool_).reshape((1, NUM_SEATS, c)),
        buf[off[7] : off[7] + 2].view(np.int16),
        buf[off[8] : off[8] + 2 * MAX_BIDS].view(np.int16).reshape((1, MAX_BIDS)),
        buf[off[9] : off[9] + 1].view(np.int8),
        buf[off[10] : off[10] + 1].view(np.int8),
        buf[off[11] : off[11] + 1].view(np.int8),
        buf[off[12] : off[12] + 1].view(np.bool_),
        buf[off[13] : off[13] + 1].view(np.bool_),
        buf[off[14] : off[14] + 1].view(np.int8),
        buf[off[15] : off[15] + 1].view(np.int8),
        buf[off[16] : off[16] + NUM_SEATS].view(np.bool_).reshape((1, NUM_SEATS)),
        buf[off[17] : off[17] + 1].view(np.bool_),
        buf[off[18] : off[18] + 2].view(np.int16),
        buf[off[19] : off[19] + 2 * NUM_TRICKS * NUM_SEATS].view(np.int16).reshape((1, NUM_TRICKS, NUM_SEATS)),
        buf[off[20] : off[20] + NUM_TRICKS].view(np.int8).reshape((1, NUM_TRICKS)),
        buf[off[21] : off[21] + NUM_TRICKS].view(np.int8).reshape((1, NUM_TRICKS)),
        buf[off[22] : off[22] + c].view(np.int8).reshape((1, c)),
        buf[off[23] : off[23] + c].view(np.int8).reshape((1, c)),
        buf[off[24] : off[24] + 1].view(np.int8),
        buf[off[25] : off[25] + 1].view(np.int8),
        buf[off[26] : off[26] + 1].view(np.int8),
        buf[off[27] : off[27] + 2].view(np.int8).reshape((1, 2)),
        buf[off[28] : off[28] + 1].view(np.bool_),
        buf[off[29] : off[29] + 4].view(np.int16).reshape((1, 2)),
        buf[off[30] : off[30] + 4].view(np.int16).reshape((1, 2)),
        buf[off[31] : off[31] + 8].view(np.int32).reshape((1, 2)),
        buf[off[32] : off[32] + 2].view(np.int8).reshape((1, 2)),
        buf[off[33] : off[33] + 4].view(np.int32),
        buf[off[34] : off[34] + a].view(np.bool_).reshape((1, a)),
    )


@njit(cache=True)
def one_init(buf, t, key):
    """Start the game in `buf` afresh from deal key `key` (as `init` does for a row)."""
    s = one_game_arrays(buf, t)
    s.key[0] = key
    s.deal_count[0] = 0
    restart(s, 0, t)


@njit(cache=True)
def one_step(buf, t, action, rewards):
    """Apply `action` to the game in `buf`: ILLEGAL (nothing changed), 0, or 1 when rewards (4,) were written."""
    s = one_game_arrays(buf, t)
    if s.phase[0] >= HAND_OVER:
        s.hand_points[0, :] = 0
        return 0
    if not (0 <= action < t[T_NUM_ACTIONS] and s.legal[0, action]):
        return ILLEGAL
    if step_game(s, 0, t, action):
        write_rewards(s, 0, t, rewards)
        return 1
    return 0


@njit(cache=True)
def one_observe(buf, t, seat, out):
    """Seat `seat`'s float32 observation of the game in `buf` into `out` (D,)."""
    encode(one_game_arrays(buf, t), 0, seat, t, out, True)
