"""The double-dummy solver against a brute-force minimax on small endgames, and against the engine."""

from __future__ import annotations

import numpy as np
import pytest

from euchre_agents.registry import make_agent
from euchre_agents.solver import DoubleDummy, hand_masks, mask_cards
from euchre_env import Engine, Phase, Rules, game_keys
from euchre_env.cards import NUM_SEATS, NUM_TRICKS, deck_for

DECKS = [Rules(), Rules(deck=32), Rules(joker=True), Rules(deck=32, joker=True)]


def brute_force(deck, hands, trump, leader, active, trick):
    """Team 0's tricks from here by plain minimax (no pruning, no tables beyond the deck's)."""
    es, ts = deck.effective_suit[trump], deck.trick_strength[trump]
    seats = [s for s in range(NUM_SEATS) if active[s]]

    def after(s):
        n = (s + 1) % NUM_SEATS
        while not active[n]:
            n = (n + 1) % NUM_SEATS
        return n

    def rec(hands, leader, order):
        if len(order) == len(seats):
            led = es[order[0][1]]
            winner = max(order, key=lambda sc: ts[led][sc[1]])[0]
            won = int(winner % 2 == 0)
            if not hands[leader]:
                return won
            return won + rec(hands, winner, [])
        seat = leader if not order else after(order[-1][0])
        legal = hands[seat]
        if order:
            follow = [c for c in legal if es[c] == es[order[0][1]]]
            legal = follow or legal
        values = []
        for c in legal:
            rest = list(hands)
            rest[seat] = [x for x in hands[seat] if x != c]
            values.append(rec(rest, leader, order + [(seat, c)]))
        return max(values) if seat % 2 == 0 else min(values)

    order, s = [], leader
    while trick[s] >= 0:
        order.append((s, trick[s]))
        s = after(s)
    return rec([list(h) for h in hands], leader, order), order


def random_endgame(rng, deck):
    """Random hands with 1-3 tricks left, 2-4 active seats and part of a trick played."""
    active = [True] * NUM_SEATS
    if rng.random() < 0.4:
        active[rng.integers(NUM_SEATS)] = False
        if rng.random() < 0.3:
            out = [s for s in range(NUM_SEATS) if active[s]]
            active[out[rng.integers(len(out))]] = False
    seats = [s for s in range(NUM_SEATS) if active[s]]
    leader = int(rng.choice(seats))
    order = [leader]
    while len(order) < len(seats):
        s = (order[-1] + 1) % NUM_SEATS
        while not active[s]:
            s = (s + 1) % NUM_SEATS
        order.append(s)
    left = int(rng.integers(1, 4))
    played = int(rng.integers(0, len(seats)))
    cards = rng.permutation(deck.num_cards).tolist()
    hands, trick = [[] for _ in range(NUM_SEATS)], [-1] * NUM_SEATS
    for k, s in enumerate(order):
        size = left - (1 if k < played else 0)
        hands[s] = [cards.pop() for _ in range(size)]
        if k < played:
            trick[s] = cards.pop()
    return hands, int(rng.integers(4)), leader, active, trick


def to_masks(deck, hands):
    return np.array([hand_masks(np.isin(np.arange(deck.num_cards), h)) for h in hands], np.uint64)


@pytest.mark.parametrize("rules", DECKS, ids=lambda r: f"{r.deck}{'j' if r.joker else ''}")
def test_solver_matches_brute_force_minimax_on_small_endgames(rules):
    deck = deck_for(rules)
    dd = DoubleDummy(deck)
    rng = np.random.default_rng(rules.deck + rules.joker)
    for _ in range(150):
        hands, trump, leader, active, trick = random_endgame(rng, deck)
        masks = to_masks(deck, hands)
        expected, order = brute_force(deck, hands, trump, leader, active, trick)
        act = np.array(active)[None]
        assert dd.values(masks[None], trump, leader, act, np.array(trick)[None])[0] == expected
        moves = dd.move_values(masks[None], trump, leader, act, np.array(trick)[None])[0]
        seat = next_to_act(leader, active, trick)
        es = deck.effective_suit[trump]
        legal = [c for c in hands[seat] if order and es[c] == es[trick[leader]]] or hands[seat]
        assert sorted(np.flatnonzero(moves >= 0).tolist()) == sorted(legal)
        best = max if seat % 2 == 0 else min
        assert best(moves[c] for c in legal) == expected
        for c in legal:
            rest = [list(h) for h in hands]
            rest[seat].remove(c)
            t2 = list(trick)
            t2[seat] = c
            if all(t2[s] >= 0 for s in range(NUM_SEATS) if active[s]):
                led = deck.effective_suit[trump][t2[leader]]
                strength = deck.trick_strength[trump][led]
                winner = max((s for s in range(NUM_SEATS) if active[s]), key=lambda s: strength[t2[s]])
                after = brute_force(deck, rest, trump, winner, active, [-1] * 4)[0] if rest[winner] else 0
                value = int(winner % 2 == 0) + after
            else:
                value = brute_force(deck, rest, trump, leader, active, t2)[0]
            assert moves[c] == value
        for need in (0b1000, 0b0110, 0b101010):
            got = dd.move_values(masks[None], trump, leader, act, np.array(trick)[None], need)[0]
            for t in range(1, 6):
                if need >> t & 1:
                    assert ((got >= t) == (moves >= t))[moves >= 0].all()


