"""Differential test: `Rules.openspiel(...)` plays exactly OpenSpiel's `euchre`.

Our engine deals a batch of hands from its keys and plays them batched; each hand is replayed in
OpenSpiel one game at a time from the same deal (dealer chance action, the 20 cards in OpenSpiel's
deal order, the upcard) with the same actions. At every decision the seat to act and the set of
legal actions must agree, and at the end our summed per-seat rewards must equal OpenSpiel's returns.
"""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from euchre_env.cards import HAND_SIZE, NUM_SEATS
from euchre_env.engine import EPISODE_HAND, Engine, Phase, game_keys
from euchre_env.rules import Rules

GAMES_PER_CONFIG = 5000
BATCH = 2500
PASS_HEAVY = 0.85
"""Probability of passing, when legal, in the pass-heavy half of the games: reaches stick-the-dealer
and thrown-in hands, which uniform random bidding almost never does."""
MAX_DECISIONS = 64
SINGLE_GAMES_PER_CONFIG = 250


def _openspiel_state(game: "pyspiel.Game", dealer: int, hands: np.ndarray, upcard: int) -> "pyspiel.State":
    """OpenSpiel state after its chance actions reproduce our deal: card k goes to seat (dealer + k) % 4."""
    state = game.new_initial_state()
    state.apply_action(dealer)
    held = [list(np.flatnonzero(hands[seat])) for seat in range(NUM_SEATS)]
    for k in range(NUM_SEATS * HAND_SIZE):
        state.apply_action(int(held[(dealer + k) % NUM_SEATS].pop()))
    state.apply_action(upcard)
    return state


def _sample_actions(rng: np.random.Generator, legal: np.ndarray, pass_action: int, heavy: np.ndarray) -> np.ndarray:
    """One legal action per row, uniformly; rows marked `heavy` pass with probability PASS_HEAVY where legal."""
    n = legal.shape[0]
    weights = legal.astype(np.float64)
    may_pass = heavy & legal[:, pass_action] & (legal.sum(axis=1) > 1)
    others = weights.sum(axis=1) - 1.0
    weights[may_pass, pass_action] = others[may_pass] * (PASS_HEAVY / (1.0 - PASS_HEAVY))
    cum = np.cumsum(weights, axis=1)
    pick = rng.random(n) * cum[:, -1]
    return np.minimum((cum <= pick[:, None]).sum(axis=1), legal.shape[1] - 1)


def _play_batch(engine: Engine, game: "pyspiel.Game", seed: int, n: int) -> dict[str, int]:
    """Play n hands in both engines; assert agreement; return counts of the situations covered."""
    rng = np.random.default_rng(seed)
    state = engine.init(game_keys(seed, n))
    heavy = rng.random(n) < 0.5
    bits = np.int64(1) << np.arange(engine.num_actions, dtype=np.int64)
    os_states = [
        _openspiel_state(game, int(state.dealer[i]), state.dealt[i], int(state.upcard[i])) for i in range(n)
    ]
    returns = np.zeros((n, NUM_SEATS))
    counts = {"decisions": 0, "thrown_in": 0, "alone": 0, "lone_defender": 0, "stuck_dealer": 0}
    for _ in range(MAX_DECISIONS):
        live = np.flatnonzero(~state.done)
        if live.size == 0:
            break
        ours = state.legal @ bits
        to_play = state.to_play
        for i in live.tolist():
            s = os_states[i]
            legal = s.legal_actions()
            theirs = 0
            for a in legal:
                theirs |= 1 << a
            player = s.current_player()
            if theirs != ours[i] or player != to_play[i]:
                pytest.fail(
                    f"game {i} (seed {seed}) after {s.history()}: OpenSpiel player {player} legal {legal}; "
                    f"ours player {int(to_play[i])} legal {engine.legal_actions(state, i)}"
                )
        counts["decisions"] += live.size
        stuck = (state.phase[live] == Phase.BID_ROUND_2) & ~state.legal[live, engine.pass_action]
        counts["stuck_dealer"] += int(stuck.sum())
        actions = _sample_actions(rng, state.legal, engine.pass_action, heavy)
        for i in live.tolist():
            os_states[i].apply_action(int(actions[i]))
        returns += engine.step(state, actions)
    assert state.done.all(), "a hand ran past the decision bound"
    for i in range(n):
        s = os_states[i]
        assert s.is_terminal(), f"game {i} (seed {seed}): OpenSpiel not terminal after {s.history()}"
        if not np.array_equal(returns[i], s.returns()):
            pytest.fail(f"game {i} (seed {seed}) after {s.history()}: returns {s.returns()} vs ours {returns[i]}")
    counts["thrown_in"] = int(state.thrown_in.sum())
    counts["alone"] = int(state.maker_alone.sum())
    counts["lone_defender"] = int((state.lone_defender >= 0).sum())
    return counts


def _engine_and_game(allow_lone_defender: bool, stick_the_dealer: bool) -> tuple[Engine, "pyspiel.Game"]:
    """Our engine under Rules.openspiel(...) and OpenSpiel's euchre with the same two parameters."""
    rules = Rules.openspiel(allow_lone_defender=allow_lone_defender, stick_the_dealer=stick_the_dealer)
    game = pyspiel.load_game(
        "euchre", {"allow_lone_defender": allow_lone_defender, "stick_the_dealer": stick_the_dealer}
    )
    return Engine(rules, episode=EPISODE_HAND), game


@pytest.mark.parametrize("stick_the_dealer", [True, False])
@pytest.mark.parametrize("allow_lone_defender", [False, True])
def test_openspiel_rules_match_openspiel_euchre(allow_lone_defender: bool, stick_the_dealer: bool) -> None:
    engine, game = _engine_and_game(allow_lone_defender, stick_the_dealer)
    totals: dict[str, int] = {}
    base_seed = 1000 * int(allow_lone_defender) + 100 * int(stick_the_dealer)
    for b in range(GAMES_PER_CONFIG // BATCH):
        counts = _play_batch(engine, game, base_seed + b, BATCH)
        for k, v in counts.items():
            totals[k] = totals.get(k, 0) + v
    # The random play must have reached every rule the options switch.
    assert totals["alone"] > 0
    assert (totals["stuck_dealer"] > 0) == stick_the_dealer
    assert (totals["thrown_in"] > 0) == (not stick_the_dealer)
    assert (totals["lone_defender"] > 0) == allow_lone_defender


@pytest.mark.parametrize("stick_the_dealer", [True, False])
@pytest.mark.parametrize("allow_lone_defender", [False, True])
def test_one_game_path_matches_openspiel_euchre(allow_lone_defender: bool, stick_the_dealer: bool) -> None:
    """Batches of one game take the engine's scalar path; it must play OpenSpiel's game too."""
    engine, game = _engine_and_game(allow_lone_defender, stick_the_dealer)
    base_seed = 50_000 + 1000 * int(allow_lone_defender) + 100 * int(stick_the_dealer)
    for i in range(SINGLE_GAMES_PER_CONFIG):
        _play_batch(engine, game, base_seed + i, 1)
