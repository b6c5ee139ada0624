"""evaluate.py and its modules: duplicate deals, intervals, reproducibility across worker counts, ratings, files and the CLI."""

from __future__ import annotations

import csv
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import evaluate
from conftest import SUBPROCESS_TIMEOUT, load_script, random_play
from euchre_agents.base import Agent, RandomAgent, file_sha256
from euchre_agents.registry import make_agent, register
from euchre_env.engine import Engine
from euchre_env.play import play
from euchre_env.rules import Rules
from euchre_lab.evaluation.estimates import Estimate, ratio_estimate, running_ratio_estimate, two_sided_p
from euchre_lab.evaluation.journal import JournalError
from euchre_lab.evaluation.match import bot_seed, check_bots, deal_duplicates, mode_and_pairs, pair_outcomes, play_match
from euchre_lab.evaluation.match_result import MatchResult
from euchre_lab.evaluation.ratings import ELO_MEAN, fit_against, fit_bradley_terry, round_robin
from euchre_lab.evaluation.report import save_match, save_tournament

ROOT = Path(__file__).resolve().parents[1]


class FirstLegalAgent(Agent):
    """Deterministic: the lowest legal action id. Two copies facing each other replay a deal exactly."""

    name = "test_first_legal"

    def act(self, obs, mask, state=None, rows=None):
        return np.argmax(np.asarray(mask, bool), axis=1)


class SeatSpy(RandomAgent):
    """Random, but records the seat it acted for in each row (it asks for the full state to see it)."""

    name = "test_seat_spy"
    needs_full_state = True
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def act(self, obs, mask, state=None, rows=None):
        SeatSpy.seen.append((rows.copy(), state.to_play[rows].copy()))
        return super().act(obs, mask)


class PeekingAgent(RandomAgent):
    """Stands in for the oracle: flagged unfair, so it is played and reported but never ranked."""

    name = "test_peeking"
    fair = False


class ReseedSpy(RandomAgent):
    """Random, and records every seed it is given through the public `reseed`."""

    name = "test_reseed_spy"
    seeds: list[int] = []

    def reseed(self, seed):
        ReseedSpy.seeds.append(seed)
        super().reseed(seed)


register("test_first_legal", lambda engine, arg, seed: FirstLegalAgent(engine, seed))
register("test_seat_spy", lambda engine, arg, seed: SeatSpy(engine, seed))
register("test_peeking", lambda engine, arg, seed: PeekingAgent(engine, seed))


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "evaluate.py"), *args], cwd=cwd, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT
    )


def test_cli_match_writes_json_csv_and_plots(tmp_path):
    out = tmp_path / "match"
    done = run_cli("random", "random", "--hands", "40", "--chunk", "8", "--workers", "1", "--seed", "3",
                   "--out", str(out), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "margin per hand" in done.stdout
    summary = json.loads((out / "match.json").read_text())["match"]
    assert (summary["a"], summary["b"], summary["pairs"], summary["hands"]) == ("random", "random", 20, 40)
    low, high = summary["margin_per_hand"]["low"], summary["margin_per_hand"]["high"]
    assert low <= summary["margin_per_hand"]["value"] <= high
    with open(out / "pairs.csv") as f:
        pairs = list(csv.DictReader(f))
    assert len(pairs) == 20 and sum(int(p["hands"]) for p in pairs) == 40
    assert (out / "match.csv").read_text().count("\n") == 2
    assert (out / "margin.png").stat().st_size > 1000


def test_round_robin_command_with_config_rules_and_games(tmp_path):
    out = tmp_path / "rr"
    code = evaluate.main(["--config", str(ROOT / "configs" / "tournament.yaml"), "--round-robin", "random", "random:b",
                          "--games", "6", "--rules", "target_points=3", "--workers", "1", "--bootstrap", "20",
                          "--out", str(out), "--no-progress"])
    assert code == 0
    data = json.loads((out / "tournament.json").read_text())
    assert data["config"]["rules"]["target_points"] == 3
    (match,) = data["matches"]
    assert match["mode"] == "games" and match["games"] == 6 and match["win_rate_a"] is not None
    assert len(data["ratings"]["table"]) == 2 and data["ratings"]["outcome"] == "games"
    for name in ("matches.csv", "ratings.csv", "pairs.csv", "ratings.png", "head_to_head.png"):
        assert (out / name).stat().st_size > 0, name


def test_self_play_margin_interval_contains_zero():
    match = play_match(None, "random", "random", hands=2000, seed=11)
    m = match.margin_per_hand
    assert m.low < 0 < m.high and not match.significant
    assert match.num_hands == 2000 and match.num_pairs == 1000
    assert m.value == pytest.approx(match.points_per_hand_a.value - match.points_per_hand_b.value)


def test_results_identical_for_one_and_two_workers_and_reproducible():
    kwargs = dict(hands=240, seed=5, chunk=30)
    one = play_match(None, "random", "random:other", workers=1, **kwargs)
    two = play_match(None, "random", "random:other", workers=2, **kwargs)
    again = play_match(None, "random", "random:other", workers=1, **kwargs)
    other_seed = play_match(None, "random", "random:other", workers=1, **{**kwargs, "seed": 6})
    for field in ("keys", "a_points", "b_points", "hands"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field))
        np.testing.assert_array_equal(getattr(one, field), getattr(again, field))
    assert not np.array_equal(one.keys, other_seed.keys)


