"""The safety net against endless episodes: `max_hands` truncates the AEC, vector and single-agent
envs with the truncation flags PettingZoo and Gymnasium expect, and never cuts a real game short."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test

from euchre_agents.base import Agent
from euchre_agents.registry import register
from euchre_env import EuchreVectorEnv, Rules, euchre_v0
from euchre_env.single_agent import EuchreSingleEnv
from euchre_env.defaults import ENV_DEFAULTS

STICK_OFF = Rules(stick_the_dealer=False)
BIDS_PER_THROW_IN = 8


class AlwaysPass(Agent):
    """Passes whenever it may, else the first legal action: with stick_the_dealer off, no trump is ever made."""

    name = "always_pass"

    def act(self, obs, mask, state=None, rows=None):
        """`pass` where legal, else the lowest legal action id."""
        mask = np.asarray(mask, bool)
        passing = mask[:, self.engine.pass_action]
        return np.where(passing, self.engine.pass_action, mask.argmax(axis=1))


register("always_pass", lambda engine, arg, seed: AlwaysPass(engine, seed))


def play_aec(env, policy) -> list[tuple[str, bool, bool]]:
    """Play to the end with `policy(obs) -> action`; (agent, terminated, truncated) of every step-out."""
    out = []
    for agent in env.agent_iter(max_iter=1_000_000):
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            out.append((agent, terminated, truncated))
            env.step(None)
        else:
            env.step(policy(obs))
    return out


def first_legal(obs) -> int:
    return int(obs["action_mask"].nonzero()[0][0])


@pytest.mark.parametrize("episode", ["game", "hand"])
def test_aec_always_passing_is_truncated_after_max_hands(episode):
    rules = Rules(stick_the_dealer=False, throw_in_ends_hand_episode=False)
    env = euchre_v0.env(rules=rules, episode=episode, max_hands=5)
    env.reset(seed=3)
    decisions = 0
    for agent in env.agent_iter(max_iter=10_000):
        obs, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            assert truncated and not terminated and not obs["action_mask"].any()
            assert info["hands"] == 5
            env.step(None)
        else:
            decisions += 1
            env.step(first_legal(obs))  # always `pass`: every hand is thrown in
    assert decisions == 5 * BIDS_PER_THROW_IN and env.agents == []


def test_aec_default_net_ends_the_readme_loop():
    env = euchre_v0.env(rules=STICK_OFF, episode="game")
    assert env.unwrapped.max_hands == ENV_DEFAULTS.max_hands
    env.reset(seed=42)
    out = play_aec(env, first_legal)
    assert sorted(a for a, _, _ in out) == sorted(env.possible_agents)
    assert all(truncated and not terminated for _, terminated, truncated in out)


def test_aec_max_hands_counts_scored_hands_and_real_games_end_untruncated():
    rng = np.random.default_rng(0)

    def random_legal(obs):
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))

    env = euchre_v0.env(episode="game", max_hands=1)
    env.reset(seed=1)
    out = play_aec(env, random_legal)
    assert all(truncated for _, _, truncated in out)
    assert env.unwrapped.public_state()["hand_number"] == 1  # one hand scored, the next just dealt
    for seed in range(5):
        env = euchre_v0.env(rules=STICK_OFF, episode="game")
        env.reset(seed=seed)
        out = play_aec(env, random_legal)
        assert all(terminated and not truncated for _, terminated, truncated in out)


def test_aec_api_test_passes_with_truncation():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Observation")
        api_test(euchre_v0.env(rules=STICK_OFF, episode="game", max_hands=1), num_cycles=300)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "3"])
def test_bad_max_hands_is_refused_by_every_env(bad):
    for make in (
        lambda: euchre_v0.env(max_hands=bad),
        lambda: EuchreVectorEnv(4, max_hands=bad),
        lambda: EuchreSingleEnv(max_hands=bad),
    ):
        with pytest.raises(ValueError, match="max_hands must be a positive int or None"):
            make()


def test_vector_env_truncates_each_game_and_restarts_it():
    env = EuchreVectorEnv(16, STICK_OFF, episode="game", seed=0, max_hands=3)
    engine = env.engine
    obs, info = env.reset()
    passes = np.full(16, engine.pass_action)
    for step in range(1, 2 * 3 * BIDS_PER_THROW_IN + 1):
        obs, rewards, terminated, truncated, info = env.step(passes)
        assert not terminated.any() and not rewards.any()
        assert truncated.all() == (step % (3 * BIDS_PER_THROW_IN) == 0)
        assert truncated.any() == truncated.all()
    untimed = EuchreVectorEnv(16, STICK_OFF, episode="game", seed=0, max_hands=None)
    untimed.reset()
    for _ in range(100):
        assert not untimed.step(passes)[3].any()


def test_single_agent_env_truncates_an_endless_episode():
    env = EuchreSingleEnv(STICK_OFF, partner="always_pass", opponents="always_pass", episode="game", max_hands=4)
    env.reset(seed=0)
    steps = 0
    while True:
        steps += 1
        _, reward, terminated, truncated, _ = env.step(env.engine.pass_action)
        assert reward == 0 and not terminated
        if truncated:
            break
    assert steps == 4 * 2  # the learner bids twice per thrown-in hand
    with pytest.raises(RuntimeError, match="reset"):
        env.step(env.engine.pass_action)
