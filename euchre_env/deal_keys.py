"""Deal keys: every game carries a 64-bit key, and deal number k of a game is a pure function of (key, k).

So a game plays out the same whatever batch size or worker it runs in. Keys come from a seed or an
explicit `numpy.random.Generator` (`game_keys`, `game_key`); `deck_order` turns (key, k) into the
order of the deck (a kernel, used by the deal kernel and by `deck_orders` for tools and tests).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_MIX_SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_DEAL_MULTIPLIER = np.uint64(0xD1B54A32D192ED03)
_CARD_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_SEED_OFFSET = 0x632BE59BD9B4E019


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, elementwise on uint64 (wrapping arithmetic)."""
    x = x.astype(np.uint64, copy=True)
    x ^= x >> _MIX_SHIFTS[0]
    x *= _MIX_1
    x ^= x >> _MIX_SHIFTS[1]
    x *= _MIX_2
    x ^= x >> _MIX_SHIFTS[2]
    return x


def game_keys(seed: int | np.random.Generator | None, num_games: int) -> np.ndarray:
    """Deal keys for `num_games` games: game i's key depends only on (seed, i) for an int seed."""
    if isinstance(seed, np.random.Generator):
        return seed.integers(0, 2**63, size=num_games, dtype=np.uint64)
    if seed is None:
        seed = int(np.random.default_rng().integers(0, 2**63))
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or a numpy Generator, got {seed!r}")
    base = _mix(np.array([(int(seed) + _SEED_OFFSET) % 2**64], dtype=np.uint64))[0]
    return _mix(base + np.arange(num_games, dtype=np.uint64) * _CARD_MULTIPLIER)


def game_key(rng: np.random.Generator) -> int:
    """One deal key: `int(game_keys(rng, 1)[0])`, drawn as a scalar (the same value and draws, faster)."""
    return int(rng.integers(0, 2**63, dtype=np.uint64))


@njit(cache=True)
def mix64(x: np.uint64) -> np.uint64:
    """splitmix64's finaliser of one value (a bijection of uint64)."""
    x = x ^ (x >> np.uint64(30))
    x = x * _MIX_1
    x = x ^ (x >> np.uint64(27))
    x = x * _MIX_2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def deal_base(key, count):
    """The hash of (key, deal count) that every card's hash of that deal starts from."""
    return mix64(np.uint64(key) ^ (np.uint64(count) * _DEAL_MULTIPLIER))


@njit(cache=True, inline="always")
def card_hash(base, card):
    """The card's hash in the deal of `base` (`deal_base`): the deck order sorts the cards by it."""
    return mix64(base + np.uint64(card + 1) * _CARD_MULTIPLIER)


@njit(cache=True)
def deck_order(key: np.uint64, count: np.int64, num_cards: int) -> np.ndarray:
    """The deck order of deal number `count` with `key`: cards sorted by a per-card hash of (key, count)."""
    order = np.empty(num_cards, np.int64)
    deck_order_into(key, count, num_cards, np.empty(num_cards, np.uint64), order)
    return order


@njit(cache=True, inline="always")
def deck_order_into(key, count, num_cards, hashes, order):
    """`deck_order` written into `order` (at least C cells), with `hashes` (uint64, at least C cells) as
    scratch, so that a caller can pass arrays it did not allocate.

    The hashes are distinct (distinct inputs to a bijection), so each card's place is the number of
    hashes below its own: a branch-free count over the small deck (np.argsort costs a long compile).
    """
    base = deal_base(key, count)
    for card in range(num_cards):
        hashes[card] = card_hash(base, card)
    for card in range(num_cards):
        place = 0
        for other in range(num_cards):
            place += hashes[other] < hashes[card]
        order[place] = card


@njit(cache=True)
def deck_top(key: np.uint64, count: np.int64, num_cards: int) -> int:
    """`deck_order(key, count, num_cards)[0]`, the top card: the card of the lowest hash, no array."""
    base = deal_base(key, count)
    lowest, top = np.uint64(0xFFFFFFFFFFFFFFFF), -1
    for card in range(num_cards):
        h = card_hash(base, card)
        lower = h < lowest
        lowest, top = (h if lower else lowest), (card if lower else top)
    return top


@njit(cache=True)
def deck_head(key: np.uint64, count: np.int64, num_cards: int) -> tuple[int, int, int, int]:
    """`deck_order(key, count, num_cards)[:4]`, the top four cards (a cut), without ordering the rest
    of the deck: one pass keeping the four lowest hashes, and no array."""
    base = deal_base(key, count)
    top = np.uint64(0xFFFFFFFFFFFFFFFF)
    h0, h1, h2, h3 = top, top, top, top
    c0, c1, c2, c3 = -1, -1, -1, -1
    for card in range(num_cards):
        h = card_hash(base, card)
        if h < h3:  # a place among the four lowest: shift the higher ones down
            h3, c3 = h, card
            if h3 < h2:
                h2, h3, c2, c3 = h3, h2, c3, c2
                if h2 < h1:
                    h1, h2, c1, c2 = h2, h1, c2, c1
                    if h1 < h0:
                        h0, h1, c0, c1 = h1, h0, c1, c0
    return c0, c1, c2, c3


@njit(cache=True)
def deck_orders(keys: np.ndarray, counts: np.ndarray, num_cards: int) -> np.ndarray:
    """(m, C) `deck_order` of each (key, count) pair."""
    out = np.empty((keys.shape[0], num_cards), np.int64)
    for i in range(keys.shape[0]):
        out[i] = deck_order(keys[i], counts[i], num_cards)
    return out
