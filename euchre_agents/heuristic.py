"""A rule-based Euchre player of the kind a good club player describes.

It acts only on observations (decoded with `infoset.decode`) and reads every card fact from the
engine's tables (`cards.Deck`), so it plays any `Rules` variant. Its rules, in order of the hand:

Bidding (`bid_score`: trump points per card, plus off-suit aces and voids)
  - Card points for a trump suit: joker 3.5, right bower 3, left bower 2.5, ace 2, king 1.75,
    queen 1.5, lower trumps 1.25; each off-suit ace 1; each off-suit void 0.5 when holding two or
    more trumps.
  - Round one: the dealer counts the hand it would hold after picking up and discarding. Another
    seat adds half the upcard's trump points when its partner deals (the card goes to its side) and
    subtracts half when an opponent deals (the card goes to the other side). Order up at
    `ORDER_THRESHOLD` (the dealer at `DEALER_THRESHOLD`).
  - Round two: name the best suit allowed at `CALL_THRESHOLD`; the seat left of the dealer adds
    `NEXT_BONUS` to the suit of the turned-down card's colour ("next"). A dealer who may not pass
    names its best suit.
Going alone (`sure_march`)
  - Go alone (as maker, or as a defender when allowed) only with a near-certain march: the trumps
    held above every trump still unseen number at least min(unseen trumps, 3), and every off-suit
    card is the best left in its suit. Trumps played, buried or turned down are not unseen.
Discard (`choose_discard`)
  - Keep trumps; bury an off-suit card to make a void (a singleton that is not an ace, lowest
    first), else the lowest off-suit card of the shortest suit, aces last; all trumps: bury the
    lowest trump.
Play
  - Leading: when its side made trump and trumps are still unseen, lead the best trump if it is
    the boss, else the lowest trump. Otherwise lead an off-suit boss (an ace, or the best card left
    in its suit), else the lowest card of the shortest off suit, else the lowest card.
  - Following: never beat (or trump) a trick its partner is winning; throw off the lowest card.
    Otherwise win with the cheapest card that beats the trick; when following suit before the last
    seat, prefer the cheapest card that nothing unseen can beat. If it cannot win, throw off the
    lowest card (off-suit before trump, low ranks before aces and bosses).
  - It remembers every card played (and its own discard): "boss" and "unseen" always mean
    among the cards not yet seen.

`EasyAgent` (`easy`, the web table's Easy level) is a weaker cousin: it bids and buries by the same
rules but never goes alone, and plays a random legal card instead of the rules' card `EASY_SLIP` of the time.
"""

from __future__ import annotations

import numpy as np

from euchre_agents.base import Agent
from euchre_env import kernels
from euchre_env.cards import (
    JOKER_STRENGTH,
    LEFT_BOWER_STRENGTH,
    NUM_SEATS,
    NUM_SUITS,
    RANK_LETTERS,
    RIGHT_BOWER_STRENGTH,
    Deck,
    same_colour_suit,
)
from euchre_env.engine import Engine, Phase
from euchre_env.infoset import BID_PASS, InfoSet, decode

ACE_RANK = RANK_LETTERS.index("A")
KING_RANK = RANK_LETTERS.index("K")
QUEEN_RANK = RANK_LETTERS.index("Q")

JOKER_POINTS = 3.5
RIGHT_POINTS = 3.0
LEFT_POINTS = 2.5
TRUMP_RANK_POINTS = {ACE_RANK: 2.0, KING_RANK: 1.75, QUEEN_RANK: 1.5}
LOW_TRUMP_POINTS = 1.25
OFF_ACE_POINTS = 1.0
VOID_POINTS = 0.5
UPCARD_SHARE = 0.5
"""Fraction of the upcard's trump points credited (partner deals) or debited (opponent deals)."""
ORDER_THRESHOLD = 6.0
DEALER_THRESHOLD = 5.5
CALL_THRESHOLD = 6.0
NEXT_BONUS = 0.5
SURE_TOP_TRUMPS = 3
"""Top trumps that make a march near-certain even with more trumps unseen."""

