"""Property tests on random play: card conservation, legal masks and trick winners against a small
reference written here from the rules text, scoring, game ends, batch-size independence, and that
observations never depend on cards the observer cannot see."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SMALL_VARIANTS, random_actions, random_play
from euchre_env.cards import NUM_SEATS, NUM_TRICKS
from euchre_env.engine import Engine, EuchreState, OneGame, Phase, game_key, game_keys
from euchre_env.rules import LEAD_LEFT_OF_LONE_PLAYER, Rules

FEW = settings(max_examples=2)
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
VARIANT_NAMES = sorted(SMALL_VARIANTS)

# ------------------------------------------------------------------ a reference read from the rules text

RANKS = "789TJQKA"
SUITS = "CDHS"


def suit_of(name: str, trump: str) -> str:
    """The suit a card belongs to once `trump` is named: the bowers and the joker are trump."""
    if name == "JOKER":
        return trump
    rank, suit = name
    partner = {"C": "S", "S": "C", "D": "H", "H": "D"}[trump]
    if rank == "J" and suit == partner:
        return trump
    return suit


def power(name: str, trump: str, led: str) -> int:
    """How strongly a card plays to a trick: any trump beats the suit led, which beats the rest."""
    suit = suit_of(name, trump)
    if suit == trump:
        if name == "JOKER":
            return 300
        if name[0] == "J":
            return 299 if name[1] == trump else 298
        return 200 + RANKS.index(name[0])
    if suit == led:
        return 100 + RANKS.index(name[0])
    return 0


def offered_suit(upcard: str) -> str:
    """The suit the turned card offers (a turned joker is a spade)."""
    return "S" if upcard == "JOKER" else upcard[1]


def reference_legal(engine: Engine, s: EuchreState, g: int) -> set[str]:
    """The legal action names of game g's seat to act, from the rules documents."""
    rules, names = engine.rules, engine.deck.names
    phase, seat = Phase(int(s.phase[g])), int(s.to_play[g])
    upcard = names[int(s.upcard[g])]
    suit_names = dict(zip(SUITS, ("clubs", "diamonds", "hearts", "spades")))
    held = [names[c] for c in np.flatnonzero(s.hand[g, seat])]
    if phase == Phase.BID_ROUND_1:
        return {"pass", suit_names[offered_suit(upcard)]}
    if phase == Phase.BID_ROUND_2:
        out = {suit_names[x] for x in SUITS if x != offered_suit(upcard)}
        if not (rules.stick_the_dealer and seat == int(s.dealer[g])):
            out.add("pass")
        return out
    if phase in (Phase.MAKER_ALONE, Phase.DEFENDER_ALONE):
        return {"alone", "partner"}
    if phase == Phase.DISCARD:
        assert seat == int(s.dealer[g]) and len(held) == 6
        return set(held) - (set() if rules.dealer_may_bury_upcard else {upcard})
    assert phase == Phase.PLAY
    trump = SUITS[int(s.trump[g])]
    t = int(s.trick_index[g])
    if s.cards_in_trick[g] == 0:
        return set(held)
    led = suit_of(names[int(s.trick_cards[g, t, int(s.trick_leader[g, t])])], trump)
    follow = {c for c in held if suit_of(c, trump) == led}
    return follow or set(held)


def reference_hand_points(rules: Rules, s: EuchreState, g: int) -> list[int]:
    """Points each team scores for game g's finished hand."""
    maker_team = int(s.maker[g]) % 2
    tricks = int(s.tricks_won[g, maker_team])
    points = [0, 0]
    if tricks >= 3:
        points[maker_team] = 1 if tricks < 5 else (4 if s.maker_alone[g] else 2)
    elif s.lone_defender[g] >= 0:
        points[1 - maker_team] = 4 if tricks == 0 else rules.lone_defender_euchre_points
    else:
        points[1 - maker_team] = 2
    return points


def expected_leader(rules: Rules, s: EuchreState, g: int) -> int:
    """Who leads the first trick (000_*, 001_*, 004_*)."""
    active = s.active[g]
    if rules.lone_lead == LEAD_LEFT_OF_LONE_PLAYER:
        if s.lone_defender[g] >= 0:
            return int(s.lone_defender[g]) if s.maker_alone[g] else (int(s.lone_defender[g]) + 1) % 4
        if s.maker_alone[g]:
            return (int(s.maker[g]) + 1) % 4
    seat = (int(s.dealer[g]) + 1) % 4
    while not active[seat]:
        seat = (seat + 1) % 4
    return seat


