"""What one seat knows of a hand (`View`), the layouts of the unseen cards consistent with it, and the
engine states those layouts lead to: the ground that `pimc` and `search` stand on.

Sampling (`sample_hands`, uniform over the layouts consistent with what the seat has seen):
  - its own hand is fixed; cards played, its own discard and the upcard are never dealt again;
  - a seat that did not follow the suit led (by effective suit) is void in it;
  - when the upcard was ordered up and the dealer still plays, the dealer holds it until it is
    played, unless the dealer has shown a void in trump or has no card left (then it was
    buried); a dealer's own discard is known only to the dealer, who sees it in its observation;
  - the other unseen cards (kitty, a buried card, a sitting-out hand) form a pool nobody plays;
  - seats hold exactly as many cards as they have left. The C sampler counts the deals suit by
    suit and draws from the exact uniform distribution (no rejection).

`deals_from_layouts` turns each layout into the full deal that leads to it, and `replay` replays the
hand's public actions on those deals with the engine, batched over the layouts, to the seat's decision.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from euchre_agents.base import Agent
from euchre_agents.solver import hand_masks, sample_layouts
from euchre_env.cards import HAND_SIZE, NUM_SEATS, NUM_SUITS
from euchre_env.engine import Engine, EuchreState, Phase
from euchre_env.infoset import BID_NONE, BID_PASS, InfoSet

POOL = 3
"""Index of the pool (cards no active seat holds) in the sampler's output."""


@dataclasses.dataclass
class View:
    """One seat's information set (one row of an `InfoSet`), in the form the sampler needs."""

    hand: int  # bit mask
    trump: int
    dealer: int
    upcard: int
    ordered_up: bool
    maker: int
    alone: list[bool]
    sitting_out: list[bool]
    own_discard: int
    phase: int
    played_by: np.ndarray  # (C,) relative seat, -1
    played_in_trick: np.ndarray  # (C,) trick, -1
    trick_leader: list[int]
    trick_index: int
    tricks_won: list[int]
    bids: list[int]

    @classmethod
    def from_info(cls, info: InfoSet, i: int) -> "View":
        """Row `i` of a decoded observation, as the search's view of the hand."""
        bids = info.bids[i].tolist()
        return cls(
            hand=int(hand_masks(info.hand[i])),
            trump=int(info.trump[i]),
            dealer=int(info.dealer[i]),
            upcard=int(info.upcard[i]),
            ordered_up=any(b not in (BID_NONE, BID_PASS) for b in bids[:NUM_SEATS]),
            maker=int(info.maker[i]),
            alone=info.alone[i].tolist(),
            sitting_out=info.sitting_out[i].tolist(),
            own_discard=int(info.own_discard[i]),
            phase=int(info.phase[i]),
            played_by=info.played_by[i],
            played_in_trick=info.played_in_trick[i],
            trick_leader=info.trick_leader[i].tolist(),
            trick_index=int(info.trick_index[i]),
            tricks_won=info.tricks_won[i].tolist(),
            bids=[b for b in bids if b != BID_NONE],
        )

    def played_mask(self, seat: int | None = None) -> int:
        """Bit mask of the cards played so far, by `seat` or by anyone."""
        cards = np.flatnonzero(self.played_by >= 0 if seat is None else self.played_by == seat)
        return int(sum(1 << int(c) for c in cards))

    def current_trick(self) -> list[int]:
        """The trick in progress, per seat: the card it played, or -1."""
        trick = [-1] * NUM_SEATS
        for c in np.flatnonzero(self.played_in_trick == self.trick_index):
            trick[int(self.played_by[c])] = int(c)
        return trick


@dataclasses.dataclass
class Layouts:
    """W sampled layouts of one view: current hands per relative seat and the unseen pool."""

    hands: np.ndarray  # (W, 4) uint64, seat 0 = the observer's own hand
    pool: np.ndarray  # (W,) uint64
    dealer_has_upcard: bool