PARTNER = 2
RIGHT = 3


class CardTables:
    """Per-trump card facts from the engine's `Deck`, as Python lists for fast per-decision use."""

    def __init__(self, deck: Deck):
        self.deck = deck
        self.num_cards = deck.num_cards
        self.esuit = deck.effective_suit.tolist()  # [trump][card]
        self.strength = deck.trick_strength.tolist()  # [trump][led][card]
        self.rank = deck.rank.tolist()
        self.own = [[self.strength[t][self.esuit[t][c]][c] for c in range(deck.num_cards)] for t in range(NUM_SUITS)]
        self.is_trump = [[self.esuit[t][c] == t for c in range(deck.num_cards)] for t in range(NUM_SUITS)]
        n = deck.num_cards
        self.suit_cards = [  # [trump][effective suit] -> card ids
            [[c for c in range(n) if self.esuit[t][c] == s] for s in range(NUM_SUITS)] for t in range(NUM_SUITS)
        ]
        self.trump_points = [[self._points(t, c) for c in range(n)] for t in range(NUM_SUITS)]
        self.points_np = np.array(self.trump_points)  # (4, C)
        self.off_ace_np = np.array(
            [[OFF_ACE_POINTS * (not self.is_trump[t][c] and self.rank[c] == ACE_RANK) for c in range(n)]
             for t in range(NUM_SUITS)]
        )
        self.suit_onehot = np.zeros((NUM_SUITS, n, NUM_SUITS))  # [trump, card, effective suit]
        for t in range(NUM_SUITS):
            self.suit_onehot[t, np.arange(n), deck.effective_suit[t]] = 1.0

    def _points(self, trump: int, card: int) -> float:
        strength = int(self.deck.trump_strength[trump, card])
        special = {JOKER_STRENGTH: JOKER_POINTS, RIGHT_BOWER_STRENGTH: RIGHT_POINTS, LEFT_BOWER_STRENGTH: LEFT_POINTS}
        if strength < 0:
            return 0.0
        return special.get(strength, TRUMP_RANK_POINTS.get(self.rank[card], LOW_TRUMP_POINTS))

    def discard_key(self, trump: int, card: int, unseen: set[int]) -> tuple:
        """Sort key: the card to throw away first sorts lowest (off-suit, non-boss, low rank)."""
        return (self.is_trump[trump][card], self.is_boss(trump, card, unseen), self.own[trump][card])

    def is_boss(self, trump: int, card: int, unseen) -> bool:
        """No unseen card of the card's own suit beats it."""
        own = self.own[trump]
        mine = own[card]
        return not any(own[o] > mine and o in unseen for o in self.suit_cards[trump][self.esuit[trump][card]])


def bid_scores(t: CardTables, hands: np.ndarray, trump: np.ndarray) -> np.ndarray:
    """Club-player points (module docstring) of (n, C) bool hands for (n,) trump suits."""
    h = hands.astype(np.float64)
    trump = np.asarray(trump, np.int64)
    score = (h * (t.points_np[trump] + t.off_ace_np[trump])).sum(axis=1)
    counts = np.einsum("nc,ncs->ns", h, t.suit_onehot[trump])
    n_trump = counts[np.arange(h.shape[0]), trump]
    voids = (counts == 0).sum(axis=1)
    return score + np.where(n_trump >= 2, VOID_POINTS * voids, 0.0)


def bid_score(t: CardTables, hand: list[int], trump: int) -> float:
    """Club-player points of one hand (card ids) for one trump suit."""
    cards = np.zeros((1, t.num_cards), bool)
    cards[0, hand] = True
    return float(bid_scores(t, cards, np.array([trump]))[0])


