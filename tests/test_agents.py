"""The heuristic's rules on scripted positions, the pimc sampler's consistency, and full games."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from euchre_agents.registry import make_agent
from euchre_agents.base import RandomAgent
from euchre_agents.heuristic import HeuristicAgent
from euchre_agents.layouts import View, deals_from_layouts, replay, sample_hands
from euchre_agents.pimc import OracleAgent, PimcAgent, parse_options
from euchre_agents.solver import hand_masks
from euchre_env import Engine, Phase, Rules, game_keys
from euchre_env.cards import NUM_SEATS
from euchre_env.infoset import decode

VARIANTS = {
    "default": Rules(),
    "32-joker": Rules(deck=32, joker=True),
    "no-stick": Rules(stick_the_dealer=False),
    "openspiel-lone": Rules.openspiel(allow_lone_defender=True),
    "lone-left-of-lone": Rules(lone_defender=True, lone_lead="left_of_lone_player", dealer_may_bury_upcard=False),
    "late-alone-32": Rules(deck=32, alone_when_naming=False, lone_defender=True, throw_in_same_dealer=False),
}


# ---------------------------------------------------------------------------------- scripting


def scripted(engine: Engine, dealer: int, hands: list[str], upcard: str, actions: str = ""):
    """A game from an exact deal (hands as space-separated card names per seat) and named actions."""
    deck = engine.deck
    cards = np.array([[deck.card_id(c) for c in h.split()] for h in hands])
    state = engine.init_from_deal(dealer, cards, deck.card_id(upcard))
    for name in actions.split():
        engine.step(state, np.array([engine.action_names.index(name)]))
    return state


def heuristic_choice(engine: Engine, state) -> str:
    agent = HeuristicAgent(engine, seed=0)
    return engine.action_names[int(agent.act(engine.observe(state), state.legal)[0])]


def state_phase(state) -> int:
    return int(state.phase[0])


# Seat 0 is the seat under test throughout; cards not dealt to a seat form the kitty.


def test_orders_up_on_trump_strength_and_passes_a_weak_hand():
    engine = Engine()
    strong = scripted(engine, 3, ["JH JD AH AC 9S", "9D TD QC KC AD", "9H TH QS KD JS", "QH JC AS TS 9C"], "KH")
    assert heuristic_choice(engine, strong) == "hearts"
    weak = scripted(engine, 3, ["9C TC QD KS 9S", "9D TD QC KC AD", "9H TH QS KD JS", "QH JC AS JH JD"], "KH")
    assert heuristic_choice(engine, weak) == "pass"


def test_orders_into_partners_deal_but_not_into_an_opponents():
    engine = Engine()
    hands = ["JD KH AC 9C TS", "9D TD QC KC AD", "9H TH QS KD JS", "QH JC AS JH 9S"]
    partner_deals = scripted(engine, 2, hands, "AH", "pass")
    assert heuristic_choice(engine, partner_deals) == "hearts"
    opponent_deals = scripted(engine, 3, hands, "AH")
    assert heuristic_choice(engine, opponent_deals) == "pass"


def test_dealer_counts_the_upcard_it_would_pick_up():
    engine = Engine()
    hands = ["JH AH 9C TC KS", "9D TD QC KC AD", "9H TH QS KD JS", "JC AS TS 9S JD"]
    as_dealer = scripted(engine, 0, hands, "QH", "pass pass pass")
    assert heuristic_choice(engine, as_dealer) == "hearts"
    as_first_seat = scripted(engine, 3, hands, "QH")
    assert heuristic_choice(engine, as_first_seat) == "pass"


def test_round_two_names_next_from_left_of_dealer_only():
    engine = Engine()
    hands = ["JD KH AC 9C TS", "TD QD QC KC AD", "9H TH QS KD JS", "QH JC AS JH 9S"]
    left_of_dealer = scripted(engine, 3, hands, "9D", "pass pass pass pass")
    assert heuristic_choice(engine, left_of_dealer) == "hearts"
    across = scripted(engine, 1, hands, "9D", "pass pass pass pass pass pass")
    assert heuristic_choice(engine, across) == "pass"


def test_stuck_dealer_names_its_best_suit():
    engine = Engine(Rules(stick_the_dealer=True))
    hands = ["9C TC QC 9S TD", "9H QD AC KC AD", "9D KH QS KD JS", "QH JC AS JH JD"]
    state = scripted(engine, 0, hands, "TH", "pass " * 7)
    assert not state.legal[0, engine.pass_action]
    assert heuristic_choice(engine, state) == "clubs"


def test_goes_alone_only_with_a_near_certain_march():
    engine = Engine()
    sure = scripted(engine, 3, ["JH JD AH AC AS", "9D TD QC KC AD", "KH TH QS KD JS", "QH JC TS 9S 9C"], "9H", "hearts")
    assert state_phase(sure) == Phase.MAKER_ALONE
    assert heuristic_choice(engine, sure) == "alone"
    hands = ["JH JD KH AC 9S", "9D TD QC KC AD", "AH TH QS KD JS", "QH JC TS AS 9C"]
    unsure = scripted(engine, 3, hands, "9H", "hearts")
    assert heuristic_choice(engine, unsure) == "partner"


def test_lone_defender_goes_alone_with_a_march_in_hand():
    engine = Engine(Rules(lone_defender=True))
    hands = ["JH JD AH AC AS", "9D TD QC KC AD", "KH TH QS KD JS", "QH JC TS 9S 9C"]
    state = scripted(engine, 2, hands, "9H", "pass pass hearts partner")
    assert state_phase(state) == Phase.DEFENDER_ALONE and state.to_play[0] == 0
    assert heuristic_choice(engine, state) == "alone"


def test_dealer_discards_to_short_suit_itself():
    engine = Engine()
    hands = ["JH AH 9C TC KS", "9D TD QC KC AD", "9H TH QS KD JS", "JC AS TS 9S JD"]
    state = scripted(engine, 0, hands, "QH", "hearts partner")
    assert state_phase(state) == Phase.DISCARD
    assert heuristic_choice(engine, state) == "KS"  # not the lower 9C: burying the king voids spades


PLAY_DEAL = ["JH KH 9H AC 9S", "JD 9C TC QC KC", "AH 9D TD QD KD", "TH JC JS QS KS"]


def test_maker_leads_its_boss_trump():
    engine = Engine()
    state = scripted(engine, 3, PLAY_DEAL, "QH", "hearts partner JC")
    assert state_phase(state) == Phase.PLAY and state.to_play[0] == 0
    assert heuristic_choice(engine, state) == "JH"


def test_partner_of_the_maker_leads_trump_low_when_not_boss():
    engine = Engine()
    hands = ["AH 9H TC AS 9D", "JD 9C QC KC JS", "JH KH TD QD KD", "TH JC AC QS KS"]
    state = scripted(engine, 3, hands, "QH", "pass pass hearts partner JC")
    assert heuristic_choice(engine, state) == "9H"


def test_defender_leads_an_off_suit_ace_not_trump():
    engine = Engine()
    hands = ["9H AC 9S TS 9D", "JH JD AH KC QC", "KH TD QD KD JS", "TH JC 9C QS KS"]
    state = scripted(engine, 3, hands, "QH", "pass hearts partner JC")
    assert heuristic_choice(engine, state) == "AC"


def test_remembers_played_trumps_and_leads_the_new_boss():
    engine = Engine()
    state = scripted(engine, 3, PLAY_DEAL, "QH", "hearts partner JC JH JD AH TH")
    assert state.to_play[0] == 0 and state.trick_index[0] == 1
    assert heuristic_choice(engine, state) == "KH"  # QH is the only trump above 9H left and KH beats it


def test_does_not_trump_a_trick_its_partner_is_winning():
    engine = Engine()
    hands = ["9H 9C TC QD KD", "JH JD AH KC QC", "AS TD 9D AD JS", "TH JC TS QS 9S"]
    state = scripted(engine, 1, hands, "QH", "pass hearts partner KC AS 9S")
    assert state.to_play[0] == 0
    assert heuristic_choice(engine, state) == "9C"
    # the same cards, but an opponent is winning the trick: now it trumps, with its only trump
    hands = ["9H 9C TC QD KD", "JH JD AH KC QC", "9S TD 9D AD JS", "TH JC TS QS AS"]
    state = scripted(engine, 1, hands, "QH", "pass hearts partner KC 9S AS")
    assert heuristic_choice(engine, state) == "9H"


def test_wins_cheaply_as_last_to_play():
    engine = Engine()
    hands = ["KC AC 9D TD JS", "QC JH JD AH KH", "9C QD KD AD QS", "TC TH TS KS AS"]
    state = scripted(engine, 0, hands, "9H", "hearts partner 9D QC 9C TC")
    assert state.to_play[0] == 0
    assert heuristic_choice(engine, state) == "KC"


def test_throws_off_its_lowest_card_when_it_cannot_win():
    engine = Engine()
    hands = ["9D KD AS TS JS", "AC JH JD AH KH", "9C QD TD AD QS", "TC TH QC KC KS"]
    state = scripted(engine, 0, hands, "9H", "hearts partner 9H AC 9C TC")  # the dealer buries the upcard
    assert state.to_play[0] == 0
    assert heuristic_choice(engine, state) == "9D"  # void in clubs and out of trumps


# ---------------------------------------------------------------------------------- sampler


def random_position(rules: Rules, seed: int, steps: int):
    """A state after up to `steps` random actions (stopping before the hand ends), with its observer."""
    engine = Engine(rules)
    state = engine.init(game_keys(seed, 1))
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        legal = np.flatnonzero(state.legal[0])
        trial = state.copy()
        engine.step(trial, legal[rng.integers(legal.size)][None])
        if trial.done[0]:
            break
        state = trial
    return engine, state


@settings(max_examples=60)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 30), variant=st.sampled_from(sorted(VARIANTS)))
def test_sampled_layouts_are_consistent_with_the_information_set(seed, steps, variant):
    engine, state = random_position(VARIANTS[variant], seed, steps)
    me = int(state.to_play[0])
    obs = engine.observe(state)
    view = View.from_info(decode(engine, obs), 0)
    layouts = sample_hands(engine, view, 6, seed)
    hands, pool = layouts.hands.astype(object), layouts.pool.astype(object)
    rel = [(me + s) % NUM_SEATS for s in range(NUM_SEATS)]
    true_hands = [int(hand_masks(state.hand[0, rel[s]])) for s in range(NUM_SEATS)]
    played = int(hand_masks(state.card_player[0] >= 0))
    playing = state.phase[0] == Phase.PLAY
    trump = int(state.trump[0])
    voids = {}
    for t in range(int(state.trick_index[0]) + 1):
        lead = state.trick_leader[0, t]
        if lead < 0 or state.trick_cards[0, t, lead] < 0:
            continue
        led = engine.deck.effective_suit[trump, state.trick_cards[0, t, lead]]
        for s in range(NUM_SEATS):
            c = state.trick_cards[0, t, s]
            if c >= 0 and engine.deck.effective_suit[trump, c] != led:
                voids.setdefault((s - me) % NUM_SEATS, set()).add(int(led))
    for k in range(hands.shape[0]):
        assert hands[k, 0] == true_hands[0]  # own hand unchanged
        everything = pool[k]
        for s in range(NUM_SEATS):
            assert hands[k, s] & played == 0 and hands[k, s] & everything == 0
            everything |= hands[k, s]
            if not playing:
                assert bin(hands[k, s]).count("1") == bin(true_hands[s]).count("1") if s == 0 else 5
            else:
                assert bin(hands[k, s]).count("1") == bin(true_hands[s]).count("1") * state.active[0, rel[s]]
                for suit in voids.get(s, ()):
                    held = [c for c in range(engine.num_cards) if hands[k, s] >> c & 1]
                    assert all(engine.deck.effective_suit[trump, c] != suit for c in held)
        assert everything | played | (1 << int(state.upcard[0])) == (1 << engine.num_cards) - 1 or view.own_discard >= 0
        dealer = int(state.dealer[0])
        up = 1 << int(state.upcard[0])
        if playing and state.ordered_up[0] and dealer != me and state.active[0, dealer] and not played & up:
            d = (dealer - me) % NUM_SEATS
            buried = trump in voids.get(d, ()) or not state.hand[0, dealer].any()
            assert bool(hands[k, d] & up) != buried
    # each layout, dealt out and replayed through the engine, shows the observer exactly what it saw
    model_engine = Engine(dataclasses.replace(engine.rules, throw_in_ends_hand_episode=True))
    worlds = replay(model_engine, view, layouts, HeuristicAgent(model_engine, 0))
    seen = model_engine.observe(worlds, np.zeros(worlds.num_games, np.int64))
    assert np.array_equal(seen, np.repeat(obs, worlds.num_games, axis=0))
    assert (worlds.legal == state.legal[0]).all()


def test_deals_from_layouts_bury_the_upcard_when_the_dealer_shows_a_trump_void():
    engine = Engine()
    # the dealer (seat 3) picks up QH and buries it; it later fails to follow trump
    hands = ["JH KH 9H AC 9S", "JD 9C TC QC KC", "AH 9D TD QD KD", "TH JC JS QS KS"]
    hands[3] = "AS JC JS QS KS"
    state = scripted(engine, 3, hands, "QH", "pass hearts partner QH JH JD AH JC")
    view = View.from_info(decode(engine, engine.observe(state)), 0)
    layouts = sample_hands(engine, view, 5, 1)
    assert not layouts.dealer_has_upcard
    _, buried = deals_from_layouts(engine, view, layouts)
    assert (buried == engine.deck.card_id("QH")).all()


# ---------------------------------------------------------------------------------- pimc


def test_pimc_options_parse():
    assert parse_options("") == {"worlds": 30}
    assert parse_options("worlds=7") == {"worlds": 7}
    with pytest.raises(ValueError):
        parse_options("depth=3")
    assert make_agent("pimc:worlds=5", Engine()).worlds == 5


def permuted_twin(engine: Engine, state, history: list[int], rng):
    """The same actions on a deal whose hidden cards differ in a way the seat to act cannot see.

    Two unplayed hidden cards (in other seats' hands or the kitty) trade places; during play they
    must share an effective suit, so every earlier card played still follows suit. None if no pair.
    """
    me = int(state.to_play[0])
    dealt = [np.flatnonzero(state.dealt[0, s]).tolist() for s in range(NUM_SEATS)]
    kitty = sorted(set(range(engine.num_cards)) - set(sum(dealt, [])) - {int(state.upcard[0])})
    piles = [dealt[s] for s in range(NUM_SEATS) if s != me] + [kitty]
    trump = int(state.trump[0]) if state.trump[0] >= 0 else 0
    es = engine.deck.effective_suit[trump]
    fixed = set(np.flatnonzero(state.card_player[0] >= 0).tolist()) | {int(state.discard[0])}
    def hidden_pair(x: int, y: int) -> bool:
        return x not in fixed and y not in fixed and (state.phase[0] != Phase.PLAY or es[x] == es[y])

    pairs = [
        (a, x, b, y)
        for a in range(len(piles))
        for b in range(a + 1, len(piles))
        for x in range(len(piles[a]))
        for y in range(len(piles[b]))
        if hidden_pair(piles[a][x], piles[b][y])
    ]
    if not pairs:
        return None
    a, x, b, y = pairs[rng.integers(len(pairs))]
    piles[a][x], piles[b][y] = piles[b][y], piles[a][x]
    twin = engine.init_from_deal(int(state.dealer[0]), np.array(dealt), int(state.upcard[0]))
    for action in history:
        engine.step(twin, np.array([action]))
    return twin


@pytest.mark.parametrize("variant", ["default", "late-alone-32"])
def test_pimc_decisions_do_not_depend_on_hidden_cards(variant):
    engine = Engine(VARIANTS[variant])
    rng = np.random.default_rng(5)
    driver = HeuristicAgent(engine, 0)
    checked = 0
    for key in game_keys(21, 6):
        state = engine.init(key[None])
        history: list[int] = []
        while not state.done[0]:
            twin = None
            if state.legal[0].sum() > 1 and rng.random() < 0.3:
                twin = permuted_twin(engine, state, history, rng)
            if twin is not None:
                obs, obs_twin = engine.observe(state), engine.observe(twin)
                assert np.array_equal(obs, obs_twin)
                assert not np.array_equal(state.dealt, twin.dealt)
                a = PimcAgent(engine, seed=9, worlds=6).act(obs, state.legal, state, np.array([0]))
                b = PimcAgent(engine, seed=9, worlds=6).act(obs_twin, twin.legal, twin, np.array([0]))
                assert a[0] == b[0]
                checked += 1
            action = int(driver.act(engine.observe(state), state.legal)[0])
            history.append(action)
            engine.step(state, np.array([action]))
    assert checked >= 10


@pytest.mark.parametrize("spec", ["random", "pimc:worlds=3", "pimc:worlds=3,infer=true,model=ppo", "oracle"])
def test_reseeding_a_bot_makes_it_act_as_one_built_with_that_seed(spec):
    engine = Engine()
    state = engine.init(game_keys(4, 6))
    driver = RandomAgent(engine, 0)
    for _ in range(3):
        engine.step(state, driver.act(engine.observe(state), state.legal))
    obs, rows = engine.observe(state), np.arange(state.num_games)
    used = make_agent(spec, engine, seed=1)
    used.act(obs, state.legal, state, rows)
    used.reseed(7)
    fresh = make_agent(spec, engine, seed=7)
    assert used.act(obs, state.legal, state, rows).tolist() == fresh.act(obs, state.legal, state, rows).tolist()
    if hasattr(fresh, "action_values") and not fresh.needs_full_state:
        assert np.array_equal(used.action_values(obs, state.legal), fresh.action_values(obs, state.legal), equal_nan=True)


@pytest.mark.parametrize("may_bury_upcard", [True, False])
def test_the_heuristic_buries_only_what_the_engine_lets_the_dealer_bury(may_bury_upcard):
    engine = Engine(Rules(dealer_may_bury_upcard=may_bury_upcard))
    hand = [engine.deck.card_id(c) for c in "9C TC JH QD KS AS".split()]
    upcard = hand[-1]
    allowed = HeuristicAgent(engine, 0).buriable(hand, upcard)
    assert allowed == (hand if may_bury_upcard else hand[:-1])


def play_hands(engine: Engine, agents, num_games: int, seed: int) -> np.ndarray:
    """Play N games, agents[team] at seats team and team + 2; return team 0's total reward per game."""
    state = engine.init(game_keys(seed, num_games))
    total = np.zeros(num_games)
    while not state.done.all():
        live = np.flatnonzero(~state.done)
        obs = engine.observe(state)
        acts = np.zeros(num_games, np.int64)
        for team in (0, 1):
            rows = live[state.to_play[live] % 2 == team]
            if rows.size:
                acts[rows] = agents[team].act(obs[rows], state.legal[rows], state, rows)
        total += engine.step(state, acts)[:, 0]  # raises IllegalActionError on any illegal action
    return total


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_agent_plays_full_hands_legally(variant):
    engine = Engine(VARIANTS[variant])
    heuristic, rand = HeuristicAgent(engine, 1), RandomAgent(engine, 2)
    pimc, oracle = PimcAgent(engine, 3, worlds=4), OracleAgent(engine, 4)
    play_hands(engine, [heuristic, rand], 12, 1)
    play_hands(engine, [rand, pimc], 6, 2)
    play_hands(engine, [oracle, pimc], 4, 3)


def test_agents_play_whole_games_to_the_target():
    engine = Engine(Rules(target_points=5, deck=32, joker=True), episode="game")
    play_hands(engine, [PimcAgent(engine, 1, worlds=3), HeuristicAgent(engine, 2)], 2, 4)
    play_hands(engine, [OracleAgent(engine, 1), RandomAgent(engine, 2)], 2, 5)


def test_oracle_is_labelled_a_cheating_ceiling():
    engine = Engine()
    oracle = make_agent("oracle", engine)
    assert oracle.needs_full_state and not oracle.fair
    assert make_agent("pimc", engine).fair and not make_agent("pimc", engine).needs_full_state
    state = engine.init(game_keys(0, 1))
    with pytest.raises(ValueError):
        oracle.act(engine.observe(state), state.legal)


def test_search_bots_beat_random():
    engine = Engine()
    margin = play_hands(engine, [PimcAgent(engine, 1, worlds=6), RandomAgent(engine, 2)], 24, 8)
    assert margin.mean() > 0.5


def test_easy_never_goes_alone_while_heuristic_and_pimc_go_alone_on_a_sure_march():
    engine = Engine()
    sure = scripted(engine, 3, ["JH JD AH AC AS", "9D TD QC KC AD", "KH TH QS KD JS", "QH JC TS 9S 9C"], "9H", "hearts")
    chosen = {spec: make_agent(spec, engine, 0).act(engine.observe(sure), sure.legal, sure)[0] for spec in ("easy", "heuristic", "pimc")}
    assert {spec: engine.action_names[int(a)] for spec, a in chosen.items()} == {"easy": "partner", "heuristic": "alone", "pimc": "alone"}


def test_easy_bids_like_the_heuristic_but_plays_a_careless_card_some_of_the_time():
    engine = Engine()
    keys = game_keys(0, 400)
    state = engine.init(keys)
    easy, heuristic = make_agent("easy", engine, 1), make_agent("heuristic", engine, 1)
    same = {True: 0, False: 0}
    for _ in range(60):
        obs, legal = engine.observe(state), state.legal
        a, b = easy.act(obs, legal), heuristic.act(obs, legal)
        bidding = np.isin(state.phase, (Phase.BID_ROUND_1, Phase.BID_ROUND_2))
        assert (a[bidding] == b[bidding]).all()
        playing = (state.phase == Phase.PLAY) & (legal.sum(axis=1) > 1)
        same[True] += int((a[playing] == b[playing]).sum())
        same[False] += int((a[playing] != b[playing]).sum())
        engine.step(state, b)
    assert same[False] > 0.05 * (same[True] + same[False]) and same[True] > same[False]
