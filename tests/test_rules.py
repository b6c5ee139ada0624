"""One scripted-deal test per rule of the rules documents (shared/rules/000_* is the primary spec,
001_*..004_* the variants). Every scripted step checks the acting seat and its legal action names.

Seats: 0 and 2 are partners against 1 and 3. Most deals have seat 3 deal, so seat 0 bids and leads first.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import MARCH, MARCH_SCRIPT, legal_names, play, play_engine, random_actions, start
from euchre_env.cards import HEARTS, NUM_SUITS, deck_for
from euchre_env.deal_keys import deck_orders
from euchre_env.engine import PACKET_SEAT, Engine, Phase, game_keys
from euchre_env.rules import Rules

ALL_BIDS_R2_NOT_HEARTS = "pass clubs diamonds spades"

# ---------------------------------------------------------------------------------------------- deals

# Seat 2 holds the five best hearts (so seat 0, left of the dealer, sits out if seat 2 goes alone).
MARCH_BY_2 = (3, ["AD KD QD TD 9D", "AC KC QC JC TC", "JH JD AH KH QH", "AS KS QS JS TS"], "9H")
# Seat 1, the dealer's partner, holds the five best hearts.
MARCH_BY_DEALERS_PARTNER = (3, ["AC KC QC JC TC", "JH JD AH KH QH", "AD KD QD TD 9D", "AS KS QS JS TS"], "9H")
# Seat 0: the three best hearts and two losers.
THREE = (3, ["JH JD AH 9C 9S", "AC KC QC JC TC", "AD KD QD TD 9D", "AS KS QS JS TS"], "KH")
# Seat 0: the three best hearts, the ace of diamonds and a loser.
FOUR = (3, ["JH JD AH AD 9S", "AC KC QC JC TC", "KD QD TD 9D 9C", "AS KS QS JS TS"], "KH")
# Seat 0 orders hearts holding one small trump; seat 1 holds the five best hearts.
HOPELESS = (3, ["9H 9C 9D 9S TC", "JH JD AH KH QH", "AC KC QC JC TD", "AS KS QS JS TS"], "TH")
# Spades trump (ordered by seat 0): follow-suit and trick-winning rules.
TRICKS = (3, ["QC AC TS 9D 9H", "KC 9C AH KH QH", "AD KD QD TD JH", "AS KS QS JD TH"], "9S")
# Hearts trump: seat 1 holds the left bower and other diamonds.
LEFT_BOWER = (3, ["AD KD AH KH 9S", "JD QD AC KC QC", "QH TH AS KS QS", "9C TC JC JH TS"], "9H")
# Hearts trump: right bower, left bower and ace meet in the first trick.
BOWERS = (3, ["AH 9C TC JC QC", "JD AD KD QD TD", "JH KC AC 9D 9S", "TH QH KH TS JS"], "9H")
# Lone maker (seat 0) against a lone defender (seat 3, the dealer) who takes four tricks.
LONE_DEFENDER_FOUR = (3, ["JH 9C 9D 9S TC", "AC KC QC JC TD", "AD KD QD TS JS", "JD AH KH QH AS"], "9H")
# The same, but the lone defender takes all five.
LONE_DEFENDER_FIVE = (3, ["TH 9C 9D 9S TC", "AC KC QC JC TD", "AD KD QD TS JS", "JH JD AH KH QH"], "9H")


def hand_points(env) -> list[int]:
    """Points each team scored in the hand that just finished."""
    return env.state_.hand_points[0].tolist()


def trick_winners(env) -> list[int]:
    """Seat that won each trick so far (-1 for tricks not finished)."""
    return env.state_.trick_winner[0].tolist()


# ------------------------------------------------------------------------------- bidding scripts

ORDER_HEARTS_BY_0 = [(0, "pass hearts", "hearts")]
ORDER_SPADES_BY_0 = [(0, "pass spades", "spades")]


def discard_step(dealer_hand: str, upcard: str, buried: str, may_bury_upcard: bool = True) -> tuple[int, str, str]:
    """Seat 3 (the dealer) buries a card after taking the upcard."""
    legal = f"{dealer_hand} {upcard}" if may_bury_upcard else dealer_hand
    return (3, legal, buried)


# ------------------------------------------------------------------------------- the deck

def test_standard_deck_is_twenty_four_cards_nine_to_ace():
    deck = deck_for(Rules())
    assert deck.num_cards == 24
    assert sorted(deck.names) == sorted(r + s for r in "9TJQKA" for s in "CDHS")


def test_each_player_gets_five_cards_and_four_are_left_with_the_top_one_turned_up():
    engine = Engine(Rules())
    state = engine.init(game_keys(3, 200))
    assert (state.hand.sum(axis=2) == 5).all()
    upcard_held = state.hand[np.arange(200), :, state.upcard].any(axis=1)
    assert not upcard_held.any()
    in_hands = state.hand.any(axis=1).sum(axis=1)
    assert (engine.num_cards - in_hands == 4).all()


@pytest.mark.parametrize("trump", range(NUM_SUITS))
def test_trump_has_seven_cards_and_the_suit_that_lost_its_jack_five(trump):
    deck = deck_for(Rules())
    counts = np.bincount(deck.effective_suit[trump], minlength=NUM_SUITS)
    for suit in range(NUM_SUITS):
        assert counts[suit] == {trump: 7, 3 - trump: 5}.get(suit, 6)


def test_trump_runs_right_left_ace_king_queen_ten_nine_and_other_suits_ace_down_to_nine():
    deck = deck_for(Rules())
    trump = [deck.card_id(n) for n in ["JH", "JD", "AH", "KH", "QH", "TH", "9H"]]
    assert (np.diff(deck.trump_strength[HEARTS, trump]) < 0).all()
    plain = [deck.card_id(n) for n in ["AC", "KC", "QC", "JC", "TC", "9C"]]
    assert (np.diff(deck.trick_strength[HEARTS, 0, plain]) < 0).all()
    assert deck.trick_strength[HEARTS, 0, trump].min() > deck.trick_strength[HEARTS, 0, plain].max()
    assert deck.trick_strength[HEARTS, 0, deck.card_id("AS")] == 0


def test_thirty_two_card_deck_adds_sevens_and_eights():
    deck = deck_for(Rules(deck=32))
    assert deck.num_cards == 32
    assert deck.names[24:] == ("7C", "7D", "7H", "7S", "8C", "8D", "8H", "8S")
    assert deck.names[:24] == deck_for(Rules()).names


@pytest.mark.parametrize("trump", range(NUM_SUITS))
def test_thirty_two_card_deck_trump_has_nine_cards_same_colour_seven_others_eight(trump):
    deck = deck_for(Rules(deck=32))
    counts = np.bincount(deck.effective_suit[trump], minlength=NUM_SUITS)
    expected = {trump: 9, 3 - trump: 7}
    for suit in range(NUM_SUITS):
        assert counts[suit] == expected.get(suit, 8)


def test_thirty_two_card_deck_non_trump_rank_is_ace_down_to_seven():
    env = start(3, ["7C AH 9H 9S TS", "8C KH QH JS QS", "KS AS TH 7H 8H", "8S 7S JH QD KD"], "8D", Rules(deck=32))
    play(env, [
        (0, "pass diamonds", "diamonds"),
        (0, "alone partner", "partner"),
        (3, "8S 7S JH QD KD 8D", "7S"),
        (0, "7C AH 9H 9S TS", "7C"),
        (1, "8C", "8C"),
        (2, "KS AS TH 7H 8H", "KS"),
        (3, "8S JH QD KD 8D", "8S"),
    ])
    assert trick_winners(env)[0] == 1  # the eight beats the seven; the off-suit king cannot win
    deck = env.engine.deck
    plain = [deck.card_id(n) for n in ["AC", "KC", "QC", "JC", "TC", "9C", "8C", "7C"]]
    assert (np.diff(deck.trick_strength[HEARTS, 0, plain]) < 0).all()
    state = env.state_
    assert state.hand[0].sum() == 16
    assert env.engine.num_cards - state.dealt[0].any(axis=0).sum() == 12  # the upcard and eleven more


def test_thirty_two_card_deck_trump_runs_right_left_ace_down_to_seven():
    deck = deck_for(Rules(deck=32))
    ids = [deck.card_id(n) for n in ["JH", "JD", "AH", "KH", "QH", "TH", "9H", "8H", "7H"]]
    strength = deck.trump_strength[HEARTS, ids]
    assert (np.diff(strength) < 0).all()
    assert (deck.trump_strength[HEARTS, [deck.card_id(n) for n in ["AD", "7C", "JS"]]] < 0).all()


def test_joker_is_the_highest_trump_whatever_the_suit():
    deck = deck_for(Rules(joker=True))
    assert deck.num_cards == 25 and deck.names[-1] == "JOKER"
    for trump in range(NUM_SUITS):
        assert deck.trump_strength[trump].argmax() == deck.joker
        assert deck.effective_suit[trump, deck.joker] == trump


def test_joker_beats_the_right_bower_and_must_follow_a_trump_lead():
    env = start(3, ["AH 9C TC JC QC", "JOKER AD KD QD TD", "JH KC AC 9D 9S", "TH QH KH TS JS"], "9H", Rules(joker=True))
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        discard_step("TH QH KH TS JS", "9H", "TS"),
        (0, "AH 9C TC JC QC", "AH"),
        (1, "JOKER", "JOKER"),
        (2, "JH", "JH"),
        (3, "TH QH KH 9H", "KH"),
        (1, "AD KD QD TD", "AD"),
    ])
    assert trick_winners(env)[0] == 1


def test_turned_up_joker_counts_as_a_spade():
    hands = ["AH 9C TC JC QC", "JH AD KD QD TD", "9S KC AC 9D QS", "TH QH KH TS JS"]
    env = start(3, hands, "JOKER", Rules(joker=True))
    play(env, [(0, "pass spades", "spades"), (0, "alone partner", "partner"), (3, "TH QH KH TS JS JOKER", "TH")])
    assert env.public_state()["trump"] == "spades"
    assert env.state_.hand[0, 3, env.action_id("JOKER")]

    env = start(3, hands, "JOKER", Rules(joker=True))
    play(env, [(s, "pass spades", "pass") for s in range(4)] + [(0, "pass clubs diamonds hearts", "pass")])


# ------------------------------------------------------------------------------- dealing

@pytest.mark.parametrize("dealer", range(4))
def test_cards_go_out_in_packets_of_two_and_three_from_the_dealers_left(dealer):
    order = PACKET_SEAT[dealer].tolist()
    runs = []
    for seat in order:
        if runs and runs[-1][0] == seat:
            runs[-1][1] += 1
        else:
            runs.append([seat, 1])
    assert [seat for seat, _ in runs] == [(dealer + 1 + k) % 4 for k in range(4)] * 2
    assert [size for _, size in runs] == [3, 2, 3, 2, 2, 3, 2, 3]  # 001_*'s traditional order
    for seat in range(4):
        sizes = [size for s, size in runs if s == seat]
        assert sorted(sizes) == [2, 3]


def test_a_real_deal_follows_the_packet_order():
    engine = Engine(Rules())
    state = engine.init(game_keys(11, 50))
    probe = state.copy()
    probe.deal_count -= 1
    perm = deck_orders(probe.key, probe.deal_count.astype(np.int64), engine.num_cards)
    for g in range(50):
        seats = PACKET_SEAT[state.dealer[g]]
        for pos in range(20):
            assert state.hand[g, seats[pos], perm[g, pos]]
        assert state.upcard[g] == perm[g, 20]


def test_first_dealer_is_the_high_card_of_the_cut():
    engine = Engine(Rules())
    n = 400
    state = engine.init(game_keys(5, n))
    probe = engine.init(game_keys(5, n))
    probe.deal_count[:] = 0
    first_cut = engine.deck.rank[deck_orders(probe.key, probe.deal_count.astype(np.int64), engine.num_cards)[:, :4]]
    probe.deal_count[:] = 1
    second_cut = engine.deck.rank[deck_orders(probe.key, probe.deal_count.astype(np.int64), engine.num_cards)[:, :4]]
    ties = 0
    for g in range(n):
        best = first_cut[g] == first_cut[g].max()
        if best.sum() == 1:
            assert state.dealer[g] == best.argmax()
            continue
        ties += 1
        assert best[state.dealer[g]]
        recut = np.where(best, second_cut[g], -1)
        if (recut == recut.max()).sum() == 1:
            assert state.dealer[g] == recut.argmax()
    assert ties > 0
    assert (np.bincount(state.dealer, minlength=4) > n // 8).all()


def test_first_dealer_at_random_when_configured():
    """Spread over the four seats, and not the cut: on the same keys the dealers differ from the cut's
    about three times in four (they agree by chance one time in four)."""
    keys = game_keys(5, 400)
    state = Engine(Rules(first_dealer="random")).init(keys)
    counts = np.bincount(state.dealer, minlength=4)
    assert (counts > 50).all()
    cut = Engine(Rules(first_dealer="cut")).init(keys)
    assert 0.6 < np.mean(state.dealer != cut.dealer) < 0.9


def test_deal_moves_one_seat_left_after_every_hand():
    engine = Engine(Rules(), episode="game")
    state = engine.init(game_keys(8, 64))
    rng = np.random.default_rng(8)
    hands_seen = 0
    while not state.done.all():
        before_dealer, before_hand = state.dealer.copy(), state.hand_number.copy()
        engine.step(state, random_actions(state, rng))
        moved = (state.hand_number > before_hand) & ~state.done
        assert (state.dealer[moved] == (before_dealer[moved] + 1) % 4).all()
        assert (state.to_play[moved] == (state.dealer[moved] + 1) % 4).all()
        same = state.hand_number == before_hand
        assert (state.dealer[same] == before_dealer[same]).all()
        hands_seen += moved.sum()
    assert hands_seen > 64 * 5


# ------------------------------------------------------------------------------- bidding

@pytest.mark.parametrize("dealer", range(4))
def test_bidding_starts_left_of_the_dealer(dealer):
    hands = ["AD KD QD TD 9D", "AC KC QC JC TC", "JH JD AH KH QH", "AS KS QS JS TS"]
    env = start(dealer, hands, "9H")
    left = (dealer + 1) % 4
    play(env, [((left + k) % 4, "pass hearts", "pass") for k in range(4)])
    assert env.agent_selection == f"player_{left}"


def test_round_one_only_the_upcard_suit_may_be_ordered():
    env = start(*MARCH)
    play(env, [(s, "pass hearts", "pass") for s in range(4)])
    assert env.public_state()["upcard_turned_down"]


def test_ordering_up_ends_the_bidding_and_the_dealer_picks_up():
    env = start(*MARCH_BY_2)
    play(env, [
        (0, "pass hearts", "pass"),
        (1, "pass hearts", "pass"),
        (2, "pass hearts", "hearts"),
        (2, "alone partner", "partner"),
        (3, "AS KS QS JS TS 9H", "TS"),
        (0, "AD KD QD TD 9D", "9D"),
    ])
    assert env.public_state()["bids"] == ["pass", "pass", "hearts"]
    assert env.state_.hand[0, 3, env.action_id("9H")]


def test_dealer_may_order_up_for_itself():
    env = start(*MARCH)
    play(env, [(s, "pass hearts", "pass") for s in range(3)] + [
        (3, "pass hearts", "hearts"),
        (3, "alone partner", "partner"),
        (3, "AS KS QS JS TS 9H", "AS"),
        (0, "JH JD AH KH QH", "JH"),
    ])
    assert env.public_state()["maker"] == 3


def test_dealer_may_bury_the_picked_up_card():
    env = start(*MARCH)
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        (3, "AS KS QS JS TS 9H", "9H"),
        (0, "JH JD AH KH QH", "JH"),
        (1, "AC KC QC JC TC", "TC"),
        (2, "AD KD QD TD 9D", "9D"),
        (3, "AS KS QS JS TS", "TS"),  # the buried trump no longer obliges the dealer to follow
    ])
    assert env.state_.discard[0] == env.action_id("9H")


def test_turned_down_suit_cannot_be_named():
    env = start(*MARCH)
    play(env, [(s, "pass hearts", "pass") for s in range(4)] + [
        (0, ALL_BIDS_R2_NOT_HEARTS, "pass"),
        (1, ALL_BIDS_R2_NOT_HEARTS, "pass"),
        (2, ALL_BIDS_R2_NOT_HEARTS, "diamonds"),
    ])
    assert env.public_state()["trump"] == "diamonds"


def test_no_pass_for_the_dealer_in_round_two_under_stick_the_dealer():
    env = start(*MARCH)
    play(env, [(s, "pass hearts", "pass") for s in range(4)] + [
        (0, ALL_BIDS_R2_NOT_HEARTS, "pass"),
        (1, ALL_BIDS_R2_NOT_HEARTS, "pass"),
        (2, ALL_BIDS_R2_NOT_HEARTS, "pass"),
        (3, "clubs diamonds spades", "spades"),
        (3, "alone partner", "partner"),
        (0, "JH JD AH KH QH", "AH"),
    ])
    assert env.public_state()["maker"] == 3 and env.public_state()["trump"] == "spades"


def test_nobody_picks_up_the_upcard_in_round_two():
    env = start(*MARCH)
    play(env, [(s, "pass hearts", "pass") for s in range(4)] + [
        (0, ALL_BIDS_R2_NOT_HEARTS, "clubs"),
        (0, "alone partner", "partner"),
        (0, "JH JD AH KH QH", "AH"),
    ])
    assert not env.state_.hand[0, :, env.action_id("9H")].any()
    assert env.state_.discard[0] == -1


def all_pass_twice(dealer: int) -> list:
    seats = [(dealer + 1 + k) % 4 for k in range(4)]
    return [(s, "pass hearts", "pass") for s in seats] + [(s, ALL_BIDS_R2_NOT_HEARTS, "pass") for s in seats]


def test_throw_in_redeals_by_the_same_dealer():
    env = start(*MARCH, rules=Rules(stick_the_dealer=False), episode="game")
    rewards = play(env, all_pass_twice(3))
    state = env.state_
    assert rewards == {a: 0.0 for a in env.possible_agents}
    assert state.score[0].tolist() == [0, 0]
    assert state.dealer[0] == 3 and env.agent_selection == "player_0"
    assert Phase(state.phase[0]) == Phase.BID_ROUND_1 and state.num_bids[0] == 0
    assert (state.hand[0].sum(axis=1) == 5).all()
    assert not np.array_equal(state.dealt[0], start(*MARCH).state_.dealt[0])


def test_throw_in_passes_the_deal_left_when_configured():
    env = start(*MARCH, rules=Rules(stick_the_dealer=False, throw_in_same_dealer=False), episode="game")
    rewards = play(env, all_pass_twice(3))
    assert rewards == {a: 0.0 for a in env.possible_agents}
    assert env.state_.dealer[0] == 0 and env.agent_selection == "player_1"
    assert env.state_.score[0].tolist() == [0, 0]


def test_throw_in_ends_a_one_hand_episode_with_no_score():
    env = start(*MARCH, rules=Rules(stick_the_dealer=False), episode="hand")
    rewards = play(env, all_pass_twice(3))
    assert all(env.terminations.values())
    assert rewards == {a: 0.0 for a in env.possible_agents}
    assert env.state_.thrown_in[0] and hand_points(env) == [0, 0]


def test_throw_in_is_redealt_in_a_one_hand_episode_when_configured():
    rules = Rules(stick_the_dealer=False, throw_in_ends_hand_episode=False)
    env = start(*MARCH, rules=rules, episode="hand")
    play(env, all_pass_twice(3))
    assert not any(env.terminations.values())
    assert env.state_.dealer[0] == 3 and Phase(env.state_.phase[0]) == Phase.BID_ROUND_1


# ------------------------------------------------------------------------------- going alone

def test_maker_may_go_alone_in_round_two():
    env = start(*MARCH)
    play(env, [(s, "pass hearts", "pass") for s in range(4)] + [
        (0, ALL_BIDS_R2_NOT_HEARTS, "diamonds"),
        (0, "alone partner", "alone"),
        (0, "JH JD AH KH QH", "JD"),
        (1, "AC KC QC JC TC", "AC"),
        (3, "AS KS QS JS TS", "AS"),
    ])
    assert env.public_state()["sitting_out"] == [2]


def test_defenders_cannot_go_alone_by_default():
    env = start(*MARCH)
    play(env, ORDER_HEARTS_BY_0 + [(0, "alone partner", "alone")])
    assert env.agent_selection == "player_3" and env.public_state()["phase"] == "discard"
    assert legal_names(env) == {"AS", "KS", "QS", "JS", "TS", "9H"}


ALONE_MARCH = ORDER_HEARTS_BY_0 + [
    (0, "alone partner", "alone"),
    (3, "AS KS QS JS TS 9H", "9H"),
    (0, "JH JD AH KH QH", "JH"),
    (1, "AC KC QC JC TC", "TC"),
    (3, "AS KS QS JS TS", "TS"),
    (0, "JD AH KH QH", "JD"),
    (1, "AC KC QC JC", "JC"),
    (3, "AS KS QS JS", "JS"),
    (0, "AH KH QH", "AH"),
    (1, "AC KC QC", "QC"),
    (3, "AS KS QS", "QS"),
    (0, "KH QH", "KH"),
    (1, "AC KC", "KC"),
    (3, "AS KS", "KS"),
    (0, "QH", "QH"),
    (1, "AC", "AC"),
    (3, "AS", "AS"),
]


def test_alone_march_scores_four():
    env = start(*MARCH)
    rewards = play(env, ALONE_MARCH)
    assert all(env.terminations.values())
    assert hand_points(env) == [4, 0]
    assert rewards == {"player_0": 4.0, "player_1": -4.0, "player_2": 4.0, "player_3": -4.0}


def test_partner_of_a_lone_maker_sits_out_and_tricks_have_three_cards():
    env = start(*MARCH)
    play(env, ALONE_MARCH)
    state = env.state_
    assert env.public_state()["sitting_out"] == [2]
    assert ((state.trick_cards[0] >= 0).sum(axis=1) == 3).all()
    assert (state.trick_cards[0, :, 2] == -1).all()
    assert state.hand[0, 2].sum() == 5


def test_alone_with_three_tricks_scores_one():
    env = start(*THREE)
    rewards = play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "alone"),
        (3, "AS KS QS JS TS KH", "TS"),
        (0, "JH JD AH 9C 9S", "JH"),
        (1, "AC KC QC JC TC", "TC"),
        (3, "KH", "KH"),
        (0, "JD AH 9C 9S", "JD"),
        (1, "AC KC QC JC", "JC"),
        (3, "AS KS QS JS", "JS"),
        (0, "AH 9C 9S", "AH"),
        (1, "AC KC QC", "QC"),
        (3, "AS KS QS", "QS"),
        (0, "9C 9S", "9C"),
        (1, "AC KC", "AC"),
        (3, "AS KS", "KS"),
        (1, "KC", "KC"),
        (3, "AS", "AS"),
        (0, "9S", "9S"),
    ])
    assert trick_winners(env) == [0, 0, 0, 1, 1]
    assert hand_points(env) == [1, 0]
    assert rewards["player_0"] == 1.0 and rewards["player_3"] == -1.0


LONE_EUCHRED = [
    (0, "pass hearts", "hearts"),
    (0, "alone partner", "alone"),
    (3, "AS KS QS JS TS TH", "TS"),
    (0, "9H 9C 9D 9S TC", "9C"),
    (1, "JH JD AH KH QH", "JH"),
    (3, "AS KS QS JS TH", "AS"),
    (1, "JD AH KH QH", "JD"),
    (3, "TH", "TH"),
    (0, "9H", "9H"),
    (1, "AH KH QH", "AH"),
    (3, "KS QS JS", "JS"),
    (0, "9D 9S TC", "9D"),
    (1, "KH QH", "KH"),
    (3, "KS QS", "KS"),
    (0, "9S TC", "9S"),
    (1, "QH", "QH"),
    (3, "QS", "QS"),
    (0, "TC", "TC"),
]


def test_lone_maker_euchred_gives_two():
    env = start(*HOPELESS)
    rewards = play(env, LONE_EUCHRED)
    assert trick_winners(env) == [1, 1, 1, 1, 1]
    assert hand_points(env) == [0, 2]
    assert rewards == {"player_0": -2.0, "player_1": 2.0, "player_2": -2.0, "player_3": 2.0}


def test_dealers_partner_alone_dealer_sits_out_and_nobody_buries():
    env = start(*MARCH_BY_DEALERS_PARTNER)
    rewards = play(env, [
        (0, "pass hearts", "pass"),
        (1, "pass hearts", "hearts"),
        (1, "alone partner", "alone"),
        (0, "AC KC QC JC TC", "AC"),
        (1, "JH JD AH KH QH", "JH"),
        (2, "AD KD QD TD 9D", "9D"),
        (1, "JD AH KH QH", "JD"),
        (2, "AD KD QD TD", "TD"),
        (0, "KC QC JC TC", "TC"),
        (1, "AH KH QH", "AH"),
        (2, "AD KD QD", "QD"),
        (0, "KC QC JC", "JC"),
        (1, "KH QH", "KH"),
        (2, "AD KD", "KD"),
        (0, "KC QC", "QC"),
        (1, "QH", "QH"),
        (2, "AD", "AD"),
        (0, "KC", "KC"),
    ])
    state = env.state_
    assert env.public_state()["sitting_out"] == [3]
    assert not state.picked_up[0] and state.discard[0] == -1
    assert not state.hand[0, :, env.action_id("9H")].any()
    assert state.hand[0, 3].sum() == 5
    assert hand_points(env) == [0, 4] and rewards["player_1"] == 4.0


def test_lead_left_of_dealer_skips_sitting_out_seat():
    env = start(*MARCH_BY_2)
    rewards = play(env, [
        (0, "pass hearts", "pass"),
        (1, "pass hearts", "pass"),
        (2, "pass hearts", "hearts"),
        (2, "alone partner", "alone"),
        (3, "AS KS QS JS TS 9H", "TS"),
        (1, "AC KC QC JC TC", "AC"),
        (2, "JH JD AH KH QH", "QH"),
        (3, "AS KS QS JS 9H", "AS"),
        (2, "JH JD AH KH", "JH"),
        (3, "9H", "9H"),
        (1, "KC QC JC TC", "TC"),
        (2, "JD AH KH", "JD"),
        (3, "KS QS JS", "JS"),
        (1, "KC QC JC", "JC"),
        (2, "AH KH", "AH"),
        (3, "KS QS", "QS"),
        (1, "KC QC", "QC"),
        (2, "KH", "KH"),
        (3, "KS", "KS"),
        (1, "KC", "KC"),
    ])
    assert env.state_.trick_leader[0].tolist() == [1, 2, 2, 2, 2]
    assert hand_points(env) == [4, 0] and rewards["player_2"] == 4.0


def test_lead_left_of_lone_player_variant():
    rules = Rules(lone_lead="left_of_lone_player")
    env = start(*MARCH_BY_2, rules=rules)
    play(env, [
        (0, "pass hearts", "pass"),
        (1, "pass hearts", "pass"),
        (2, "pass hearts", "hearts"),
        (2, "alone partner", "alone"),
        (3, "AS KS QS JS TS 9H", "TS"),
        (3, "AS KS QS JS 9H", "9H"),
        (1, "AC KC QC JC TC", "TC"),
        (2, "JH JD AH KH QH", "QH"),
    ])
    assert env.state_.trick_leader[0, 0] == 3 and trick_winners(env)[0] == 2


def test_lead_left_of_lone_player_variant_keeps_left_of_dealer_without_a_lone_player():
    env = start(*MARCH_BY_2, rules=Rules(lone_lead="left_of_lone_player"))
    play(env, [
        (0, "pass hearts", "pass"),
        (1, "pass hearts", "pass"),
        (2, "pass hearts", "hearts"),
        (2, "alone partner", "partner"),
        (3, "AS KS QS JS TS 9H", "TS"),
        (0, "AD KD QD TD 9D", "AD"),
    ])


# ------------------------------------------------------------------------------- lone defenders

def lone_defender_bidding(dealer_hand: str, buried: str) -> list:
    return [
        (0, "pass hearts", "hearts"),
        (0, "alone partner", "alone"),
        (1, "alone partner", "partner"),
        (3, "alone partner", "alone"),
        (3, f"{dealer_hand} 9H", buried),
    ]


LONE_DEFENDER_FOUR_SCRIPT = lone_defender_bidding("JD AH KH QH AS", "AS") + [
    (0, "JH 9C 9D 9S TC", "9C"),
    (3, "JD AH KH QH 9H", "9H"),
    (3, "JD AH KH QH", "AH"),
    (0, "JH", "JH"),
    (0, "9D 9S TC", "9D"),
    (3, "JD KH QH", "QH"),
    (3, "JD KH", "KH"),
    (0, "9S TC", "9S"),
    (3, "JD", "JD"),
    (0, "TC", "TC"),
]


@pytest.mark.parametrize("points", [2, 4])
def test_lone_defender_taking_three_or_four_tricks_scores_the_configured_points(points):
    env = start(*LONE_DEFENDER_FOUR, rules=Rules(lone_defender=True, lone_defender_euchre_points=points))
    rewards = play(env, LONE_DEFENDER_FOUR_SCRIPT)
    state = env.state_
    assert env.public_state()["alone"] == [0, 3] and env.public_state()["sitting_out"] == [1, 2]
    assert state.tricks_won[0].tolist() == [1, 4]
    assert ((state.trick_cards[0] >= 0).sum(axis=1) == 2).all()
    assert hand_points(env) == [0, points] and rewards["player_3"] == points


@pytest.mark.parametrize("points", [2, 4])
def test_lone_defender_taking_all_five_scores_four(points):
    env = start(*LONE_DEFENDER_FIVE, rules=Rules(lone_defender=True, lone_defender_euchre_points=points))
    play(env, lone_defender_bidding("JH JD AH KH QH", "9H") + [
        (0, "TH 9C 9D 9S TC", "TH"),
        (3, "JH JD AH KH QH", "QH"),
        (3, "JH JD AH KH", "JH"),
        (0, "9C 9D 9S TC", "9C"),
        (3, "JD AH KH", "JD"),
        (0, "9D 9S TC", "9D"),
        (3, "AH KH", "AH"),
        (0, "9S TC", "9S"),
        (3, "KH", "KH"),
        (0, "TC", "TC"),
    ])
    assert hand_points(env) == [0, 4]


def test_two_players_alone_defender_leads():
    rules = Rules(lone_defender=True, lone_lead="left_of_lone_player")
    env = start(*LONE_DEFENDER_FOUR, rules=rules)
    play(env, lone_defender_bidding("JD AH KH QH AS", "AS") + [
        (3, "JD AH KH QH 9H", "JD"),
        (0, "JH", "JH"),
        (0, "9C 9D 9S TC", "9S"),
    ])
    assert env.state_.trick_leader[0, 0] == 3 and trick_winners(env)[0] == 0


def test_defenders_are_asked_about_going_alone_from_the_dealers_left():
    rules = Rules(lone_defender=True)
    env = start(*MARCH_BY_2, rules=rules)
    play(env, [
        (0, "pass hearts", "pass"),
        (1, "pass hearts", "pass"),
        (2, "pass hearts", "hearts"),
        (2, "alone partner", "partner"),
        (1, "alone partner", "partner"),
        (3, "alone partner", "partner"),
        (3, "AS KS QS JS TS 9H", "TS"),
        (0, "AD KD QD TD 9D", "AD"),
    ])
    env = start(*MARCH, rules=rules)
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        (1, "alone partner", "alone"),
        (0, "JH JD AH KH QH", "JH"),  # the dealer is the lone defender's partner: sits out, nobody buries
        (1, "AC KC QC JC TC", "AC"),
        (2, "AD KD QD TD 9D", "AD"),
    ])
    assert env.public_state()["sitting_out"] == [3] and not env.state_.picked_up[0]


def test_lone_defender_with_a_partnered_maker_left_of_lone_player_leads():
    env = start(*MARCH, rules=Rules(lone_defender=True, lone_lead="left_of_lone_player"))
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        (1, "alone partner", "partner"),
        (3, "alone partner", "alone"),
        (3, "AS KS QS JS TS 9H", "TS"),
        (0, "JH JD AH KH QH", "JH"),  # left of the lone defender (seat 3) is seat 0
        (2, "AD KD QD TD 9D", "AD"),
        (3, "9H", "9H"),
    ])
    assert env.public_state()["sitting_out"] == [1]


# ------------------------------------------------------------------------------- the play

TRICKS_SCRIPT = ORDER_SPADES_BY_0 + [
    (0, "alone partner", "partner"),
    (3, "AS KS QS JD TH 9S", "JD"),
    (0, "QC AC TS 9D 9H", "QC"),
    (1, "KC 9C", "9C"),
    (2, "AD KD QD TD JH", "AD"),
    (3, "AS KS QS TH 9S", "TH"),
    (0, "AC TS 9D 9H", "AC"),
    (1, "KC", "KC"),
    (2, "KD QD TD JH", "KD"),
    (3, "AS KS QS 9S", "9S"),
    (3, "AS KS QS", "KS"),
    (0, "TS", "TS"),
    (1, "AH KH QH", "AH"),
    (2, "QD TD JH", "QD"),
    (3, "AS QS", "QS"),
    (0, "9D 9H", "9H"),
    (1, "KH QH", "KH"),
    (2, "TD JH", "JH"),
    (3, "AS", "AS"),
    (0, "9D", "9D"),
    (1, "QH", "QH"),
    (2, "TD", "TD"),
]


def test_must_follow_suit_when_able():
    env = start(*TRICKS)
    play(env, TRICKS_SCRIPT[:4])
    assert legal_names(env) == {"KC", "9C"}


def test_any_card_may_be_played_when_void_in_the_suit_led():
    env = start(*TRICKS)
    play(env, TRICKS_SCRIPT[:7])  # seat 2 and seat 3 hold no club: every card is legal


def test_trumping_is_never_required():
    env = start(*TRICKS)
    play(env, TRICKS_SCRIPT[:7])
    assert env.state_.trick_cards[0, 0, 3] == env.action_id("TH")


def test_no_obligation_to_beat_the_winning_card():
    env = start(*TRICKS)
    play(env, TRICKS_SCRIPT[:4])
    assert "9C" in legal_names(env) and "KC" in legal_names(env)


def test_highest_card_of_the_suit_led_wins_without_trump_and_off_suit_aces_cannot_win():
    env = start(*TRICKS)
    play(env, TRICKS_SCRIPT[:7])
    assert trick_winners(env)[0] == 0


def test_trick_winner_leads_next():
    env = start(*TRICKS)
    play(env, TRICKS_SCRIPT)
    state = env.state_
    assert trick_winners(env) == [0, 3, 3, 3, 3]
    assert state.trick_leader[0].tolist() == [0, 0, 3, 3, 3]


def test_lowest_trump_beats_the_ace_of_the_suit_led():
    env = start(*TRICKS)
    play(env, TRICKS_SCRIPT[:11])
    assert trick_winners(env)[1] == 3
    assert env.state_.trick_cards[0, 1, 3] == env.action_id("9S")


def test_highest_trump_wins_when_several_trumps_are_played():
    env = start(*TRICKS)
    play(env, TRICKS_SCRIPT[:15])
    assert trick_winners(env)[2] == 3


def test_euchred_makers_give_the_defenders_two():
    env = start(*TRICKS)
    rewards = play(env, TRICKS_SCRIPT)
    assert env.state_.tricks_won[0].tolist() == [1, 4]
    assert hand_points(env) == [0, 2]
    assert rewards == {"player_0": -2.0, "player_1": 2.0, "player_2": -2.0, "player_3": 2.0}


def test_left_bower_must_follow_a_trump_lead():
    env = start(*BOWERS)
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        (3, "TH QH KH TS JS 9H", "TS"),
        (0, "AH 9C TC JC QC", "AH"),
        (1, "JD", "JD"),
        (2, "JH", "JH"),
        (3, "TH QH KH 9H", "KH"),
    ])


def test_right_bower_beats_everything():
    env = start(*BOWERS)
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        (3, "TH QH KH TS JS 9H", "TS"),
        (0, "AH 9C TC JC QC", "AH"),
        (1, "JD", "JD"),
        (2, "JH", "JH"),
        (3, "TH QH KH 9H", "KH"),
    ])
    assert trick_winners(env)[0] == 2 and env.agent_selection == "player_2"


def test_left_bower_beats_the_ace_of_trump():
    hands = ["AH 9C TC JC QC", "JD AD KD QD TD", "KH KC AC 9D 9S", "TH QH JH TS JS"]
    env = start(3, hands, "9H")
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        (3, "TH QH JH TS JS 9H", "TS"),
        (0, "AH 9C TC JC QC", "AH"),
        (1, "JD", "JD"),
        (2, "KH", "KH"),
        (3, "TH QH JH 9H", "QH"),
    ])
    assert trick_winners(env)[0] == 1


def test_left_bower_may_not_follow_its_printed_suit():
    env = start(*LEFT_BOWER)
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        (3, "9C TC JC JH TS 9H", "9C"),
        (0, "AD KD AH KH 9S", "AD"),
        (1, "QD", "QD"),
        (2, "QH TH AS KS QS", "AS"),
        (3, "TC JC JH TS 9H", "TC"),
        (0, "KD AH KH 9S", "KD"),
        (1, "JD AC KC QC", "AC"),  # the left bower is a heart, so seat 1 is void in diamonds
        (2, "QH TH KS QS", "KS"),
        (3, "JC JH TS 9H", "TS"),
    ])
    assert trick_winners(env)[:2] == [0, 0]


def test_left_bower_led_is_a_trump_lead():
    env = start(3, ["KC AH 9S TS 9D", "AC JD QD KD AD", "QH TH 9C AS KS", "JH KH TC QC JC"], "9H")
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        (3, "JH KH TC QC JC 9H", "TC"),
        (0, "KC AH 9S TS 9D", "KC"),
        (1, "AC", "AC"),
        (2, "9C", "9C"),
        (3, "QC JC", "QC"),
        (1, "JD QD KD AD", "JD"),
        (2, "QH TH", "TH"),  # a heart must follow the left bower, not a spade
        (3, "JH KH 9H", "JH"),
        (0, "AH", "AH"),
    ])
    assert trick_winners(env)[:2] == [1, 3]


# ------------------------------------------------------------------------------- scoring

THREE_SCRIPT = ORDER_HEARTS_BY_0 + [
    (0, "alone partner", "partner"),
    (3, "AS KS QS JS TS KH", "TS"),
    (0, "JH JD AH 9C 9S", "JH"),
    (1, "AC KC QC JC TC", "TC"),
    (2, "AD KD QD TD 9D", "9D"),
    (3, "KH", "KH"),
    (0, "JD AH 9C 9S", "JD"),
    (1, "AC KC QC JC", "JC"),
    (2, "AD KD QD TD", "TD"),
    (3, "AS KS QS JS", "JS"),
    (0, "AH 9C 9S", "AH"),
    (1, "AC KC QC", "QC"),
    (2, "AD KD QD", "QD"),
    (3, "AS KS QS", "QS"),
    (0, "9C 9S", "9C"),
    (1, "AC KC", "AC"),
    (2, "AD KD", "KD"),
    (3, "AS KS", "KS"),
    (1, "KC", "KC"),
    (2, "AD", "AD"),
    (3, "AS", "AS"),
    (0, "9S", "9S"),
]

FOUR_SCRIPT = ORDER_HEARTS_BY_0 + [
    (0, "alone partner", "partner"),
    (3, "AS KS QS JS TS KH", "TS"),
    (0, "JH JD AH AD 9S", "JH"),
    (1, "AC KC QC JC TC", "TC"),
    (2, "KD QD TD 9D 9C", "9C"),
    (3, "KH", "KH"),
    (0, "JD AH AD 9S", "JD"),
    (1, "AC KC QC JC", "JC"),
    (2, "KD QD TD 9D", "9D"),
    (3, "AS KS QS JS", "JS"),
    (0, "AH AD 9S", "AH"),
    (1, "AC KC QC", "QC"),
    (2, "KD QD TD", "TD"),
    (3, "AS KS QS", "QS"),
    (0, "AD 9S", "AD"),
    (1, "AC KC", "KC"),
    (2, "KD QD", "QD"),
    (3, "AS KS", "KS"),
    (0, "9S", "9S"),
    (1, "AC", "AC"),
    (2, "KD", "KD"),
    (3, "AS", "AS"),
]


def test_march_scores_two():
    env = start(*MARCH)
    rewards = play(env, MARCH_SCRIPT)
    assert env.state_.tricks_won[0].tolist() == [5, 0]
    assert hand_points(env) == [2, 0]
    assert rewards == {"player_0": 2.0, "player_1": -2.0, "player_2": 2.0, "player_3": -2.0}


@pytest.mark.parametrize("dealt, script, tricks", [(THREE, THREE_SCRIPT, 3), (FOUR, FOUR_SCRIPT, 4)])
def test_three_or_four_tricks_score_one(dealt, script, tricks):
    env = start(*dealt)
    rewards = play(env, script)
    assert env.state_.tricks_won[0].tolist() == [tricks, 5 - tricks]
    assert hand_points(env) == [1, 0]
    assert rewards["player_2"] == 1.0 and rewards["player_1"] == -1.0


def test_partners_across_the_table_share_their_tricks():
    env = start(*FOUR)
    play(env, FOUR_SCRIPT)
    assert trick_winners(env) == [0, 0, 0, 0, 3]
    assert env.state_.tricks_won[0].tolist() == [4, 1]


def test_only_one_side_scores_in_a_hand():
    hands = [(MARCH, MARCH_SCRIPT), (THREE, THREE_SCRIPT), (TRICKS, TRICKS_SCRIPT), (HOPELESS, LONE_EUCHRED)]
    for dealt, script in hands:
        env = start(*dealt)
        play(env, script)
        assert sum(p > 0 for p in hand_points(env)) == 1


# ------------------------------------------------------------------------------- the game

def scripted_game_hand(engine: Engine, dealt: tuple, score: list[int], script: list) -> tuple:
    """Play one scripted hand of a game that stands at `score` (the deal is placed by hand)."""
    dealer, hands, upcard = dealt
    names = engine.deck.names
    ids = np.array([[names.index(c) for c in h.split()] for h in hands])
    state = engine.init_from_deal(dealer, ids, names.index(upcard), key=1)
    state.score[0] = score
    rewards = play_engine(engine, state, script)
    return state, rewards


def test_three_hands_of_one_two_and_four_points_come_to_seven():
    engine = Engine(Rules(), episode="game")
    score = [0, 0]
    for dealt, script in [(THREE, THREE_SCRIPT), (MARCH, MARCH_SCRIPT), (MARCH, ALONE_MARCH)]:
        state, _ = scripted_game_hand(engine, dealt, score, script)
        score = state.score[0].tolist()
        assert not state.done[0]
    assert score == [7, 0]


@pytest.mark.parametrize("target", [5, 7, 10])
def test_game_ends_when_a_side_reaches_the_target(target):
    engine = Engine(Rules(target_points=target), episode="game")
    state, rewards = scripted_game_hand(engine, THREE, [target - 1, target - 1], THREE_SCRIPT)
    assert Phase(state.phase[0]) == Phase.GAME_OVER and state.to_play[0] == -1
    assert state.score[0].tolist() == [target, target - 1]
    assert rewards.tolist() == [1, -1, 1, -1]


@pytest.mark.parametrize("target", [5, 7, 10])
def test_game_goes_on_below_the_target_with_the_deal_moved_left(target):
    engine = Engine(Rules(target_points=target), episode="game")
    state, _ = scripted_game_hand(engine, THREE, [target - 2, target - 1], THREE_SCRIPT)
    assert Phase(state.phase[0]) == Phase.BID_ROUND_1
    assert state.score[0].tolist() == [target - 1, target - 1]
    assert state.dealer[0] == 0 and state.to_play[0] == 1 and state.hand_number[0] == 1
    assert (state.hand[0].sum(axis=1) == 5).all()


def test_defenders_can_win_the_game_by_a_euchre():
    engine = Engine(Rules(), episode="game", reward="win")
    state, rewards = scripted_game_hand(engine, TRICKS, [9, 8], TRICKS_SCRIPT)
    assert Phase(state.phase[0]) == Phase.GAME_OVER
    assert state.score[0].tolist() == [9, 10]
    assert rewards.tolist() == [-1, 1, -1, 1]


def test_win_reward_is_paid_only_when_the_game_ends():
    engine = Engine(Rules(), episode="game", reward="win")
    state, rewards = scripted_game_hand(engine, MARCH, [2, 3], MARCH_SCRIPT)
    assert not state.done[0] and rewards.tolist() == [0, 0, 0, 0]
    assert state.score[0].tolist() == [4, 3]


def test_rubber_is_won_by_the_first_side_to_win_the_configured_games():
    rules = Rules(target_points=5, rubber_games=2, rubber_bonus=2)
    engine = Engine(rules, episode="rubber")
    dealer, hands, upcard = THREE
    names = engine.deck.names
    ids = np.array([[names.index(c) for c in h.split()] for h in hands])

    state = engine.init_from_deal(dealer, ids, names.index(upcard), key=1)
    state.score[0] = [4, 3]
    state.rubber_points[0] = [4, 3]
    play_engine(engine, state, THREE_SCRIPT)
    assert not state.done[0]
    assert state.games_won[0].tolist() == [1, 0] and state.score[0].tolist() == [0, 0]
    assert state.rubber_points[0].tolist() == [5, 3]
    assert engine.rubber_score(state).tolist() == [[0, 0]]

    state = engine.init_from_deal(dealer, ids, names.index(upcard), key=1)
    state.score[0] = [4, 2]
    state.games_won[0] = [1, 1]
    state.rubber_points[0] = [9, 7]
    play_engine(engine, state, THREE_SCRIPT)
    assert Phase(state.phase[0]) == Phase.GAME_OVER
    assert state.games_won[0].tolist() == [2, 1]
    assert state.rubber_points[0].tolist() == [10, 7]
    assert engine.rubber_score(state).tolist() == [[2 + 3, 0]]


@pytest.mark.parametrize("games, bonus", [(1, 0), (3, 5)])
def test_rubber_length_and_bonus_follow_the_rules(games, bonus):
    engine = Engine(Rules(target_points=3, rubber_games=games, rubber_bonus=bonus), episode="rubber")
    state = engine.init(game_keys(4, 128))
    rng = np.random.default_rng(4)
    while not state.done.all():
        engine.step(state, random_actions(state, rng))
    won = state.games_won
    assert (won.max(axis=1) == games).all() and (won.min(axis=1) < games).all()
    score = engine.rubber_score(state)
    winner = won.argmax(axis=1)
    rows = np.arange(128)
    diff = state.rubber_points[rows, winner] - state.rubber_points[rows, 1 - winner]
    ahead = diff >= 0  # the usual case; 004_* leaves a winner behind on points unspecified
    assert ahead.sum() > 64
    assert (score[rows, winner][ahead] == bonus + diff[ahead]).all()
    assert (score[rows, 1 - winner] == 0).all()


# ------------------------------------------------------------------------------- OpenSpiel options

def test_openspiel_alone_decision_comes_after_the_discard():
    env = start(*MARCH_BY_DEALERS_PARTNER, rules=Rules.openspiel())
    play(env, [
        (0, "pass hearts", "pass"),
        (1, "pass hearts", "hearts"),
        (3, "AS KS QS JS TS", "TS"),
        (1, "alone partner", "alone"),
        (0, "AC KC QC JC TC", "AC"),
        (1, "JH JD AH KH QH", "JH"),
        (2, "AD KD QD TD 9D", "9D"),
        (1, "JD AH KH QH", "JD"),
    ])
    state = env.state_
    assert env.public_state()["sitting_out"] == [3]
    assert state.picked_up[0] and state.discard[0] == env.action_id("TS")


def test_openspiel_dealer_may_not_bury_the_upcard():
    env = start(*MARCH, rules=Rules(dealer_may_bury_upcard=False))
    play(env, ORDER_HEARTS_BY_0 + [
        (0, "alone partner", "partner"),
        discard_step("AS KS QS JS TS", "9H", "AS", may_bury_upcard=False),
        (0, "JH JD AH KH QH", "JH"),
        (1, "AC KC QC JC TC", "TC"),
        (2, "AD KD QD TD 9D", "9D"),
        (3, "9H", "9H"),
    ])


def test_openspiel_lone_defender_scores_four_for_a_euchre():
    env = start(*LONE_DEFENDER_FOUR, rules=Rules.openspiel(allow_lone_defender=True))
    play(env, [
        (0, "pass hearts", "hearts"),
        (3, "JD AH KH QH AS", "AS"),
        (0, "alone partner", "alone"),
        (1, "alone partner", "partner"),
        (3, "alone partner", "alone"),
    ] + LONE_DEFENDER_FOUR_SCRIPT[5:])
    assert hand_points(env) == [0, 4]