def choose_discard(t: CardTables, hand: list[int], trump: int, legal: list[int] | None = None) -> int:
    """The card the dealer buries: make a void if it can, keep trumps and aces (module docstring)."""
    cands = hand if legal is None else [c for c in hand if c in legal]
    es = t.esuit[trump]
    off = [c for c in cands if es[c] != trump]
    if not off:
        return min(cands, key=lambda c: t.own[trump][c])
    count = {}
    for c in hand:
        count[es[c]] = count.get(es[c], 0) + 1
    singles = [c for c in off if count[es[c]] == 1 and t.rank[c] != ACE_RANK]
    if singles:
        return min(singles, key=lambda c: t.own[trump][c])
    return min(off, key=lambda c: (t.rank[c] == ACE_RANK, count[es[c]], t.own[trump][c]))


def sure_march(t: CardTables, hand: list[int], trump: int, dead: set[int]) -> bool:
    """Near-certain to take all five tricks alone (module docstring); `dead` cards are out of play."""
    es, own = t.esuit[trump], t.own[trump]
    mine = [own[c] for c in hand if es[c] == trump]
    if not mine:
        return False
    held = set(hand)
    unseen_trumps = [own[c] for c in t.suit_cards[trump][trump] if c not in held and c not in dead]
    best_unseen = max(unseen_trumps, default=-1)
    top_run = sum(1 for s in mine if s > best_unseen)
    if top_run < min(len(unseen_trumps), SURE_TOP_TRUMPS) or top_run == 0:
        return False
    unseen = {c for c in range(t.num_cards) if c not in held and c not in dead}
    return all(t.is_boss(trump, c, unseen) for c in hand if es[c] != trump)


