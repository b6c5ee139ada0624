"""The one int64 table the rule kernels read: a `Rules` config, the episode kind and the deck's card tables.

Slots `T_*` hold the options as numbers; the card tables (rank, upcard suit, effective suit, trick
strength) and the deal's packet order follow at the offsets the slots name. Built once per `Engine`; kernels take it as their last array argument.
"""

from __future__ import annotations

import numpy as np

from euchre_env.cards import HAND_SIZE, MAX_CARDS, NUM_SEATS, NUM_SUITS, Deck
from euchre_env.rules import FIRST_DEALER_CUT, LEAD_LEFT_OF_LONE_PLAYER, Rules
from euchre_env.state import EPISODES, REWARD_WIN

(
    T_NUM_CARDS, T_NUM_ACTIONS, T_STICK_THE_DEALER, T_THROW_IN_SAME_DEALER, T_ALONE_WHEN_NAMING,
    T_LONE_DEFENDER, T_LONE_DEFENDER_POINTS, T_LEAD_LEFT_OF_LONE, T_MAY_BURY_UPCARD, T_TARGET,
    T_RUBBER_GAMES, T_FIRST_DEALER_CUT, T_THROW_IN_ENDS_HAND, T_EPISODE, T_REWARD_WIN,
    T_RANK, T_UPCARD_SUIT, T_EFFECTIVE_SUIT, T_TRICK_STRENGTH, T_PACKET_SEAT, T_SUIT_CARDS, T_RUBBER_BONUS,
) = range(22)
NUM_SLOTS = 24
HAND_EPISODE, GAME_EPISODE, RUBBER_EPISODE = range(3)
EPISODE_CODE = {name: code for code, name in enumerate(EPISODES)}
"""T_EPISODE values: HAND_EPISODE, GAME_EPISODE, RUBBER_EPISODE, in `EPISODES` order."""
DEAL_SIZE = NUM_SEATS * HAND_SIZE


def packet_order() -> np.ndarray:
    """[dealer, deck position] -> seat receiving that card, dealing 3-2-3-2 then 2-3-2-3 from the left."""
    order = np.empty((NUM_SEATS, DEAL_SIZE), dtype=np.int8)
    for dealer in range(NUM_SEATS):
        pos = 0
        for packets in ((3, 2, 3, 2), (2, 3, 2, 3)):
            for k, size in enumerate(packets):
                order[dealer, pos : pos + size] = (dealer + 1 + k) % NUM_SEATS
                pos += size
    return order


PACKET_SEAT = packet_order()


def suit_cards(deck: Deck) -> np.ndarray:
    """[trump, suit] -> bit set of the cards whose effective suit under that trump is that suit (bit k: card k)."""
    bits = np.zeros((NUM_SUITS, NUM_SUITS), np.int64)
    for trump in range(NUM_SUITS):
        for card in range(deck.num_cards):
            bits[trump, deck.effective_suit[trump, card]] |= 1 << card
    return bits


def kernel_table(rules: Rules, episode: str, reward: str, deck: Deck) -> np.ndarray:
    """The kernels' table for one rules config, episode kind and reward."""
    c = deck.num_cards
    assert c <= MAX_CARDS, f"a deck of {c} cards: the kernels hold at most {MAX_CARDS}"
    slots = np.zeros(NUM_SLOTS, np.int64)
    slots[T_NUM_CARDS] = c
    slots[T_NUM_ACTIONS] = deck.num_actions
    slots[T_STICK_THE_DEALER] = rules.stick_the_dealer
    slots[T_THROW_IN_SAME_DEALER] = rules.throw_in_same_dealer
    slots[T_ALONE_WHEN_NAMING] = rules.alone_when_naming
    slots[T_LONE_DEFENDER] = rules.lone_defender
    slots[T_LONE_DEFENDER_POINTS] = rules.lone_defender_euchre_points
    slots[T_LEAD_LEFT_OF_LONE] = rules.lone_lead == LEAD_LEFT_OF_LONE_PLAYER
    slots[T_MAY_BURY_UPCARD] = rules.dealer_may_bury_upcard
    slots[T_TARGET] = rules.target_points
    slots[T_RUBBER_GAMES] = rules.rubber_games
    slots[T_RUBBER_BONUS] = rules.rubber_bonus
    slots[T_FIRST_DEALER_CUT] = rules.first_dealer == FIRST_DEALER_CUT
    slots[T_THROW_IN_ENDS_HAND] = rules.throw_in_ends_hand_episode
    slots[T_EPISODE] = EPISODE_CODE[episode]
    slots[T_REWARD_WIN] = reward == REWARD_WIN
    parts = [
        (T_RANK, deck.rank),
        (T_UPCARD_SUIT, deck.upcard_suit),
        (T_EFFECTIVE_SUIT, deck.effective_suit.reshape(-1)),  # index trump * C + card
        (T_TRICK_STRENGTH, deck.trick_strength.reshape(-1)),  # index (trump * 4 + led) * C + card
        (T_PACKET_SEAT, PACKET_SEAT.reshape(-1)),  # index dealer * 20 + position
        (T_SUIT_CARDS, suit_cards(deck).reshape(-1)),  # index trump * 4 + suit
    ]
    at = NUM_SLOTS
    for slot, values in parts:
        slots[slot] = at
        at += values.size
    table = np.concatenate([slots] + [values.astype(np.int64) for _, values in parts])
    assert table.size == at and NUM_SUITS == 4
    table.setflags(write=False)
    return table
