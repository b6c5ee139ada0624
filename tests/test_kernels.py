"""The numba kernels: the same games as the numpy engine they replaced, the same games alone (the AEC
env's one-game record) as in a batch, the shipped checkpoint's play, and the uint8 observations."""

from __future__ import annotations

import os

import numpy as np
import pytest

from conftest import SMALL_VARIANTS, load_script, random_actions
from euchre_env import kernels
from euchre_env.engine import Engine, OneGame, game_keys
from euchre_env.rules import Rules
from euchre_env.state import FIELD_NAMES

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
FIXTURE = np.load(os.path.join(FIXTURES, "engine_trajectories.npz"))
VARIANT_NAMES = sorted(SMALL_VARIANTS)
EPISODES = (("hand", "points"), ("game", "win"), ("rubber", "points"))
CHECKPOINT = os.path.join(os.path.dirname(__file__), "..", "checkpoints", "euchre_ppo.pt")


def _make_fixture():
    return load_script(os.path.join(FIXTURES, "make_engine_fixture.py"))


@pytest.mark.parametrize("name", VARIANT_NAMES)
@pytest.mark.parametrize("episode,reward", EPISODES)
def test_every_step_equals_the_numpy_engines_state_rewards_and_observations(name, episode, reward):
    digests = _make_fixture().trajectory(name, episode, reward)
    expected = FIXTURE[f"{name}/{episode}/{reward}"]
    differ = np.flatnonzero((digests != expected).any(axis=1))
    assert differ.size == 0, f"first different step: {differ[0] if differ.size else None}"


ALONE_CONFIGS = {
    **{f"{name}/{episode}/{reward}": (SMALL_VARIANTS[name], episode, reward)
       for name in VARIANT_NAMES for episode, reward in EPISODES},
    **{f"openspiel(lone={lone}, stick={stick})/hand/points": (
        Rules.openspiel(allow_lone_defender=lone, stick_the_dealer=stick), "hand", "points")
       for lone in (False, True) for stick in (False, True)},
    "lone_defenders_stick_off_redeal/hand/win": (
        Rules(lone_defender=True, stick_the_dealer=False, throw_in_ends_hand_episode=False), "hand", "win"),
}
"""Every rules config of the equivalence tests (conftest's variants, the OpenSpiel differential test's four)."""


@pytest.mark.parametrize("config", sorted(ALONE_CONFIGS))
def test_a_game_alone_plays_exactly_as_in_a_batch(config):
    """The one-game kernels (OneGame record) and the batched ones: same states, masks, rewards, observations."""
    rules, episode, reward = ALONE_CONFIGS[config]
    engine = Engine(rules, episode=episode, reward=reward)
    n = 8
    keys = game_keys(17, n)
    batch = engine.init(keys)
    games = [engine.init_one(int(k)) for k in keys]
    rng = np.random.default_rng(17)
    for step in range(120):
        actions = random_actions(batch, rng)
        rewards = engine.step(batch, actions)
        for g, game in enumerate(games):
            paid = engine.step_one(game, int(actions[g]))
            assert np.array_equal(rewards[g], np.zeros(4) if paid is None else paid[0]), f"step {step}, game {g}"
            for field in FIELD_NAMES:
                assert np.array_equal(getattr(game.state, field)[0], getattr(batch, field)[g]), f"{step} {g} {field}"
            for seat in range(4):
                alone = engine.observe_one(game, seat)
                together = engine.observe(batch, np.full(n, seat))[g]
                assert np.array_equal(alone, together), f"step {step}, game {g}, seat {seat}"
        done = np.flatnonzero(batch.done)
        engine.restart(batch, done)
        for g in done:
            games[g] = OneGame.from_state(batch, g)


def test_the_shipped_checkpoint_acts_as_on_the_numpy_engines_observations():
    """The engine's observations are the numpy engine's, and the checkpoint's actions on them are the ones it
    chose when tests/fixtures/make_checkpoint_actions.py wrote checkpoint_actions.npy."""
    torch = pytest.importorskip("torch")
    from euchre_agents.ppo import PPOAgent
    from euchre_env.engine import Engine

    obs, masks = _make_fixture().checkpoint_observations()
    assert np.array_equal(obs, FIXTURE["checkpoint_obs"]) and np.array_equal(masks, FIXTURE["checkpoint_mask"])
    agent = PPOAgent.from_checkpoint(Engine(episode="hand"), CHECKPOINT)
    with torch.no_grad():
        actions = agent.act(obs, masks)
    expected = np.load(os.path.join(FIXTURES, "checkpoint_actions.npy"))
    differ = np.flatnonzero(actions != expected)
    assert differ.size == 0, f"{differ.size} of {expected.size} actions differ, first at row {differ[:1]}"