class HeuristicAgent(Agent):
    """The rule-based player (rules in the module docstring)."""

    name = "heuristic"

    def __init__(self, engine: Engine, seed: int | None = None):
        super().__init__(engine, seed)
        self.t = CardTables(engine.deck)
        self.deck = engine.deck

    def act(self, obs, mask, state=None, rows=None):
        """(n,) actions chosen by the rules (bids for the whole batch at once, then row by row)."""
        info = decode(self.engine, obs)
        mask = np.asarray(mask, bool)
        out = np.empty(mask.shape[0], np.int64)
        for phase, rule in ((Phase.BID_ROUND_1, self.round_one), (Phase.BID_ROUND_2, self.round_two)):
            r = np.flatnonzero(info.phase == phase)
            if r.size:
                out[r] = rule(info, r, mask[r])
        rest = np.flatnonzero(info.phase > Phase.BID_ROUND_2)
        if rest.size:
            trick = info.current_trick()
            for i in rest.tolist():
                out[i] = self.decide(info, i, mask[i], trick[i])
        return out

    def decide(self, info: InfoSet, i: int, mask: np.ndarray, trick: np.ndarray) -> int:
        """One action for row i of a decoded batch; `trick` is that row's `InfoSet.current_trick()`."""
        phase = int(info.phase[i])
        if phase == Phase.BID_ROUND_1:
            return int(self.round_one(info, np.array([i]), mask[None])[0])
        if phase == Phase.BID_ROUND_2:
            return int(self.round_two(info, np.array([i]), mask[None])[0])
        legal = np.flatnonzero(mask)
        if legal.size == 1:
            return int(legal[0])
        hand = np.flatnonzero(info.hand[i]).tolist()
        d = self.deck
        if phase in (Phase.MAKER_ALONE, Phase.DEFENDER_ALONE):
            return d.alone_action if self.wants_alone(info, i, hand) else d.partner_action
        if phase == Phase.DISCARD:
            return choose_discard(self.t, hand, int(info.trump[i]), legal.tolist())
        return self.play(info, i, hand, legal.tolist(), trick)

    # ------------------------------------------------------------------ bidding

    def round_one(self, info: InfoSet, rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Round one for `rows`: order up (or, as dealer, pick up) on enough points, else pass."""
        t, d = self.t, self.deck
        up = info.upcard[rows]
        trump = d.upcard_suit[up].astype(np.int64)
        dealer = info.dealer[rows]
        share = UPCARD_SHARE * t.points_np[trump, up]
        score = bid_scores(t, info.hand[rows], trump) + np.where(dealer == PARTNER, share, -share)
        threshold = np.where(dealer == 0, DEALER_THRESHOLD, ORDER_THRESHOLD)
        mine = np.flatnonzero(dealer == 0)
        if mine.size:  # the dealer scores the hand it would keep after picking up and burying
            kept = info.hand[rows[mine]].copy()
            kept[np.arange(mine.size), up[mine]] = True
            for k, row in enumerate(kept):
                six = np.flatnonzero(row).tolist()
                row[choose_discard(t, six, int(trump[mine[k]]), self.buriable(six, int(up[mine[k]])))] = False
            score[mine] = bid_scores(t, kept, trump[mine])
        return np.where(score >= threshold, d.suit_action(0) + trump, d.pass_action)

    def round_two(self, info: InfoSet, rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Round two for `rows`: name the best allowed suit on enough points (or when it must)."""
        t, d = self.t, self.deck
        n = rows.size
        down = d.upcard_suit[info.upcard[rows]].astype(np.int64)
        hands = info.hand[rows]
        scores = np.stack([bid_scores(t, hands, np.full(n, s)) for s in range(NUM_SUITS)], axis=1)
        scores[np.arange(n), down] = -np.inf
        going_next = info.dealer[rows] == RIGHT
        scores[np.flatnonzero(going_next), same_colour_suit(down[going_next])] += NEXT_BONUS
        best = np.argmax(scores, axis=1)
        call = (scores[np.arange(n), best] >= CALL_THRESHOLD) | ~mask[:, d.pass_action]
        return np.where(call, d.suit_action(0) + best, d.pass_action)

    def wants_alone(self, info: InfoSet, i: int, hand: list[int]) -> bool:
        """Maker or defender: go alone only with a near-certain march."""
        trump = int(info.trump[i])
        up = int(info.upcard[i])
        dead = self.dead_cards(info, i)
        ordered_up = self.ordered_up(info, i)
        if ordered_up and int(info.dealer[i]) == 0 and up not in hand and int(info.own_discard[i]) < 0:
            hand = hand + [up]  # the pickup is still to come
            hand.remove(choose_discard(self.t, hand, trump, self.buriable(hand, up)))
        elif ordered_up and int(info.dealer[i]) == PARTNER:
            dead = dead | {up}  # going alone, the partner sits out with it or never picks it up
        return sure_march(self.t, hand, trump, dead)

    def buriable(self, hand: list[int], upcard: int) -> list[int]:
        """The cards of a six-card dealer's hand the rules let it bury (the engine's discard rule)."""
        held = sum(1 << c for c in hand)
        allowed = int(kernels.buriable(self.engine.table, held, upcard))
        return [c for c in hand if (allowed >> c) & 1]

    @staticmethod
    def ordered_up(info: InfoSet, i: int) -> bool:
        """Trump was made in round one (the upcard's suit)."""
        first = info.bids[i, :NUM_SEATS]
        return bool(((first >= 0) & (first != BID_PASS)).any())

    def dead_cards(self, info: InfoSet, i: int) -> set[int]:
        """Cards known to be out of every hand: played, own discard, an upcard left in the kitty."""
        dead = set(np.flatnonzero(info.played_by[i] >= 0).tolist())
        if info.own_discard[i] >= 0:
            dead.add(int(info.own_discard[i]))
        dealer = int(info.dealer[i])
        if not self.ordered_up(info, i) or (info.trump[i] >= 0 and info.sitting_out[i, dealer]):
            dead.add(int(info.upcard[i]))
        return dead

    # ------------------------------------------------------------------ play

    def play(self, info: InfoSet, i: int, hand: list[int], legal: list[int], trick: np.ndarray) -> int:
        """A card to play; `trick` (4,) int64 is the card each relative seat has played to this trick, -1 none."""
        t = self.t
        trump = int(info.trump[i])
        dead = self.dead_cards(info, i)
        held = set(hand)
        unseen = {c for c in range(t.num_cards) if c not in held and c not in dead}
        if all(c < 0 for c in trick.tolist()):
            return self.lead(info, i, hand, trump, unseen)
        return self.follow(info, i, legal, trump, unseen, trick)

    def lead(self, info: InfoSet, i: int, hand: list[int], trump: int, unseen: set[int]) -> int:
        """The card to lead: on our side's call with trumps still out, its top trump if that is the boss, else its lowest
        trump; otherwise its best boss off-suit card, else the lowest of its shortest off-suit, else its lowest card."""
        t = self.t
        es, own = t.esuit[trump], t.own[trump]
        trumps = [c for c in hand if es[c] == trump]
        off = [c for c in hand if es[c] != trump]
        our_call = int(info.maker[i]) in (0, PARTNER)
        trumps_unseen = any(es[c] == trump for c in unseen)
        if our_call and trumps and trumps_unseen:
            best = max(trumps, key=lambda c: own[c])
            return best if t.is_boss(trump, best, unseen) else min(trumps, key=lambda c: own[c])
        bosses = [c for c in off if t.is_boss(trump, c, unseen)]
        if bosses:
            return max(bosses, key=lambda c: own[c])
        if off:
            count = {}
            for c in off:
                count[es[c]] = count.get(es[c], 0) + 1
            return min(off, key=lambda c: (count[es[c]], own[c]))
        return min(hand, key=lambda c: own[c])

    def follow(self, info: InfoSet, i: int, legal: list[int], trump: int, unseen: set[int], trick: np.ndarray) -> int:
        """The card to play to a trick already led: the cheapest throw-off when partner is winning or nothing wins, else the
        cheapest winner (while others are still to play, the cheapest that no unseen card beats, if any)."""
        t = self.t
        cards = trick.tolist()
        leader = int(info.trick_leader[i, int(info.tricks_won[i].sum())])
        led = t.esuit[trump][cards[leader]]
        strength = t.strength[trump][led]
        winner = int(kernels.trick_winner(self.engine.table, trump, led, trick))
        best = strength[cards[winner]]
        throw = min(legal, key=lambda c: t.discard_key(trump, c, unseen))
        if winner == PARTNER:
            return throw
        winners = [c for c in legal if strength[c] > best]
        if not winners:
            return throw
        playing = [s for s in range(NUM_SEATS) if not info.sitting_out[i, s]]
        last = sum(1 for s in playing if cards[s] >= 0) == len(playing) - 1
        if not last and t.esuit[trump][winners[0]] == led:
            safe = [c for c in winners if not any(strength[o] > strength[c] for o in unseen)]
            if safe:
                return min(safe, key=lambda c: strength[c])
        return min(winners, key=lambda c: strength[c])



EASY_SLIP = 0.35
"""The share of card plays in which `EasyAgent` plays a random legal card instead of the heuristic's."""


class EasyAgent(HeuristicAgent):
    """A beginner: the heuristic's bids and discards, never alone, and a random legal card now and then."""

    name = "easy"

    def decide(self, info: InfoSet, i: int, mask: np.ndarray, trick: np.ndarray) -> int:
        """The heuristic's action for row i, but never alone, and a random card `EASY_SLIP` of the time."""
        phase = int(info.phase[i])
        d = self.deck
        if phase in (Phase.MAKER_ALONE, Phase.DEFENDER_ALONE) and mask[d.partner_action]:
            return d.partner_action
        if phase == Phase.PLAY and self.rng.random() < EASY_SLIP:
            return int(self.rng.choice(np.flatnonzero(mask)))
        return super().decide(info, i, mask, trick)
