"""The batched vector API: shapes and Gymnasium-style attributes, same-step autoreset, zero-sum
rewards, and illegal actions."""

from __future__ import annotations

import weakref

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from euchre_env.engine import Engine, IllegalActionError, Phase, game_keys
from euchre_env.rules import Rules
from euchre_env.vector import EuchreVectorEnv

N = 64


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.argmax(np.where(mask, rng.random(mask.shape), -1.0), axis=1)


def test_attributes_and_shapes():
    env = EuchreVectorEnv(N, seed=0)
    d, a = env.engine.observation_size, env.engine.num_actions
    assert env.num_envs == N
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert isinstance(env.single_observation_space, gymnasium.spaces.Box)
    assert env.single_observation_space.shape == (d,)
    assert env.single_action_space == gymnasium.spaces.Discrete(a)
    assert env.observation_space.shape == (N, d)
    assert env.action_space.shape == (N,) and (env.action_space.nvec == a).all()
    obs, info = env.reset()
    assert obs.shape == (N, d) and obs.dtype == np.float32
    assert info["action_mask"].shape == (N, a) and info["action_mask"].dtype == bool
    assert info["to_play"].shape == (N,)
    assert env.action_masks.shape == (N, a) and env.to_play.shape == (N,)
    obs, rewards, terminated, truncated, info = env.step(random_legal(env.action_masks, np.random.default_rng(0)))
    assert obs.shape == (N, d) and rewards.shape == (N, 4) and rewards.dtype == np.float32
    assert terminated.shape == truncated.shape == (N,) and terminated.dtype == truncated.dtype == bool
    assert not truncated.any()
    assert all(env.single_observation_space.contains(o) for o in obs)


def test_invalid_num_envs_and_step_before_reset():
    with pytest.raises(ValueError):
        EuchreVectorEnv(0)
    with pytest.raises(ValueError):
        EuchreVectorEnv(2.5)
    with pytest.raises(RuntimeError):
        EuchreVectorEnv(2).step(np.zeros(2, int))


def test_reset_is_reproducible_per_game_and_matches_the_engine():
    a, b = EuchreVectorEnv(N, seed=7), EuchreVectorEnv(N, seed=7)
    obs_a, info_a = a.reset()
    obs_b, _ = b.reset()
    assert np.array_equal(obs_a, obs_b)
    obs_c, _ = b.reset(seed=8)
    assert not np.array_equal(obs_a, obs_c)
    engine = Engine(Rules())
    state = engine.init(game_keys(7, N))
    assert np.array_equal(obs_a, engine.observe(state))
    assert np.array_equal(info_a["action_mask"], state.legal)
    assert np.array_equal(info_a["to_play"], state.to_play)


def test_observation_is_from_the_seat_to_act():
    env = EuchreVectorEnv(N, seed=1)
    obs, info = env.reset()
    engine = env.engine
    seats = info["to_play"]
    assert np.array_equal(obs, engine.observe(env.state, seats))
    hand = obs[:, engine.observation_layout["hand"]].astype(bool)
    assert np.array_equal(hand, env.state.hand[np.arange(N), seats])


@pytest.mark.parametrize(
    "rules, episode",
    [(Rules(), "hand"), (Rules(stick_the_dealer=False), "hand"), (Rules(target_points=3, joker=True), "game")],
    ids=["hand", "hand_stick_off", "game_to_3"],
)
def test_same_step_autoreset(rules, episode):
    env = EuchreVectorEnv(N, rules=rules, episode=episode, seed=3)
    engine = env.engine
    obs, info = env.reset()
    rng = np.random.default_rng(3)
    finished = 0
    episodes = np.zeros(N, int)
    for _ in range(200):
        mask = info["action_mask"]
        assert mask[np.arange(N), (actions := random_legal(mask, rng))].all()
        before = env.state.copy()
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert (rewards[:, 0] == rewards[:, 2]).all() and (rewards[:, 1] == rewards[:, 3]).all()
        assert (rewards[:, 0] + rewards[:, 1] == 0).all()
        scored = terminated | (env.state.hand_number > before.hand_number)
        assert (rewards[~scored] == 0).all()
        # every game is live after the step: finished ones already restarted
        assert not env.state.done.any()
        assert np.array_equal(obs, engine.observe(env.state))
        assert np.array_equal(info["action_mask"], env.state.legal)
        rows = np.flatnonzero(terminated)
        if rows.size:
            finished += rows.size
            episodes[rows] += 1
            fresh = env.state
            assert (fresh.phase[rows] == Phase.BID_ROUND_1).all()
            assert (fresh.hand_number[rows] == 0).all() and (fresh.score[rows] == 0).all()
            assert (fresh.deal_count[rows] > before.deal_count[rows]).all()
            points = info["final_hand_points"][rows]
            if episode == "hand":
                assert np.array_equal(rewards[rows, 0], points[:, 0] - points[:, 1])
            else:
                final = info["final_score"][rows]
                assert (final.max(axis=1) >= rules.target_points).all()
                assert np.array_equal(rewards[rows, 0], points[:, 0] - points[:, 1])
    assert finished >= N
    assert (episodes > 0).mean() > 0.9


