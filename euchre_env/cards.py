"""Cards, suits and the action ids, as lookup tables built once per `Rules`.

Card ids follow OpenSpiel's euchre for the 24-card deck: `rank * 4 + suit` with ranks 9 T J Q K A
and suits C D H S, so `0 = 9C, 1 = 9D, ..., 23 = AS`. The 32-card deck appends `24..31 =
7C 7D 7H 7S 8C 8D 8H 8S`; the joker, when used, is the last card. A card id means the same card in
every deck. After the cards come the other actions: pass, the four suits, alone, partner.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from euchre_env.rules import Rules

NUM_SEATS = 4
NUM_TRICKS = 5
HAND_SIZE = 5
NUM_SUITS = 4
CLUBS, DIAMONDS, HEARTS, SPADES = range(NUM_SUITS)
SUIT_LETTERS = "CDHS"
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
SUIT_SYMBOLS = "♣♦♥♠"
RANK_LETTERS = "789TJQKA"
"""Natural rank order, low to high; index is the rank value used in the tables."""
JACK_RANK = RANK_LETTERS.index("J")
JOKER_NAME = "JOKER"
MAX_CARDS = 48
"""The most cards a deck may have for the kernels: a deal's scratch arrays on the stack hold this many,
and the legal actions (cards + 7) must fit a 63-bit set. The largest deck has 33 (32 and the joker)."""

# Trump strength above the natural ranks, for the three cards that outrank the ace of trump.
LEFT_BOWER_STRENGTH = 20
RIGHT_BOWER_STRENGTH = 21
JOKER_STRENGTH = 22
TRUMP_BASE = 100
"""Added to a trump's strength so that any trump beats any card of the suit led."""

# Offsets of the non-card actions after the last card id.
PASS_OFFSET = 0
SUIT_OFFSET = 1
ALONE_OFFSET = 5
PARTNER_OFFSET = 6
NUM_EXTRA_ACTIONS = 7


def same_colour_suit(suit: int) -> int:
    """The other suit of the same colour (clubs-spades, diamonds-hearts)."""
    return 3 - suit


@dataclass(frozen=True, eq=False)
class Deck:
    """Every per-card fact the engine looks up, for one deck (24/32 cards, with or without joker)."""

    num_cards: int
    names: tuple[str, ...]
    suit: np.ndarray
    """Printed suit per card; the joker has -1."""
    rank: np.ndarray
    """Natural rank value (RANK_LETTERS index); the joker has len(RANK_LETTERS)."""
    upcard_suit: np.ndarray
    """The suit a card offers as trump when turned up (a joker offers spades)."""
    effective_suit: np.ndarray
    """[trump, card] -> the suit the card belongs to for following (bowers and joker are trump)."""
    trump_strength: np.ndarray
    """[trump, card] -> strength within trump (higher wins), -1 for cards that are not trump."""
    trick_strength: np.ndarray
    """[trump, led suit, card] -> strength in a trick: 0 can't win, 1+rank follows suit, 100+ trump."""
    joker: int
    """The joker's id, or -1."""

    @property
    def pass_action(self) -> int:
        """Action id of "pass" (round one, round two, and a defender declining to go alone)."""
        return self.num_cards + PASS_OFFSET

    def suit_action(self, suit: int) -> int:
        """Action id that names `suit` trump (in round one, orders up the upcard)."""
        return self.num_cards + SUIT_OFFSET + suit

    @property
    def alone_action(self) -> int:
        """Action id of "go alone"."""
        return self.num_cards + ALONE_OFFSET

    @property
    def partner_action(self) -> int:
        """Action id of "play with partner" (decline to go alone)."""
        return self.num_cards + PARTNER_OFFSET

    @property
    def num_actions(self) -> int:
        """Size of the one discrete action space covering every phase."""
        return self.num_cards + NUM_EXTRA_ACTIONS

    def action_names(self) -> tuple[str, ...]:
        """String name of every action id, in id order."""
        return self.names + ("pass",) + SUIT_NAMES + ("alone", "partner")

    def card_id(self, name: str) -> int:
        """Card id from a name such as "JH", "TC" or "JOKER" (case-insensitive)."""
        key = name.strip().upper()
        key = "T" + key[2:] if key.startswith("10") else key
        try:
            return self.names.index(key)
        except ValueError:
            raise ValueError(f"unknown card {name!r} for this deck; cards are {' '.join(self.names)}") from None


@lru_cache(maxsize=None)
def _deck_for(num_plain_cards: int, with_joker: bool) -> Deck:
    plain_ranks = [2, 3, 4, 5, 6, 7] + ([0, 1] if num_plain_cards == 32 else [])
    suits, ranks = [], []
    for rank in plain_ranks:
        for suit in range(NUM_SUITS):
            suits.append(suit)
            ranks.append(rank)
    names = [RANK_LETTERS[r] + SUIT_LETTERS[s] for r, s in zip(ranks, suits)]
    joker = -1
    if with_joker:
        joker = len(names)
        suits.append(-1)
        ranks.append(len(RANK_LETTERS))
        names.append(JOKER_NAME)
    n = len(names)
    suit = np.array(suits, dtype=np.int8)
    rank = np.array(ranks, dtype=np.int8)
    upcard_suit = np.where(suit < 0, SPADES, suit).astype(np.int8)

    effective_suit = np.empty((NUM_SUITS, n), dtype=np.int8)
    trump_strength = np.full((NUM_SUITS, n), -1, dtype=np.int16)
    for trump in range(NUM_SUITS):
        for card in range(n):
            if card == joker:
                effective_suit[trump, card] = trump
                trump_strength[trump, card] = JOKER_STRENGTH
            elif rank[card] == JACK_RANK and suit[card] == trump:
                effective_suit[trump, card] = trump
                trump_strength[trump, card] = RIGHT_BOWER_STRENGTH
            elif rank[card] == JACK_RANK and suit[card] == same_colour_suit(trump):
                effective_suit[trump, card] = trump
                trump_strength[trump, card] = LEFT_BOWER_STRENGTH
            else:
                effective_suit[trump, card] = suit[card]
                if suit[card] == trump:
                    trump_strength[trump, card] = rank[card]

    trick_strength = np.zeros((NUM_SUITS, NUM_SUITS, n), dtype=np.int16)
    for trump in range(NUM_SUITS):
        for led in range(NUM_SUITS):
            for card in range(n):
                if trump_strength[trump, card] >= 0:
                    trick_strength[trump, led, card] = TRUMP_BASE + trump_strength[trump, card]
                elif effective_suit[trump, card] == led:
                    trick_strength[trump, led, card] = 1 + rank[card]
    for table in (suit, rank, upcard_suit, effective_suit, trump_strength, trick_strength):
        table.setflags(write=False)
    return Deck(
        num_cards=n,
        names=tuple(names),
        suit=suit,
        rank=rank,
        upcard_suit=upcard_suit,
        effective_suit=effective_suit,
        trump_strength=trump_strength,
        trick_strength=trick_strength,
        joker=joker,
    )


def deck_for(rules: Rules) -> Deck:
    """The (cached) card tables for the deck `rules` plays with."""
    return _deck_for(rules.deck, rules.joker)