def sample_hands(engine: Engine, view: View, worlds: int, seed: int) -> Layouts:
    """Uniformly sample the hidden hands consistent with `view` (module docstring)."""
    deck = engine.deck
    c = deck.num_cards
    playing = view.phase == Phase.PLAY
    up = view.upcard
    known = view.hand | view.played_mask() | (1 << up)
    if view.own_discard >= 0:
        known |= 1 << view.own_discard
    unseen = [x for x in range(c) if not (known >> x) & 1]
    trump = view.trump if view.trump >= 0 else 0
    groups = deck.effective_suit[trump, unseen].astype(np.uint8) if playing else np.zeros(len(unseen), np.uint8)
    voids = [0] * NUM_SEATS
    if playing:
        for t in range(view.trick_index + 1):
            leader = view.trick_leader[t]
            cards = {int(view.played_by[x]): int(x) for x in np.flatnonzero(view.played_in_trick == t)}
            if leader < 0 or leader not in cards:
                continue
            led = deck.effective_suit[trump, cards[leader]]
            for seat, card in cards.items():
                if deck.effective_suit[trump, card] != led:
                    voids[seat] |= 1 << int(led)
    dealer_has_upcard = (
        playing
        and view.ordered_up
        and view.dealer != 0
        and not view.sitting_out[view.dealer]
        and view.played_by[up] < 0
        and not (voids[view.dealer] >> trump) & 1
        and int((view.played_by == view.dealer).sum()) < HAND_SIZE
    )
    capacity = np.zeros(3, np.int32)
    for seat in range(1, NUM_SEATS):
        if playing and view.sitting_out[seat]:
            continue
        holds_upcard = dealer_has_upcard and seat == view.dealer
        capacity[seat - 1] = HAND_SIZE - int((view.played_by == seat).sum()) - holds_upcard
    out = np.empty((worlds, 4), np.uint64)
    sample_layouts(
        np.array(unseen, np.uint8),
        groups,
        capacity,
        np.array(voids[1:], np.int32),
        out,
        seed,
    )
    hands = np.empty((worlds, NUM_SEATS), np.uint64)
    hands[:, 0] = view.hand
    hands[:, 1:] = out[:, :3]
    if dealer_has_upcard:
        hands[:, view.dealer] |= np.uint64(1 << up)
    return Layouts(hands=hands, pool=out[:, POOL].copy(), dealer_has_upcard=dealer_has_upcard)


def card_counts(masks: np.ndarray, num_cards: int) -> np.ndarray:
    """Cards in each uint64 bit mask of a deck of `num_cards`."""
    return ((masks[..., None] >> np.arange(num_cards, dtype=np.uint64)) & np.uint64(1)).sum(axis=-1)


