"""The rules of Euchre as array functions over a batch of N games.

This is the one place the rules live. `EuchreState` holds N games in numpy arrays (one row per
game) with the legal-action mask kept beside them; `Engine` deals, applies one action per game,
scores, and encodes each acting seat's information state. The PettingZoo env, the vector API,
the agents and the tools all call this module; none of them re-implements a rule.

Randomness: each game carries a 64-bit key; deal number k of that game is a pure function of
(key, k), so a game plays out the same whatever the batch size it runs in. Keys come from a seed
or an explicit `numpy.random.Generator` (`game_keys`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from euchre_env.cards import (
    HAND_SIZE,
    NUM_SEATS,
    NUM_SUITS,
    NUM_TRICKS,
    Deck,
    deck_for,
)
from euchre_env.rules import LEAD_LEFT_OF_LONE_PLAYER, FIRST_DEALER_CUT, Rules

MAX_BIDS = 2 * NUM_SEATS
EPISODE_HAND = "hand"
EPISODE_GAME = "game"
EPISODE_RUBBER = "rubber"
EPISODES = (EPISODE_HAND, EPISODE_GAME, EPISODE_RUBBER)
REWARD_POINTS = "points"
REWARD_WIN = "win"
REWARDS = (REWARD_POINTS, REWARD_WIN)
MAX_CUTS = 64
"""Bound on re-cuts for the first dealer (a tie needing more is astronomically unlikely)."""
_OBSERVE_CHUNK = 2048
"""Games encoded together by `observe`: keeps the working arrays in cache for large batches."""
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
    ("phase", 6),
    ("tricks_won", 2 * (NUM_TRICKS + 1)),
    ("trick_leader", NUM_TRICKS * NUM_SEATS),
    ("bids", 2 * NUM_SEATS * (1 + NUM_SUITS)),
    ("score", 2),
    ("games_won", 2),
)
"""The observation's cells after the card records, in order."""
_PLAY_CODES = 1 + NUM_SEATS * NUM_TRICKS * 2
"""Card play codes: unplayed, or (relative seat, trick, in the current trick)."""


class Phase(IntEnum):
    """What the game is waiting for. The first six are decisions; the last two are terminal."""

    BID_ROUND_1 = 0
    BID_ROUND_2 = 1
    MAKER_ALONE = 2
    DEFENDER_ALONE = 3
    DISCARD = 4
    PLAY = 5
    HAND_OVER = 6
    GAME_OVER = 7


NUM_DECISION_PHASES = 6
_BID_ROUND_1, _BID_ROUND_2, _MAKER_ALONE, _DEFENDER_ALONE, _DISCARD, _PLAY, _HAND_OVER, _GAME_OVER = (int(p) for p in Phase)
"""Phase values as plain ints: numpy compares an array with an IntEnum member far more slowly."""


NEW_HAND_VALUES = (
    ("bids", -1),
    ("num_bids", 0),
    ("trump", -1),
    ("maker", -1),
    ("ordered_up", False),
    ("maker_alone", False),
    ("lone_defender", -1),
    ("defender_asks", 0),
    ("active", True),
    ("picked_up", False),
    ("discard", -1),
    ("trick_cards", -1),
    ("trick_leader", -1),
    ("trick_winner", -1),
    ("card_player", -1),
    ("card_trick", -1),
    ("trick_index", 0),
    ("cards_in_trick", 0),
    ("led_suit", -1),
    ("tricks_won", 0),
)
"""Every per-hand field of a state and its value when a hand is dealt (phase and seat to act follow the dealer)."""


class IllegalActionError(ValueError):
    """An action that is not legal in the state it was applied to. The state is left unchanged."""


class DealError(ValueError):
    """A scripted deal that is malformed or impossible."""


@dataclass
class EuchreState:
    """N games, one row each. Arrays are owned by the state; `Engine.step` updates them in place."""

    key: np.ndarray  # (N,) uint64: the game's deal key
    deal_count: np.ndarray  # (N,) int64: deals made with this key so far
    phase: np.ndarray  # (N,) int8 Phase
    to_play: np.ndarray  # (N,) int8 seat to act, -1 when terminal
    dealer: np.ndarray  # (N,) int8
    hand: np.ndarray  # (N, 4, C) bool: cards each seat holds now
    dealt: np.ndarray  # (N, 4, C) bool: the five cards each seat was dealt
    upcard: np.ndarray  # (N,) int16
    bids: np.ndarray  # (N, 8) int16 action per bid in order, -1 unused
    num_bids: np.ndarray  # (N,) int8
    trump: np.ndarray  # (N,) int8, -1 before trump is made
    maker: np.ndarray  # (N,) int8 seat that named trump, -1 before
    ordered_up: np.ndarray  # (N,) bool: trump was made in round one
    maker_alone: np.ndarray  # (N,) bool
    lone_defender: np.ndarray  # (N,) int8 seat, -1 if none
    defender_asks: np.ndarray  # (N,) int8 defenders asked about going alone so far
    active: np.ndarray  # (N, 4) bool: seat plays this hand (False = sits out)
    picked_up: np.ndarray  # (N,) bool: the dealer took the upcard into hand
    discard: np.ndarray  # (N,) int16 card the dealer buried, -1 if none
    trick_cards: np.ndarray  # (N, 5, 4) int16 card played by seat in trick, -1 none
    trick_leader: np.ndarray  # (N, 5) int8
    trick_winner: np.ndarray  # (N, 5) int8
    card_player: np.ndarray  # (N, C) int8 seat that played the card, -1 unplayed
    card_trick: np.ndarray  # (N, C) int8 trick in which the card was played, -1 unplayed
    trick_index: np.ndarray  # (N,) int8
    cards_in_trick: np.ndarray  # (N,) int8
    led_suit: np.ndarray  # (N,) int8 effective suit led to the current trick, -1 none
    tricks_won: np.ndarray  # (N, 2) int8 by team (team = seat % 2)
    thrown_in: np.ndarray  # (N,) bool: the last hand was thrown in
    hand_points: np.ndarray  # (N, 2) int16 points each team scored in the last finished hand
    score: np.ndarray  # (N, 2) int16 game score
    rubber_points: np.ndarray  # (N, 2) int32 game points summed over the rubber's games
    games_won: np.ndarray  # (N, 2) int8
    hand_number: np.ndarray  # (N,) int32 hands finished in this episode
    legal: np.ndarray  # (N, A) bool legal-action mask of the seat to act

    @property
    def num_games(self) -> int:
        """N, the number of games in the batch."""
        return int(self.phase.shape[0])

    def copy(self) -> "EuchreState":
        """A deep copy (every array copied)."""
        return EuchreState(**{f.name: getattr(self, f.name).copy() for f in dataclasses.fields(self)})

    def take(self, rows: np.ndarray | slice) -> "EuchreState":
        """A new state holding only the given rows (copied)."""
        return EuchreState(**{f.name: getattr(self, f.name)[rows].copy() for f in dataclasses.fields(self)})

    @property
    def done(self) -> np.ndarray:
        """(N,) bool: the episode of that row is over."""
        return self.phase >= _HAND_OVER


_ALL_SEATS = (1 << NUM_SEATS) - 1
"""`active` of a `OneGame` in which every seat plays."""


class OneGame:
    """One game's state as plain Python values: the one-game path's `EuchreState` (see `Engine.step_one`).

    Every field of `EuchreState`, for one row, under the same name and with the same values, except
    in form: a hand (`hand[seat]`, `dealt[seat]`) is an int whose byte k is 1 when card k is held (the
    bytes of a bool row), `active` is an int with bit s set when seat s plays, `legal` is the mask as
    bytes (0/1), and the (5, 4)/(5,)/(C,)/(2,) arrays are lists.
    """

    __slots__ = tuple(f.name for f in dataclasses.fields(EuchreState))

    @classmethod
    def from_state(cls, state: EuchreState, row: int = 0) -> "OneGame":
        """The game in `row` of a batched state."""
        game = cls()
        game.read(state, row)
        return game

    def read(self, state: EuchreState, row: int = 0) -> None:
        """Take every field from `row` of a batched state."""
        for name in _SCALAR_FIELDS:
            setattr(self, name, getattr(state, name).item(row))
        for name in _LIST_FIELDS:
            setattr(self, name, getattr(state, name)[row].tolist())
        c = state.hand.shape[2]
        for name in ("hand", "dealt"):
            held = getattr(state, name)[row].tobytes()
            setattr(self, name, [int.from_bytes(held[seat * c : (seat + 1) * c], "little") for seat in range(NUM_SEATS)])
        self.active = int.from_bytes(state.active[row].tobytes(), "little") * 0x01020408 >> 24 & _ALL_SEATS
        self.legal = state.legal[row].tobytes()

    def write(self, state: EuchreState, row: int = 0) -> None:
        """Put every field into `row` of a batched state (same number of cards and actions)."""
        for name in _SCALAR_FIELDS + _LIST_FIELDS:
            getattr(state, name)[row] = getattr(self, name)
        c = state.hand.shape[2]
        for name in ("hand", "dealt"):
            held = b"".join(cards.to_bytes(c, "little") for cards in getattr(self, name))
            getattr(state, name)[row] = np.frombuffer(held, bool).reshape(NUM_SEATS, c)
        state.active[row] = [self.active >> seat & 1 for seat in range(NUM_SEATS)]
        state.legal[row] = np.frombuffer(self.legal, bool)


_LIST_FIELDS = (
    "bids", "trick_cards", "trick_leader", "trick_winner", "card_player", "card_trick",
    "tricks_won", "hand_points", "score", "rubber_points", "games_won",
)
_SCALAR_FIELDS = tuple(
    name for name in OneGame.__slots__ if name not in _LIST_FIELDS + ("hand", "dealt", "active", "legal")
)