@pytest.mark.parametrize("episode", ["hand", "rubber"])
def test_uint8_observations_are_the_same_cells_the_score_in_points(episode):
    engine = Engine(SMALL_VARIANTS["stick_off_left"], episode=episode)
    state = engine.init(game_keys(3, 64))
    rng = np.random.default_rng(3)
    for _ in range(200):
        small = engine.observe(state, dtype=np.uint8)
        full = engine.observe(state)
        assert small.dtype == np.uint8
        np.testing.assert_allclose(small * engine.observation_scale, full, rtol=1e-6)
        if episode == "hand":
            assert np.array_equal(small, full)
        engine.step(state, random_actions(state, rng))
        engine.restart(state, np.flatnonzero(state.done))


def test_observe_refuses_other_dtypes_and_bad_seats():
    engine = Engine()
    state = engine.init(game_keys(0, 2))
    with pytest.raises(ValueError, match="float32 or uint8"):
        engine.observe(state, dtype=np.float64)
    with pytest.raises(ValueError, match="seat numbers 0-3"):
        engine.observe(state, np.array([0, 4]))


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_the_trick_winner_kernel_called_from_python_names_the_engines_winner_of_every_trick(name):
    """`kernels.trick_winner`, as the heuristic calls it on a trick's cards, names the winner the engine recorded."""
    engine = Engine(SMALL_VARIANTS[name], episode="hand")
    state = engine.init(game_keys(5, 64))
    rng = np.random.default_rng(5)
    checked = 0
    while not state.done.all():
        for g in range(state.num_games):
            for trick in range(int(state.trick_index[g]) if state.trick_index[g] >= 0 else 0):
                cards = [int(c) for c in state.trick_cards[g, trick]]
                trump, leader = int(state.trump[g]), int(state.trick_leader[g, trick])
                led = kernels.led_suit(engine.table, trump, cards[leader])
                winner = kernels.trick_winner(engine.table, trump, led, np.array(cards, np.int64))
                assert winner == state.trick_winner[g, trick], (g, trick, cards)
                checked += 1
        engine.step(state, random_actions(state, rng))
    assert checked > 1000


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_last_trick_winner_names_each_finished_tricks_taker_and_outlives_the_next_deal(name):
    """After a card that finishes a trick, `last_trick_winner` is the seat a one-hand engine records for that
    trick, also for the fifth, whose record the game's next deal clears; a new episode starts it at -1."""
    engine, hand_engine = Engine(SMALL_VARIANTS[name], episode="game"), Engine(SMALL_VARIANTS[name], episode="hand")
    state = engine.init(game_keys(8, 32))
    assert (state.last_trick_winner == -1).all()
    rng = np.random.default_rng(8)
    fifth_tricks = 0
    for _ in range(400):
        before, actions = state.copy(), random_actions(state, rng)
        engine.step(state, actions)
        finished = np.flatnonzero(state.trick_index != before.trick_index)
        probe = before.take(finished)
        hand_engine.step(probe, actions[finished])
        tricks = before.trick_index[finished]
        np.testing.assert_array_equal(state.last_trick_winner[finished], probe.trick_winner[np.arange(finished.size), tricks])
        fifth_tricks += int((state.trick_winner[finished, -1] == -1).sum())
        still = np.flatnonzero(state.trick_index == before.trick_index)
        np.testing.assert_array_equal(state.last_trick_winner[still], before.last_trick_winner[still])
        engine.restart(state, np.flatnonzero(state.done))
    assert fifth_tricks > 50
    engine.restart(state, np.arange(state.num_games))
    assert (state.last_trick_winner == -1).all()


