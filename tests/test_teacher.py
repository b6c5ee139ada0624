"""Teacher data: labels equal direct solver calls, shards round-trip with their manifest, refusals."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json

import numpy as np
import pytest

from euchre_agents.heuristic import HeuristicAgent
from euchre_agents.pimc import OracleAgent, score_table
from euchre_agents.registry import make_agent, parse_weighted
from euchre_agents.solver import DoubleDummy, hand_masks
from euchre_agents.teacher import ShardPlayer, generate, rollout_values, true_values
from euchre_agents.teacher_data import MANIFEST, TeacherDataError, TeacherSettings, load, read_manifest, shard_path
from euchre_env import Engine, Phase, Rules, game_keys
from euchre_env.cards import NUM_TRICKS
from euchre_lab.training.teacher import main as teacher_main

RULES = {
    "default": Rules(),
    "lone-32-joker": Rules(deck=32, joker=True, lone_defender=True, stick_the_dealer=False),
}
TINY = TeacherSettings(behaviour="heuristic=1,random=1", games_per_shard=6, seed=3)


def random_positions(engine: Engine, seed: int, phases: set[int], games: int = 24):
    """(state, row) pairs at decisions in `phases` with several legal actions, from random play."""
    rng = np.random.default_rng(seed)
    state = engine.init(game_keys(seed, games))
    while not state.done.all():
        for row in np.flatnonzero(~state.done):
            if int(state.phase[row]) in phases and state.legal[row].sum() > 1:
                yield state.take(np.array([row])), 0
        actions = np.argmax(np.where(state.legal, rng.random(state.legal.shape), -1), axis=1)
        engine.step(state, actions)


def solved_points(engine: Engine, state, me: int) -> float:
    """Net points for `me`'s side of the one game in `state`: its hand score if over, else solved double-dummy."""
    if state.phase[0] >= Phase.HAND_OVER:
        points = engine.hand_score(state, np.array([0]))[0]
        return float(points[me % 2] - points[1 - me % 2])
    t = int(state.trick_index[0])
    t0 = int(
        DoubleDummy(engine.deck).values(
            hand_masks(state.hand[0])[None], state.trump[0], state.trick_leader[0, t], state.active[0][None],
            state.trick_cards[0, t][None],
        )[0]
    )
    maker_team = int(state.maker[0]) % 2
    remaining = NUM_TRICKS - int(state.tricks_won[0].sum())
    maker_tricks = int(state.tricks_won[0, maker_team]) + (t0 if maker_team == 0 else remaining - t0)
    net = score_table(engine)[int(state.maker_alone[0]), int(state.lone_defender[0] >= 0), maker_tricks]
    return float(net if maker_team == me % 2 else -net)


@pytest.mark.parametrize("name", RULES)
def test_card_label_equals_a_solver_call_on_the_layout_after_the_card(name):
    engine = Engine(RULES[name])
    oracle = OracleAgent(engine, seed=0)
    checked = 0
    for state, row in random_positions(engine, 11, {Phase.PLAY}):
        values = true_values(oracle, state, np.array([row]))[0]
        me = int(state.to_play[0])
        assert np.array_equal(np.isfinite(values), state.legal[0])
        for card in np.flatnonzero(state.legal[0]):
            after = state.copy()
            engine.step(after, np.array([card]))
            assert values[card] == solved_points(engine, after, me)
        checked += 1
        if checked == 40:
            break
    assert checked == 40


def test_last_trick_label_is_the_hands_true_score():
    engine = Engine()
    oracle = OracleAgent(engine, seed=0)
    rng = np.random.default_rng(5)
    state = engine.init(game_keys(5, 16))
    while not (state.trick_index == NUM_TRICKS - 1).all():
        live = state.trick_index < NUM_TRICKS - 1
        actions = np.argmax(np.where(state.legal, rng.random(state.legal.shape), -1), axis=1)
        actions[~live] = 0
        sub = np.flatnonzero(live)
        part = state.take(sub)
        engine.step(part, actions[sub])
        for f in dataclasses.fields(state):
            getattr(state, f.name)[sub] = getattr(part, f.name)
    rows = np.arange(16)
    labels = true_values(oracle, state, rows)
    me = state.to_play.copy()
    forced = state.legal.argmax(axis=1)
    returns = np.zeros((16, 4))
    while not state.done.all():
        returns += engine.step(state, state.legal.argmax(axis=1))
    assert np.array_equal(labels[rows, forced], returns[rows, me])


