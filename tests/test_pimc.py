"""The search bots' action values (the teacher labels) and `act` as their argmax, decision for decision."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from euchre_agents.registry import make_agent
from euchre_agents.base import RandomAgent
from euchre_agents.belief import ActionModel, resample
from euchre_agents.heuristic import HeuristicAgent
from euchre_agents.layouts import Layouts, View, replay, sample_hands
from euchre_agents.pimc import OracleAgent, PimcAgent, choose, parse_options
from euchre_env import Engine, Rules, game_keys
from euchre_env.cards import NUM_TRICKS
from euchre_env.engine import EuchreState, Phase
from euchre_env.infoset import decode
from conftest import load_script
from test_agents import random_position, scripted

REFERENCE = pathlib.Path(__file__).parent / "data" / "pimc_reference.json"
"""Decisions `pimc` (worlds=6, seed 11) and `oracle` (seed 12) took on `positions()` before `action_values`."""

ROOT = pathlib.Path(__file__).parent.parent
CHECKPOINT = ROOT / "checkpoints" / "euchre_ppo.pt"

REFERENCE_RULES = {
    "default": Rules(),
    "lone-32-joker": Rules(deck=32, joker=True, lone_defender=True, alone_when_naming=False),
}


def positions(engine: Engine, num_games: int = 10, seed: int = 3, every: int = 2) -> EuchreState:
    """Every `every`-th decision of games between the heuristic and random bots, as one batch."""
    state = engine.init(game_keys(seed, num_games))
    drivers = [HeuristicAgent(engine, 0), RandomAgent(engine, 1)]
    kept, step = [], 0
    while not state.done.all():
        live = np.flatnonzero(~state.done)
        if step % every == 0:
            kept.append(state.take(live))
        obs = engine.observe(state)
        acts = np.zeros(state.num_games, np.int64)
        for team in (0, 1):
            rows = live[state.to_play[live] % 2 == team]
            if rows.size:
                acts[rows] = drivers[team].act(obs[rows], state.legal[rows])
        engine.step(state, acts)
        step += 1
    return EuchreState.concat(kept)


def test_concat_holds_every_state_s_rows_in_turn():
    engine = Engine()
    a, b = engine.init(game_keys(1, 3)), engine.init(game_keys(2, 2))
    engine.step(b, np.argmax(b.legal, axis=1))
    both = EuchreState.concat([a, b])
    assert both.num_games == 5
    for name, value in vars(both).items():
        np.testing.assert_array_equal(value, np.concatenate([getattr(a, name), getattr(b, name)]), err_msg=name)
        assert value.dtype == getattr(a, name).dtype
    both.phase[:] = 7
    assert a.phase.max() < 7 and b.phase.max() < 7  # a new state: the parts are left as they were


def reference_decisions(engine: Engine) -> dict[str, list[int]]:
    """What `pimc` and `oracle` choose on `positions(engine)` (written once to REFERENCE, then compared)."""
    state = positions(engine)
    obs, rows = engine.observe(state), np.arange(state.num_games)
    pimc = PimcAgent(engine, seed=11, worlds=6).act(obs, state.legal)
    oracle = OracleAgent(engine, seed=12).act(obs, state.legal, state, rows)
    return {"pimc": pimc.tolist(), "oracle": oracle.tolist()}


@pytest.mark.parametrize("variant", sorted(REFERENCE_RULES))
def test_act_takes_the_same_decisions_as_before_action_values(variant):
    expected = json.loads(REFERENCE.read_text())[variant]
    assert reference_decisions(Engine(REFERENCE_RULES[variant])) == expected


# ---------------------------------------------------------------------------------- action values


def test_pimc_action_values_are_nan_exactly_where_illegal_and_act_is_their_argmax():
    engine = Engine()
    state = positions(engine, num_games=4, seed=8)
    obs, legal = engine.observe(state), state.legal
    values = PimcAgent(engine, seed=5, worlds=5).action_values(obs, legal)
    assert values.shape == legal.shape and values.dtype == np.float64
    assert np.array_equal(np.isnan(values), ~legal)
    acts = PimcAgent(engine, seed=5, worlds=5).act(obs, legal)
    preferred = HeuristicAgent(engine, 0).act(obs, legal)
    assert [choose(v, p) for v, p in zip(values, preferred)] == acts.tolist()
    assert np.nanmax(np.abs(values)) <= 4  # a lone march: the most a hand scores under these rules


def test_oracle_values_the_forced_last_card_at_the_hands_true_score():
    engine = Engine()
    state = engine.init(game_keys(4, 8))
    oracle, driver = OracleAgent(engine, 0), HeuristicAgent(engine, 1)
    expected, seen = {}, {}
    while not state.done.all():
        live = np.flatnonzero(~state.done)
        last = live[(state.phase[live] == Phase.PLAY) & (state.trick_index[live] == NUM_TRICKS - 1)]
        last = last[state.cards_in_trick[last] == 0]  # the last trick's leader: every card left is forced
        if last.size:
            values = oracle.action_values(engine.observe(state)[last], state.legal[last], state, last)
            for row, v, seat in zip(last.tolist(), values, state.to_play[last].tolist()):
                seen[row] = (float(np.nansum(v)), seat)
        acts = np.zeros(state.num_games, np.int64)
        acts[live] = driver.act(engine.observe(state)[live], state.legal[live])
        rewards = engine.step(state, acts)
        for row, (_, seat) in seen.items():  # the hand is scored when its last card is played
            expected[row] = expected.get(row, 0.0) + float(rewards[row, seat])
    assert len(seen) >= 4
    assert {row: value for row, (value, _) in seen.items()} == expected


def test_oracle_action_values_need_the_state():
    engine = Engine()
    state = engine.init(game_keys(0, 1))
    with pytest.raises(ValueError, match="reads the engine state"):
        OracleAgent(engine, 0).action_values(engine.observe(state), state.legal, None, None)


# ---------------------------------------------------------------------------------- inference (infer=true)


def test_inference_options_parse_and_bad_values_say_what_to_fix():
    got = parse_options("infer=true,candidates=5,eps=0.1,model=random,temp=0.5,plays=true")
    want = {"worlds": 30, "infer": True, "candidates": 5, "eps": 0.1, "model": "random", "temp": 0.5, "plays": True}
    assert got == want
    agent = make_agent("pimc:worlds=7,infer=true,candidates=2,eps=0.5", Engine())
    assert (agent.worlds, agent.infer, agent.candidates, agent.belief.eps) == (7, True, 2, 0.5)
    assert not make_agent("pimc", Engine()).infer
    bad = {
        "infer=maybe": "true or false",
        "infer=true,candidates=0": "candidates >= 1",
        "infer=true,eps=0": "0 < eps <= 1",
        "infer=true,eps=lots": "takes a number",
        "infer=true,temp=-1": "temp >= 0",
        "temp=0": "only apply with infer=true",
        "infer=true,model=": "needs a value",
        "candidates=3": "only apply with infer=true",
        "infer=false,eps=0.1": "only apply with infer=true",
        "infer=true,prior=2": "unknown pimc option",
    }
    for arg, message in bad.items():
        with pytest.raises(ValueError, match=message):
            parse_options(arg)
    with pytest.raises(ValueError, match="unknown agent"):
        make_agent("pimc:infer=true,model=nobody", Engine())
    with pytest.raises(ValueError, match="reads hidden cards"):
        make_agent("pimc:infer=true,model=oracle", Engine())


@pytest.mark.parametrize("options", [dict(model="random"), dict(model="heuristic", eps=1.0)])
def test_an_uninformative_model_leaves_every_layout_weight_one(options):
    engine = Engine()
    options = {**options, "model": make_agent(options["model"], engine, 0)}
    state = positions(engine, num_games=3, seed=2, every=4)
    info = decode(engine, engine.observe(state))
    agent = PimcAgent(engine, seed=0, worlds=4, infer=True, candidates=3, **options)
    for i in range(state.num_games):
        view = View.from_info(info, i)
        _, log_w = agent.weigh(view, sample_hands(engine, view, 12, i))
        assert np.allclose(log_w, 0.0)
        keep, counts = resample(log_w, 4, np.random.default_rng(i))
        assert keep.size == 4 and (counts == 1).all()  # equal weights keep distinct layouts


def test_an_order_up_makes_the_layouts_where_the_orderer_holds_trump_dominate():
    engine = Engine()
    # seat 0 passes, seat 1 orders hearts up (as the heuristic would with its hand), the dealer buries
    hands = ["9C TC QD KS 9S", "JH JD AH KC AD", "9H TH QS KD JS", "QH JC AS TS 9D"]
    state = scripted(engine, 3, hands, "KH", "pass hearts partner 9D")
    view = View.from_info(decode(engine, engine.observe(state)), 0)
    layouts = sample_hands(engine, view, 400, 5)
    _, log_w = PimcAgent(engine, 0, infer=True, eps=0.05).weigh(view, layouts)
    weight = np.exp(log_w - log_w.max())
    consistent = np.isclose(log_w, log_w.max())  # the heuristic would have made every bid seen here
    assert consistent.mean() < 0.5 and weight[consistent].sum() / weight.sum() > 0.9
    hearts = sum(1 << engine.deck.card_id(c) for c in "JH JD AH QH TH 9H".split())
    trumps = np.array([bin(int(h) & hearts).count("1") for h in layouts.hands[:, 1]])
    assert (weight * trumps).sum() / weight.sum() > trumps.mean() + 0.5


@settings(max_examples=15)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 30))
def test_resampled_layouts_still_show_the_seat_what_it_saw(seed, steps):
    engine, state = random_position(Rules(lone_defender=True), seed, steps)
    obs = engine.observe(state)
    view = View.from_info(decode(engine, obs), 0)
    agent = PimcAgent(engine, seed, worlds=5, infer=True, candidates=3, plays=True)
    layouts = sample_hands(engine, view, 15, seed)
    _, log_w = agent.weigh(view, layouts)
    keep, _ = resample(log_w, 5, np.random.default_rng(seed))
    kept = Layouts(layouts.hands[keep], layouts.pool[keep], layouts.dealer_has_upcard)
    worlds = replay(agent.search.model_engine, view, kept, agent.search.model)
    seen = agent.search.model_engine.observe(worlds, np.zeros(worlds.num_games, np.int64))
    assert np.array_equal(seen, np.repeat(obs, worlds.num_games, axis=0))
    assert (worlds.legal == state.legal[0]).all()


def test_inferred_action_values_are_nan_where_illegal_and_act_is_their_argmax():
    engine = Engine()
    state = positions(engine, num_games=2, seed=6, every=3)
    obs, legal = engine.observe(state), state.legal
    make = lambda: PimcAgent(engine, seed=4, worlds=4, infer=True, candidates=2, plays=True)  # noqa: E731
    values = make().action_values(obs, legal)
    assert np.array_equal(np.isnan(values), ~legal)
    preferred = HeuristicAgent(engine, 0).act(obs, legal)
    assert make().act(obs, legal).tolist() == [choose(v, p) for v, p in zip(values, preferred)]


def test_a_learned_policy_can_be_the_model_of_the_other_seats():
    engine = Engine()
    agent = make_agent(f"pimc:infer=true,model=ppo:{CHECKPOINT}", engine, seed=0)
    state = positions(engine, num_games=2, seed=1, every=5)
    obs, legal = engine.observe(state), state.legal
    p = agent.belief.probabilities(obs, legal)
    assert np.allclose(p.sum(axis=1), 1.0) and (p[~legal] == 0).all()
    assert agent.act(obs, legal).shape == (state.num_games,)


def test_the_model_temperature_sharpens_a_policy_and_zero_is_its_greedy_play():
    engine = Engine()
    state = positions(engine, num_games=3, seed=1, every=5)
    obs, legal = engine.observe(state), state.legal
    policy = make_agent(f"ppo:{CHECKPOINT}", engine, seed=0)
    p = policy.action_probabilities(obs, legal)
    at = {t: ActionModel(make_agent(f"ppo:{CHECKPOINT}", engine, 0), 0.2, t).probabilities(obs, legal) for t in (0.0, 0.5, 1.0)}
    assert np.allclose(at[1.0], p)
    assert np.allclose(at[0.5], p**2 / (p**2).sum(axis=1, keepdims=True)) and (at[0.5][~legal] == 0).all()
    greedy = np.zeros_like(p)
    greedy[np.arange(p.shape[0]), policy.act(obs, legal)] = 1.0
    assert np.array_equal(at[0.0], greedy)
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        ActionModel(make_agent("heuristic", engine, 0), 0.2, -0.5)
    with pytest.raises(ValueError, match="applies to a policy model"):
        make_agent("pimc:infer=true,model=heuristic,temp=0", engine)


if __name__ == "__main__":  # regenerate the reference (only when a decision is meant to change)
    REFERENCE.write_text(json.dumps({v: reference_decisions(Engine(r)) for v, r in REFERENCE_RULES.items()}) + "\n")


def test_the_belief_benchmark_places_the_true_layout_fully_and_scores_every_decisions_regret():
    bench = load_script("benchmarks/belief_quality.py")
    engine = Engine()
    state = positions(engine, num_games=4, seed=3, every=6)
    info = decode(engine, engine.observe(state))
    for row in range(state.num_games):
        view = View.from_info(info, row)
        layouts = sample_hands(engine, view, 8, row)
        truth, in_hands = bench.true_placement(state, row)
        bench.check_truth(layouts, truth, engine.num_cards)  # the seats are oriented as the sampler's
        unseen = np.bitwise_or.reduce(layouts.hands[0, 1:]) | layouts.pool[0]
        exact = Layouts(truth[None], np.array([unseen & ~np.uint64(in_hands)]), False)
        assert bench.placed_share(exact, truth, in_hands, engine.num_cards)[0] == 1.0
        assert (bench.placed_share(layouts, truth, in_hands, engine.num_cards) < 1.0 + 1e-12).all()
    variants = [bench.Variant(engine, spec, 0) for spec in ("uniform", "model=heuristic,plays=true")]
    meter = bench.Meter(engine, variants, 12, True, 0)
    players = [make_agent("heuristic", engine, seed=s) for s in range(4)]
    results = bench.play(engine, players, meter, 2, 0)
    card = results["phase"] == Phase.PLAY
    assert results["placed"].shape == (card.size, 2) and np.isfinite(results["placed"]).all()
    assert card.any() and (~card).any()
    assert np.isfinite(results["regret"]).all() and (results["regret"] >= -1e-9).all()
    assert (results["size"][:, 0] == 12).all()  # uniform weights: every layout counts
