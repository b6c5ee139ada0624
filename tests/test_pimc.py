"""The search bots' action values (the teacher labels) and `act` as their argmax, decision for decision."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import numpy as np
import pytest

from agents.base import RandomAgent
from agents.heuristic import HeuristicAgent
from agents.pimc import OracleAgent, PimcAgent, choose
from euchre_env import Engine, Rules, game_keys
from euchre_env.cards import NUM_TRICKS
from euchre_env.engine import EuchreState, Phase

REFERENCE = pathlib.Path(__file__).parent / "data" / "pimc_reference.json"
"""Decisions `pimc` (worlds=6, seed 11) and `oracle` (seed 12) took on `positions()` before `action_values`."""

REFERENCE_RULES = {
    "default": Rules(),
    "lone-32-joker": Rules(deck=32, joker=True, lone_defender=True, alone_when_naming=False),
}


def concat(states: list[EuchreState]) -> EuchreState:
    """One batched state holding the rows of every state in turn."""
    fields = dataclasses.fields(EuchreState)
    return EuchreState(**{f.name: np.concatenate([getattr(s, f.name) for s in states]) for f in fields})


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
    return concat(kept)


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


if __name__ == "__main__":  # regenerate the reference (only when a decision is meant to change)
    REFERENCE.write_text(json.dumps({v: reference_decisions(Engine(r)) for v, r in REFERENCE_RULES.items()}) + "\n")


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