@pytest.mark.parametrize(
    "rules, episode",
    [(Rules(), "hand"), (Rules(stick_the_dealer=False), "hand"), (Rules(target_points=3, joker=True), "game"),
     (Rules(deck=32, target_points=3, rubber_games=2), "rubber")],
    ids=["hand", "hand_stick_off", "game_to_3", "rubber_32"],
)
def test_stepping_the_records_alone_gives_what_the_engine_gives(rules, episode):
    """Never reading `env.state` (its fast path), every step equals the engine's batched calls and restarts."""
    env = EuchreVectorEnv(N, rules=rules, episode=episode, seed=5, max_hands=4)
    engine = Engine(rules, episode=episode)
    state = engine.init(game_keys(5, N))
    first_deal = state.deal_count.copy()
    obs, info = env.reset()
    rng = np.random.default_rng(5)
    ended_episodes = 0
    for _ in range(250):
        assert np.array_equal(obs, engine.observe(state)) and np.array_equal(info["action_mask"], state.legal)
        assert np.array_equal(info["to_play"], state.to_play)
        actions = random_legal(info["action_mask"], rng)
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert np.array_equal(rewards, engine.step(state, actions))
        assert np.array_equal(terminated, state.done)
        assert np.array_equal(truncated, ~state.done & (state.deal_count - first_deal >= 4))
        rows = np.flatnonzero(terminated | truncated)
        if rows.size:
            ended_episodes += rows.size
            assert np.array_equal(info["final_score"], state.score) and info["final_score"].dtype == state.score.dtype
            assert np.array_equal(info["final_hand_points"], state.hand_points)
            engine.restart(state, rows)
            first_deal[rows] = state.deal_count[rows]
        else:
            assert "final_score" not in info
    assert ended_episodes >= N
    for field, value in vars(state).items():
        assert np.array_equal(value, getattr(env.state, field)), field


def test_a_state_read_from_the_env_stays_current_and_changes_to_it_play_on():
    env, other = EuchreVectorEnv(8, seed=2), EuchreVectorEnv(8, seed=77)
    obs, info = env.reset()
    other.reset()
    held = env.state
    rng = np.random.default_rng(2)
    for _ in range(30):
        obs, _, _, _, info = env.step(random_legal(info["action_mask"], rng))
        assert np.array_equal(obs, env.engine.observe(held)) and np.array_equal(info["action_mask"], held.legal)
    for field, value in vars(other.state).items():  # changed in place: the env plays the other games now
        getattr(held, field)[...] = value
    actions = random_legal(other.action_masks, rng)
    for ours, theirs in zip(env.step(actions), other.step(actions)):
        if isinstance(ours, dict):
            assert ours.keys() == theirs.keys() and all(np.array_equal(ours[k], theirs[k]) for k in ours)
        else:
            assert np.array_equal(ours, theirs)
    fresh = EuchreVectorEnv(8, seed=78)
    fresh.reset()
    env.state = fresh.state.copy()  # assigned: the env plays those games
    actions = random_legal(fresh.action_masks, rng)
    assert np.array_equal(env.step(actions)[0], fresh.step(actions)[0])