def test_games_mode_reproduces_and_plays_to_the_target():
    kwargs = dict(games=16, seed=2, chunk=3)
    one = play_match(Rules(target_points=5), "random", "random:x", **kwargs)
    again = play_match(Rules(target_points=5), "random", "random:x", **kwargs)
    np.testing.assert_array_equal(one.a_wins, again.a_wins)
    np.testing.assert_array_equal(one.a_points, again.a_points)
    assert set(np.unique(one.a_wins)) <= {0, 1, 2} and one.win_rate_a is not None
    assert (one.a_points + one.b_points >= 2 * 5).all()  # both games of a pair went to the target


def test_swapped_seats_see_the_same_deals():
    engine = Engine()
    keys = np.arange(1, 9, dtype=np.uint64) * np.uint64(7919)
    state, a_team = deal_duplicates(engine, keys)
    m = keys.size
    np.testing.assert_array_equal(state.dealt[:m], state.dealt[m:])
    np.testing.assert_array_equal(state.upcard[:m], state.upcard[m:])
    np.testing.assert_array_equal(state.dealer[:m], state.dealer[m:])
    np.testing.assert_array_equal(a_team, [0] * m + [1] * m)


def test_mirrored_games_replay_exactly_with_a_deterministic_bot():
    """Two copies of one deterministic bot: each mirrored pair is the same game twice, so every margin is 0."""
    for mode in ({"hands": 100}, {"games": 20}):
        match = play_match(None, "test_first_legal", "test_first_legal", seed=4, **mode)
        np.testing.assert_array_equal(match.a_points, match.b_points)
        assert match.margin_per_hand.value == 0 and match.margin_per_hand.se == 0 and not match.significant


def test_a_sits_at_seats_0_and_2_then_1_and_3():
    SeatSpy.seen.clear()
    play_match(None, "test_seat_spy", "random", hands=20, seed=1)
    m = 10
    rows = np.concatenate([r for r, _ in SeatSpy.seen])
    seats = np.concatenate([s for _, s in SeatSpy.seen])
    assert (seats[rows < m] % 2 == 0).all() and (seats[rows >= m] % 2 == 1).all()
    assert (rows < m).any() and (rows >= m).any()


