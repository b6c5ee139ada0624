"""The search bots give the same results for one worker as for two: pimc in a duplicate match, in the
seats of teacher generation, and as teacher generation's labeller (`label="pimc"`)."""

from __future__ import annotations

import numpy as np
import pytest

from euchre_agents.teacher import TeacherSettings, generate, shard_path
from euchre_env import Rules
from euchre_lab.match import play_match

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