def test_bid_label_is_the_best_plan_rolled_out_by_the_heuristic_and_solved():
    engine = Engine()
    oracle = OracleAgent(engine, seed=0)
    model = HeuristicAgent(engine, seed=0)
    checked = 0
    for state, row in random_positions(engine, 7, {Phase.BID_ROUND_1, Phase.BID_ROUND_2, Phase.DISCARD}):
        values = true_values(oracle, state, np.array([row]))[0]
        me = int(state.to_play[0])
        for action in np.flatnonzero(state.legal[0]):
            names_trump = engine.first_suit_action <= action < engine.first_suit_action + 4
            follow_ups = [engine.partner_action, engine.alone_action] if names_trump else [None]
            best = -np.inf
            for follow in follow_ups:
                st = state.copy()
                engine.step(st, np.array([action]))
                while st.phase[0] < Phase.PLAY:
                    mine = follow is not None and st.phase[0] == Phase.MAKER_ALONE and st.to_play[0] == me
                    a = follow if mine else int(model.act(engine.observe(st), st.legal)[0])
                    engine.step(st, np.array([a]))
                best = max(best, solved_points(engine, st, me))
            assert values[action] == best
        checked += 1
        if checked == 12:
            break
    assert checked == 12


@pytest.mark.parametrize(
    "phases", [{Phase.BID_ROUND_1, Phase.BID_ROUND_2, Phase.MAKER_ALONE, Phase.DISCARD}, {Phase.PLAY}], ids=["bids", "cards"]
)
def test_rollout_label_is_the_hand_played_out_by_the_rollout_bot_after_the_action(phases):
    engine = Engine()
    bot = make_agent("ppo", engine)  # greedy, so one play-out per action is the whole label
    positions = list(itertools.islice(random_positions(engine, 5, phases), 12))
    assert len(positions) == 12
    for state, row in positions:
        values = rollout_values(engine, bot, state, np.array([row]))[0]
        me = int(state.to_play[0])
        assert np.array_equal(np.isfinite(values), state.legal[0])
        for action in np.flatnonzero(state.legal[0]):
            st = state.copy()
            points = engine.step(st, np.array([action]))[0, me]
            while not st.done[0]:
                points += engine.step(st, bot.act(engine.observe(st), st.legal, st, np.array([0])))[0, me]
            assert values[action] == points


def test_rollout_data_labels_card_decisions_as_the_true_layout_does():
    settings = dataclasses.replace(TINY, label="rollout", rollout_agent="heuristic", games_per_shard=4)
    rollout, true = (ShardPlayer(Rules(), dataclasses.replace(settings, label=k)).play_shard(0) for k in ("rollout", "true"))
    np.testing.assert_array_equal(rollout["action"], true["action"])  # the same hands are played
    play = rollout["phase"] == Phase.PLAY
    assert play.any() and (~play).any()
    np.testing.assert_array_equal(rollout["values"][play], true["values"][play])
    legal = np.unpackbits(rollout["mask_bits"], axis=1, count=Engine().num_actions).astype(bool)
    assert np.array_equal(np.isfinite(rollout["values"]), legal)


def test_rollout_cards_values_card_decisions_by_play_outs_and_leaves_the_rest():
    settings = dataclasses.replace(TINY, label="rollout", rollout_agent="ppo", games_per_shard=4)
    plain = ShardPlayer(Rules(), settings).play_shard(0)
    cards = ShardPlayer(Rules(), dataclasses.replace(settings, rollout_cards=True)).play_shard(0)
    np.testing.assert_array_equal(cards["action"], plain["action"])
    play = cards["phase"] == Phase.PLAY
    np.testing.assert_array_equal(cards["values"][~play], plain["values"][~play])
    assert not np.array_equal(cards["values"][play], plain["values"][play])
    assert np.array_equal(np.isfinite(cards["values"]), np.isfinite(plain["values"]))


def test_bid_share_labels_the_bids_of_that_share_of_the_hands_and_every_hand_s_cards():
    settings = dataclasses.replace(TINY, label="rollout", rollout_agent="heuristic", games_per_shard=32)
    every = ShardPlayer(Rules(), settings).play_shard(0)
    some, none = (ShardPlayer(Rules(), dataclasses.replace(settings, bid_share=share)).play_shard(0) for share in (0.5, 0.0))
    play = every["phase"] == Phase.PLAY
    for data in (some, none):  # the same hands: every card decision is there, labelled as before
        cards = data["phase"] == Phase.PLAY
        for key in ("obs_bits", "values", "action", "outcome"):
            np.testing.assert_array_equal(data[key][cards], every[key][play])
    bids = [int((d["phase"] != Phase.PLAY).sum()) for d in (every, some, none)]
    assert bids[0] > bids[1] > bids[2] == 0
    player = ShardPlayer(Rules(), dataclasses.replace(settings, bid_share=0.5))
    assert 0.3 < player._bids_labelled(0, 10_000).mean() < 0.7