def test_unknown_bot_gives_a_clear_error(capsys):
    with pytest.raises(ValueError, match="unknown agent 'no_such_bot'.*known agents: .*random"):
        play_match(None, "no_such_bot", "random", hands=10)
    assert evaluate.main(["no_such_bot", "random", "--hands", "10", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'no_such_bot'" in err and "Traceback" not in err


def test_bad_options_give_clear_errors(capsys):
    assert evaluate.main(["random", "random", "--rules", "no_such_rule=1"]) == 2
    assert "no_such_rule" in capsys.readouterr().err
    assert evaluate.main(["random"]) == 2
    assert "exactly two bots" in capsys.readouterr().err
    with pytest.raises(ValueError, match="either hands or games"):
        play_match(None, "random", "random", hands=10, games=10)


def test_config_file_then_command_line(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("bots: [random, random]\nhands: 50\nseed: 9\nrules: {deck: 32, target_points: 7}\n")
    args = evaluate.parse_args(["--config", str(config), "--rules", "target_points=5", "--games", "8"])
    assert args.bots == ["random", "random"] and args.seed == 9
    assert (args.hands, args.games) == (None, 8)
    assert args.rules == {"deck": 32, "target_points": 5}
    args = evaluate.parse_args(["--config", str(config), "--round-robin", "random", "random:b", "--rules", "{joker: true}"])
    assert args.bots == [] and args.round_robin == ["random", "random:b"]
    assert args.rules == {"deck": 32, "target_points": 7, "joker": True}


def test_agent_instances_play_in_process_and_reproduce():
    engine = Engine(Rules())
    one = play_match(engine, RandomAgent(engine, 0), "random", hands=60, seed=2, workers=2, chunk=10)
    two = play_match(engine, RandomAgent(engine, 99), "random", hands=60, seed=2, chunk=10)
    np.testing.assert_array_equal(one.a_points, two.a_points)
    with pytest.raises(ValueError, match="other rules"):
        play_match(Rules(deck=32), RandomAgent(engine, 0), "random", hands=10)


def test_an_agent_instance_is_reseeded_through_reseed_once_per_chunk():
    engine = Engine()
    spy = ReseedSpy(engine, 0)
    ReseedSpy.seeds.clear()
    play_match(engine, spy, "random", hands=40, seed=2, chunk=10)
    assert ReseedSpy.seeds == [bot_seed(2, spy, 0, c) for c in range(2)]
    assert len(set(ReseedSpy.seeds)) == 2


def test_round_robin_ranks_fair_bots_only_and_matches_standalone_play():
    tournament = round_robin(
        None, ["random", "test_first_legal", "test_peeking"], hands=200, seed=3, bootstrap=30
    )
    table = {row["bot"]: row for row in tournament.ratings.table()}
    assert table["test_peeking"]["rank"] is None and not table["test_peeking"]["fair"]
    assert sorted(row["rank"] for row in table.values() if row["fair"]) == [1, 2]
    fair = [r["rating"] for r in table.values() if r["fair"]]
    assert np.mean(fair) == pytest.approx(ELO_MEAN)
    assert all(r["low"] <= r["rating"] <= r["high"] for r in table.values())
    alone = play_match(None, "random", "test_peeking", hands=200, seed=3)
    inside = next(m for m in tournament.matches if (m.a, m.b) == ("random", "test_peeking"))
    np.testing.assert_array_equal(alone.a_points, inside.a_points)
    value, half = tournament.margins()
    np.testing.assert_allclose(value, -value.T)


def test_bradley_terry_recovers_known_ratings():
    truth = np.array([-200.0, 0.0, 50.0, 150.0])
    p = 1 / (1 + 10 ** ((truth[None, :] - truth[:, None]) / 400))
    wins = 1e6 * p
    np.fill_diagonal(wins, 0)
    np.testing.assert_allclose(fit_bradley_terry(wins, prior=0), truth - truth.mean(), atol=1e-6)
    assert fit_against(wins[3, :3], wins[:3, 3], truth[:3], prior=0) == pytest.approx(150.0, abs=1e-6)
    sweep = np.array([[0, 50, 50], [0, 0, 30], [0, 20, 0]], float)
    assert np.isfinite(fit_bradley_terry(sweep)).all()


def test_ratio_estimate_is_the_mean_and_its_standard_error_for_equal_units():
    y = np.array([1.0, -2.0, 4.0, 0.0, 3.0])
    e = ratio_estimate(y, np.ones_like(y))
    assert e.value == pytest.approx(y.mean())
    assert e.se == pytest.approx(y.std(ddof=1) / np.sqrt(y.size))
    assert e.high - e.value == pytest.approx(1.959964 * e.se, rel=1e-6)


PAIR_MARGINS = np.array([3.0, -1.0, 4.0, 0.0])
PAIR_HANDS = np.array([4.0, 2.0, 6.0, 4.0])
"""Four duplicate pairs of a games-mode match: A's margin in points and the hands played, unequal per pair."""


def test_ratio_estimate_weighs_unequal_units_by_their_hands():
    e = ratio_estimate(PAIR_MARGINS, PAIR_HANDS)
    # 6 points over 16 hands; residuals y - 0.375 x = (1.5, -1.75, 1.75, -1.5), their squares sum to 10.625
    assert e.value == 0.375
    assert e.se == pytest.approx(math.sqrt(4 / 3 * 10.625) / 16, rel=1e-12)
    assert e.se == pytest.approx(0.2352414539715878, rel=1e-12)
    assert (e.low, e.high) == pytest.approx((0.375 - 1.959963984540054 * e.se, 0.375 + 1.959963984540054 * e.se), rel=1e-12)
    assert e.value != pytest.approx(np.mean(PAIR_MARGINS / PAIR_HANDS))  # not the mean of per-pair rates


def test_a_games_mode_result_has_the_hand_computed_intervals_and_p_value():
    a_points, b_points = np.array([5, 2, 7, 3]), np.array([2, 3, 3, 3])
    result = MatchResult("a", "b", "games", 0, 1, {}, np.arange(4, dtype=np.uint64), a_points, b_points,
                         PAIR_HANDS.astype(np.int64), np.array([2, 0, 2, 1]))
    assert result.margin_per_hand.value == 0.375 and result.num_hands == 16
    assert result.margin_per_hand.se == pytest.approx(0.2352414539715878, rel=1e-12)
    assert result.p_value == pytest.approx(0.1109121174865888, rel=1e-9) and not result.significant
    assert result.points_per_hand_a.value == 17 / 16
    share = result.point_share_a  # 17 of 28 points: residuals 5 - 17/28 * 7, ... per pair
    residual = a_points - 17 / 28 * (a_points + b_points)
    assert share.value == 17 / 28 and share.se == pytest.approx(math.sqrt(4 / 3 * residual @ residual) / 28, rel=1e-12)
    win = result.win_rate_a  # 5 games of 8; residuals (0.75, -1.25, 0.75, -0.25)
    assert win.value == 0.625 and win.se == pytest.approx(math.sqrt(4 / 3 * 2.75) / 8, rel=1e-12)
    assert win.low == pytest.approx(0.625 - 1.959963984540054 * win.se, rel=1e-12) and win.high == 1.0  # clipped at 1


def test_a_real_games_mode_match_weighs_pairs_by_their_hands():
    match = play_match(Rules(target_points=5), "heuristic", "random", games=24, seed=8, chunk=4)
    assert np.unique(match.hands).size > 1  # the pairs played different numbers of hands
    y, x = (match.a_points - match.b_points).astype(float), match.hands.astype(float)
    r = y.sum() / x.sum()
    n = y.size
    assert match.margin_per_hand.value == pytest.approx(r, rel=1e-12)
    assert match.margin_per_hand.se == pytest.approx(np.sqrt(n / (n - 1) * np.sum((y - r * x) ** 2)) / x.sum(), rel=1e-12)


def test_two_sided_p_value_of_known_z_scores():
    assert two_sided_p(Estimate(0.5, 0.25, 0.0, 1.0)) == pytest.approx(0.04550026389635842, rel=1e-12)  # z = 2
    assert two_sided_p(Estimate(-0.5, 0.25, -1.0, 0.0)) == pytest.approx(0.04550026389635842, rel=1e-12)
    assert two_sided_p(Estimate(1.959963984540054, 1.0, 0.0, 4.0)) == pytest.approx(0.05, rel=1e-12)
    assert two_sided_p(Estimate(0.0, 0.0, 0.0, 0.0)) == 1.0 and two_sided_p(Estimate(0.1, 0.0, 0.1, 0.1)) == 0.0


def test_running_estimate_matches_the_estimate_of_every_prefix():
    value, se = running_ratio_estimate(PAIR_MARGINS, PAIR_HANDS)
    # the first two pairs: 2 points over 6 hands, residuals (5/3, -5/3), se sqrt(2 * 50/9) / 6 = 5/9
    assert value[1] == pytest.approx(1 / 3, rel=1e-12) and se[1] == pytest.approx(5 / 9, rel=1e-12)
    assert se[0] == 0
    for k in range(2, PAIR_MARGINS.size + 1):
        e = ratio_estimate(PAIR_MARGINS[:k], PAIR_HANDS[:k])
        assert (value[k - 1], se[k - 1]) == pytest.approx((e.value, e.se), rel=1e-12)


def test_game_winner_is_the_team_that_reached_the_target():
    engine = Engine(Rules(target_points=3), episode="game")
    state = engine.init(np.arange(1, 41, dtype=np.uint64))
    assert (engine.game_winner(state) == -1).all()
    for _ in random_play(engine, state, np.random.default_rng(0)):
        pass
    winner, games = engine.game_winner(state), np.arange(state.num_games)
    assert set(np.unique(winner)) == {0, 1}
    assert (state.score[games, winner] >= 3).all() and (state.score[games, 1 - winner] < 3).all()
    assert (Engine().game_winner(Engine().init(np.arange(1, 5, dtype=np.uint64))) == -1).all()


def test_who_named_trump_is_counted_from_the_bids_each_side_made():
    """The hands-mode breakdown against the bids seen at the table: a side named trump where it chose a suit,
    went alone where it chose "alone"; the margins on each side's calls add up to the match's margin."""
    engine = Engine(Rules(stick_the_dealer=False))   # some deals are thrown in: neither side named
    keys = np.arange(1, 201, dtype=np.uint64) * np.uint64(7919)
    state, a_team = deal_duplicates(engine, keys)
    seat_bot = np.where(np.arange(4)[None, :] % 2 == a_team[:, None], 0, 1)
    suits = np.arange(engine.pass_action + 1, engine.pass_action + 5)
    named, alone = np.zeros((2, a_team.size), bool), np.zeros((2, a_team.size), bool)

    def watch(bot_index, rows, obs, mask, actions):
        named[bot_index, rows] |= np.isin(actions, suits)
        alone[bot_index, rows] |= actions == engine.alone_action

    bots = [make_agent("heuristic", engine, seed=1), make_agent("random", engine, seed=2)]
    points = play(engine, state, bots, seat_bot, on_decision=watch)
    out = pair_outcomes(engine, state, points, a_team)
    m = keys.size
    for side, bot in (("a", 0), ("b", 1)):
        np.testing.assert_array_equal(out[f"{side}_named"], named[bot, :m].astype(int) + named[bot, m:])
        np.testing.assert_array_equal(out[f"{side}_alone"], alone[bot, :m].astype(int) + alone[bot, m:])
        assert (out[f"{side}_euchred"] + out[f"{side}_march"] <= out[f"{side}_named"]).all()
    assert 0 < (out["a_named"] + out["b_named"]).sum() < 2 * m and out["b_alone"].sum() and out["b_euchred"].sum()
    np.testing.assert_array_equal(out["a_named_margin"] + out["b_named_margin"], out["a_points"] - out["b_points"])
    games = np.arange(a_team.size)
    maker_points = points[games, state.maker % 2]
    marched = (state.maker >= 0) & (state.tricks_won[games, state.maker % 2] == 5)
    assert (maker_points[marched] >= 2).all() and marched.any()


def test_a_hands_match_reports_where_its_margin_comes_from(tmp_path):
    match = play_match(None, "heuristic", "random", hands=400, seed=3)
    a, b = match.when_named("a"), match.when_named("b")
    assert a["margin"].value + b["margin"].value == pytest.approx(match.margin_per_hand.value)
    assert a["share"].value + b["share"].value == pytest.approx(1.0)   # stick the dealer: every hand is named
    assert b["euchred"].value > a["euchred"].value   # random calls on anything
    assert "A names trump" in match.report() and "B names trump" in match.report()
    save_match(match, tmp_path, {"bots": ["heuristic", "random"]}, plots=False)
    row = next(csv.DictReader((tmp_path / "pairs.csv").open()))
    assert {"a_named", "b_euchred", "a_named_margin"} <= set(row)
    summary = json.loads((tmp_path / "match.json").read_text())["match"]
    assert summary["when_b_named_euchred"]["value"] == pytest.approx(b["euchred"].value)
    games = play_match(None, "heuristic", "random", games=4, seed=3)
    assert games.when_named("a") is None and games.summary()["when_a_named_margin"] is None


def test_heuristic_beats_random_significantly_and_the_oracle_is_unfair():
    match = play_match(None, "heuristic", "random", hands=200, seed=0)
    assert match.significant and match.margin_per_hand.low > 0
    assert 0.5 < match.point_share_a.value <= match.point_share_a.high <= 1
    assert check_bots(Rules(), ["heuristic", "random", "oracle"]) == [True, True, False]


def test_rules_name_the_results_folder_and_show_in_the_report_and_csv(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    quick = ["--hands", "4", "--workers", "1", "--no-progress", "--no-plots"]
    assert evaluate.main(["random", "random", *quick, "--rules", "deck=32", "joker=true"]) == 0
    assert "  rules              deck=32 joker=true\n" in capsys.readouterr().out
    other = tmp_path / "results" / "random_vs_random_seed0_deck=32_joker=true"
    before = (other / "match.json").read_text()
    assert evaluate.main(["random", "random", *quick]) == 0  # the default rules: a folder of their own
    assert "  rules              default\n" in capsys.readouterr().out
    assert (other / "match.json").read_text() == before
    with open(other / "match.csv") as f:
        assert next(csv.DictReader(f))["rules"] == "deck=32 joker=true"
    with open(tmp_path / "results" / "random_vs_random_seed0" / "match.csv") as f:
        assert next(csv.DictReader(f))["rules"] == "default"
    long = Rules(deck=32, joker=True, stick_the_dealer=False, lone_defender=True, lone_lead="left_of_lone_player")
    assert re.fullmatch(r"_rules-[0-9a-f]{8}", evaluate.rules_slug(long))
    assert evaluate.rules_slug(Rules()) == ""


def test_results_of_another_match_are_kept_unless_overwrite(tmp_path, capsys):
    out = ["--out", str(tmp_path / "m"), "--workers", "1", "--no-progress", "--no-plots"]
    assert evaluate.main(["random", "random", "--hands", "4", *out]) == 0
    assert evaluate.main(["random", "random", "--hands", "4", "--workers", "2", *out[:2], "--no-progress", "--no-plots"]) == 0  # same match
    assert evaluate.main(["random", "random", "--hands", "6", *out]) == 2
    assert "holds the results of another match (hands 4 there, 6 here)" in capsys.readouterr().err
    assert evaluate.main(["random", "random", "--hands", "4", "--rules", "deck=32", *out]) == 2
    assert "rules 'default' there, 'deck=32' here" in capsys.readouterr().err
    assert json.loads((tmp_path / "m" / "match.json").read_text())["config"]["hands"] == 4
    assert evaluate.main(["random", "random", "--hands", "6", "--overwrite", *out]) == 0
    assert json.loads((tmp_path / "m" / "match.json").read_text())["config"]["hands"] == 6


def test_a_stopped_match_continues_from_its_finished_chunks(tmp_path):
    kwargs = dict(hands=120, seed=4, chunk=10)
    whole = play_match(None, "random", "random:other", **kwargs)
    chunks = tmp_path / "chunks"
    play_match(None, "random", "random:other", journal=chunks, **kwargs)
    files = sorted(chunks.glob("match*_chunk*.npz"))
    assert len(files) == 6
    for later in files[3:]:  # as if stopped after three chunks
        later.unlink()
    with np.load(files[0]) as saved:
        marked = {k: saved[k] for k in saved.files}
    marked["a_points"] = marked["a_points"] + 100  # a chunk read back is not played again
    np.savez(files[0], **marked)
    again = play_match(None, "random", "random:other", journal=chunks, **kwargs)
    np.testing.assert_array_equal(again.a_points[:10], whole.a_points[:10] + 100)
    np.testing.assert_array_equal(again.a_points[10:], whole.a_points[10:])
    np.testing.assert_array_equal(again.b_points, whole.b_points)
    with pytest.raises(ValueError, match="journal needs bots given as specs"):
        play_match(None, FirstLegalAgent(Engine(), 0), "random", journal=tmp_path / "agents", **kwargs)


def test_evaluate_py_continues_a_stopped_match_and_refuses_another_match_s_chunks(tmp_path, capsys, monkeypatch):
    out = tmp_path / "m"
    common = ["random", "random", "--hands", "40", "--chunk", "5", "--workers", "1", "--out", str(out), "--no-progress", "--no-plots"]
    fresh = play_match(None, "random", "random", hands=40, seed=1, chunk=5)

    def stopped_after_the_chunks(*args, **kwargs):
        play_match(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "play_match", stopped_after_the_chunks)
    assert evaluate.main([*common, "--seed", "1"]) == 130
    assert "interrupted; 4 finished chunks are kept" in capsys.readouterr().err
    monkeypatch.undo()
    with pytest.raises(JournalError, match=r"another match \(other seed\)"):
        play_match(None, "random", "random", hands=40, seed=2, chunk=5, journal=out / "chunks")
    assert evaluate.main([*common, "--seed", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds the finished chunks of another match (other seed)" in err
    assert not (out / "match.json").exists()
    assert evaluate.main([*common, "--seed", "1"]) == 0
    assert "4 chunks read back from a stopped run" in capsys.readouterr().out
    assert not (out / "chunks").exists()
    with open(out / "pairs.csv") as f:
        assert [float(p["a_points"]) for p in csv.DictReader(f)] == fresh.a_points.tolist()
    play_match(None, "random", "random", hands=40, seed=1, chunk=5, journal=out / "chunks")  # a stopped run's chunks
    assert evaluate.main([*common, "--seed", "2", "--overwrite"]) == 0
    assert json.loads((out / "match.json").read_text())["config"]["seed"] == 2 and not (out / "chunks").exists()


def test_results_record_the_weights_played_and_refuse_other_weights_under_the_same_spec(tmp_path, capsys):
    from euchre_agents.checkpoint import export_policy

    agent = tmp_path / "agent.pt"
    export_policy(str(ROOT / "checkpoints" / "euchre_ppo.pt"), str(agent))
    spec, first = f"ppo:{agent}", file_sha256(agent)
    out = ["--out", str(tmp_path / "rr"), "--hands", "4", "--chunk", "2", "--bootstrap", "5", "--workers", "2", "--no-progress", "--no-plots"]
    assert evaluate.main(["--round-robin", spec, "random", *out]) == 0
    held = json.loads((tmp_path / "rr" / "tournament.json").read_text())
    assert held["config"]["weights_sha256"] == {spec: first} == held["matches"][0]["weights_sha256"]
    with open(tmp_path / "rr" / "matches.csv") as f:
        assert [(r["weights_sha256_a"], r["weights_sha256_b"]) for r in csv.DictReader(f)] == [(first, "")]
    pairs = (tmp_path / "rr" / "pairs.csv").read_bytes()
    assert evaluate.main(["--round-robin", spec, "random", *out]) == 0  # the same weights: the same match, rewritten
    held = json.loads((tmp_path / "rr" / "tournament.json").read_text())
    export_policy(str(ROOT / "checkpoints" / "euchre_ppo.pt"), str(agent), hidden_size=520)  # other weights, same path
    second = file_sha256(agent)
    capsys.readouterr()
    assert evaluate.main(["--round-robin", spec, "random", *out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"({spec} played weights sha256 {first} there and plays {second} here); pass --out DIR or --overwrite" in err
    assert json.loads((tmp_path / "rr" / "tournament.json").read_text()) == held and (tmp_path / "rr" / "pairs.csv").read_bytes() == pairs
    assert evaluate.main(["--round-robin", spec, "random", "--overwrite", *out]) == 0
    assert json.loads((tmp_path / "rr" / "tournament.json").read_text())["config"]["weights_sha256"] == {spec: second}


def test_a_match_of_bots_without_weights_records_none():
    match = play_match(None, "heuristic", "random", hands=4, seed=0)
    assert match.weights == {} and match.summary()["weights_sha256"] == {}


def test_hands_and_games_are_even_counts_of_mirrored_pairs():
    assert mode_and_pairs(8, None) == ("hands", 4) and mode_and_pairs(None, 2) == ("games", 1)
    for hands, fix in ((7, "; give 6 or 8"), (1, ""), (0, ""), (2.0, "")):
        with pytest.raises(ValueError, match=f"hands must be an even number of at least 2 .*, got {hands!r}{re.escape(fix)}$"):
            mode_and_pairs(hands, None)
    with pytest.raises(ValueError, match="games must be an even number"):
        play_match(None, "random", "random", games=3)


def test_plot_titles_name_the_rules(tmp_path, monkeypatch):
    import matplotlib.axes
    import matplotlib.figure

    titles = []
    monkeypatch.setattr(matplotlib.axes.Axes, "set_title", lambda self, text, *a, **k: titles.append(text))
    monkeypatch.setattr(matplotlib.figure.Figure, "suptitle", lambda self, text, *a, **k: titles.append(text))
    rules = Rules(target_points=5)
    tournament = round_robin(rules, ["random", "test_first_legal"], hands=4, bootstrap=5)
    save_tournament(tournament, tmp_path / "rr", {})
    save_match(tournament.matches[0], tmp_path / "m", {})
    assert len(titles) == 3 and all(t.endswith("\nrules: target_points=5") for t in titles), titles


def test_presets_are_read_by_one_reader_that_falls_back_to_the_bundled_presets(tmp_path, monkeypatch):
    from euchre_lab.cli import OptionError
    from euchre_lab.presets import read_preset
    from euchre_lab.training.train_options import read_config

    monkeypatch.chdir(tmp_path)  # an installed tool run from another folder
    tournament = yaml.safe_load((ROOT / "configs" / "tournament.yaml").read_text())
    assert read_preset("configs/tournament.yaml", "x") == read_preset("tournament.yaml", "x") == tournament
    assert read_config("configs/ppo_tiny.yaml")["num_envs"] == yaml.safe_load((ROOT / "configs" / "ppo_tiny.yaml").read_text())["num_envs"]
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ValueError, match="binary.yaml is not a text file; pass a YAML preset"):
        read_preset("binary.yaml", "x")
    with pytest.raises(OptionError, match="binary.yaml is not a text file"):
        read_config("binary.yaml")
    with pytest.raises(ValueError, match="config file 'none.yaml' not found; pass --config with a YAML preset such as configs/x.yaml"):
        read_preset("none.yaml", "configs/x.yaml")


def load_paired_difference():
    """benchmarks/paired_difference.py as a module."""
    return load_script("benchmarks/paired_difference.py")


def test_paired_difference_compares_two_bots_on_the_same_deals(tmp_path):
    """benchmarks/paired_difference.py: the difference of two margins against one opponent, pair by pair."""
    paired = load_paired_difference()
    for a, seed in (("heuristic", 3), ("random", 3), ("random", 4)):
        match = play_match(Rules(), a, "random", hands=40, seed=seed, chunk=8)
        save_match(match, tmp_path / f"{a}_{seed}", {}, plots=False)
    first, second, difference, pairs, _, split = paired.paired_difference(tmp_path / "heuristic_3", tmp_path / "random_3")
    on_a_calls, on_b_calls = split
    assert pairs == 20
    assert difference.value == pytest.approx(first.value - second.value)
    assert difference.low < difference.value < difference.high
    assert on_a_calls.value + on_b_calls.value == pytest.approx(difference.value)
    with pytest.raises(ValueError, match="differ in seed"):
        paired.paired_difference(tmp_path / "heuristic_3", tmp_path / "random_4")
    with pytest.raises(ValueError, match="is not a match folder of evaluate.py"):
        paired.paired_difference(tmp_path / "heuristic_3", tmp_path / "none")


def write_match_folder(folder: Path, margins: list[int], hands: list[int]) -> None:
    """A match folder as evaluate.py writes it, against opponent "b" on keys 1, 2, ...: A's margins per pair."""
    folder.mkdir()
    (folder / "match.json").write_text(json.dumps({"match": {"b": "b", "mode": "hands", "seed": 0, "rules": {}}}))
    rows = [{"key": k + 1, "a_points": max(m, 0), "b_points": max(-m, 0), "hands": h} for k, (m, h) in enumerate(zip(margins, hands))]
    with open(folder / "pairs.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_paired_difference_has_the_standard_error_of_the_per_pair_differences(tmp_path):
    paired = load_paired_difference()
    write_match_folder(tmp_path / "one", [2, 0, -1, 3], [2, 2, 2, 2])
    write_match_folder(tmp_path / "two", [1, 1, -2, 0], [2, 2, 2, 2])
    first, second, difference, pairs, correlation, split = paired.paired_difference(tmp_path / "one", tmp_path / "two")
    # differences (1, -1, 1, 3) over 8 hands: 0.5 per hand; residuals (0, -2, 0, 2); se sqrt(4/3 * 8) / 8 = 1/sqrt(6)
    assert pairs == 4 and difference.value == 0.5 and split == []   # folders without the split by who named trump
    assert difference.se == pytest.approx(1 / math.sqrt(6), rel=1e-12)
    assert (first.value, second.value) == (0.5, 0.0)
    assert correlation == pytest.approx(4 / math.sqrt(60), rel=1e-12)
    independent = math.hypot(first.se, second.se)  # what two unpaired matches would give: wider here
    assert difference.se < independent