@pytest.mark.parametrize("rules", [Rules(), Rules(deck=32, joker=True)], ids=["24", "32_joker"])
def test_each_field_sits_in_the_record_where_field_cells_says_and_a_blank_record_is_an_empty_game(rules):
    from euchre_env import kernels
    from euchre_env.record import blank_record, field_cells, load_rows
    from euchre_env.state import EuchreState

    engine = Engine(rules, episode="game")
    state = engine.init(game_keys(8, 64))
    rng = np.random.default_rng(8)
    for _ in range(37):  # games in every phase, some cards played, bids made
        engine.step(state, random_actions(state, rng))
        engine.restart(state, np.flatnonzero(state.done))
    blank = blank_record(engine.num_cards)
    records = np.empty((64, blank.size), blank.dtype)
    load_rows(*state.arrays(), np.arange(64), records, True)
    cells = field_cells(engine.num_cards)
    assert sorted(cells) == sorted(FIELD_NAMES)
    assert np.unique(np.concatenate(list(cells.values()))).size == records.shape[1]  # every cell is one field's
    for name in FIELD_NAMES:
        if name == "key":  # 64 bits in two 32-bit cells, low then high
            low, high = (records[:, cell].astype(np.uint32).astype(np.uint64) for cell in cells["key"])
            assert np.array_equal(high << np.uint64(32) | low, state.key)
            assert (state.key >> np.uint64(32)).any()  # the high cell is used
            continue
        if name == "legal":  # a bit set in two 32-bit cells, low then high: bit a is action a
            low, high = (records[:, cell].astype(np.uint32).astype(np.int64) for cell in cells["legal"])
            bits = high << 32 | low
            assert np.array_equal((bits[:, None] >> np.arange(engine.num_actions)) & 1, state.legal)
            assert state.legal.any()
            continue
        values = getattr(state, name).reshape(64, -1).astype(np.int64)
        assert np.array_equal(records[:, cells[name]], values), name
    empty = EuchreState.empty(1, engine.num_cards, engine.num_actions)
    loaded = np.empty_like(records[:1])
    kernels.one_load(empty.arrays(), 0, loaded[0])
    assert np.array_equal(blank_record(engine.num_cards), loaded[0])


def test_unowned_row_views_read_and_write_the_matrix_itself():
    from numba import njit
    from numba.core.errors import TypingError

    from euchre_env.rows import row_view, unowned

    @njit
    def add_to_rows(matrix, table):
        table = unowned(table)
        for g in range(matrix.shape[0]):
            r = row_view(matrix, g)
            for k in range(r.shape[0]):
                r[k] += table[g]
        return row_view(matrix, matrix.shape[0] - 1).sum()

    for dtype in (np.int32, np.float32):
        matrix = np.arange(12, dtype=dtype).reshape(3, 4)
        assert add_to_rows(matrix, np.array([10, 20, 30], dtype)) == 8 + 9 + 10 + 11 + 4 * 30
        assert np.array_equal(matrix, np.arange(12).reshape(3, 4) + np.array([[10], [20], [30]]))
    with pytest.raises(TypingError):
        add_to_rows(np.zeros((4, 3), np.int32).T, np.zeros(3, np.int32))  # not C-contiguous: refused


def test_stack_arrays_hold_what_a_kernel_writes_and_need_a_constant_size():
    from numba import njit
    from numba.core.errors import TypingError

    from euchre_env.rows import stack_array

    @njit
    def squares_and_halves(n):
        squares, halves = stack_array(40, np.int64), stack_array(40, np.float32)
        for i in range(n):
            squares[i], halves[i] = i * i, i / 2
        total = 0.0
        for i in range(n):
            total += squares[i] + halves[i]
        return total, squares.shape[0], squares[32] // 3, halves[3]

    assert squares_and_halves(33) == (sum(i * i + i / 2 for i in range(33)), 40, 1024 // 3, 1.5)

    @njit
    def sized_at_run_time(n):
        return stack_array(n, np.int64).shape[0]

    with pytest.raises(TypingError):
        sized_at_run_time(5)


@pytest.mark.parametrize("num_cards", [24, 25, 32, 33])
def test_deck_head_and_top_are_the_top_cards_of_deck_order(num_cards):
    from euchre_env.deal_keys import deck_head, deck_order, deck_top

    rng = np.random.default_rng(num_cards)
    for key, count in zip(rng.integers(0, 2**63, 3000, dtype=np.uint64), rng.integers(0, 10_000, 3000)):
        order = deck_order(key, count, num_cards)
        assert deck_head(key, count, num_cards) == tuple(order[:4])
        assert deck_top(key, count, num_cards) == order[0]
