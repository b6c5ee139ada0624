"""The search bots give the same results for one worker as for two: pimc in a duplicate match, in the
seats of teacher generation, and as teacher generation's labeller (`label="pimc"`). One worker, like each
of a pool's, runs torch on one thread and gives the threads back when done."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from euchre_agents.teacher import generate
from euchre_agents.teacher_data import TeacherSettings, shard_path
from euchre_env import Rules
from euchre_lab.evaluation.backends import run_tasks
from euchre_lab.evaluation.match import play_match

MATCH_FIELDS = ("keys", "a_points", "b_points", "hands")


@pytest.mark.parametrize("spec", ["pimc:worlds=3", "pimc:worlds=3,infer=true,candidates=2"])
def test_a_pimc_match_is_the_same_for_one_and_two_workers(spec):
    kwargs = dict(hands=8, seed=4, chunk=2)
    one = play_match(None, spec, "heuristic", workers=1, **kwargs)
    two = play_match(None, spec, "heuristic", workers=2, **kwargs)
    for field in MATCH_FIELDS:
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field), err_msg=field)
    assert (one.a_points + one.b_points).any()  # hands were played and scored


def test_a_pimc_match_in_games_mode_is_the_same_for_one_and_two_workers():
    kwargs = dict(games=2, seed=7, chunk=1)
    one = play_match(Rules(target_points=3), "pimc:worlds=2", "random", workers=1, **kwargs)
    two = play_match(Rules(target_points=3), "pimc:worlds=2", "random", workers=2, **kwargs)
    for field in (*MATCH_FIELDS, "a_wins"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field), err_msg=field)


PIMC_LABELS = TeacherSettings(
    label="pimc", behaviour="heuristic=1,random=1,pimc:2=1", pimc_worlds=2, games_per_shard=2, epsilon=0.2, seed=5
)
"""pimc labels every decision and plays in some seats (reseeded per shard like every other bot)."""


def test_pimc_labelled_teacher_data_is_the_same_for_one_and_two_workers(tmp_path):
    generate(tmp_path / "one", 2, Rules(), PIMC_LABELS, workers=1, progress=False)
    generate(tmp_path / "two", 2, Rules(), PIMC_LABELS, workers=2, progress=False)
    for k in range(2):
        with np.load(shard_path(tmp_path / "one", k)) as a, np.load(shard_path(tmp_path / "two", k)) as b:
            assert a.files == b.files and len(a["values"]) > 0
            for key in a.files:
                np.testing.assert_array_equal(a[key], b[key], err_msg=f"shard {k}, {key}")


def torch_threads_in_task(task: int) -> tuple[int, str | None]:
    """What a chunk run by `run_tasks` sees: torch's thread count and OMP_NUM_THREADS."""
    import torch

    return torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")


def sleep_for(seconds: int) -> int:
    """A task that takes `seconds`."""
    time.sleep(seconds)
    return seconds


def test_closing_the_pool_early_stops_the_tasks_still_running():
    start = time.perf_counter()
    results = run_tasks(sleep_for, [0, 60], workers=2)
    assert next(results) == 0
    results.close()
    assert time.perf_counter() - start < 20


def test_a_match_on_one_worker_runs_torch_on_one_thread_and_gives_the_threads_back(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert list(run_tasks(torch_threads_in_task, [0, 1], workers=1)) == [(1, "1"), (1, "1")]
        assert torch.get_num_threads() == 2
        assert "OMP_NUM_THREADS" not in os.environ
    finally:
        torch.set_num_threads(before)


def test_teacher_data_on_one_worker_gives_the_threads_back(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        settings = TeacherSettings(label="pimc", behaviour="random=1", pimc_worlds=1, games_per_shard=1, seed=5)
        generate(tmp_path / "one", 1, Rules(), settings, workers=1, progress=False)
        assert torch.get_num_threads() == 2
        assert "OMP_NUM_THREADS" not in os.environ
    finally:
        torch.set_num_threads(before)