def test_the_generator_cli_reads_true_and_false_and_refuses_other_words(tmp_path, capsys):
    assert teacher_main([str(tmp_path / "data"), "--shards", "1", "--rollout-cards=maybe"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m euchre_lab.training.teacher: error: option rollout_cards: expected bool, got 'maybe'")
    assert err.count("\n") == 1 and not (tmp_path / "data").exists()
    with pytest.raises(SystemExit) as stop:
        teacher_main([str(tmp_path / "data")])
    assert stop.value.code == 2 and "the following arguments are required: --shards" in capsys.readouterr().err
    assert teacher_main([str(tmp_path / "data"), "--shards", "1", "--rules", "deck=33"]) == 2
    assert "Rules.deck=33 is not allowed" in capsys.readouterr().err and not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--shards", "0"], "shards must be a whole number of 1 or more, got 0"),
        (["--shards", "-1"], "shards must be a whole number of 1 or more, got -1"),
        (["--shards", "1", "--behaviour", "heuristc=1"], "behaviour 'heuristc': unknown agent 'heuristc'"),
        (["--shards", "1", "--behaviour", "heuristic=1,pimc:worlds=abc=1"], "behaviour 'pimc:worlds=abc': pimc option worlds"),
        (["--shards", "1", "--label", "rollout", "--rollout-agent", "ppo:none.pt"], "rollout_agent 'ppo:none.pt': no checkpoint at"),
        (["--shards", "1", "--label", "search", "--search-agent", "heuristic"], "search_agent 'heuristic' is not a search bot"),
        (["--shards", "1", "--label", "search", "--search-agent", "search:worlds=0"], "search_agent 'search:worlds=0': "),
        (["--shards", "1", "--seed", "-1"], "seed=-1 must be 0 or more"),
        (["--shards", "1", "--workers", "0"], "--workers must be 1 or more, got 0"),
    ],
    ids=["shards_0", "shards_negative", "behaviour_unknown", "behaviour_bad_option", "rollout_agent_missing",
         "search_agent_not_search", "search_agent_bad_option", "seed", "workers"],
)
def test_the_generator_cli_refuses_bad_settings_before_writing_anything(argv, message, tmp_path, capsys):
    assert teacher_main([str(tmp_path / "data"), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("python -m euchre_lab.training.teacher: error: ") and err.count("\n") == 1, err
    assert message in err and not (tmp_path / "data").exists()


def test_a_refused_behaviour_leaves_nothing_that_blocks_the_corrected_run(tmp_path, capsys):
    folder = tmp_path / "data"
    assert teacher_main([str(folder), "--shards", "1", "--games-per-shard", "2", "--behaviour", "heuristc=1"]) == 2
    assert not folder.exists()
    assert teacher_main([str(folder), "--shards", "1", "--games-per-shard", "2", "--behaviour", "heuristic=1"]) == 0
    assert set(read_manifest(folder)["shards"]) == {"0"}
    before = (folder / MANIFEST).read_text()
    with pytest.raises(TeacherDataError, match="behaviour 'heuristc'"):
        generate(folder, 2, Rules(), dataclasses.replace(TINY, behaviour="heuristc=1"), progress=False)
    with pytest.raises(TeacherDataError, match="shards must be"):
        generate(folder, 0, Rules(), TINY, progress=False)
    assert (folder / MANIFEST).read_text() == before and sorted(p.name for p in folder.iterdir()) == [MANIFEST, "shard_00000.npz"]


def test_data_written_before_a_setting_existed_resumes_with_its_default(tmp_path):
    folder = tmp_path / "data"
    generate(folder, 1, Rules(), TINY, progress=False)
    manifest = json.loads((folder / MANIFEST).read_text())
    del manifest["settings"]["rollout_agent"]
    (folder / MANIFEST).write_text(json.dumps(manifest))
    generate(folder, 2, Rules(), TINY, progress=False)
    assert set(read_manifest(folder)["shards"]) == {"0", "1"}
    with pytest.raises(TeacherDataError, match="settings.rollout_agent"):
        generate(folder, 3, Rules(), dataclasses.replace(TINY, rollout_agent="heuristic"), progress=False)


def test_a_shard_is_a_pure_function_of_settings_and_index():
    player = ShardPlayer(Rules(), TINY)
    first, again = player.play_shard(1), player.play_shard(1)
    for key in first:
        np.testing.assert_array_equal(first[key], again[key])
    other = player.play_shard(2)
    assert not np.array_equal(first["phase"], other["phase"]) or not np.array_equal(first["values"], other["values"])
    legal = np.unpackbits(first["mask_bits"], axis=1, count=player.engine.num_actions).astype(bool)
    assert np.array_equal(np.isfinite(first["values"]), legal)
    assert (legal.sum(axis=1) > 1).all()
    assert legal[np.arange(legal.shape[0]), first["action"]].all()


def test_a_shard_is_the_data_it_was_before_the_play_loop_moved():
    data = ShardPlayer(Rules(), TINY).play_shard(0)
    digest = hashlib.sha256()
    for key in sorted(data):
        digest.update(key.encode())
        digest.update(np.ascontiguousarray(data[key]).tobytes())
    assert (digest.hexdigest()[:24], data["phase"].size) == ("bfc6342dd50294f090ce60d4", 99)


@pytest.mark.parametrize("label, labeller", [("rollout", "rollout_bot"), ("search", "search_bot")])
def test_a_shard_reseeds_every_bot_through_its_reseed(label, labeller, monkeypatch):
    settings = dataclasses.replace(TINY, label=label, rollout_agent="heuristic", search_agent="search:worlds=2")
    player = ShardPlayer(Rules(), settings)
    called = []
    roles = [("behaviour", b) for b in player.bots] + [("oracle", player.oracle), ("pimc", player.pimc), (label, getattr(player, labeller))]
    for role, bot in roles:
        monkeypatch.setattr(bot, "reseed", lambda seed, role=role, inner=bot.reseed: (called.append(role), inner(seed))[1])
    player.reseed(0)
    assert sorted(called) == sorted(["behaviour"] * len(player.bots) + ["oracle", "pimc", label])


def test_the_default_behaviour_needs_no_experiment_file():
    specs = [spec for spec, _ in parse_weighted(TeacherSettings().behaviour, "behaviour")]
    assert all(":" not in spec for spec in specs)
    data = ShardPlayer(Rules(), dataclasses.replace(TeacherSettings(), games_per_shard=2)).play_shard(0)
    assert data["phase"].size > 0


def test_shards_round_trip_with_their_manifest_and_resume(tmp_path):
    folder = tmp_path / "data"
    manifest = generate(folder, 2, Rules(), TINY, progress=False)
    assert set(manifest["shards"]) == {"0", "1"}
    engine = Engine()
    data = load(folder, engine)
    assert len(data) == sum(manifest["shards"].values())
    player = ShardPlayer(Rules(), TINY)
    direct = [player.play_shard(k) for k in (0, 1)]
    obs = np.concatenate([np.unpackbits(d["obs_bits"], axis=1, count=engine.observation_size) for d in direct])
    np.testing.assert_array_equal(data.observations(np.arange(len(data))), obs.astype(np.float32))
    np.testing.assert_array_equal(data.arrays["values"], np.concatenate([d["values"] for d in direct]))
    stamp = shard_path(folder, 0).stat().st_mtime_ns
    generate(folder, 3, Rules(), TINY, progress=False)  # resume: only shard 2 is new
    assert shard_path(folder, 0).stat().st_mtime_ns == stamp
    assert set(read_manifest(folder)["shards"]) == {"0", "1", "2"}


def test_worker_count_does_not_change_the_files(tmp_path):
    generate(tmp_path / "one", 2, Rules(), TINY, workers=1, progress=False)
    generate(tmp_path / "two", 2, Rules(), TINY, workers=2, progress=False)
    for k in range(2):
        with np.load(shard_path(tmp_path / "one", k)) as a, np.load(shard_path(tmp_path / "two", k)) as b:
            for key in a.files:
                np.testing.assert_array_equal(a[key], b[key])


def test_data_of_other_rules_or_settings_is_refused(tmp_path):
    folder = tmp_path / "data"
    generate(folder, 1, Rules(), TINY, progress=False)
    before = (folder / MANIFEST).read_text()
    with pytest.raises(TeacherDataError, match="rules.stick_the_dealer"):
        generate(folder, 2, Rules(stick_the_dealer=False), TINY, progress=False)
    with pytest.raises(TeacherDataError, match="settings.epsilon"):
        generate(folder, 2, Rules(), dataclasses.replace(TINY, epsilon=0.5), progress=False)
    assert (folder / MANIFEST).read_text() == before and not shard_path(folder, 1).exists()
    with pytest.raises(TeacherDataError, match="rules.deck"):
        load(folder, Engine(Rules(deck=32)))
    manifest = json.loads(before)
    manifest["observation"]["observation_size"] += 1
    (folder / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(TeacherDataError, match="observation layout"):
        load(folder, Engine())
    with pytest.raises(TeacherDataError, match="is missing"):
        load(tmp_path / "nothing", Engine())


@pytest.mark.parametrize(
    "change, message",
    [({"label": "dd"}, "label"), ({"epsilon": 2.0}, "epsilon"), ({"behaviour": "heuristic"}, "NAME=NUMBER"),
     ({"bid_share": 1.5}, "bid_share")],
)
def test_bad_settings_name_the_problem(change, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(TINY, **change)


def test_pimc_labels_are_pimcs_own_action_values():
    settings = dataclasses.replace(TINY, label="pimc", pimc_worlds=4, games_per_shard=2)
    player = ShardPlayer(Rules(), settings)
    data = player.play_shard(0)
    again = player.play_shard(0)
    np.testing.assert_array_equal(data["values"], again["values"])
    legal = np.unpackbits(data["mask_bits"], axis=1, count=player.engine.num_actions).astype(bool)
    assert np.array_equal(np.isfinite(data["values"]), legal)
    obs = np.unpackbits(data["obs_bits"], axis=1, count=player.engine.observation_size).astype(np.float32)
    player.reseed(0)  # the first step labels both games' first bids, with pimc's streams as reseeded
    direct = player.pimc.action_values(obs[:2], legal[:2])
    np.testing.assert_array_equal(direct.astype(np.float16), data["values"][:2])


def test_search_labels_are_the_search_bot_s_own_action_values():
    settings = dataclasses.replace(TINY, label="search", search_agent="search:worlds=2,candidates=2", games_per_shard=2)
    player = ShardPlayer(Rules(), settings)
    data = player.play_shard(0)
    np.testing.assert_array_equal(data["values"], player.play_shard(0)["values"])
    true = ShardPlayer(Rules(), dataclasses.replace(settings, label="true")).play_shard(0)
    np.testing.assert_array_equal(data["action"], true["action"])  # the labeller does not change the hands played
    legal = np.unpackbits(data["mask_bits"], axis=1, count=player.engine.num_actions).astype(bool)
    assert np.array_equal(np.isfinite(data["values"]), legal)
    assert np.nanmax(np.abs(data["values"].astype(np.float64))) <= 4
    obs = np.unpackbits(data["obs_bits"], axis=1, count=player.engine.observation_size).astype(np.float32)
    player.reseed(0)  # the first step labels both games' first bids, with the search bot's stream as reseeded
    direct = player.search_bot.action_values(obs[:2], legal[:2])
    np.testing.assert_array_equal(direct.astype(np.float16), data["values"][:2])


def test_teacher_regret_scores_another_labelling_of_the_same_decisions(tmp_path, capsys):
    """benchmarks/teacher_regret.py --other-labels: the other folder's best action, judged by the data's values."""
    from conftest import load_script

    bench = load_script("benchmarks/teacher_regret.py")
    rollout = dataclasses.replace(TINY, label="rollout", rollout_agent="heuristic", games_per_shard=4)
    for name, settings in (("true", dataclasses.replace(rollout, label="true")), ("rollout", rollout),
                           ("other_seed", dataclasses.replace(rollout, seed=4))):
        generate(tmp_path / name, 2, Rules(), settings, progress=False)
    folder = str(tmp_path / "true")
    assert bench.main([folder, "random", "--shards", "2", "--other-labels", folder, str(tmp_path / "rollout")]) == 0
    lines = capsys.readouterr().out.splitlines()
    itself, other = lines[-2], lines[-1]
    assert itself.startswith(f"labels of {folder}: regret 0.0000") and "the same best action in 100.0%" in itself
    assert itself.endswith("values 0.000 points apart on average")
    true, labels = load(folder, Engine()), load(tmp_path / "rollout", Engine())
    values, others = (d.arrays["values"].astype(np.float64) for d in (true, labels))
    regret = np.nanmax(values, axis=1) - values[np.arange(len(true)), np.nanargmax(others, axis=1)]
    assert other.startswith(f"labels of {tmp_path / 'rollout'}: regret {regret.mean():.4f} points per decision")
    assert bench.main([folder, "random", "--shards", "2", "--other-labels", str(tmp_path / "other_seed")]) == 2
    assert "holds other decisions than the data's shards 0-1" in capsys.readouterr().err
    assert bench.main([folder, "random", "--other-labels", str(tmp_path / "nowhere")]) == 2
    assert f"--other-labels {tmp_path / 'nowhere'} is not a folder" in capsys.readouterr().err