# ------------------------------------------------------------------ invariants over a batch


def assert_every_card_in_one_place(engine: Engine, s: EuchreState) -> None:
    """Each card is in exactly one of: a hand, played, the dealer's discard, the kitty."""
    cards = np.arange(engine.num_cards)[None, :]
    in_hand = s.hand.sum(axis=1)
    played = s.card_player >= 0
    buried = cards == s.discard[:, None]
    upcard = cards == s.upcard[:, None]
    kitty = ~s.dealt.any(axis=1) & ~(upcard & s.picked_up[:, None])
    places = in_hand + played + buried + kitty
    bad = np.argwhere(places != 1)
    assert bad.size == 0, f"game {bad[0][0]}: card {engine.deck.names[bad[0][1]]} is in {places[tuple(bad[0])]} places"
    assert (s.dealt.sum(axis=2) == 5).all() and (s.dealt.sum(axis=1) <= 1).all()
    assert not s.dealt[np.arange(s.num_games), :, s.upcard].any()
    # every seat holds five cards less what it played (the dealer six while it buries)
    played_by = np.stack([(s.card_player == seat).sum(axis=1) for seat in range(NUM_SEATS)], axis=1)
    expected = 5 - played_by
    discarding = s.phase == Phase.DISCARD
    expected[discarding, s.dealer[discarding]] += 1
    assert (s.hand.sum(axis=2) == expected).all()


def check_decisions(engine: Engine, s: EuchreState, rows: np.ndarray) -> None:
    """The mask and the seat to act agree with the reference for the given live rows."""
    names = engine.action_names
    for g in rows:
        legal = {names[a] for a in np.flatnonzero(s.legal[g])}
        assert legal == reference_legal(engine, s, g), f"game {g}, phase {Phase(int(s.phase[g])).name}"
        seat = int(s.to_play[g])
        assert s.active[g, seat], "a sitting-out seat was asked to act"
        if s.phase[g] == Phase.PLAY:
            t = int(s.trick_index[g])
            order = [(int(s.trick_leader[g, t]) + k) % 4 for k in range(4)]
            order = [p for p in order if s.active[g, p]]
            assert seat == order[int(s.cards_in_trick[g])]
            if t == 0:
                assert int(s.trick_leader[g, 0]) == expected_leader(engine.rules, s, g)


def check_finished_hand(engine: Engine, s: EuchreState, g: int) -> None:
    """Five tricks with one card per playing seat, winners by the reference, scored by the reference."""
    names = engine.deck.names
    if s.thrown_in[g]:
        assert s.trick_index[g] == 0 and (s.card_player[g] < 0).all()
        assert s.hand_points[g].tolist() == [0, 0] and s.maker[g] == -1
        return
    assert s.trick_index[g] == NUM_TRICKS and s.tricks_won[g].sum() == NUM_TRICKS
    trump = SUITS[int(s.trump[g])]
    won = [0, 0]
    for t in range(NUM_TRICKS):
        cards = s.trick_cards[g, t]
        assert ((cards >= 0) == s.active[g]).all()
        leader = int(s.trick_leader[g, t])
        led = suit_of(names[int(cards[leader])], trump)
        best = max(np.flatnonzero(cards >= 0), key=lambda p: power(names[int(cards[p])], trump, led))
        assert s.trick_winner[g, t] == best
        if t + 1 < NUM_TRICKS:
            assert s.trick_leader[g, t + 1] == best
        won[best % 2] += 1
    assert s.tricks_won[g].tolist() == won
    points = reference_hand_points(engine.rules, s, g)
    assert s.hand_points[g].tolist() == points
    assert sum(p > 0 for p in points) == 1


def assert_zero_sum(rewards: np.ndarray) -> None:
    assert (rewards[:, 0] == rewards[:, 2]).all() and (rewards[:, 1] == rewards[:, 3]).all()
    assert (rewards[:, 0] == -rewards[:, 1]).all()