def game_keys(seed: int | np.random.Generator | None, num_games: int) -> np.ndarray:
    """Deal keys for `num_games` games: game i's key depends only on (seed, i) for an int seed."""
    if isinstance(seed, np.random.Generator):
        return seed.integers(0, 2**63, size=num_games, dtype=np.uint64)
    if seed is None:
        seed = int(np.random.default_rng().integers(0, 2**63))
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int or a numpy Generator, got {seed!r}")
    base = _mix(np.array([(int(seed) + 0x632BE59BD9B4E019) % 2**64], dtype=np.uint64))[0]
    return _mix(base + np.arange(num_games, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))


def game_key(rng: np.random.Generator) -> int:
    """One deal key: `int(game_keys(rng, 1)[0])`, drawn as a scalar (the same value and draws, faster)."""
    return int(rng.integers(0, 2**63, dtype=np.uint64))


_MIX_SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))
_MIX_MULTIPLIERS = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))
_DEAL_MULTIPLIER = np.uint64(0xD1B54A32D192ED03)
_CARD_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, elementwise on uint64 (wrapping arithmetic)."""
    x = x.astype(np.uint64, copy=True)
    x ^= x >> _MIX_SHIFTS[0]
    x *= _MIX_MULTIPLIERS[0]
    x ^= x >> _MIX_SHIFTS[1]
    x *= _MIX_MULTIPLIERS[1]
    x ^= x >> _MIX_SHIFTS[2]
    return x


_MASK64 = 2**64 - 1
_DEAL_MULTIPLIER_INT = int(_DEAL_MULTIPLIER)


def _mix_int(x: int) -> int:
    """`_mix` of one value, on a Python int (a numpy call per operation costs more for one value)."""
    x ^= x >> 30
    x = x * 0xBF58476D1CE4E5B9 & _MASK64
    x ^= x >> 27
    x = x * 0x94D049BB133111EB & _MASK64
    return x ^ (x >> 31)


def _seat_bits(seats: np.ndarray) -> np.ndarray:
    """(m,) int: a (m, 4) bool array of seats as 4-bit numbers, seat s as bit s."""
    # Each row's four bytes read as one little-endian uint32 b0 + b1<<8 + b2<<16 + b3<<24; multiplying
    # by 0x01020408 gathers b0 + 2 b1 + 4 b2 + 8 b3 into the top byte (no carries: every byte stays < 16).
    words = np.ascontiguousarray(seats).view("<u4")[:, 0]
    return ((words * np.uint32(0x01020408)) >> np.uint32(24)).astype(np.intp)


def _packet_order() -> np.ndarray:
    """[dealer, deck position] -> seat receiving that card, dealing 3-2-3-2 then 2-3-2-3 from the left."""
    order = np.empty((NUM_SEATS, NUM_SEATS * HAND_SIZE), dtype=np.int8)
    for dealer in range(NUM_SEATS):
        pos = 0
        for packets in ((3, 2, 3, 2), (2, 3, 2, 3)):
            for k, size in enumerate(packets):
                seat = (dealer + 1 + k) % NUM_SEATS
                order[dealer, pos : pos + size] = seat
                pos += size
    return order


PACKET_SEAT = _packet_order()


class Engine:
    """The rules engine for one `Rules` config and episode kind, over batches of games."""

    def __init__(self, rules: Rules | None = None, episode: str = EPISODE_HAND, reward: str = REWARD_POINTS):
        if rules is None:
            rules = Rules()
        if not isinstance(rules, Rules):
            raise TypeError(f"rules must be a euchre_env.Rules, got {type(rules).__name__}")
        if episode not in EPISODES:
            raise ValueError(f"episode={episode!r} is not one of {EPISODES}")
        if reward not in REWARDS:
            raise ValueError(f"reward={reward!r} is not one of {REWARDS}")
        self.rules = rules
        self.episode = episode
        self.reward = reward
        self.deck: Deck = deck_for(rules)
        d = self.deck
        self.num_cards = d.num_cards
        self.num_actions = d.num_actions
        self.pass_action = d.pass_action
        self.alone_action = d.alone_action
        self.partner_action = d.partner_action
        self.first_suit_action = d.suit_action(0)
        self.action_names = d.action_names()
        self._build_observation_layout()
        self._build_step_tables()
        self._build_single_tables()

    def _build_step_tables(self) -> None:
        """Lookup tables for the legal masks, seat order and the one-game path."""
        d = self.deck
        c = self.num_cards
        table = np.zeros((_GAME_OVER + 1, c, 2, self.num_actions), bool)
        for upcard in range(c):
            offered = self.first_suit_action + int(d.upcard_suit[upcard])
            table[_BID_ROUND_1, upcard, :, self.pass_action] = True
            table[_BID_ROUND_1, upcard, :, offered] = True
            table[_BID_ROUND_2, upcard, :, self.first_suit_action : self.first_suit_action + NUM_SUITS] = True
            table[_BID_ROUND_2, upcard, :, offered] = False
            table[_BID_ROUND_2, upcard, 0, self.pass_action] = True
            table[_BID_ROUND_2, upcard, 1, self.pass_action] = not self.rules.stick_the_dealer
        for phase in (_MAKER_ALONE, _DEFENDER_ALONE):
            table[phase, :, :, self.alone_action] = True
            table[phase, :, :, self.partner_action] = True
        self._legal_table = table.reshape(-1, self.num_actions)
        # [trump, led suit] -> the cards that follow it; led suit -1 (the spare last row) -> every card
        follow = np.ones((NUM_SUITS, NUM_SUITS + 1, c), bool)
        follow[:, :NUM_SUITS] = d.effective_suit[:, None, :] == np.arange(NUM_SUITS)[None, :, None]
        self._follow = follow
        self._follow_rows = follow.reshape(-1, c)  # row trump * 5 + led suit (led -1 -> 4)
        # [active seats as 4 bits, seat] -> the next seat clockwise that plays; and the seats that play
        bits = np.arange(1 << NUM_SEATS)
        plays = (bits[:, None] >> np.arange(NUM_SEATS)) & 1
        nxt = np.zeros((1 << NUM_SEATS, NUM_SEATS), np.int8)
        for b in range(1 << NUM_SEATS):
            for seat in range(NUM_SEATS):
                out = (seat + 1) % NUM_SEATS
                for _ in range(NUM_SEATS - 1):
                    if not plays[b, out]:
                        out = (out + 1) % NUM_SEATS
                nxt[b, seat] = out
        self._next_active_table = nxt
        self._num_active_table = plays.sum(axis=1).astype(np.int8)
        self._next_active_list = nxt.tolist()
        self._num_active_list = self._num_active_table.tolist()
        self._upcard_suit_list = d.upcard_suit.tolist()
        self._effective_suit_list = d.effective_suit.tolist()
        self._trick_strength_list = d.trick_strength.tolist()
        self._zero_rewards = np.zeros((1, NUM_SEATS), np.float32)
        self._row0 = np.zeros(1, np.int64)
        self._card_noise = np.arange(1, c + 1, dtype=np.uint64) * _CARD_MULTIPLIER

    # ------------------------------------------------------------------ creation

    def _empty(self, n: int) -> EuchreState:
        c, a = self.num_cards, self.num_actions
        return EuchreState(
            key=np.zeros(n, np.uint64),
            deal_count=np.zeros(n, np.int64),
            phase=np.zeros(n, np.int8),
            to_play=np.full(n, -1, np.int8),
            dealer=np.zeros(n, np.int8),
            hand=np.zeros((n, NUM_SEATS, c), bool),
            dealt=np.zeros((n, NUM_SEATS, c), bool),
            upcard=np.full(n, -1, np.int16),
            bids=np.full((n, MAX_BIDS), -1, np.int16),
            num_bids=np.zeros(n, np.int8),
            trump=np.full(n, -1, np.int8),
            maker=np.full(n, -1, np.int8),
            ordered_up=np.zeros(n, bool),
            maker_alone=np.zeros(n, bool),
            lone_defender=np.full(n, -1, np.int8),
            defender_asks=np.zeros(n, np.int8),
            active=np.ones((n, NUM_SEATS), bool),
            picked_up=np.zeros(n, bool),
            discard=np.full(n, -1, np.int16),
            trick_cards=np.full((n, NUM_TRICKS, NUM_SEATS), -1, np.int16),
            trick_leader=np.full((n, NUM_TRICKS), -1, np.int8),
            trick_winner=np.full((n, NUM_TRICKS), -1, np.int8),
            card_player=np.full((n, c), -1, np.int8),
            card_trick=np.full((n, c), -1, np.int8),
            trick_index=np.zeros(n, np.int8),
            cards_in_trick=np.zeros(n, np.int8),
            led_suit=np.full(n, -1, np.int8),
            tricks_won=np.zeros((n, 2), np.int8),
            thrown_in=np.zeros(n, bool),
            hand_points=np.zeros((n, 2), np.int16),
            score=np.zeros((n, 2), np.int16),
            rubber_points=np.zeros((n, 2), np.int32),
            games_won=np.zeros((n, 2), np.int8),
            hand_number=np.zeros(n, np.int32),
            legal=np.zeros((n, a), bool),
        )

    def init(self, keys: np.ndarray) -> EuchreState:
        """New episodes, one per key: cut for the first dealer, deal, and wait for the first bid."""
        keys = np.asarray(keys, dtype=np.uint64).reshape(-1)
        state = self._empty(keys.shape[0])
        state.key[:] = keys
        self.restart(state, np.arange(keys.shape[0]))
        return state

    def restart(self, state: EuchreState, rows: np.ndarray) -> None:
        """Start a fresh episode in the given rows (autoreset), continuing each row's deal stream."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return
        state.score[rows] = 0
        state.rubber_points[rows] = 0
        state.games_won[rows] = 0
        state.hand_number[rows] = 0
        state.hand_points[rows] = 0
        state.thrown_in[rows] = False
        state.dealer[rows] = self._first_dealer(state, rows)
        self._deal(state, rows)
        self._update_legal(state, rows)

    def init_from_deal(self, dealer: int, hands: np.ndarray, upcard: int, key: int = 0) -> EuchreState:
        """One game (N=1) from an exact deal: dealer seat, 4x5 card ids, the upcard; the kitty is the rest."""
        if not isinstance(dealer, (int, np.integer)) or isinstance(dealer, bool) or not 0 <= dealer < NUM_SEATS:
            raise DealError(f"dealer must be a seat 0-3, got {dealer!r}")
        hands = np.asarray(hands)
        if hands.shape != (NUM_SEATS, HAND_SIZE):
            raise DealError(f"a deal needs 4 hands of 5 cards, got shape {hands.shape}")
        cards = np.concatenate([hands.reshape(-1), [upcard]]).astype(np.int64)
        if cards.min() < 0 or cards.max() >= self.num_cards:
            raise DealError(f"card ids must be in 0..{self.num_cards - 1} for this deck")
        if np.unique(cards).size != cards.size:
            dup = [self.deck.names[c] for c in np.unique(cards) if (cards == c).sum() > 1]
            raise DealError(f"a card is dealt twice: {', '.join(dup)}")
        state = self._empty(1)
        state.key[0] = np.uint64(key)
        state.dealer[0] = dealer
        state.hand[0, np.repeat(np.arange(NUM_SEATS), HAND_SIZE), hands.reshape(-1)] = True
        state.dealt[0] = state.hand[0]
        state.upcard[0] = upcard
        self._start_hand(state, np.array([0]))
        self._update_legal(state, np.array([0]))
        return state

    # ------------------------------------------------------------------ dealing

    def _permutations(self, keys: np.ndarray, deal_counts: np.ndarray, k: int) -> np.ndarray:
        """(m, k, C) deck permutations for deal numbers deal_counts + 0..k-1 of each key."""
        counts = deal_counts[:, None] + np.arange(k)
        base = _mix(keys[:, None] ^ (counts.astype(np.uint64) * _DEAL_MULTIPLIER))
        noise = _mix(base[:, :, None] + self._card_noise)
        return np.argsort(noise, axis=2, kind="stable")

    def _shuffle(self, state: EuchreState, rows: np.ndarray) -> np.ndarray:
        """A permutation of the deck per row, from (key, deal_count); advances deal_count."""
        perm = self._permutations(state.key[rows], state.deal_count[rows], 1)[:, 0]
        state.deal_count[rows] += 1
        return perm

    def _first_dealer(self, state: EuchreState, rows: np.ndarray) -> np.ndarray:
        """First dealer per row: by cut (high card deals, tied seats cut again) or uniformly at random."""
        perm = self._shuffle(state, rows)
        if self.rules.first_dealer != FIRST_DEALER_CUT:
            return (perm[:, 0] % NUM_SEATS).astype(np.int8)
        rank = self.deck.rank
        cutting = np.ones((rows.size, NUM_SEATS), bool)
        cut = rank[perm[:, :NUM_SEATS]].astype(np.int16)
        dealer = np.full(rows.size, -1, np.int8)
        for _ in range(MAX_CUTS):
            cut = np.where(cutting, cut, -1)
            best = cut.max(axis=1, keepdims=True)
            tied = cut == best
            settled = (tied.sum(axis=1) == 1) & (dealer < 0)
            dealer[settled] = np.argmax(tied[settled], axis=1)
            pending = np.flatnonzero(dealer < 0)
            if pending.size == 0:
                return dealer
            cutting[pending] = tied[pending]
            perm_again = self._shuffle(state, rows[pending])
            cut[pending] = rank[perm_again[:, :NUM_SEATS]]
        dealer[dealer < 0] = np.argmax(cutting[dealer < 0], axis=1)
        return dealer

    def _deal(self, state: EuchreState, rows: np.ndarray) -> None:
        """Shuffle and deal five cards to each seat in packets from the dealer's left; turn the upcard."""
        perm = self._shuffle(state, rows)
        seats = PACKET_SEAT[state.dealer[rows]]  # (n, 20)
        n = rows.size
        state.hand[rows] = False
        r = np.repeat(rows, NUM_SEATS * HAND_SIZE)
        state.hand[r, seats.reshape(-1), perm[:, : NUM_SEATS * HAND_SIZE].reshape(-1)] = True
        state.dealt[rows] = state.hand[rows]
        state.upcard[rows] = perm[np.arange(n), NUM_SEATS * HAND_SIZE]
        self._start_hand(state, rows)

    def _start_hand(self, state: EuchreState, rows: np.ndarray) -> None:
        """Reset the per-hand fields of freshly dealt rows and open round one of the bidding."""
        state.phase[rows] = _BID_ROUND_1
        state.to_play[rows] = (state.dealer[rows] + 1) % NUM_SEATS
        for name, value in NEW_HAND_VALUES:
            getattr(state, name)[rows] = value

    # ------------------------------------------------------------------ legal actions

    def _update_legal(self, state: EuchreState, rows: np.ndarray | None = None) -> None:
        """Rebuild the legal-action mask of the given rows (all rows when None)."""
        if rows is None:
            rows = np.arange(state.num_games)
        if rows.size == 0:
            return
        legal = state.legal
        # With every row asked for, work on whole arrays (a row's mask depends on that row alone).
        every = rows.size == state.num_games
        phase, upcard, to_play, dealer = (
            (state.phase, state.upcard, state.to_play, state.dealer)
            if every
            else (state.phase[rows], state.upcard[rows], state.to_play[rows], state.dealer[rows])
        )
        # Bids and alone decisions from a table: [phase, upcard, the dealer is to bid] -> mask.
        key = phase.astype(np.intp)
        key *= self.num_cards
        key += upcard
        key *= 2
        key += to_play == dealer
        if every and legal.flags.c_contiguous:
            np.take(self._legal_table, key, axis=0, out=legal, mode="clip")
        elif every:
            legal[...] = self._legal_table[key]
        else:
            legal[rows] = self._legal_table[key]

        holding = (phase == _DISCARD) | (phase == _PLAY)
        if not holding.any():
            return
        r = np.flatnonzero(holding) if every else rows[holding]
        discarding = phase[holding] == _DISCARD
        seat = np.where(discarding, dealer[holding], to_play[holding])
        held = np.take(state.hand.reshape(-1, self.num_cards), r * NUM_SEATS + seat, axis=0)
        # A card of the suit led must be played if held; led_suit is -1 (no constraint) while
        # leading and when discarding.
        follow_row = np.maximum(state.trump[r], 0) * (NUM_SUITS + 1) + state.led_suit[r] % (NUM_SUITS + 1)
        cards = np.take(self._follow_rows, follow_row, axis=0)
        cards &= held
        void = ~cards.any(axis=1)  # holds no card of the suit led: any card may be played
        cards[void] = held[void]
        if not self.rules.dealer_may_bury_upcard:
            d = np.flatnonzero(discarding)
            cards[d, state.upcard[r[d]]] = False
        legal[r, : self.num_cards] = cards

    def legal_actions(self, state: EuchreState, row: int = 0) -> list[int]:
        """Legal action ids of one game, ascending."""
        return np.flatnonzero(state.legal[row]).tolist()

    # ------------------------------------------------------------------ stepping

    def check_actions(self, state: EuchreState, actions: np.ndarray) -> np.ndarray:
        """Validate one action per game (ignored for finished rows); raise IllegalActionError naming it."""
        actions = np.asarray(actions)
        n = state.num_games
        if actions.shape != (n,):
            raise IllegalActionError(f"expected {n} actions (one per game), got shape {actions.shape}")
        if not np.issubdtype(actions.dtype, np.integer):
            raise IllegalActionError(f"actions must be integers, got dtype {actions.dtype}")
        live = ~state.done
        in_range = (actions >= 0) & (actions < self.num_actions)
        ok = np.where(in_range, state.legal[np.arange(n), np.clip(actions, 0, self.num_actions - 1)], False)
        bad = np.flatnonzero(live & ~ok)
        if bad.size:
            g = int(bad[0])
            raise IllegalActionError(
                f"illegal action {self.action_label(int(actions[g]))} in game {g} "
                f"(seat {int(state.to_play[g])}, phase {Phase(int(state.phase[g])).name}); legal actions: "
                + ", ".join(self.action_label(a) for a in self.legal_actions(state, g))
                + (f" ({bad.size} games had illegal actions)" if bad.size > 1 else "")
            )
        return actions.astype(np.int64)

    def action_label(self, action: int) -> str:
        """`name (id)` for messages; out-of-range ids are shown as they are."""
        if 0 <= action < self.num_actions:
            return f"{self.action_names[action]} ({action})"
        return f"{action} (no such action; ids are 0..{self.num_actions - 1})"

    def step(self, state: EuchreState, actions: np.ndarray) -> np.ndarray:
        """Apply one action per game in place and return (N, 4) float32 rewards for every seat.

        Rows already finished are left alone (their action is ignored). Raises IllegalActionError,
        leaving the state untouched, if any live game gets an illegal action.
        """
        if state.num_games == 1:
            return self._step_single(state, actions)
        actions = self.check_actions(state, actions)
        state.hand_points[:] = 0
        phase = state.phase.copy()
        live = np.flatnonzero(phase < _HAND_OVER)
        by_phase = np.argsort(phase, kind="stable")  # each phase's rows stay in ascending order
        counts = np.bincount(phase, minlength=NUM_DECISION_PHASES)
        ends = np.cumsum(counts)
        groups = [(p, by_phase[ends[p] - counts[p] : ends[p]]) for p in range(NUM_DECISION_PHASES)]
        scored = []
        for p, rows in groups:
            if rows.size == 0:
                continue
            a = actions[rows]
            if p == _BID_ROUND_1:
                self._bid_round_1(state, rows, a)
            elif p == _BID_ROUND_2:
                scored.append(self._bid_round_2(state, rows, a))
            elif p == _MAKER_ALONE:
                self._maker_alone(state, rows, a)
            elif p == _DEFENDER_ALONE:
                self._defender_alone(state, rows, a)
            elif p == _DISCARD:
                self._discard(state, rows, a)
            else:
                scored.append(self._play(state, rows, a))
        self._update_legal(state, live)
        return self._rewards(state, np.concatenate(scored) if scored else np.empty(0, np.int64))

    def _record_bid(self, state: EuchreState, rows: np.ndarray, a: np.ndarray) -> None:
        state.bids[rows, state.num_bids[rows]] = a
        state.num_bids[rows] += 1

    def _bid_round_1(self, state: EuchreState, rows: np.ndarray, a: np.ndarray) -> None:
        self._record_bid(state, rows, a)
        passed = a == self.pass_action
        r = rows[passed]
        state.to_play[r] = (state.to_play[r] + 1) % NUM_SEATS
        state.phase[r[state.num_bids[r] == NUM_SEATS]] = _BID_ROUND_2
        r = rows[~passed]
        if r.size:
            state.ordered_up[r] = True
            self._name_trump(state, r, self.deck.upcard_suit[state.upcard[r]])

    def _bid_round_2(self, state: EuchreState, rows: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Returns the rows whose hand was thrown in and ended the episode (for rewards)."""
        self._record_bid(state, rows, a)
        passed = a == self.pass_action
        r = rows[~passed]
        if r.size:
            self._name_trump(state, r, (a[~passed] - self.first_suit_action).astype(np.int8))
        r = rows[passed]
        state.to_play[r] = (state.to_play[r] + 1) % NUM_SEATS
        thrown = r[state.num_bids[r] == MAX_BIDS]
        if thrown.size == 0:
            return thrown
        state.thrown_in[thrown] = True
        if self.episode == EPISODE_HAND and self.rules.throw_in_ends_hand_episode:
            state.phase[thrown] = _HAND_OVER
            state.to_play[thrown] = -1
            state.hand_number[thrown] += 1
            return thrown
        if not self.rules.throw_in_same_dealer:
            state.dealer[thrown] = (state.dealer[thrown] + 1) % NUM_SEATS
        self._deal(state, thrown)
        return np.empty(0, np.int64)

    def _name_trump(self, state: EuchreState, rows: np.ndarray, suit: np.ndarray) -> None:
        state.trump[rows] = suit
        state.maker[rows] = state.to_play[rows]
        state.thrown_in[rows] = False
        if self.rules.alone_when_naming:
            state.phase[rows] = _MAKER_ALONE  # to_play stays the maker
            return
        r1 = rows[state.ordered_up[rows]]
        self._pick_up(state, r1)
        state.phase[rows[~state.ordered_up[rows]]] = _MAKER_ALONE

    def _pick_up(self, state: EuchreState, rows: np.ndarray) -> None:
        """The dealer takes the upcard into hand and must bury one card."""
        state.hand[rows, state.dealer[rows], state.upcard[rows]] = True
        state.picked_up[rows] = True
        state.phase[rows] = _DISCARD
        state.to_play[rows] = state.dealer[rows]

    def _maker_alone(self, state: EuchreState, rows: np.ndarray, a: np.ndarray) -> None:
        alone = rows[a == self.alone_action]
        state.maker_alone[alone] = True
        state.active[alone, (state.maker[alone] + 2) % NUM_SEATS] = False
        if self.rules.lone_defender:
            state.phase[rows] = _DEFENDER_ALONE
            first = (state.dealer[rows] + 1) % NUM_SEATS
            first = np.where(first % 2 == state.maker[rows] % 2, (first + 1) % NUM_SEATS, first)
            state.to_play[rows] = first
        else:
            self._after_alone_decisions(state, rows)

    def _defender_alone(self, state: EuchreState, rows: np.ndarray, a: np.ndarray) -> None:
        state.defender_asks[rows] += 1
        alone = a == self.alone_action
        r = rows[alone]
        state.lone_defender[r] = state.to_play[r]
        state.active[r, (state.to_play[r] + 2) % NUM_SEATS] = False
        declined = rows[~alone]
        ask_other = declined[state.defender_asks[declined] < 2]
        state.to_play[ask_other] = (state.to_play[ask_other] + 2) % NUM_SEATS
        finished = np.concatenate([r, declined[state.defender_asks[declined] >= 2]])
        self._after_alone_decisions(state, finished)

    def _after_alone_decisions(self, state: EuchreState, rows: np.ndarray) -> None:
        """Alone decisions are made: the dealer picks up if still due, else play starts."""
        if self.rules.alone_when_naming:
            due = state.ordered_up[rows] & state.active[rows, state.dealer[rows]]
            self._pick_up(state, rows[due])
            self._start_play(state, rows[~due])
        else:
            self._start_play(state, rows)

    def _discard(self, state: EuchreState, rows: np.ndarray, a: np.ndarray) -> None:
        state.hand[rows, state.dealer[rows], a] = False
        state.discard[rows] = a
        if self.rules.alone_when_naming:
            self._start_play(state, rows)
        else:
            state.phase[rows] = _MAKER_ALONE
            state.to_play[rows] = state.maker[rows]

    def _next_active(self, state: EuchreState, rows: np.ndarray, seat: np.ndarray) -> np.ndarray:
        """The first seat after `seat` (clockwise) that plays this hand."""
        return self._next_active_table[self._active_bits(state, rows), seat]

    def _active_bits(self, state: EuchreState, rows: np.ndarray) -> np.ndarray:
        """(m,) the seats that play, seat s as bit s."""
        return _seat_bits(state.active[rows])

    def _start_play(self, state: EuchreState, rows: np.ndarray) -> None:
        if rows.size == 0:
            return
        leader = self._next_active(state, rows, state.dealer[rows])
        if self.rules.lone_lead == LEAD_LEFT_OF_LONE_PLAYER:
            maker_alone = state.maker_alone[rows]
            lone_def = state.lone_defender[rows]
            left_of_maker = (state.maker[rows] + 1) % NUM_SEATS
            leader = np.where(maker_alone, left_of_maker, leader)
            leader = np.where(lone_def >= 0, (lone_def + 1) % NUM_SEATS, leader)
            leader = np.where(maker_alone & (lone_def >= 0), lone_def, leader)
        state.phase[rows] = _PLAY
        state.to_play[rows] = leader
        state.trick_leader[rows, 0] = leader

    def _play(self, state: EuchreState, rows: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Play a card; finish tricks and hands. Returns the rows whose hand was scored."""
        seat = state.to_play[rows]
        t = state.trick_index[rows]
        state.hand[rows, seat, a] = False
        state.trick_cards[rows, t, seat] = a
        state.card_player[rows, a] = seat
        state.card_trick[rows, a] = t
        leading = state.cards_in_trick[rows] == 0
        lr = rows[leading]
        state.led_suit[lr] = self.deck.effective_suit[state.trump[lr], a[leading]]
        in_trick = state.cards_in_trick[rows] + 1
        state.cards_in_trick[rows] = in_trick
        bits = self._active_bits(state, rows)
        complete = in_trick == self._num_active_table[bits]

        r = rows[~complete]
        state.to_play[r] = self._next_active_table[bits[~complete], seat[~complete]]

        r = rows[complete]
        if r.size == 0:
            return r
        tc = t[complete]
        cards = state.trick_cards[r, tc]  # (m, 4)
        strength = self.deck.trick_strength[state.trump[r][:, None], state.led_suit[r][:, None], np.maximum(cards, 0)]
        winner = np.argmax(np.where(cards >= 0, strength, -1), axis=1).astype(np.int8)
        state.trick_winner[r, tc] = winner
        state.tricks_won[r, winner % 2] += 1  # one trick per row: no repeated index
        state.trick_index[r] += 1
        state.cards_in_trick[r] = 0
        state.led_suit[r] = -1
        state.to_play[r] = winner
        more = state.trick_index[r] < NUM_TRICKS
        state.trick_leader[r[more], state.trick_index[r[more]]] = winner[more]
        finished = r[~more]
        self._end_hand(state, finished)
        return finished

    def hand_score(self, state: EuchreState, rows: np.ndarray) -> np.ndarray:
        """(m, 2) points each team scores for the finished hands in `rows`; only one side scores."""
        maker_team = state.maker[rows] % 2
        maker_tricks = state.tricks_won[rows, maker_team]
        made = np.where(maker_tricks == NUM_TRICKS, np.where(state.maker_alone[rows], 4, 2), 1)
        lone_def = state.lone_defender[rows] >= 0
        set_points = np.where(
            lone_def, np.where(maker_tricks == 0, 4, self.rules.lone_defender_euchre_points), 2
        )
        euchred = maker_tricks < 3
        points = np.zeros((rows.size, 2), np.int16)
        m = np.arange(rows.size)
        points[m, maker_team] = np.where(euchred, 0, made)
        points[m, 1 - maker_team] = np.where(euchred, set_points, 0)
        return points

    def trick_winner(self, trump: int, leader: int, cards: list[int]) -> int:
        """Seat that wins a finished trick: `cards[seat]` is the card each seat played, -1 for a seat sitting out.

        A public query for tools that show a game (the engine's own steps record `trick_winner`)."""
        if not 0 <= trump < NUM_SUITS or not 0 <= leader < NUM_SEATS or len(cards) != NUM_SEATS or cards[leader] < 0:
            raise ValueError(f"trick_winner needs a trump 0-3, a leader 0-3 who played and 4 cards, got {trump}, {leader}, {cards}")
        led = int(self.deck.effective_suit[trump, cards[leader]])
        strength = [int(self.deck.trick_strength[trump, led, c]) if c >= 0 else -1 for c in cards]
        return strength.index(max(strength))

    def _end_hand(self, state: EuchreState, rows: np.ndarray) -> None:
        if rows.size == 0:
            return
        points = self.hand_score(state, rows)
        state.hand_points[rows] = points
        state.score[rows] += points
        state.rubber_points[rows] += points
        state.hand_number[rows] += 1
        if self.episode == EPISODE_HAND:
            state.phase[rows] = _HAND_OVER
            state.to_play[rows] = -1
            return
        won = state.score[rows] >= self.rules.target_points  # (m, 2); at most one side can cross
        game_over = won.any(axis=1)
        over = rows[game_over]
        if self.episode == EPISODE_RUBBER and over.size:
            state.games_won[over] += won[game_over]
            rubber_over = state.games_won[over].max(axis=1) >= self.rules.rubber_games
            more_games = over[~rubber_over]
            state.score[more_games] = 0
            over = over[rubber_over]
        state.phase[over] = _GAME_OVER
        state.to_play[over] = -1
        go_on = rows[state.phase[rows] != _GAME_OVER]
        state.dealer[go_on] = (state.dealer[go_on] + 1) % NUM_SEATS
        self._deal(state, go_on)

    def _rewards(self, state: EuchreState, scored: np.ndarray) -> np.ndarray:
        """(N, 4) rewards of this step: hand points margin per seat, or +-1 at the end of the game."""
        n = state.num_games
        rewards = np.zeros((n, NUM_SEATS), np.float32)
        if scored.size == 0:
            return rewards
        if self.reward == REWARD_POINTS:
            margin = (state.hand_points[scored, 0] - state.hand_points[scored, 1]).astype(np.float32)
        else:
            over = state.phase[scored] == _GAME_OVER
            if self.episode == EPISODE_HAND:
                over = state.phase[scored] == _HAND_OVER
                lead = state.hand_points[scored, 0].astype(np.int32) - state.hand_points[scored, 1]
            elif self.episode == EPISODE_GAME:
                lead = state.score[scored, 0].astype(np.int32) - state.score[scored, 1]
            else:
                lead = state.games_won[scored, 0].astype(np.int32) - state.games_won[scored, 1]
            margin = np.where(over, np.sign(lead), 0).astype(np.float32)
        rewards[scored] = margin[:, None] * np.array([1, -1, 1, -1], np.float32)
        return rewards

    def rubber_score(self, state: EuchreState) -> np.ndarray:
        """(N, 2) rubber points: the rubber's winners get the bonus plus their point difference."""
        out = np.zeros((state.num_games, 2), np.int32)
        done = state.games_won.max(axis=1) >= self.rules.rubber_games
        winner = np.argmax(state.games_won, axis=1)
        rows = np.flatnonzero(done)
        w = winner[rows]
        # 004_*: "the difference between their points and those of their opponents", signed.
        diff = state.rubber_points[rows, w] - state.rubber_points[rows, 1 - w]
        out[rows, w] = self.rules.rubber_bonus + diff
        return out

    # ------------------------------------------------------------------ one game (N = 1)
    # The same transitions as the batched functions above, written on a `OneGame` of plain Python
    # values: with one game, a numpy call per rule costs far more than the rule itself. Rare events
    # (the end of a hand in game and rubber episodes, with the next deal) go through the batched
    # functions on a one-row scratch state. tests/test_engine_properties.py plays games alone and in
    # a batch and requires every field to match after every step; tests also require `init_one` to
    # equal `init` field by field.

    def _build_single_tables(self) -> None:
        """Tables the one-game path reads: plain lists (a list index beats numpy's) and lookups by key."""
        c = self.num_cards
        self._rank_list = self.deck.rank.tolist()
        self._packet_seat_list = PACKET_SEAT.tolist()
        # (maker's tricks, maker alone, a lone defender) -> (makers' points, defenders' points), from hand_score
        combos = [(t, alone, lone) for t in range(NUM_TRICKS + 1) for alone in (False, True) for lone in (False, True)]
        probe = self._empty(len(combos))
        probe.maker[:] = 0
        for row, (t, alone, lone) in enumerate(combos):
            probe.tricks_won[row, 0] = t
            probe.maker_alone[row] = alone
            probe.lone_defender[row] = 1 if lone else -1
        points = self.hand_score(probe, np.arange(len(combos))).tolist()
        self._hand_score_table = dict(zip(combos, map(tuple, points)))
        play_rows = self._legal_table.reshape(_GAME_OVER + 1, -1, self.num_actions)[(_DISCARD, _PLAY), :]
        assert not play_rows.any(), "_update_legal_one expects the table to allow nothing when holding cards"
        self._legal_bytes = [row.tobytes() for row in self._legal_table]
        self._no_extra_bytes = bytes(self.num_actions - c)
        self._card_bit = [1 << (8 * card) for card in range(c)]  # card k as byte k of a hand (see OneGame)
        # _follow[trump, led] as one integer (byte i is 1 when card i follows), see _update_legal_one
        self._follow_int = [[int.from_bytes(row.tobytes(), "little") for row in by_led] for by_led in self._follow]
        # NEW_HAND_VALUES in a OneGame's form, read back from a state `_start_hand` has reset
        fresh = self._empty(1)
        self._start_hand(fresh, np.zeros(1, np.intp))
        start = OneGame.from_state(fresh)
        self._new_hand_one = [(name, getattr(start, name)) for name, _ in NEW_HAND_VALUES]
        self._scratch: EuchreState | None = None

    def _scratch_of(self, game: OneGame) -> EuchreState:
        """A one-row state holding `game` (the same scratch arrays every call)."""
        if self._scratch is None:
            self._scratch = self._empty(1)
        game.write(self._scratch)
        return self._scratch

    def init_one(self, key: int, game: OneGame | None = None) -> OneGame:
        """`init` for one game: the same episode for the same key, as a `OneGame` (`game` is reused if given)."""
        if game is None:
            game = OneGame()
        game.key = key
        game.score = [0, 0]
        game.rubber_points = [0, 0]
        game.games_won = [0, 0]
        game.hand_number = 0
        game.hand_points = [0, 0]
        game.thrown_in = False
        perms = self._permutations_single(key, 0, 3)  # the cut and the deal, one spare for a tied cut
        used = 1
        if self.rules.first_dealer != FIRST_DEALER_CUT:
            dealer = perms[0][0] % NUM_SEATS
        else:  # as `_first_dealer`: high card deals, tied seats cut again
            rank = self._rank_list
            cut = [rank[card] for card in perms[0][:NUM_SEATS]]
            cutting = [True] * NUM_SEATS
            for _ in range(MAX_CUTS):
                cut = [r if cutting[s] else -1 for s, r in enumerate(cut)]
                best = max(cut)
                tied = [r == best for r in cut]
                if tied.count(True) == 1:
                    dealer = tied.index(True)
                    break
                cutting = tied
                if used == len(perms):
                    perms += self._permutations_single(key, used, 3)
                cut = [rank[card] for card in perms[used][:NUM_SEATS]]
                used += 1
            else:
                dealer = cutting.index(True)
        if used == len(perms):
            perms += self._permutations_single(key, used, 1)
        game.deal_count = used + 1
        game.dealer = dealer
        self._deal_one(game, perms[used])
        return game

    def _permutations_single(self, key: int, count: int, k: int) -> list[list[int]]:
        """`_permutations` of one key: the deck orders of deal numbers count .. count + k - 1, as lists."""
        bases = [_mix_int(key ^ ((count + i) * _DEAL_MULTIPLIER_INT & _MASK64)) for i in range(k)]
        noise = _mix(np.array(bases, np.uint64)[:, None] + self._card_noise)
        return noise.argsort(axis=1, kind="stable").tolist()

    def _deal_one(self, game: OneGame, perm: list[int]) -> None:
        """`_deal` from a deck order `perm` (the dealer is set), then `_start_hand` and the legal mask."""
        bit = self._card_bit
        hand = [0] * NUM_SEATS
        for seat, card in zip(self._packet_seat_list[game.dealer], perm):  # the first 20 cards
            hand[seat] |= bit[card]
        game.hand = hand
        game.dealt = list(hand)
        game.upcard = perm[NUM_SEATS * HAND_SIZE]
        game.phase = _BID_ROUND_1
        game.to_play = (game.dealer + 1) % NUM_SEATS
        for name, value in self._new_hand_one:
            if type(value) is list:  # a fresh list: the game changes its lists in place
                value = [row[:] for row in value] if type(value[0]) is list else value[:]
            setattr(game, name, value)
        self._update_legal_one(game)

    def _step_single(self, state: EuchreState, actions: np.ndarray) -> np.ndarray:
        """`step` for a batch of one game, through `step_one`."""
        acts = np.asarray(actions)
        if acts.shape != (1,) or acts.dtype.kind not in "iu":
            self.check_actions(state, acts)  # raises with the full message
        game = OneGame.from_state(state)
        rewards = self.step_one(game, int(acts[0]))
        game.write(state)
        return self._zero_rewards.copy() if rewards is None else rewards

    def step_one(self, game: OneGame, action: int, seen: SeatObservations | None = None) -> np.ndarray | None:
        """`step` for one game and an int action: (1, 4) rewards, or None when this step pays nobody.

        `seen`, the observations kept for this game, is told about the step (see `SeatObservations`).
        """
        phase = game.phase
        if phase < _HAND_OVER and not (0 <= action < self.num_actions and game.legal[action]):
            self.check_actions(self._scratch_of(game), np.array([action]))  # raises with the full message
        game.hand_points = [0, 0]
        if phase >= _HAND_OVER:
            return None
        seat = game.to_play
        if phase == _PLAY:  # most decisions
            trick = game.trick_index
            scored = self._play_one(game, seat, trick, action)
            if seen is not None:
                seen.played(game, seat, trick, action)
            self._update_legal_one(game)
            return self._rewards_one(game) if scored else None
        scored = False
        if phase == _BID_ROUND_1 or phase == _BID_ROUND_2:
            scored = self._bid_one(game, phase, action)
        elif phase == _MAKER_ALONE:
            if action == self.alone_action:
                game.maker_alone = True
                game.active &= ~(1 << (game.maker + 2) % NUM_SEATS)
            if self.rules.lone_defender:
                game.phase = _DEFENDER_ALONE
                first = (game.dealer + 1) % NUM_SEATS
                if first % 2 == game.maker % 2:
                    first = (first + 1) % NUM_SEATS
                game.to_play = first
            else:
                self._after_alone_one(game)
        elif phase == _DEFENDER_ALONE:
            game.defender_asks += 1
            if action == self.alone_action:
                game.lone_defender = seat
                game.active &= ~(1 << (seat + 2) % NUM_SEATS)
                self._after_alone_one(game)
            elif game.defender_asks < 2:
                game.to_play = (seat + 2) % NUM_SEATS
            else:
                self._after_alone_one(game)
        else:  # the dealer's discard
            game.hand[game.dealer] &= ~self._card_bit[action]
            game.discard = action
            if self.rules.alone_when_naming:
                self._start_play_one(game)
            else:
                game.phase = _MAKER_ALONE
                game.to_play = game.maker
        if seen is not None:
            seen.decided(game, phase, seat, action)
        self._update_legal_one(game)
        return self._rewards_one(game) if scored else None

    def _bid_one(self, game: OneGame, phase: int, a: int) -> bool:
        """A bid in either round; True if a thrown-in hand ended the episode."""
        num_bids = game.num_bids
        game.bids[num_bids] = a
        num_bids += 1
        game.num_bids = num_bids
        if a != self.pass_action:
            if phase == _BID_ROUND_1:
                game.ordered_up = True
                suit = self._upcard_suit_list[game.upcard]
            else:
                suit = a - self.first_suit_action
            self._name_trump_one(game, suit)
            return False
        game.to_play = (game.to_play + 1) % NUM_SEATS
        if phase == _BID_ROUND_1:
            if num_bids == NUM_SEATS:
                game.phase = _BID_ROUND_2
            return False
        if num_bids < MAX_BIDS:
            return False
        game.thrown_in = True
        if self.episode == EPISODE_HAND and self.rules.throw_in_ends_hand_episode:
            game.phase = _HAND_OVER
            game.to_play = -1
            game.hand_number += 1
            return True
        if not self.rules.throw_in_same_dealer:
            game.dealer = (game.dealer + 1) % NUM_SEATS
        perm = self._permutations_single(game.key, game.deal_count, 1)[0]  # as `_shuffle`
        game.deal_count += 1
        self._deal_one(game, perm)
        return False

    def _name_trump_one(self, game: OneGame, suit: int) -> None:
        game.trump = suit
        game.maker = game.to_play
        game.thrown_in = False
        if not self.rules.alone_when_naming and game.ordered_up:
            self._pick_up_one(game)
        else:
            game.phase = _MAKER_ALONE  # to_play stays the maker

    def _pick_up_one(self, game: OneGame) -> None:
        dealer = game.dealer
        game.hand[dealer] |= self._card_bit[game.upcard]
        game.picked_up = True
        game.phase = _DISCARD
        game.to_play = dealer

    def _after_alone_one(self, game: OneGame) -> None:
        if self.rules.alone_when_naming and game.ordered_up and game.active >> game.dealer & 1:
            self._pick_up_one(game)
        else:
            self._start_play_one(game)

    def _start_play_one(self, game: OneGame) -> None:
        leader = self._next_active_list[game.active][game.dealer]
        if self.rules.lone_lead == LEAD_LEFT_OF_LONE_PLAYER:
            if game.maker_alone:
                leader = (game.maker + 1) % NUM_SEATS
            if game.lone_defender >= 0:
                leader = game.lone_defender if game.maker_alone else (game.lone_defender + 1) % NUM_SEATS
        game.phase = _PLAY
        game.to_play = leader
        game.trick_leader[0] = leader

    def _play_one(self, game: OneGame, seat: int, t: int, a: int) -> bool:
        """`seat` plays card `a` to trick `t`; True if it finished the hand (scored)."""
        trump = game.trump
        game.hand[seat] &= ~self._card_bit[a]
        cards = game.trick_cards[t]
        cards[seat] = a
        game.card_player[a] = seat
        game.card_trick[a] = t
        in_trick = game.cards_in_trick
        if in_trick == 0:
            game.led_suit = self._effective_suit_list[trump][a]
        in_trick += 1
        bits = game.active
        if in_trick < self._num_active_list[bits]:
            game.cards_in_trick = in_trick
            game.to_play = self._next_active_list[bits][seat]
            return False
        strength = self._trick_strength_list[trump][game.led_suit]
        winner, best = 0, -2
        for s, card in enumerate(cards):
            value = strength[card] if card >= 0 else -1
            if value > best:
                winner, best = s, value
        game.trick_winner[t] = winner
        game.tricks_won[winner % 2] += 1
        game.trick_index = t + 1
        game.cards_in_trick = 0
        game.led_suit = -1
        game.to_play = winner
        if t + 1 < NUM_TRICKS:
            game.trick_leader[t + 1] = winner
            return False
        self._end_hand_one(game)
        return True

    def _end_hand_one(self, game: OneGame) -> None:
        """`_end_hand` of one game; longer episodes (game over, the next deal) go to `_end_hand` itself."""
        if self.episode != EPISODE_HAND:
            state = self._scratch_of(game)
            self._end_hand(state, self._row0)
            game.read(state)
            return
        maker_team = game.maker % 2
        key = (game.tricks_won[maker_team], game.maker_alone, game.lone_defender >= 0)
        makers, defenders = self._hand_score_table[key]
        points = [makers, defenders] if maker_team == 0 else [defenders, makers]
        game.hand_points = points
        game.score = [game.score[0] + points[0], game.score[1] + points[1]]
        game.rubber_points = [game.rubber_points[0] + points[0], game.rubber_points[1] + points[1]]
        game.hand_number += 1
        game.phase = _HAND_OVER
        game.to_play = -1

    def _rewards_one(self, game: OneGame) -> np.ndarray:
        """`_rewards` of one game at the end of a hand; longer episodes go to `_rewards` itself."""
        if self.episode != EPISODE_HAND:
            return self._rewards(self._scratch_of(game), self._row0)
        margin = game.hand_points[0] - game.hand_points[1]
        if self.reward == REWARD_WIN:
            margin = (margin > 0) - (margin < 0)
        return np.array([[margin, -margin, margin, -margin]], np.float32)

    def _update_legal_one(self, game: OneGame) -> None:
        phase, to_play = game.phase, game.to_play
        if phase == _PLAY:  # the legal table's rows for play and discards allow nothing (checked on build)
            held = game.hand[to_play]
            if game.cards_in_trick:
                follow = held & self._follow_int[game.trump][game.led_suit]
                if follow:
                    held = follow
            game.legal = held.to_bytes(self.num_cards, "little") + self._no_extra_bytes
        elif phase == _DISCARD:
            held = game.hand[game.dealer]
            if not self.rules.dealer_may_bury_upcard:
                held &= ~self._card_bit[game.upcard]
            game.legal = held.to_bytes(self.num_cards, "little") + self._no_extra_bytes
        else:
            game.legal = self._legal_bytes[(phase * self.num_cards + game.upcard) * 2 + (to_play == game.dealer)]

    # ------------------------------------------------------------------ observations

    def _build_observation_layout(self) -> None:
        """Place every feature in the observation vector and build the tables that write them.

        Card features come first, 16 cells per card (see `CARD_FIELDS`), so one table lookup per card
        writes them all; the per-hand features follow (`TAIL_FIELDS`), written as a bit string.
        `observation_layout[name]` lists each feature's cells in its logical order.
        """
        c = self.num_cards
        cards = np.arange(c)
        self.observation_layout: dict[str, np.ndarray] = {}
        offset = 0
        for name, width in CARD_FIELDS:
            cells = CARD_CELLS * cards[:, None] + offset + np.arange(width)[None, :]  # (card, item)
            self.observation_layout[name] = (cells.T if name == "current_trick" else cells).reshape(-1)
            offset += width
        tail = CARD_CELLS * c
        self._tail_start = tail
        offset = 0
        self._tail_offset: dict[str, int] = {}
        for name, width in TAIL_FIELDS:
            self.observation_layout[name] = tail + offset + np.arange(width)
            self._tail_offset[name] = offset
            offset += width
        self.observation_size = tail + offset
        self._cells = {name: cells.tolist() for name, cells in self.observation_layout.items()}
        self._hand_cells = slice(0, CARD_CELLS * c, CARD_CELLS)

        # One 16-cell record per card code: flags (hand, upcard, own discard) * 41 + play, where play
        # is 0 for an unplayed card, else 1 + (relative seat * 5 + trick) * 2 + (trick is the current one).
        records = np.zeros((8, _PLAY_CODES, CARD_CELLS), np.uint8)
        for flags in range(8):
            records[flags, :, :3] = (flags >> np.arange(3)) & 1
        for play in range(1, _PLAY_CODES):
            rel, trick = divmod((play - 1) >> 1, NUM_TRICKS)
            current = (play - 1) & 1
            records[:, play, 3 + rel] = 1
            records[:, play, 7 + trick] = 1
            records[:, play, 12 + rel] = current
        # as 16-bit patterns, little-endian: bit k of a card's pattern is its cell k
        self._card_records = np.packbits(records.reshape(-1, CARD_CELLS), axis=1, bitorder="little").view("<u2")[:, 0].copy()

        # The per-hand features are bits of two 64-bit words per game; bit b is tail cell b.
        off = self._tail_offset
        seats = np.arange(NUM_SEATS)
        rel_bit = np.zeros((NUM_SEATS + 1, NUM_SEATS), np.uint64)  # [seat + 1, observer], seat -1 -> 0
        rel_bit[1:] = np.uint64(1) << ((seats[:, None] - seats[None, :]) & 3).astype(np.uint64)
        rel_bit = rel_bit.reshape(-1)  # index (seat + 1) * 4 + observer
        self._dealer_bits = rel_bit << np.uint64(off["dealer"])
        self._maker_bits = rel_bit << np.uint64(off["maker"])
        self._alone_bits = rel_bit << np.uint64(off["alone"])
        leaders = np.arange(NUM_TRICKS, dtype=np.uint64)[:, None] * np.uint64(NUM_SEATS) + np.uint64(off["trick_leader"])
        self._leader_bits = (rel_bit[None, :] << leaders).reshape(-1)  # index trick * 20 + (seat + 1) * 4 + observer
        self._trump_bits = np.concatenate([[0], 1 << (off["trump"] + np.arange(NUM_SUITS))]).astype(np.uint64)
        phases = np.arange(8)
        self._phase_bits = np.where(phases < NUM_DECISION_PHASES, 1 << (off["phase"] + phases), 0).astype(np.uint64)
        self._won_bits = (1 << (off["tricks_won"] + np.arange(2 * (NUM_TRICKS + 1)))).astype(np.uint64).reshape(2, -1)
        out_seats = np.arange(1 << NUM_SEATS)[:, None]
        rotated = ((out_seats | out_seats << NUM_SEATS) >> seats[None, :]) & 15  # [seats out, observer] -> relative
        self._sitting_out_bits = (rotated << off["sitting_out"]).astype(np.uint64).reshape(-1)
        # bids: slot k, choice j (pass 0, suit 1 + s) at bit 5k + j of their own 40-bit word
        choice = np.full(self.num_actions + 1, -1)  # index action + 1; -1 (no bid) -> entry 0
        choice[1 + self.pass_action] = 0
        choice[1 + self.first_suit_action : 1 + self.first_suit_action + NUM_SUITS] = 1 + np.arange(NUM_SUITS)
        slots = np.arange(MAX_BIDS)[:, None]
        bid_bits = np.where(choice >= 0, 1 << (slots * (1 + NUM_SUITS) + np.maximum(choice, 0)), 0)
        self._bid_bits = bid_bits.astype(np.uint64).reshape(-1)  # index slot * (A + 1) + action + 1
        self._bid_slot_base = (np.arange(MAX_BIDS) * (self.num_actions + 1) + 1).astype(np.intp)
        self._leader_base = (np.arange(NUM_TRICKS) * (NUM_SEATS + 1) * NUM_SEATS).astype(np.intp)
        self._tail_bit_cells = off["score"]
        self._packed_cache: dict[int, np.ndarray] = {}
        assert self._tail_bit_cells <= 128 and off["bids"] + (1 + NUM_SUITS) * MAX_BIDS == self._tail_bit_cells

    def observe(self, state: EuchreState, seats: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """(N, D) float32 information state of `seats` (default: the seat to act), from that seat's view.

        Seats are relative: 0 = the observer, 1 = its left, 2 = its partner, 3 = its right.
        """
        n = state.num_games
        if n == 1:
            seat = max(state.to_play.item(0), 0) if seats is None else int(seats[0])
            obs = self._observe_single(OneGame.from_state(state), seat)[None]
            if out is None:
                return obs
            out[...] = obs
            return out
        if seats is None:
            seats = np.maximum(state.to_play, 0)
        me = np.asarray(seats, dtype=np.intp)
        size = self.observation_size
        fits = out is not None and out.dtype == np.float32 and out.shape == (n, size) and out.flags.c_contiguous
        buf = out if fits else np.empty((n, size), np.float32)
        for r0 in range(0, n, _OBSERVE_CHUNK):
            self._observe_rows(state, me, buf, slice(r0, min(r0 + _OBSERVE_CHUNK, n)))
        if out is None or fits:
            return buf
        out[...] = buf
        return out

    def _observe_rows(self, state: EuchreState, me_all: np.ndarray, buf: np.ndarray, sl: slice) -> None:
        m = sl.stop - sl.start
        c = self.num_cards
        me = me_all[sl]
        seat_index = me + NUM_SEATS  # + (seat * 4) indexes the [seat + 1, observer] tables

        # card records: code = (in hand + 2 upcard + 4 own discard) * 41 + play code
        rows = np.arange(sl.start, sl.stop, dtype=np.intp)
        local = rows - sl.start
        flags = np.empty((m, c + 1), np.int16)  # the spare last column takes the marks of "no card"
        flags[:, :c] = np.take(state.hand.reshape(-1, c), rows * NUM_SEATS + me, axis=0)
        upcard = state.upcard[sl]
        flags[local, np.where(upcard >= 0, upcard, c)] += 2
        flags[local, np.where((state.dealer[sl] == me) & (state.discard[sl] >= 0), state.discard[sl], c)] += 4
        code = flags[:, :c]
        code *= _PLAY_CODES
        player, trick = state.card_player[sl], state.card_trick[sl]
        play = (player - me.astype(np.int8)[:, None]) & 3
        play *= 2 * NUM_TRICKS
        play += trick * 2 + 1
        play += trick == state.trick_index[sl, None]
        play *= player >= 0
        code += play
        # the whole observation as one bit string: the card patterns, then the two tail words
        packed = self._packed_cache.get(m)
        if packed is None:
            packed = self._packed_cache[m] = np.empty((m, 2 * c + 16), np.uint8)
        packed[:, : 2 * c] = np.take(self._card_records, code, mode="clip").view(np.uint8)

        # per-hand features: two 64-bit words of bits
        word = self._dealer_bits[state.dealer[sl] * NUM_SEATS + seat_index]
        word |= (state.num_bids[sl] >= NUM_SEATS) & ~state.ordered_up[sl]  # upcard_turned_down, bit 0
        word |= self._trump_bits[state.trump[sl] + 1]
        maker = state.maker[sl] * NUM_SEATS + seat_index
        word |= self._maker_bits[maker]
        word |= self._alone_bits[maker] * state.maker_alone[sl]
        word |= self._alone_bits[state.lone_defender[sl] * NUM_SEATS + seat_index]
        out_seats = 15 - _seat_bits(state.active[sl])
        word |= self._sitting_out_bits[out_seats * NUM_SEATS + me]
        word |= self._phase_bits[state.phase[sl]]
        won = state.tricks_won[sl]
        flip = (me & 1).astype(bool)
        word |= self._won_bits[0][np.where(flip, won[:, 1], won[:, 0])]
        word |= self._won_bits[1][np.where(flip, won[:, 0], won[:, 1])]
        leader = state.trick_leader[sl] * NUM_SEATS + self._leader_base
        leader += seat_index[:, None]
        word |= self._leader_bits[leader].sum(axis=1)
        bids = self._bid_bits[state.bids[sl] + self._bid_slot_base].sum(axis=1)
        words = packed[:, 2 * c :].view("<u8")  # bit b of the pair is tail cell b on any byte order
        words[:, 0] = word | bids << np.uint64(self._tail_offset["bids"])
        words[:, 1] = bids >> np.uint64(64 - self._tail_offset["bids"])
        # cells past the bids (score, games won) unpack from the words' zero high bits
        marks = np.unpackbits(packed, axis=1, count=self.observation_size, bitorder="little")

        # converted to float32 in one contiguous pass
        tail = self._tail_start
        out = buf[sl]
        np.copyto(out, marks)
        if self.episode == EPISODE_HAND:
            return
        score_cell = tail + self._tail_offset["score"]
        team = me & 1
        target = float(self.rules.target_points)
        score = state.score[sl]
        out[:, score_cell] = score[local, team] / target
        out[:, score_cell + 1] = score[local, 1 - team] / target
        games = state.games_won[sl] if self.episode == EPISODE_RUBBER else np.zeros((m, 2), np.int8)
        out[:, score_cell + 2] = games[local, team]
        out[:, score_cell + 3] = games[local, 1 - team]

    def _observe_single(self, game: OneGame, seat: int, buf: np.ndarray | None = None) -> np.ndarray:
        """(D,) `observe` of one game: the same encoding, built from its values (into `buf`, zeros, if given)."""
        cells = self._cells
        if buf is None:
            buf = np.zeros(self.observation_size, np.float32)
        out = memoryview(buf)  # one float written through a memoryview costs half of numpy's setitem
        buf[self._hand_cells] = np.frombuffer(game.hand[seat].to_bytes(self.num_cards, "little"), np.uint8)
        upcard = game.upcard
        if upcard >= 0:
            out[cells["upcard"][upcard]] = 1.0
        if game.num_bids >= NUM_SEATS and not game.ordered_up:
            out[cells["upcard_turned_down"][0]] = 1.0
        dealer = game.dealer
        out[cells["dealer"][(dealer - seat) % NUM_SEATS]] = 1.0
        bids = cells["bids"]
        for slot, bid in enumerate(game.bids):
            if bid >= 0:
                choice = 0 if bid == self.pass_action else bid - self.first_suit_action + 1
                out[bids[slot * (1 + NUM_SUITS) + choice]] = 1.0
        trump = game.trump
        if trump >= 0:
            maker = (game.maker - seat) % NUM_SEATS
            out[cells["trump"][trump]] = 1.0
            out[cells["maker"][maker]] = 1.0
            if game.maker_alone:
                out[cells["alone"][maker]] = 1.0
        lone_def = game.lone_defender
        if lone_def >= 0:
            out[cells["alone"][(lone_def - seat) % NUM_SEATS]] = 1.0
        for k in range(NUM_SEATS):
            if not game.active >> (seat + k) % NUM_SEATS & 1:
                out[cells["sitting_out"][k]] = 1.0
        discard = game.discard
        if discard >= 0 and dealer == seat:
            out[cells["own_discard"][discard]] = 1.0
        phase = game.phase
        if phase < NUM_DECISION_PHASES:
            out[cells["phase"][phase]] = 1.0
        # The cards played, read from the tricks: trick_cards[t][player] == card exactly when
        # card_player[card] == player and card_trick[card] == t, the fields `_observe_rows` reads.
        c = self.num_cards
        current = game.trick_index
        by, in_trick, now, led = cells["played_by"], cells["played_in_trick"], cells["current_trick"], cells["trick_leader"]
        leaders = game.trick_leader
        for t, cards in enumerate(game.trick_cards[: current + 1]):  # later tricks are empty
            if leaders[t] >= 0:
                out[led[t * NUM_SEATS + (leaders[t] - seat) % NUM_SEATS]] = 1.0
            for player, card in enumerate(cards):
                if card >= 0:
                    rel = (player - seat) % NUM_SEATS
                    out[by[card * NUM_SEATS + rel]] = 1.0
                    out[in_trick[card * NUM_TRICKS + t]] = 1.0
                    if t == current:
                        out[now[rel * c + card]] = 1.0
        team = seat % 2
        won = game.tricks_won
        out[cells["tricks_won"][won[team]]] = 1.0
        out[cells["tricks_won"][NUM_TRICKS + 1 + won[1 - team]]] = 1.0
        if self.episode != EPISODE_HAND:
            target = float(self.rules.target_points)
            score = game.score
            buf[cells["score"][0]] = score[team] / target
            buf[cells["score"][1]] = score[1 - team] / target
            if self.episode == EPISODE_RUBBER:
                games = game.games_won
                buf[cells["games_won"][0]] = games[team]
                buf[cells["games_won"][1]] = games[1 - team]
        return buf


class SeatObservations:
    """The observations of one game (N = 1) for the AEC env, kept current through the decisions of a hand.

    An AEC env observes after every decision. Building an observation from the game
    (`Engine._observe_single`) reads every field, while a card played changes only a few marks.
    So this object keeps one source vector and `Engine.step_one` tells it about each decision (a
    card played, a bid, an alone call, a discard), whose few marks it updates; a new deal clears it
    (it is rebuilt when next asked for).
    The source is seat 0's observation followed by every seat's private blocks (its hand, the card
    it buried); a seat's observation is one gather from it (`_relabel`): seat 0's cells with the
    seats relabelled to that seat's view, and that seat's private blocks (seat 0's own hand and
    buried-card cells in the first part are never read).
    Whoever holds it must pass it to every `step_one` of that game and `clear()` it when the game
    changes otherwise (a reset). tests/test_env_api.py checks every seat's observation against the
    batched encoder after every step.
    """

    def __init__(self, engine: Engine):
        self.engine = engine
        c, size = engine.num_cards, engine.observation_size
        self._hands = size
        """Offset of the private blocks in the source: 4 hands, then 4 buried-card blocks, C cells each."""
        self._source_size = size + 2 * NUM_SEATS * c
        self._source: np.ndarray | None = None
        self._view: memoryview | None = None
        """A memoryview of _source: writing one float through it is cheaper than numpy's setitem."""
        self._relabel = [self._relabelling(seat) for seat in range(NUM_SEATS)]

    def _relabelling(self, seat: int) -> np.ndarray:
        """Cells of the source that make `seat`'s observation: obs[i] = source[relabel[i]]."""
        e = self.engine
        lay, c = e.observation_layout, e.num_cards
        index = np.arange(e.observation_size, dtype=np.intp)
        cards = np.arange(c)
        index[lay["hand"]] = self._hands + seat * c + cards
        index[lay["own_discard"]] = self._hands + (NUM_SEATS + seat) * c + cards
        absolute = (np.arange(NUM_SEATS) + seat) % NUM_SEATS  # `seat`'s relative seat r is seat 0's r + seat
        for name in ("dealer", "maker", "alone", "sitting_out"):
            index[lay[name]] = lay[name][absolute]
        index[lay["played_by"]] = lay["played_by"].reshape(c, NUM_SEATS)[:, absolute].reshape(-1)
        index[lay["current_trick"]] = lay["current_trick"].reshape(NUM_SEATS, c)[absolute].reshape(-1)
        index[lay["trick_leader"]] = lay["trick_leader"].reshape(NUM_TRICKS, NUM_SEATS)[:, absolute].reshape(-1)
        if seat % 2:  # its side is seat 0's other side
            for name, size in (("tricks_won", NUM_TRICKS + 1), ("score", 1), ("games_won", 1)):
                index[lay[name]] = np.roll(index[lay[name]], size)
        return index

    def clear(self) -> None:
        """Forget the observations: a new deal, or a state changed other than through `step_one`."""
        self._source = self._view = None

    def get(self, game: OneGame, seat: int) -> np.ndarray:
        """`seat`'s observation of the game, as a new array."""
        if self._source is None:
            e, c, hands = self.engine, self.engine.num_cards, self._hands
            source = np.zeros(self._source_size, np.float32)
            e._observe_single(game, 0, source[:hands])
            held = b"".join(cards.to_bytes(c, "little") for cards in game.hand)
            source[hands : hands + NUM_SEATS * c] = np.frombuffer(held, np.uint8)
            discard = game.discard
            if discard >= 0:
                source[hands + (NUM_SEATS + game.dealer) * c + discard] = 1.0
            self._source, self._view = source, memoryview(source)
        return self._source.take(self._relabel[seat])

    def decided(self, game: OneGame, phase: int, seat: int, action: int) -> None:
        """`seat` chose `action` (a bid, an alone call or a discard) in `phase`; the game is the one after."""
        view = self._view
        if view is None:
            return
        after = game.phase
        if after >= _HAND_OVER or (phase == _BID_ROUND_2 and after == _BID_ROUND_1):  # thrown in, maybe redealt
            self.clear()
            return
        e = self.engine
        cells, c, hands = e._cells, e.num_cards, self._hands
        view[cells["phase"][phase]] = 0.0
        view[cells["phase"][after]] = 1.0
        if phase <= _BID_ROUND_2:
            slot = (game.num_bids - 1) * (1 + NUM_SUITS)
            if action == e.pass_action:
                view[cells["bids"][slot]] = 1.0
                if game.num_bids >= NUM_SEATS:  # round one was passed out: the upcard is turned down
                    view[cells["upcard_turned_down"][0]] = 1.0
            else:
                view[cells["bids"][slot + 1 + action - e.first_suit_action]] = 1.0
                view[cells["trump"][game.trump]] = 1.0
                view[cells["maker"][seat]] = 1.0
        elif phase == _DISCARD:
            dealer = game.dealer
            view[hands + dealer * c + action] = 0.0
            view[hands + (NUM_SEATS + dealer) * c + action] = 1.0
        elif action == e.alone_action:  # the maker or a defender goes alone; the partner sits out
            view[cells["alone"][seat]] = 1.0
            view[cells["sitting_out"][(seat + 2) % NUM_SEATS]] = 1.0
        if after == _DISCARD:  # the dealer has just picked the upcard up
            view[hands + game.dealer * c + game.upcard] = 1.0
        elif after == _PLAY:
            view[cells["trick_leader"][game.trick_leader[0]]] = 1.0

    def played(self, game: OneGame, seat: int, trick: int, card: int) -> None:
        """`seat` has played `card` to `trick` (the game is the one after the play)."""
        view = self._view
        if view is None:
            return
        phase = game.phase
        if phase != _PLAY and phase != _HAND_OVER:  # a new deal (longer episodes), or the game is over
            self.clear()
            return
        e = self.engine
        cells = e._cells
        c = e.num_cards
        if phase == _HAND_OVER:  # the last card of a one-hand episode: no decision is asked any more
            view[cells["phase"][_PLAY]] = 0.0
        view[cells["played_by"][card * NUM_SEATS + seat]] = 1.0
        view[cells["played_in_trick"][card * NUM_TRICKS + trick]] = 1.0
        view[self._hands + seat * c + card] = 0.0
        current = cells["current_trick"]
        if game.trick_index == trick:
            view[current[seat * c + card]] = 1.0
            return
        # The trick is won: the current trick is the next, empty one, led by the winner.
        for player, played in enumerate(game.trick_cards[trick]):
            if played >= 0:
                view[current[player * c + played]] = 0.0
        winner = game.trick_winner[trick]
        if trick + 1 < NUM_TRICKS:
            view[cells["trick_leader"][(trick + 1) * NUM_SEATS + winner]] = 1.0
        won_cells = cells["tricks_won"]
        for side, won in enumerate(game.tricks_won):
            block = side * (NUM_TRICKS + 1)
            view[won_cells[block + won - (side == winner % 2)]] = 0.0  # the count before this trick
            view[won_cells[block + won]] = 1.0
