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


class Scripted:
    """A duck-typed bot: the lowest legal action, or an illegal one; with the full state if it asks for it."""

    def __init__(self, name, needs_full_state=False, illegal=False):
        self.name, self.needs_full_state, self.illegal, self.given = name, needs_full_state, illegal, []

    def act(self, obs, mask, *state_and_rows):
        self.given.append(state_and_rows)
        return np.argmin(mask, axis=1) if self.illegal else np.argmax(mask, axis=1)


def test_the_bots_are_called_the_one_way_full_state_only_when_asked_and_checked():
    full, fair = Scripted("full", needs_full_state=True), Scripted("fair")
    env = EuchreSingleEnv(partner=full, opponents=fair)
    env.reset(seed=3)
    for _ in range(20):
        if env.step(int(np.flatnonzero(env.action_masks())[0]))[2]:
            env.reset()
    assert full.given and all(len(g) == 2 and g[1].tolist() == [0] and g[0].num_games == 1 for g in full.given)
    assert fair.given and all(g == () for g in fair.given)
    with pytest.raises(ValueError, match="bot 'cheat' chose the illegal action"):
        EuchreSingleEnv(seat=1, opponents=Scripted("cheat", illegal=True)).reset(seed=0)


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


def test_reset_with_a_seed_reseeds_each_bot_through_its_reseed_method():
    class Recorder:
        """A bot that plays its first legal action and records how it was reseeded."""

        def __init__(self):
            self.seeds = []

        def act(self, obs, mask):
            return np.asarray(mask).argmax(axis=1)

        def reseed(self, seed):
            self.seeds.append(seed)

    partner, opponent = Recorder(), Recorder()
    env = EuchreSingleEnv(seat=1, partner=partner, opponents=opponent)
    env.reset(seed=5)
    env.reset()
    assert partner.seeds == [[5, 3]] and sorted(opponent.seeds) == [[5, 0], [5, 2]]