# ------------------------------------------------------------------ the properties


@pytest.mark.parametrize("name", VARIANT_NAMES)
@FEW
@given(seed=SEEDS)
def test_random_hands_follow_the_rules(name, seed):
    engine = Engine(SMALL_VARIANTS[name], episode="hand")
    state = engine.init(game_keys(seed, 64))
    rng = np.random.default_rng(seed)
    assert_every_card_in_one_place(engine, state)
    check_decisions(engine, state, np.arange(64))
    for before, _, rewards in random_play(engine, state, rng):
        assert_every_card_in_one_place(engine, state)
        check_decisions(engine, state, np.flatnonzero(~state.done))
        assert_zero_sum(rewards)
        for g in np.flatnonzero(state.done & ~before.done):
            check_finished_hand(engine, state, g)
            margin = state.hand_points[g, 0] - state.hand_points[g, 1]
            assert rewards[g].tolist() == [margin, -margin, margin, -margin]
        assert (rewards[~(state.done & ~before.done)] == 0).all()
    assert (state.hand_number == 1).all()


@pytest.mark.parametrize("name", VARIANT_NAMES)
@FEW
@given(seed=SEEDS)
def test_random_games_end_exactly_when_a_side_reaches_the_target(name, seed):
    rules = SMALL_VARIANTS[name]
    engine = Engine(rules, episode="game", reward="win")
    n = 32
    state = engine.init(game_keys(seed, n))
    rng = np.random.default_rng(seed)
    for before, _, rewards in random_play(engine, state, rng):
        live = ~before.done
        assert_every_card_in_one_place(engine, state)
        assert_zero_sum(rewards)
        gained = state.score.astype(int) - before.score
        assert (gained[live] >= 0).all()
        assert ((gained[live] > 0).sum(axis=1) <= 1).all(), "both sides scored in one hand"
        scored = live & (state.hand_number > before.hand_number)
        assert ((gained[scored] > 0).sum(axis=1) == 1).all(), "a played hand must score for exactly one side"
        assert (gained[live & ~scored] == 0).all()
        reached = state.score.max(axis=1) >= rules.target_points
        assert (reached[live] == state.done[live]).all()
        ended = live & state.done
        winner = np.sign(state.score[:, 0].astype(int) - state.score[:, 1])
        assert (rewards[ended, 0] == winner[ended]).all() and (winner[ended] != 0).all()
        assert (rewards[live & ~ended] == 0).all()
        assert (state.score[ended].max(axis=1) <= rules.target_points + 3).all()
    assert (state.phase == Phase.GAME_OVER).all()


@FEW
@given(seed=SEEDS)
def test_random_rubbers_end_when_a_side_has_won_the_games(seed):
    rules = Rules(target_points=3, rubber_games=2, stick_the_dealer=False, throw_in_same_dealer=False)
    engine = Engine(rules, episode="rubber")
    state = engine.init(game_keys(seed, 48))
    total = np.zeros((48, 2), int)
    games = np.zeros((48, 2), int)
    for before, _, rewards in random_play(engine, state, np.random.default_rng(seed)):
        live = ~before.done
        total[live] += rewards[live][:, :2].astype(int).clip(min=0)
        new_game = live & (state.games_won.sum(axis=1) > before.games_won.sum(axis=1))
        assert (before.score[new_game].max(axis=1) < 3).all()
        games[new_game] = state.games_won[new_game]
        assert ((state.score[new_game & ~state.done] == 0)).all()
        assert (state.done[live] == (state.games_won[live].max(axis=1) >= 2)).all()
    assert (state.rubber_points == total).all()
    assert (games.max(axis=1) == 2).all()


BATCH_CONFIGS = {
    "default_game": (Rules(), "game"),
    "deck32_joker_rubber": (Rules(deck=32, joker=True, target_points=3), "rubber"),
    "lone_defenders_stick_off_hand": (
        Rules(lone_defender=True, stick_the_dealer=False, throw_in_ends_hand_episode=False), "hand"),
}