def _take_lowest(pool: np.ndarray, dealt: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Move the lowest card of `pool[rows]` into `dealt[rows]` (both uint64, in place); its card ids."""
    low = pool[rows] & (~pool[rows] + np.uint64(1))
    pool[rows] &= ~low
    dealt[rows] |= low
    return np.log2(low.astype(np.float64)).astype(np.int64)


def deals_from_layouts(engine: Engine, view: View, layouts: Layouts) -> tuple[np.ndarray, np.ndarray]:
    """Full deals (W, 4, 5) in relative seats that lead to `layouts`, and each world's buried card.

    The buried card is -1 where the dealer's discard is left to the table model (or is the
    observer's own), else the card the dealer must have buried in that world.
    """
    w, c = layouts.hands.shape[0], engine.num_cards
    up = np.uint64(1 << view.upcard)
    played = np.array([view.played_mask(s) for s in range(NUM_SEATS)], np.uint64)
    dealt = (layouts.hands | played) & ~up
    if view.own_discard >= 0:
        dealt[:, 0] = (dealt[:, 0] | np.uint64(1 << view.own_discard)) & ~up
    pool = layouts.pool.copy()
    buried = np.full(w, -1, np.int64)
    for seat in range(NUM_SEATS):
        hand = dealt[:, seat]  # a view: _take_lowest fills it in place
        if seat != 0 and seat == view.dealer and view.phase == Phase.PLAY and view.ordered_up:
            if not view.sitting_out[seat] and not layouts.dealer_has_upcard and not (played[seat] & up):
                buried[:] = view.upcard  # shown void in trump: the upcard was buried
            else:
                short = np.flatnonzero(card_counts(hand, c) < HAND_SIZE)
                buried[short] = _take_lowest(pool, hand, short)
        while (short := np.flatnonzero(card_counts(hand, c) < HAND_SIZE)).size:  # a sitting-out hand: pool cards
            _take_lowest(pool, hand, short)
    bits = (dealt[..., None] >> np.arange(c, dtype=np.uint64)) & np.uint64(1)
    deals = np.nonzero(bits.astype(bool))[2].reshape(w, NUM_SEATS, HAND_SIZE).astype(np.int64)
    return deals, buried


def replay(
    engine: Engine,
    view: View,
    layouts: Layouts,
    model: Agent,
    on_public: Callable[[EuchreState, np.ndarray], None] | None = None,
    until_play: bool = False,
) -> EuchreState:
    """W engine states (observer = seat 0) at the view's decision point, one per layout.

    Each layout becomes a deal (`deals_from_layouts`) and the hand's public actions are replayed on
    it by the engine; a hidden discard by another dealer is the layout's buried card or, before
    play, the model's choice. `on_public(state, actions)` is called before each public action of
    another seat (a bid, an alone call, a card), with the W states and the action about to be taken.
    With `until_play`, the replay stops where the play begins (only the auction is replayed).
    """
    deals, buried = deals_from_layouts(engine, view, layouts)
    w = deals.shape[0]
    template = engine.init_from_deal(view.dealer, deals[0], view.upcard)
    state = template.take(np.zeros(w, np.int64))
    seats = np.repeat(np.arange(NUM_SEATS), HAND_SIZE)
    state.hand[:] = False
    state.hand[np.repeat(np.arange(w), seats.size), np.tile(seats, w), deals.reshape(-1)] = True
    state.dealt[:] = state.hand
    bid_action = [engine.first_suit_action + s for s in range(NUM_SUITS)] + [engine.pass_action]
    played = np.flatnonzero(view.played_by >= 0)
    plays = {(int(view.played_in_trick[c]), int(view.played_by[c])): int(c) for c in played}
    target_played = len(plays)
    while True:
        phase, seat = int(state.phase[0]), int(state.to_play[0])
        n_played = int((state.card_player[0] >= 0).sum())
        if (
            phase == view.phase
            and seat == 0
            and int(state.num_bids[0]) == len(view.bids)
            and n_played == target_played
        ):
            return state
        if until_play and phase == Phase.PLAY:
            return state
        if phase >= Phase.HAND_OVER or int(state.num_bids[0]) > len(view.bids) or n_played > target_played:
            raise RuntimeError("replay of the observed actions did not reach the decision point")
        if phase in (Phase.BID_ROUND_1, Phase.BID_ROUND_2):
            acts = np.full(w, bid_action[view.bids[int(state.num_bids[0])]], np.int64)
        elif phase in (Phase.MAKER_ALONE, Phase.DEFENDER_ALONE):
            acts = np.full(w, engine.alone_action if view.alone[seat] else engine.partner_action, np.int64)
        elif phase == Phase.DISCARD:
            if seat == 0:
                acts = np.full(w, view.own_discard, np.int64)
            else:
                acts = buried.copy()
                pick = np.flatnonzero(acts < 0)
                if pick.size:
                    acts[pick] = model.act(engine.observe(state.take(pick)), state.legal[pick])
        else:
            acts = np.full(w, plays[(int(state.trick_index[0]), seat)], np.int64)
        if on_public is not None and seat != 0 and phase != Phase.DISCARD:
            on_public(state, acts)
        engine.step(state, acts)
