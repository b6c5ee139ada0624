"""The Gymnasium single-agent wrapper: the env checker, masks, the seat it plays, and MaskablePPO on it."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import euchre_env  # noqa: F401  (registers EuchreSingle-v0)
from euchre_env import IllegalActionError, Rules
from euchre_env.single_agent import EuchreSingleEnv


def test_gymnasium_env_checker_passes():
    check_env(gymnasium.make("EuchreSingle-v0").unwrapped, skip_render_check=True)


@pytest.mark.parametrize("seat", [0, 3])
def test_every_observation_is_the_learners_turn_with_its_mask(seat):
    env = gymnasium.make("EuchreSingle-v0", seat=seat, rules={"deck": 32}, episode="game", reward="points")
    obs, info = env.reset(seed=3)
    raw = env.unwrapped
    rng = np.random.default_rng(0)
    total = 0.0
    for _ in range(400):
        mask = raw.action_masks()
        assert int(raw.state.to_play[0]) == seat and mask.any()
        assert np.array_equal(info["action_mask"], mask.astype(np.int8))
        assert np.array_equal(obs, raw.engine.observe(raw.state, np.array([seat]))[0])
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert not info["illegal_action"] and not truncated
        total += reward
        if terminated:
            assert not raw.action_masks().any()
            obs, info = env.reset()
    assert total != 0.0


def test_illegal_action_is_replaced_or_raises():
    env = EuchreSingleEnv(rules=Rules())
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, _, _, _, info = env.step(illegal)
    assert info["illegal_action"]
    strict = EuchreSingleEnv(illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(IllegalActionError, match="illegal action"):
        strict.step(int(np.flatnonzero(~strict.action_masks())[0]))


def test_same_seed_same_episode():
    def run(seed):
        env = gymnasium.make("EuchreSingle-v0", partner="random", opponents="random")
        obs, _ = env.reset(seed=seed)
        trace = [obs]
        for _ in range(30):
            obs, reward, terminated, _, _ = env.step(int(np.flatnonzero(env.unwrapped.action_masks())[0]))
            trace += [obs, reward]
            if terminated:
                trace.append(env.reset()[0])
        return trace

    a, b = run(7), run(7)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_maskable_ppo_trains_on_it():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    env = gymnasium.make("EuchreSingle-v0", partner="random", opponents="random")
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=1, seed=0, device="cpu")
    model.learn(2048)
    assert model.num_timesteps >= 2048
    obs, _ = env.reset(seed=1)
    for _ in range(50):
        masks = get_action_masks(env)
        action, _ = model.predict(obs, action_masks=masks, deterministic=True)
        assert masks[int(action)]
        obs, _, terminated, _, _ = env.step(int(action))
        if terminated:
            obs, _ = env.reset()