def test_autoreset_continues_each_games_own_deal_stream():
    """Game i's episodes depend only on (seed, i) and its own actions, not on the other games."""
    env = EuchreVectorEnv(4, seed=9)
    env.reset()
    solo = EuchreVectorEnv(1, seed=9)
    solo.reset()
    rng = np.random.default_rng(9)
    for _ in range(120):
        actions = random_legal(env.action_masks, rng)
        obs, rewards, terminated, _, _ = env.step(actions)
        obs1, rewards1, terminated1, _, _ = solo.step(actions[:1])
        assert np.array_equal(obs[0], obs1[0]) and np.array_equal(rewards[0], rewards1[0])
        assert terminated[0] == terminated1[0]


def test_illegal_action_raises_without_changing_state():
    env = EuchreVectorEnv(N, seed=4)
    env.reset()
    rng = np.random.default_rng(4)
    for _ in range(5):
        env.step(random_legal(env.action_masks, rng))
    before = env.state.copy()
    actions = random_legal(env.action_masks, rng)
    g = 17
    actions[g] = int(np.flatnonzero(~env.action_masks[g])[0])
    with pytest.raises(IllegalActionError, match=f"in game {g} "):
        env.step(actions)
    for bad in (actions[:-1], actions.astype(np.float64), np.full(N, env.engine.num_actions)):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    for field, value in vars(before).items():
        assert np.array_equal(value, getattr(env.state, field)), field
    actions[g] = random_legal(env.action_masks[g : g + 1], rng)[0]
    env.step(actions)


def test_uint8_observations_hold_the_float32_cells():
    small = EuchreVectorEnv(16, rules=Rules(target_points=5), episode="game", seed=4, obs_dtype=np.uint8)
    full = EuchreVectorEnv(16, rules=Rules(target_points=5), episode="game", seed=4)
    obs8, info = small.reset()
    obs, _ = full.reset()
    rng = np.random.default_rng(4)
    scale = small.engine.observation_scale
    for _ in range(300):
        assert obs8.dtype == np.uint8 and small.observation_space.contains(obs8)
        np.testing.assert_allclose(obs8 * scale, obs, rtol=1e-6)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
        obs8, _, _, _, info = small.step(actions)
        obs, _, _, _, _ = full.step(actions)
    with pytest.raises(ValueError, match="float32 or uint8"):
        EuchreVectorEnv(2, obs_dtype=np.float64)


def test_random_legal_actions_are_legal_and_uniform_over_each_rows_legal_actions():
    from euchre_env import random_legal_actions

    rng = np.random.default_rng(5)
    mask = np.zeros((3, 31), bool)
    mask[0, [2, 9, 30]] = True
    mask[1, 4] = True  # row 2 has none: action 0, which the engine ignores for a finished game
    draws = np.stack([random_legal_actions(mask, rng) for _ in range(6000)])
    assert (draws[:, 1] == 4).all() and (draws[:, 2] == 0).all()
    counts = np.array([(draws[:, 0] == a).sum() for a in (2, 9, 30)])
    assert counts.sum() == 6000 and (np.abs(counts - 2000) < 150).all(), counts  # 150 is about 4 sd
    env = EuchreVectorEnv(N, seed=3)
    env.reset()
    for _ in range(200):  # every phase, and autoresets: an illegal action would raise
        actions = env.random_legal_actions(rng)
        assert env.action_masks[np.arange(N), actions].all()
        env.step(actions)
    with pytest.raises(ValueError, match="mask must be an"):
        random_legal_actions(np.ones(31, bool), rng)


def test_the_envs_random_legal_actions_equal_the_mask_picks_from_the_same_draws():
    from euchre_env import random_legal_actions

    env = EuchreVectorEnv(N, seed=4)
    env.reset()
    for step in range(120):
        seed = 1000 + step
        from_records = env.random_legal_actions(np.random.default_rng(seed))
        assert np.array_equal(from_records, random_legal_actions(env.action_masks, np.random.default_rng(seed)))
        env.step(from_records)


