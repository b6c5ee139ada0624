"""The one play loop (`euchre_env.play.play`) and the one way to call a bot (`act`)."""

from __future__ import annotations

import numpy as np
import pytest

from euchre_env.engine import EPISODE_GAME, EPISODE_HAND, Engine
from euchre_env.play import act, play


class FirstLegal:
    """Plays the lowest legal action id; records what it was given."""

    name = "first"
    needs_full_state = False

    def __init__(self):
        self.calls = []

    def act(self, obs, mask, *extra):
        self.calls.append((obs.shape[0], len(extra)))
        return np.argmax(mask, axis=1)


class Seeded:
    """A uniformly random legal action from its own generator."""

    name = "seeded"

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def act(self, obs, mask):
        return np.argmax(np.where(mask, self.rng.random(mask.shape), -1.0), axis=1)


class FullState(FirstLegal):
    name = "full"
    needs_full_state = True

    def act(self, obs, mask, state=None, rows=None):
        assert state is not None and rows is not None
        self.seen = (state, np.asarray(rows).copy())
        return np.argmax(state.legal[rows], axis=1)


class Returns:
    """Returns whatever it was built with."""

    def __init__(self, actions):
        self.name, self.actions = "fixed", actions

    def act(self, obs, mask):
        return self.actions


def test_act_passes_the_state_only_to_a_bot_that_needs_it():
    engine = Engine()
    state = engine.init(np.arange(3, dtype=np.uint64))
    obs, rows = engine.observe(state), np.arange(3)
    fair, full = FirstLegal(), FullState()
    act(fair, obs, state.legal, state, rows)
    assert fair.calls == [(3, 0)]
    out = act(full, obs, state.legal, state, rows)
    assert full.seen[0] is state and full.seen[1].tolist() == [0, 1, 2]
    assert out.dtype == np.int64 and out.tolist() == np.argmax(state.legal, axis=1).tolist()


@pytest.mark.parametrize(
    "actions, message",
    [
        (np.zeros(2, np.int64), "returned (2,) int64 actions for 3 decisions"),
        (np.zeros(3, np.float64), "returned (3,) float64 actions"),
        (np.full(3, -1), "chose the illegal action -1 (no such action"),
        (np.zeros(3, np.int64), "chose the illegal action"),
    ],
)
def test_act_refuses_a_wrong_answer_naming_the_bot(actions, message):
    engine = Engine()
    state = engine.init(np.arange(3, dtype=np.uint64))
    if message == "chose the illegal action":  # action 0 is a card, never legal in bidding
        assert not state.legal[:, 0].any()
    with pytest.raises(ValueError, match="bot 'mine'") as caught:
        act(Returns(actions), engine.observe(state), state.legal, label="mine", engine=engine)
    assert message in str(caught.value)
    if message == "chose the illegal action":
        assert "legal: pass" in str(caught.value)


def reference_play(engine, state, bots, seat_bot):
    """Step by hand: each seat's bot acts on its rows, points summed from the hands scored."""
    points = np.zeros((state.num_games, 2), np.int64)
    while not state.done.all():
        obs = engine.observe(state)
        actions = np.zeros(state.num_games, np.int64)
        live = np.flatnonzero(~state.done)
        who = seat_bot[live, state.to_play[live]]
        for b, bot in enumerate(bots):
            rows = live[who == b]
            if rows.size:
                actions[rows] = bot.act(obs[rows], state.legal[rows])
        engine.step(state, actions)
        points += state.hand_points
    return points


@pytest.mark.parametrize("episode", [EPISODE_HAND, EPISODE_GAME])
def test_play_gives_the_points_of_a_hand_written_loop(episode):
    engine = Engine(episode=episode)
    keys = np.arange(20, dtype=np.uint64) + 7
    seat_bot = np.random.default_rng(1).integers(0, 2, size=(20, 4))
    a, b = engine.init(keys), engine.init(keys)
    got = play(engine, a, [Seeded(1), Seeded(2)], seat_bot)
    want = reference_play(engine, b, [Seeded(1), Seeded(2)], seat_bot)
    assert got.dtype == np.int64 and got.shape == (20, 2)
    assert np.array_equal(got, want) and np.array_equal(a.score, b.score) and a.done.all()
    assert (got.sum(axis=1) > 0).all()
    if episode == EPISODE_GAME:
        assert np.array_equal(got, a.score)


def test_each_seat_is_played_by_its_bot_and_a_row_of_seats_applies_to_every_game():
    engine = Engine()

    class SeatCheck(FirstLegal):
        def __init__(self, seats):
            super().__init__()
            self.name, self.seats, self.needs_full_state = f"seats{seats}", seats, True

        def act(self, obs, mask, state=None, rows=None):
            assert set(state.to_play[rows].tolist()) <= set(self.seats)
            return np.argmax(mask, axis=1)

    bots = [SeatCheck((0, 2)), SeatCheck((1, 3))]
    keys = np.arange(5, dtype=np.uint64)
    one, per_game = engine.init(keys), engine.init(keys)
    assert np.array_equal(play(engine, one, bots, np.array([0, 1, 0, 1])), play(engine, per_game, bots, np.tile([0, 1, 0, 1], (5, 1))))


def test_the_decision_hook_sees_every_decision_and_may_replace_the_actions():
    engine = Engine()
    keys = np.arange(6, dtype=np.uint64)
    seen = []

    def first_legal_instead(bot_index, rows, obs, mask, actions):
        assert np.all(np.diff(rows) > 0) and bot_index.shape == rows.shape == actions.shape
        assert mask[np.arange(rows.size), actions].all()
        seen.append(rows.size)
        return np.argmax(mask, axis=1)

    hooked, plain = engine.init(keys), engine.init(keys)
    got = play(engine, hooked, [Seeded(3)], np.zeros(4, np.int64), on_decision=first_legal_instead)
    want = play(engine, plain, [FirstLegal()], np.zeros(4, np.int64))
    assert np.array_equal(got, want) and sum(seen) > 6 * 20


def test_until_stops_before_the_paused_seat_acts_and_rewards_add_up():
    engine = Engine(episode=EPISODE_GAME)
    state = engine.init(np.array([11], np.uint64))
    rewards = np.zeros((1, 4), np.float32)
    inside = np.zeros((1, 2), np.int64)
    pauses = 0
    while not state.done.all():
        inside += play(engine, state, [Seeded(0)], np.zeros(4, np.int64), until=lambda s: s.to_play == 2, rewards=rewards)
        assert state.done[0] or state.to_play[0] == 2
        if not state.done[0]:
            pauses += 1
            engine.step(state, np.array([np.argmax(state.legal[0])]))
    margin = inside[0, 0] - inside[0, 1]
    assert pauses > 10 and inside.sum() > 0
    assert rewards[0].tolist() == [margin, -margin, margin, -margin]


def test_a_bad_seat_table_is_refused():
    engine = Engine()
    state = engine.init(np.arange(2, dtype=np.uint64))
    with pytest.raises(ValueError, match="seat_bot"):
        play(engine, state, [FirstLegal()], np.zeros((3, 4), np.int64))
    with pytest.raises(ValueError, match="indexes 1 bots"):
        play(engine, state, [FirstLegal()], np.ones(4, np.int64))