@pytest.mark.parametrize("name", sorted(BATCH_CONFIGS))
@settings(max_examples=1)
@given(seed=SEEDS, rows=st.lists(st.integers(0, 999), min_size=3, max_size=3, unique=True))
def test_a_game_plays_the_same_alone_as_in_a_batch_of_1000(name, seed, rows):
    rules, episode = BATCH_CONFIGS[name]
    engine = Engine(rules, episode=episode)
    keys = game_keys(seed, 1000)
    big = engine.init(keys)
    small = {i: engine.init(keys[i : i + 1]) for i in rows}
    rng = np.random.default_rng(seed)
    steps = 0
    while not big.done[rows].all():
        obs = engine.observe(big)
        for i, s in small.items():
            assert np.array_equal(engine.observe(s)[0], obs[i]), f"game {i}: observation at step {steps}"
            assert np.array_equal(s.legal[0], big.legal[i]), f"game {i}: mask at step {steps}"
        actions = random_actions(big, rng)
        rewards = engine.step(big, actions)
        for i, s in small.items():
            r = engine.step(s, actions[i : i + 1])
            assert np.array_equal(r[0], rewards[i]), f"game {i}: rewards at step {steps}"
            for field, value in vars(s).items():
                assert np.array_equal(value[0], getattr(big, field)[i]), f"game {i}: {field} at step {steps}"
        steps += 1
    assert all(s.done[0] for s in small.values())


OBSERVE_CONFIGS = {
    "default_game": (Rules(), "game"),
    "deck32_joker_rubber": (Rules(deck=32, joker=True, target_points=3), "rubber"),
    "lone_defenders_hand": (Rules(lone_defender=True, lone_lead=LEAD_LEFT_OF_LONE_PLAYER), "hand"),
    "openspiel_hand": (Rules.openspiel(allow_lone_defender=True, stick_the_dealer=False), "hand"),
}


def test_the_observation_layout_gives_every_cell_to_exactly_one_feature():
    for rules in SMALL_VARIANTS.values():
        engine = Engine(rules)
        cells = np.concatenate(list(engine.observation_layout.values()))
        assert np.array_equal(np.sort(cells), np.arange(engine.observation_size))


@pytest.mark.parametrize("name", sorted(OBSERVE_CONFIGS))
def test_batched_observations_equal_the_one_game_encoding_for_every_seat(name):
    """The batched encoder (chunks of games, whole-array operations) and the one-game encoder agree
    for every seat, at every step of whole episodes, including the chunk boundaries."""
    rules, episode = OBSERVE_CONFIGS[name]
    engine = Engine(rules, episode=episode)
    n = 2 * 2048 + 5  # more than one observation chunk
    state = engine.init(game_keys(11, n))
    rng = np.random.default_rng(11)
    watched = np.array([0, 1, 2047, 2048, 2049, n - 1])
    for step in range(80):
        if state.done.all():
            break
        for seat in range(NUM_SEATS):
            seats = np.full(n, seat)
            batch = engine.observe(state, seats)
            for g in watched:
                one = engine.observe(state.take(np.array([g])), np.array([seat]))[0]
                assert np.array_equal(batch[g], one), f"game {g}, seat {seat}, step {step}"
        engine.step(state, random_actions(state, rng))


def game_with_actions(engine: Engine, key: np.ndarray, rng: np.random.Generator) -> tuple[EuchreState, list[int]]:
    """A random one-hand game: its starting state and the actions played."""
    state = engine.init(key)
    start = state.copy()
    actions = []
    while not state.done[0]:
        a = random_actions(state, rng)
        actions.append(int(a[0]))
        engine.step(state, a)
    return start, actions


def replay(engine: Engine, dealer: int, hands: np.ndarray, upcard: int, actions: list[int], seat: int):
    """Observations and masks of `seat` before each action; None if an action is illegal in this deal."""
    state = engine.init_from_deal(dealer, hands, upcard)
    seen = []
    for a in actions:
        mask = state.legal[0].copy() if state.to_play[0] == seat else None
        seen.append((engine.observe(state, np.array([seat]))[0], mask))
        if not state.legal[0, a]:
            return None
        engine.step(state, np.array([a]))
    seen.append((engine.observe(state, np.array([seat]))[0], None))
    return seen