def test_it_is_a_gymnasium_vector_env_that_gymnasiums_vector_wrappers_accept():
    from gymnasium.vector import VectorEnv
    from gymnasium.vector.utils import batch_space
    from gymnasium.wrappers.vector import TransformAction

    env = EuchreVectorEnv(N, seed=0)
    assert isinstance(env, VectorEnv) and env.unwrapped is env
    assert env.observation_space == batch_space(env.single_observation_space, N)
    assert env.action_space == batch_space(env.single_action_space, N)
    assert env.render_mode is None and env.render() is None and env.metadata["render_modes"] == []
    listed = TransformAction(env, lambda actions: np.asarray(actions, np.int64))  # asserts that it wraps a VectorEnv
    obs, info = listed.reset()
    assert listed.num_envs == N and np.array_equal(obs, env.observe(info["to_play"]))
    obs, rewards, _, _, info = listed.step(env.random_legal_actions(np.random.default_rng(0)).tolist())
    assert np.array_equal(obs, env.observe(info["to_play"])) and rewards.shape == (N, 4)
    assert not env.closed
    listed.close()
    assert env.closed


def test_np_random_is_seeded_with_the_deals_and_drives_random_legal_actions_by_default():
    env, twin = EuchreVectorEnv(N, seed=3), EuchreVectorEnv(N, seed=3)
    assert env.np_random_seed == 3
    env.reset()
    twin.reset()
    rng = np.random.default_rng(3)  # the generator Gymnasium's seeding builds from 3
    for _ in range(20):
        picks = env.random_legal_actions()
        assert np.array_equal(picks, twin.random_legal_actions(rng))
        env.step(picks)
        twin.step(picks)
    env.reset(seed=11)
    twin.reset(seed=11)
    assert env.np_random_seed == 11
    assert np.array_equal(env.random_legal_actions(), twin.random_legal_actions(np.random.default_rng(11)))


@pytest.mark.parametrize("obs_dtype", [np.float32, np.uint8])
def test_observe_gives_any_seats_view_and_keeps_the_env_on_the_records(obs_dtype):
    """`observe(seats)` equals the engine's observations from those seats, and never switches the env to `state`."""
    rules = Rules(target_points=3)
    env = EuchreVectorEnv(N, rules=rules, episode="game", seed=6, obs_dtype=obs_dtype)
    engine = Engine(rules, episode="game")
    state = engine.init(game_keys(6, N))
    obs, info = env.reset()
    rng = np.random.default_rng(6)
    for _ in range(60):
        assert np.array_equal(env.observe(info["to_play"]), obs)
        for seat in range(4):
            seen = env.observe(seat)
            assert seen.dtype == obs_dtype and seen is not env.observe(seat)
            assert np.array_equal(seen, engine.observe(state, np.full(N, seat), dtype=obs_dtype))
        seats = rng.integers(0, 4, N)
        assert np.array_equal(env.observe(seats), engine.observe(state, seats, dtype=obs_dtype))
        actions = random_legal(info["action_mask"], rng)
        obs, _, terminated, truncated, info = env.step(actions)
        engine.step(state, actions)
        if (ended := np.flatnonzero(terminated | truncated)).size:
            engine.restart(state, ended)
    assert env._state is None, "observe must not read the games into env.state"


def test_observe_refuses_bad_seats_and_a_call_before_reset():
    env = EuchreVectorEnv(4, seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        env.observe(0)
    env.reset()
    for bad in (4, -1, [0, 1, 2], np.zeros(4, float), np.zeros((4, 1), int)):
        with pytest.raises(ValueError, match="seats must be"):
            env.observe(bad)


def test_copy_true_never_overwrites_an_array_the_caller_holds_and_reuses_the_ones_let_go():
    env = EuchreVectorEnv(16, seed=0)
    obs, info = env.reset()
    held = []
    for _ in range(5):
        obs, _, _, _, info = env.step(env.random_legal_actions())
        held.append((obs, obs.copy(), obs[:, :4], info["action_mask"], info["action_mask"].copy()))
    assert len({id(h[0]) for h in held}) == 5
    for obs, saved, view, mask, saved_mask in held:
        assert np.array_equal(obs, saved) and np.array_equal(view, saved[:, :4]) and np.array_equal(mask, saved_mask)
    del held, obs, saved, view, mask, saved_mask, info
    seen = [weakref.ref(env.step(env.random_legal_actions())[0]) for _ in range(6)]
    assert all(ref() is not None for ref in seen) and len({id(ref()) for ref in seen}) <= 2  # no fresh array per step
