"""The scoring protocol: its ladder per task, its headline interval, score.json, and `evaluate.py --task`."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from euchre_env import __version__
from euchre_env.tasks import TASKS
from euchre_lab.evaluation import evaluate, protocol
from euchre_lab.evaluation.estimates import mean_of_ratios, ratio_estimate

USER_CODE = '''
import numpy as np

def uniform(observation, rng=None):
    legal = np.flatnonzero(observation["action_mask"])
    return int(legal[rng.integers(legal.size)])
'''


def test_the_ladder_has_a_learned_rung_only_where_the_task_ships_an_agent():
    import dataclasses

    unlearned = dataclasses.replace(TASKS["joker32-v1"], learned=None, learned_sha256=None, protocol=1)
    standard, joker = protocol.ladder(TASKS["standard-v1"]), protocol.ladder(unlearned)
    assert [r.spec for r in standard] == ["random", "heuristic", "pimc", TASKS["standard-v1"].learned]
    assert [r.name for r in joker if r.headline] == ["heuristic", "pimc"] and not joker[0].headline
    assert "no shipped learned agent yet" in protocol.ladder_note(unlearned)
    assert "no shipped" not in protocol.ladder_note(TASKS["standard-v1"])
    assert all(t.learned == "ppo" for t in TASKS.values())   # every named table ships its agent
    quick = protocol.ladder(TASKS["standard-v1"], quick=True)
    assert [r.pairs * protocol.QUICK_DIVISOR for r in quick] == [r.pairs for r in standard]
    assert protocol.DEVELOPMENT_SEED != protocol.EVALUATION_SEED


def test_the_learned_rung_plays_the_weights_its_protocol_version_pins():
    import dataclasses

    protocol.check_ladder(TASKS["standard-v1"])  # the shipped file is the pinned one
    changed = dataclasses.replace(TASKS["standard-v1"], learned_sha256="0" * 64)
    with pytest.raises(ValueError, match="pins 0{64}: restore those weights, or make a new protocol version"):
        protocol.check_ladder(changed)
    protocol.check_ladder(TASKS["joker32-v1"])


def test_the_headline_interval_counts_the_correlation_of_matches_on_shared_deals():
    rng = np.random.default_rng(0)
    y, x = rng.normal(0.2, 3, 400), np.full(400, 2.0)
    single = ratio_estimate(y, x)
    same = mean_of_ratios([y, y], [x, x])  # the same outcomes twice: no narrower than one match
    assert same.value == pytest.approx(single.value) and same.se == pytest.approx(single.se)
    z = rng.normal(-0.1, 3, 400)
    both = mean_of_ratios([y, z], [x, x])
    explicit = ratio_estimate((y + z) / 2, x)  # equal hands per pair: the mean of the margins pair by pair
    assert both.value == pytest.approx(explicit.value) and both.se == pytest.approx(explicit.se)
    with pytest.raises(ValueError, match="same units"):
        mean_of_ratios([y, z[:10]], [x, x[:10]])


@pytest.fixture
def tiny_protocol(tmp_path, monkeypatch):
    """The protocol with a few pairs per rung, the user's bot in the current folder."""
    (tmp_path / "userbots.py").write_text(USER_CODE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(protocol, "HEADLINE_PAIRS", 40)
    monkeypatch.setattr(protocol, "SANITY_PAIRS", 20)
    monkeypatch.setattr(protocol, "QUICK_DIVISOR", 4)
    monkeypatch.setattr(protocol, "CHUNK", 10)
    return tmp_path


def test_the_score_is_the_same_for_any_number_of_workers(tiny_protocol):
    task = TASKS["no-stick-v1"]
    rungs = protocol.ladder(task)
    scores = []
    for workers in (1, 2):
        matches = protocol.play_ladder(task, "userbots.py:uniform", rungs, protocol.DEVELOPMENT_SEED, workers=workers, say=lambda _: None)
        scores.append(protocol.headline(rungs, matches))
    assert scores[0] == scores[1] and scores[0].value < 0


def test_evaluate_task_writes_score_json_with_what_a_paper_needs(tiny_protocol, capsys):
    out = tiny_protocol / "score"
    argv = ["--task", "standard-v1", "userbots.py:uniform", "--out", str(out), "--workers", "2", "--no-progress"]
    assert evaluate.main(argv) == 0
    record = json.loads((out / "score.json").read_text())
    assert (record["task"], record["protocol"], record["package_version"]) == ("standard-v1", 1, __version__)
    assert record["seed"] == {"value": protocol.EVALUATION_SEED, "kind": "evaluation"} and record["comparable"]
    assert record["score"]["low"] < record["score"]["value"] < record["score"]["high"]
    rungs = {o["rung"]: o for o in record["opponents"]}
    assert list(rungs) == ["random", "heuristic", "pimc", "learned"] and not rungs["random"]["in_score"]
    assert rungs["learned"]["weights_sha256"] and rungs["heuristic"]["weights_sha256"] is None
    assert all(o["pairs"] == 40 for o in record["opponents"] if o["in_score"])
    mean = np.mean([o["margin"]["value"] for o in record["opponents"] if o["in_score"]])
    assert record["score"]["value"] == pytest.approx(mean)
    assert len(record["scored"]["file_sha256"]) == 64 and record["scored"]["command"].endswith(" ".join(argv))
    printed = capsys.readouterr().out
    assert "ETA about" in printed and "score " in printed and "QUICK" not in printed


def test_quick_says_on_every_line_that_it_is_not_comparable(tiny_protocol, capsys):
    out = tiny_protocol / "quick"
    assert evaluate.main(["--task", "joker32-v1", "userbots:uniform", "--quick", "--dev", "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) >= 4 and all(line.startswith(protocol.QUICK_NOTE) for line in lines)
    record = json.loads((out / "score.json").read_text())
    assert record["quick"] and not record["comparable"] and record["seed"]["kind"] == "development"
    assert [o["rung"] for o in record["opponents"]] == ["random", "heuristic", "pimc", "learned"]


def test_list_tasks_prints_every_task_with_its_spaces(capsys):
    assert evaluate.main(["--list-tasks"]) == 0
    printed = capsys.readouterr().out
    for name, task in TASKS.items():
        assert name in printed and task.gym_id in printed
    assert "Box(0, 4, (631,), float32)" in printed and "Discrete(40)" in printed


def test_every_result_file_records_the_versions(tmp_path):
    out = tmp_path / "match"
    assert evaluate.main(["heuristic", "random", "--hands", "4", "--out", str(out), "--no-plots", "--no-progress", "--workers", "1"]) == 0
    versions = json.loads((out / "match.json").read_text())["config"]["versions"]
    assert versions == {"package": __version__, "task": "standard-v1", "task_version": 1, "protocol": 1}
    assert sys.modules["euchre_agents"].__version__ == __version__


def test_the_leaderboard_is_drawn_from_the_comparable_score_files(tiny_protocol, capsys):
    from euchre_lab.evaluation import leaderboard

    for name, flags in (("full", []), ("quick", ["--quick"])):
        argv = ["--task", "openspiel-v1", "userbots:uniform", "--out", f"results/{name}", "--workers", "1", "--no-progress", *flags]
        assert evaluate.main(argv) == 0
    page = tiny_protocol / "page.md"
    page.write_text(f"# Bench\n\n{leaderboard.START}\nold table\n{leaderboard.END}\n\nafter\n")
    argv = ["results", "--page", str(page), "--figure", str(tiny_protocol / "board.png")]
    assert leaderboard.main(argv) == 0
    text = page.read_text()
    assert "old table" not in text and text.endswith("after\n") and "![the leaderboard](board.png)" in text
    rows = [line for line in text.splitlines() if line.startswith("| `openspiel-v1`")]
    assert len(rows) == 1 and "`userbots:uniform`" in rows[0] and "results/full" in rows[0]
    assert (tiny_protocol / "board.png").stat().st_size > 0
    capsys.readouterr()
    assert leaderboard.main([str(tiny_protocol / "nothing"), "--page", str(page)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "holds no comparable score.json" in error
