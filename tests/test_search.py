"""The `search` bot: legal, seeded choices over layouts that show the seat what it saw, weighted by the network."""

from __future__ import annotations

import functools
import hashlib
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from euchre_agents.heuristic import HeuristicAgent
from euchre_agents.layouts import View
from euchre_agents.pimc import choose, parse_options
from euchre_agents.ppo import PPOAgent
from euchre_agents.registry import make_agent
from euchre_agents.search import SearchAgent, confident_choice, parse_spec
from euchre_env import Engine, Rules, game_keys
from euchre_env.cards import NUM_SEATS
from euchre_env.engine import Phase
from euchre_env.infoset import decode
from euchre_env.play import play
from conftest import load_script
from test_agents import random_position, scripted
from test_pimc import positions

SMALL = {"worlds": 3, "candidates": 2}


@functools.lru_cache(maxsize=None)
def shipped_policy() -> PPOAgent:
    """The shipped network, loaded once (building it takes seconds)."""
    return PPOAgent.from_checkpoint(Engine(), str(SHIPPED))


def small_search(engine: Engine, seed: int) -> SearchAgent:
    """A search over 3 layouts (6 candidates) with the shipped network."""
    return SearchAgent(engine, shipped_policy(), seed, **SMALL)

SHIPPED = pathlib.Path(__file__).parent.parent / "checkpoints" / "euchre_ppo.pt"


def revealed_voids(engine: Engine, view: View) -> list[int]:
    """Per relative seat, a bit per effective suit it failed to follow (as the trick history shows)."""
    voids = [0] * NUM_SEATS
    if view.phase != Phase.PLAY:
        return voids
    for t in range(view.trick_index + 1):
        cards = {int(view.played_by[c]): int(c) for c in np.flatnonzero(view.played_in_trick == t)}
        leader = view.trick_leader[t]
        if leader in cards:
            led = engine.deck.effective_suit[view.trump, cards[leader]]
            for seat, card in cards.items():
                if engine.deck.effective_suit[view.trump, card] != led:
                    voids[seat] |= 1 << int(led)
    return voids


def test_plays_only_legal_actions_through_the_play_loop():
    engine = Engine()
    search = small_search(engine, 1)
    state = engine.init(game_keys(2, 2))
    points = play(engine, state, [search, HeuristicAgent(engine, 2)], np.array([0, 1, 0, 1]))  # `act` checks legality
    assert state.done.all() and points.shape == (2, 2)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 30))
def test_weighted_layouts_show_the_seat_its_hand_the_cards_played_and_the_voids(seed, steps):
    engine, state = random_position(Rules(), seed, steps)
    obs = engine.observe(state)
    view = View.from_info(decode(engine, obs), 0)
    agent = small_search(engine, seed)
    worlds = agent.sample_worlds(view, seed)
    seen = agent.model_engine.observe(worlds.states, np.zeros(worlds.states.num_games, np.int64))
    assert np.array_equal(seen, np.repeat(obs, worlds.states.num_games, axis=0))
    assert (worlds.states.legal == state.legal[0]).all()
    hands = worlds.layouts.hands
    assert (hands[:, 0] == np.uint64(view.hand)).all()
    assert not (hands & np.uint64(view.played_mask())).any()
    for seat, void in enumerate(revealed_voids(engine, view)):
        for suit in range(4):
            if (void >> suit) & 1:
                cards = np.flatnonzero(engine.deck.effective_suit[view.trump] == suit)
                assert not (hands[:, seat] & np.uint64(sum(1 << int(c) for c in cards))).any()
    assert worlds.weights.sum() == agent.worlds


def test_an_order_up_makes_the_orderer_hold_more_trump_in_the_weighted_layouts():
    engine = Engine()
    hands = ["9C TC QD KS 9S", "JH JD AH KC AD", "9H TH QS KD JS", "QH JC AS TS 9D"]
    state = scripted(engine, 3, hands, "KH", "pass hearts partner 9D")
    view = View.from_info(decode(engine, engine.observe(state)), 0)
    hearts = sum(1 << engine.deck.card_id(c) for c in "JH JD AH QH TH 9H".split())

    def mean_trumps(spec: str) -> float:
        worlds = make_agent(spec, engine, seed=3).sample_worlds(view, 7)
        trumps = np.array([bin(int(h) & hearts).count("1") for h in worlds.layouts.hands[:, 1]])
        return float(np.average(trumps, weights=worlds.weights))

    assert mean_trumps("search:worlds=128,candidates=4,temp=0") > mean_trumps("search:worlds=128,weighted=false") + 0.4


def test_the_same_seed_takes_the_same_decisions_and_values_are_nan_where_illegal():
    engine = Engine()
    state = positions(engine, num_games=1, seed=6, every=3)
    obs, legal = engine.observe(state), state.legal
    first = small_search(engine, 9).act(obs, legal)
    again = small_search(engine, 9)
    assert again.act(obs, legal).tolist() == first.tolist()
    again.act(obs, legal)
    again.reseed(9)
    assert again.act(obs, legal).tolist() == first.tolist()
    assert legal[np.arange(legal.shape[0]), first].all()
    agent = small_search(engine, 9)
    choices = np.flatnonzero(legal.sum(axis=1) > 1)
    assert 0 < choices.size < legal.shape[0]  # forced decisions are valued too, after the choices
    every = agent.action_values(obs, legal)
    assert np.array_equal(np.isnan(every), ~legal)
    assert np.nanmax(np.abs(every)) <= 4
    values = every[choices]
    preferred = agent.policy.act(obs[choices], legal[choices])
    assert [choose(v, int(p)) for v, p in zip(values, preferred)] == first[choices].tolist()