def next_to_act(leader, active, trick):
    s = leader
    while trick[s] >= 0:
        s = (s + 1) % NUM_SEATS
        while not active[s]:
            s = (s + 1) % NUM_SEATS
    return s


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(deck=32, joker=True, lone_defender=True), Rules.openspiel(allow_lone_defender=True)],
    ids=["default", "32j-lone", "openspiel"],
)
def test_solver_value_is_what_the_engine_scores_under_solver_play(rules):
    """Both sides play solver-optimal cards through the engine; team 0 takes what the solver said."""
    engine = Engine(rules)
    dd = DoubleDummy(engine.deck)
    bidder = make_agent("random", engine, seed=3)
    keys = game_keys(11, 30)
    for key in keys:
        state = engine.init(key[None])
        while state.phase[0] < Phase.PLAY:
            engine.step(state, bidder.act(engine.observe(state), state.legal))
        if state.done[0]:
            continue
        predicted = dd.values(hand_masks(state.hand), state.trump, state.to_play, state.active)[0]
        while not state.done[0]:
            t = state.trick_index[0]
            v = dd.move_values(
                hand_masks(state.hand), state.trump, state.trick_leader[:, t], state.active, state.trick_cards[:, t]
            )[0]
            legal = np.flatnonzero(v >= 0)
            assert legal.tolist() == engine.legal_actions(state)
            pick = np.argmax if state.to_play[0] % 2 == 0 else np.argmin
            engine.step(state, legal[pick(v[legal])][None])
        assert state.tricks_won[0, 0] == predicted


@pytest.mark.parametrize(
    "rules", [Rules(), Rules(deck=32, joker=True, lone_defender=True)], ids=["default", "32j-lone"]
)
def test_the_solvers_follow_suit_and_trick_winner_are_the_engines_under_random_play(rules):
    """The C solver keeps its own follow-suit and trick-winner rules: at every card of random hands its legal
    cards are the engine's, and from any point of the last trick it names the engine's winner of that trick."""
    engine = Engine(rules)
    dd = DoubleDummy(engine.deck)
    rng = np.random.default_rng(5)
    for key in game_keys(12, 40):
        state = engine.init(key[None])
        while not state.done[0]:
            if state.phase[0] == Phase.PLAY:
                t = state.trick_index[0]
                args = (hand_masks(state.hand), state.trump, state.trick_leader[:, t], state.active, state.trick_cards[:, t])
                assert np.flatnonzero(dd.move_values(*args)[0] >= 0).tolist() == engine.legal_actions(state)
                if t == NUM_TRICKS - 1:
                    last_to_team_0 = int(dd.values(*args)[0])
            engine.step(state, np.array([rng.choice(engine.legal_actions(state))]))
        if state.phase[0] != Phase.HAND_OVER or state.trick_winner[0, -1] < 0:
            continue
        assert last_to_team_0 == (state.trick_winner[0, -1] % 2 == 0)


def test_solver_rejects_inconsistent_positions():
    deck = deck_for(Rules())
    dd = DoubleDummy(deck)
    hands = to_masks(deck, [[0, 1], [2], [3, 4], [5, 6]])
    with pytest.raises(ValueError):
        dd.values(hands[None], 0, 0)
    hands = to_masks(deck, [[0], [0], [3], [5]])
    with pytest.raises(ValueError):
        dd.values(hands[None], 0, 0)


def test_mask_helpers_round_trip():
    deck = deck_for(Rules(deck=32, joker=True))
    cards = [0, 7, 31, 32]
    mask = hand_masks(np.isin(np.arange(deck.num_cards), cards))
    assert mask_cards(int(mask)) == cards
