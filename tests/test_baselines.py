"""The baselines' driver (benchmarks/baselines.py: a queue of runs, one at a time, with a journal that a killed queue
continues from) and its report (benchmarks/baselines_report.py: the figure and the table from the journals)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import SUBPROCESS_TIMEOUT, load_script

ROOT = Path(__file__).resolve().parents[1]
TINY_CLEANRL = ["--num-envs", "50", "--num-steps", "20", "--hidden-size", "16", "--save-interval", "1"]
"""The CleanRL example in iterations of 1,000 decisions, a checkpoint after each."""


@pytest.fixture(scope="module")
def driver():
    return load_script("benchmarks/baselines.py")


@pytest.fixture(scope="module")
def report(driver):
    return load_script("benchmarks/baselines_report.py")


def write_queue(folder: Path, runs: list[str]) -> Path:
    path = folder / "queue.yaml"
    path.write_text(yaml.safe_dump({"runs": runs, "options": {"cleanrl": TINY_CLEANRL}}))
    return path


def start_queue(folder: Path, *argv: str) -> subprocess.Popen:
    """The driver in a process group of its own (its trainers join it), as a detached queue runs."""
    return subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "baselines.py"), *argv], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def test_a_killed_queue_continues_each_run_from_its_checkpoint(driver, tmp_path):
    argv = ["--queue", str(write_queue(tmp_path, ["cleanrl:40k:1"])), "--no-score", "--runs-dir", "runs", "--results", "results"]
    checkpoint = tmp_path / "runs" / "cleanrl_seed1" / "checkpoint.pt"
    queue = start_queue(tmp_path, *argv)
    deadline = time.time() + SUBPROCESS_TIMEOUT
    while not checkpoint.exists() and queue.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    os.killpg(queue.pid, signal.SIGKILL)  # the whole job, as a lost machine stops it
    queue.communicate()
    assert checkpoint.exists()
    journal_path = tmp_path / "results" / "cleanrl_seed1" / "journal.json"
    killed = json.loads(journal_path.read_text())["sessions"][0]
    assert "ended" not in killed
    while driver.alive(killed["pid"]) and time.time() < deadline:  # SIGKILL lands when the kernel gets to it
        time.sleep(0.05)

    again = start_queue(tmp_path, *argv)
    output = again.communicate(timeout=SUBPROCESS_TIMEOUT)[0]
    assert again.returncode == 0, output
    journal = json.loads(journal_path.read_text())
    first, second = journal["sessions"]
    assert first["ended"] == "stopped" and "--resume" not in first["command"]
    assert second["ended"] == "finished" and "--resume runs/cleanrl_seed1/checkpoint.pt --total-decisions 40000" in second["command"]
    point = journal["points"]["40000"]
    assert point["decisions"] == 40000 and point["spec"] == "runs/cleanrl_seed1/policy_40000/agent.py:agent"
    assert point["training_seconds"] == pytest.approx(first["seconds"] + second["seconds"], abs=0.11)
    resumed_from = int(output.split("from iteration ")[1].split()[0])
    assert 1 <= resumed_from < 40

    done = start_queue(tmp_path, *argv)
    assert "examples/cleanrl_masked_ppo.py" not in done.communicate(timeout=SUBPROCESS_TIMEOUT)[0]  # nothing left to train
    assert len(json.loads(journal_path.read_text())["sessions"]) == 2


class FakeChildren:
    """Stands in for the trainers and evaluate.py: a trainer exports the policy at its budget, evaluate.py writes a score."""

    def __init__(self, trainer_status: int = 0):
        self.commands: list[list[str]] = []
        self.trainer_status = trainer_status

    def __call__(self, argv: list[str], on_start=None) -> int:
        self.commands.append(argv)
        if on_start is not None:
            on_start(os.getpid())
        if argv[1].endswith("evaluate.py"):
            out = Path(argv[argv.index("--out") + 1])
            out.mkdir(parents=True)
            (out / "score.json").write_text(json.dumps({"score": {"value": 0.1, "se": 0.01, "low": 0.08, "high": 0.12}}))
            return 0
        if self.trainer_status == 0:
            run_dir = Path(argv[argv.index("--runs-dir") + 1]) / argv[argv.index("--run-name") + 1]
            policy = run_dir / f"policy_{argv[argv.index('--total-decisions') + 1]}"
            policy.mkdir(parents=True)
            (policy / "agent.py").write_text("")  # what the example writes last
        return self.trainer_status


def test_a_trained_run_is_scored_by_the_protocol_once_and_journaled(driver, tmp_path, monkeypatch):
    children = FakeChildren()
    monkeypatch.setattr(driver, "run_child", children)
    folders = ["--runs-dir", str(tmp_path / "runs"), "--results", str(tmp_path / "results"), "--workers", "1"]
    assert driver.main(["cleanrl:1k:1", "--quick", *folders]) == 0
    trained, scored = children.commands
    assert trained[1].endswith("examples/cleanrl_masked_ppo.py") and trained[trained.index("--total-decisions") + 1] == "1000"
    spec = f"{tmp_path / 'runs' / 'cleanrl_seed1' / 'policy_1000' / 'agent.py'}:agent"
    assert scored[2:] == ["--task", "standard-v1", spec, "--out", str(tmp_path / "results" / "cleanrl_seed1" / "1k_quick"),
                          "--workers", "1", "--no-progress", "--quick"]
    point = json.loads((tmp_path / "results" / "cleanrl_seed1" / "journal.json").read_text())["points"]["1000"]
    assert point["scores"]["quick"]["file"] == "1k_quick/score.json" and point["spec"] == spec
    assert driver.main(["cleanrl:1k:1", "--quick", *folders]) == 0
    assert len(children.commands) == 2  # done already: nothing runs again


def test_a_run_whose_folder_is_gone_trains_again_from_zero_and_counts_its_time_from_there(driver, tmp_path, monkeypatch, capsys):
    folders = ["--runs-dir", str(tmp_path / "runs"), "--results", str(tmp_path / "results"), "--no-score"]
    monkeypatch.setattr(driver, "run_child", FakeChildren())  # writes policies, never a checkpoint: as a lost folder
    assert driver.main(["cleanrl:1k:1", *folders]) == 0
    path = tmp_path / "results" / "cleanrl_seed1" / "journal.json"
    journal = json.loads(path.read_text())
    journal["sessions"][0]["seconds"] = 1000.0  # the 1k session's time, which the 2k run from 0 does not build on
    path.write_text(json.dumps(journal))
    assert driver.main(["cleanrl:2k:1", *folders]) == 0
    assert "holds no checkpoint to continue (a new machine?): the run trains again from 0 decisions" in capsys.readouterr().out
    journal = json.loads(path.read_text())
    assert [s["from_checkpoint"] for s in journal["sessions"]] == [False, False]
    assert journal["points"]["2000"]["training_seconds"] == journal["sessions"][1]["seconds"] < 1000


def test_a_budget_below_where_its_run_stands_and_a_failing_trainer_are_one_line(driver, tmp_path, monkeypatch, capsys):
    folders = ["--runs-dir", str(tmp_path / "runs"), "--results", str(tmp_path / "results"), "--no-score"]
    monkeypatch.setattr(driver, "run_child", FakeChildren())
    assert driver.main(["cleanrl:2k:1", *folders]) == 0
    assert driver.main(["cleanrl:1k:1", *folders]) == 2
    monkeypatch.setattr(driver, "run_child", FakeChildren(trainer_status=1))
    assert driver.main(["sb3:1k:1", *folders]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("benchmarks/baselines.py: error: cleanrl:1k:1: its run folder") and "past the budget" in err[0]
    assert err[1] == "benchmarks/baselines.py: sb3:1k:1: the trainer exited with status 1 (its output is above); run this again to continue it"
    session = json.loads((tmp_path / "results" / "sb3_seed1" / "journal.json").read_text())["sessions"][0]
    assert session["ended"] == "failed (exit status 1)"


@pytest.mark.parametrize("argv, says", [
    (["ppo:1M:1"], "unknown algorithm 'ppo'"),
    (["cleanrl:1G:1"], "is not ALGORITHM:BUDGET:SEED"),
    (["cleanrl:0:1"], "the budget must be at least 1 decision"),
    (["--queue", "missing.yaml"], "--queue missing.yaml: no such file"),
    (["--workers", "0"], "--workers must be 1 or more"),
])
def test_bad_runs_and_options_are_one_line_and_exit_status_2(driver, argv, says, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert driver.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("benchmarks/baselines.py: error: ") and says in err[0], err


def test_the_plan_is_the_issues_runs_in_an_order_each_seed_can_continue(driver):
    """1M and 5M for all four, 20M where it fits (not SB3's 10.7 hours a seed, nor RLlib's), each seed's budgets in order."""
    runs, extra = driver.read_queue(driver.QUEUE)
    assert extra == {}
    for algorithm, budgets in {"trainpy": [1, 5, 20], "cleanrl": [1, 5, 20], "sb3": [1, 5], "rllib": [1, 5]}.items():
        for seed in (1, 2, 3):
            assert [r.budget // 1_000_000 for r in runs if (r.algorithm, r.seed) == (algorithm, seed)] == budgets
    assert {r.name for r in runs if r.algorithm == "trainpy"} == {f"trainpy_{b}M_seed{s}" for b in (1, 5, 20) for s in (1, 2, 3)}


def write_run(results: Path, algorithm: str, seed: int, points: dict[int, tuple[int, float, float | None, float | None]]) -> None:
    """A journal with points {budget: (decisions, seconds, full score, quick score)} and their score files."""
    journal = {"algorithm": algorithm, "what": f"the {algorithm} trainer", "seed": seed, "points": {}}
    for budget, (decisions, seconds, full, quick) in points.items():
        scores = {}
        for kind, value in (("full", full), ("quick", quick)):
            if value is not None:
                file = results / f"{algorithm}_seed{seed}" / f"{budget}_{kind}" / "score.json"
                file.parent.mkdir(parents=True)
                file.write_text(json.dumps({"score": {"value": value, "se": 0.01, "low": value - 0.02, "high": value + 0.02}}))
                scores[kind] = {"file": f"{budget}_{kind}/score.json"}
        journal["points"][str(budget)] = {"decisions": decisions, "training_seconds": seconds, "scores": scores}
    (results / f"{algorithm}_seed{seed}" / "journal.json").write_text(json.dumps(journal))


def test_the_report_draws_the_curves_and_writes_the_table_from_the_journals(report, tmp_path):
    results = tmp_path / "results"
    for seed, value in zip((1, 2, 3), (-0.30, -0.20, -0.10)):
        write_run(results, "cleanrl", seed, {1_000_000: (1_000_000, 100.0, value, None), 5_000_000: (5_000_000, 500.0, None, value + 0.1)})
    write_run(results, "sb3", 1, {1_000_000: (1_001_472, 1000.0, -0.5, None)})
    page, figure = tmp_path / "page.md", tmp_path / "baselines.png"
    page.write_text(f"# page\n\n{report.START}\nnot run yet\n{report.END}\n\nafter\n")
    shipped = tmp_path / "shipped.json"
    shipped.write_text(json.dumps({"scored": {"spec": "ppo"}, "score": {"value": 0.097, "low": 0.09, "high": 0.104}}))
    method, journal = tmp_path / "method.json", tmp_path / "making" / "journal.json"
    method.write_text(json.dumps({"scored": {"spec": "ppo:runs/recipe/agent.pt"}, "score": {"value": 0.05, "low": 0.04, "high": 0.06}}))
    journal.parent.mkdir()
    journal.write_text(json.dumps({"commands": ["python train.py --config configs/recipe.yaml"],
                                   "parts": {"bootstrap/label": {"wall_s": 5400.0}, "iter_001/label": {"wall_s": 1800.0}}}))
    assert report.main([str(results), "--page", str(page), "--figure", str(figure), "--shipped", str(shipped),
                        "--method", str(method), "--method-journal", str(journal)]) == 0
    text = page.read_text()
    assert "not run yet" not in text and text.endswith("\n\nafter\n") and "- `cleanrl`: the cleanrl trainer" in text
    half = 4.303 * 0.1 / 3 ** 0.5  # Student's t over three seeds of standard deviation 0.1
    assert f"| `cleanrl` | 1M | 3 | 1,000,000 | 1.7 min | 10,000 | −0.200 [{-0.2 - half:+.3f}, {-0.2 + half:+.3f}] | −0.300, −0.200, −0.100 |".replace(
        "-", "−") in text
    assert "| `cleanrl` | 5M | 3 | 5,000,000 | 8.3 min | 10,000 | not scored yet | – |" in text
    assert "| `sb3` | 1M | 1 | 1,001,472 | 16.7 min | 1,001 | −0.500 [−0.520, −0.480] | −0.500 |" in text
    assert "| shipped `ppo` |" in text and "+0.097 [+0.090, +0.104] (the protocol's interval)" in text
    assert ("| the making method `ppo:runs/recipe/agent.pt` | – | – | – | `python train.py --config configs/recipe.yaml` from "
            "nothing: 2.00 h end to end on this machine, every part ([its card](making/MODEL_CARD.md)) | – | "
            "+0.050 [+0.040, +0.060] (the protocol's interval) | – |") in text
    assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_report_refuses_in_one_line_what_it_cannot_draw(report, tmp_path, capsys):
    assert report.main([str(tmp_path), "--page", str(tmp_path / "page.md")]) == 2
    write_run(tmp_path, "cleanrl", 1, {1000: (1000, 1.0, 0.0, None)})
    (tmp_path / "page.md").write_text("# no markers\n")
    assert report.main([str(tmp_path), "--page", str(tmp_path / "page.md"), "--shipped", "", "--method", ""]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"benchmarks/baselines_report.py: error: {tmp_path} holds no run journal with a point; run python "
                   "benchmarks/baselines.py first",
                   f"benchmarks/baselines_report.py: error: {tmp_path / 'page.md'} has no <!-- baselines --> ... "
                   "<!-- /baselines --> section to rewrite"]


def test_a_policy_folder_whose_export_was_cut_short_is_no_point(driver, tmp_path):
    (tmp_path / "policy_1000").mkdir()
    (tmp_path / "policy_2000").mkdir()
    (tmp_path / "policy_1000" / "agent.py").write_text("")
    assert driver.TRAINERS["cleanrl"].trained(tmp_path).decisions == 1000
    assert driver.TRAINERS["rllib"].trained(tmp_path) is None


def test_a_queue_started_in_the_background_stops_its_trainer_on_kill_pid(driver, tmp_path):
    """A shell starts a background job with SIGINT ignored; `kill PID` of the driver still stops the trainer as
    Ctrl-C does (one line, no traceback), and the journal closes the session."""
    argv = ["--queue", str(write_queue(tmp_path, ["cleanrl:400k:1"])), "--no-score", "--runs-dir", "runs", "--results", "results"]
    checkpoint = tmp_path / "runs" / "cleanrl_seed1" / "checkpoint.pt"
    queue = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "baselines.py"), *argv], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.time() + SUBPROCESS_TIMEOUT
    while not checkpoint.exists() and queue.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    queue.terminate()
    try:
        out, _ = queue.communicate(timeout=60)   # not the driver's 300 s wait for a trainer that cannot hear it
    finally:
        if queue.poll() is None:
            os.killpg(queue.pid, signal.SIGKILL)
    assert queue.returncode == 130 and "Traceback" not in out, out[-2000:]
    assert "examples/cleanrl_masked_ppo.py: interrupted; checkpoint.pt, written every --save-interval iterations, is kept" in out
    session = json.loads((tmp_path / "results" / "cleanrl_seed1" / "journal.json").read_text())["sessions"][0]
    assert "ended" in session, session