def test_z_keeps_the_network_s_choice_unless_the_paired_gain_clears_z_standard_errors():
    actions = np.array([2, 5, 7])
    noisy = np.array([[1.0, 3.0, 0.0], [1.0, 1.0, 0.0], [2.0, 2.0, 0.0], [0.0, 2.0, 0.0]])  # action 5 gains 1 +- 0.58
    steady = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [2.0, 3.0, 0.0], [1.0, 2.0, 0.0]])  # action 5 gains 1 in every layout
    counts = np.ones(4)
    assert [confident_choice(noisy, counts, actions, 2, z) for z in (0.0, 1.0, 2.0)] == [5, 5, 2]
    assert confident_choice(noisy, 3 * counts, actions, 2, 2.0) == 5  # three draws of each layout: 1 +- 0.30
    assert confident_choice(steady, counts, actions, 2, 100.0) == 5
    assert confident_choice(noisy, counts, actions, 5, 5.0) == 5  # the network's own best needs no evidence


def test_search_with_z_plays_the_network_s_choice_or_the_best_play_out():
    engine = Engine()
    state = positions(engine, num_games=1, seed=11, every=3)
    obs, legal = engine.observe(state), state.legal
    preferred = shipped_policy().act(obs, legal)
    plain = small_search(engine, 9).act(obs, legal)
    strict = SearchAgent(engine, shipped_policy(), 9, z=1e9, **SMALL).act(obs, legal)
    assert (plain != preferred).any()  # at z=0 the play-outs overrule the network here
    assert strict.tolist() == preferred.tolist()


def test_a_forced_action_is_returned_without_search(monkeypatch):
    engine = Engine()
    state = positions(engine, num_games=3, seed=2, every=1)
    forced = np.flatnonzero(state.legal.sum(axis=1) == 1)
    agent = small_search(engine, 0)
    monkeypatch.setattr(agent, "sample_worlds", lambda *a: pytest.fail("searched a forced decision"))
    acts = agent.act(engine.observe(state)[forced], state.legal[forced])
    assert acts.tolist() == [int(np.flatnonzero(row)[0]) for row in state.legal[forced]]


@pytest.mark.parametrize(
    "spec, message",
    [
        ("search:worlds=0", "worlds >= 1"),
        ("search:worlds=many", "takes a number"),
        ("search:weighted=maybe", "takes true or false"),
        ("search:depth=3", "unknown search option"),
        (f"search:{SHIPPED},sample", "unknown search option"),
        ("search:eps=0", "0 < eps <= 1"),
        ("search:candidates=0", "candidates >= 1"),
        ("search:temp=-1", "temp >= 0"),
        ("search:z=-1", "z >= 0"),
        ("search:z=nan", "z >= 0"),
        ("search:weighted=false,candidates=4", "only apply with weighted=true"),
        ("search:/no/such/file.pt", "no checkpoint at"),
    ],
)
def test_spec_errors_are_one_line(spec, message):
    with pytest.raises(ValueError, match=message) as error:
        make_agent(spec, Engine())
    assert "\n" not in str(error.value)


def test_specs_name_the_shipped_agent_or_a_checkpoint():
    engine = Engine()
    assert make_agent("search", engine).fair
    agent = make_agent(f"search:{SHIPPED},worlds=5,weighted=false", engine)
    assert (agent.worlds, agent.weighted, agent.belief) == (5, False, None)


def test_the_bot_records_the_sha256_of_the_checkpoint_it_loads(tmp_path):
    copy = tmp_path / "copy.pt"
    copy.write_bytes(SHIPPED.read_bytes())
    want = hashlib.sha256(SHIPPED.read_bytes()).hexdigest()
    assert make_agent("search", Engine()).weights_sha256 == want
    assert make_agent(f"search:{copy},worlds=2", Engine()).weights_sha256 == want


def test_search_and_pimc_read_the_shared_options_by_one_grammar():
    shared = "worlds=4,candidates=2,eps=0.5,temp=0"
    assert parse_spec(f"run.pt,{shared}") == ("run.pt", {"worlds": 4, "candidates": 2, "eps": 0.5, "temp": 0.0})
    assert parse_options(f"{shared},infer=true") == {"worlds": 4, "candidates": 2, "eps": 0.5, "temp": 0.0, "infer": True}
    for bad, message in {"worlds=x": "takes a number", "eps=2": "0 < eps <= 1", "temp=-0.5": "temp >= 0"}.items():
        for parse, bot in ((parse_spec, "search"), (parse_options, "pimc")):
            with pytest.raises(ValueError, match=f"^{bot} .*{message}"):
                parse(f"infer=true,{bad}" if bot == "pimc" else bad)


def test_the_speed_benchmark_times_search_next_to_pimc_in_every_phase_it_meets(capsys):
    bench = load_script("benchmarks/agents_speed.py")
    engine = Engine()
    obs, masks, phase = bench.with_a_choice(engine, *bench.collect_positions(engine, 6))
    for spec_text in ("pimc:worlds=2", "search:worlds=2,z=2"):
        bench.time_search(spec_text, make_agent(spec_text, engine, seed=0), obs, masks, phase, per_phase=2)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("pimc:worlds=2 at 2 worlds") and any(line.startswith("search:worlds=2,z=2 at 2 worlds") for line in lines)
    totals = [line for line in lines if line.strip().startswith("ALL")]
    assert len(totals) == 2 and all("decisions/s" in line for line in totals)
    assert sum("PLAY" in line for line in lines) == 2