@pytest.mark.parametrize(
    "rules", [Rules(), Rules(deck=32, joker=True, lone_defender=True)], ids=["default", "big_deck"]
)
def test_observations_do_not_depend_on_cards_the_observer_cannot_see(rules):
    engine = Engine(rules, episode="hand")
    rng = np.random.default_rng(2024)
    keys = game_keys(2024, 24)
    distinct_worlds = 0
    for g in range(24):
        start, actions = game_with_actions(engine, keys[g : g + 1], rng)
        seat = int(rng.integers(4))
        upto = int(rng.integers(1, len(actions) - 6))  # leave two tricks' cards hidden
        prefix = actions[:upto]
        dealer, upcard = int(start.dealer[0]), int(start.upcard[0])
        hands = np.array([np.flatnonzero(start.dealt[0, p]) for p in range(4)])
        # what the observer cannot see after `upto` actions: others' unplayed cards and the kitty
        at = engine.init_from_deal(dealer, hands, upcard)
        for a in prefix:
            engine.step(at, np.array([a]))
        slots = [(p, k) for p in range(4) if p != seat for k in range(5)
                 if at.hand[0, p, hands[p, k]] and hands[p, k] != at.discard[0]]
        kitty = [c for c in range(engine.num_cards) if not start.dealt[0, :, c].any() and c != upcard]
        pool = [hands[p, k] for p, k in slots] + kitty
        base = replay(engine, dealer, hands, upcard, prefix, seat)
        assert base is not None
        for _ in range(30):
            shuffled = rng.permutation(pool)
            other = hands.copy()
            for (p, k), c in zip(slots, shuffled):
                other[p, k] = c
            if np.array_equal(np.sort(other, axis=1), np.sort(hands, axis=1)):
                continue
            seen = replay(engine, dealer, other, upcard, prefix, seat)
            if seen is None:
                continue  # this world contradicts a play the observer saw
            distinct_worlds += 1
            for (obs_a, mask_a), (obs_b, mask_b) in zip(base, seen):
                np.testing.assert_array_equal(obs_a, obs_b)
                assert (mask_a is None) == (mask_b is None)
                if mask_a is not None:
                    np.testing.assert_array_equal(mask_a, mask_b)
            break
    assert distinct_worlds >= 15


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(deck=32, joker=True), Rules(first_dealer="random"), Rules.openspiel()],
    ids=["default", "deck32_joker", "random_first_dealer", "openspiel"],
)
def test_init_one_starts_the_same_episode_as_init_even_in_a_used_state(rules):
    engine = Engine(rules, episode="game")
    keys = game_keys(7, 400)
    batch = engine.init(keys)
    rng = np.random.default_rng(7)
    used = engine.init_one(int(keys[0]))
    for _ in range(30):  # dirty every field: bids, tricks, scores
        engine.step_one(used, int(rng.choice(np.flatnonzero(used.legal()))))
    recuts = 0
    state = engine.init(keys[:1])
    for g in range(keys.size):
        one = engine.init_one(int(keys[g]), used if g % 2 else None)
        assert one is used or g % 2 == 0
        recuts += one.state.deal_count[0] > 2
        one.write(state)
        for field, value in vars(state).items():
            assert np.array_equal(value[0], getattr(batch, field)[g]), f"game {g}: {field}"
    assert recuts > 0 or rules.first_dealer == "random"  # tied cuts were exercised


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_a_one_game_copy_of_a_state_writes_back_every_field_unchanged(name):
    engine = Engine(SMALL_VARIANTS[name], episode="rubber")
    state = engine.init(game_keys(5, 64))
    rng = np.random.default_rng(5)
    target = engine.init(game_keys(6, 1))
    for step in range(120):  # every phase, mid-trick, finished hands, later deals, game over
        for g in range(0, state.num_games, 7):
            OneGame.from_state(state, g).write(target)
            for field, value in vars(state).items():
                assert np.array_equal(getattr(target, field)[0], value[g]), f"step {step}, game {g}: {field}"
        engine.step(state, random_actions(state, rng))


def test_game_key_draws_the_key_game_keys_draws():
    one, batch = np.random.default_rng(3), np.random.default_rng(3)
    assert [game_key(one) for _ in range(2000)] == [int(game_keys(batch, 1)[0]) for _ in range(2000)]
    assert one.bit_generator.state == batch.bit_generator.state
