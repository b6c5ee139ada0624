"""Named, versioned tasks: frozen, buildable by every env, registered with Gymnasium, paged in docs/."""

from __future__ import annotations

from pathlib import Path

import gymnasium
import pytest

import euchre_env
from euchre_env import EuchreVectorEnv, euchre_v0
from euchre_env.named_tables import NAMED_TABLES
from euchre_env.rules import Rules
from euchre_env.tasks import TASKS, get_task, task_for, task_fingerprint

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", list(TASKS))
def test_a_task_is_frozen_by_its_fingerprint(name):
    task = TASKS[name]
    assert task_fingerprint(task)[:16] == task.fingerprint, (
        f"{name} changed what its results depend on: make a new version beside it (docs/tasks.md) instead")


def test_every_named_table_has_a_task_and_names_follow_the_scheme():
    assert {t.table for t in TASKS.values()} == set(NAMED_TABLES)
    assert list(TASKS)[0] == "standard-v1"
    for name, task in TASKS.items():
        assert name == f"{task.table}-v{task.version}" and task.gym_id == f"Euchre-{name}"
    assert len({t.fingerprint for t in TASKS.values()}) == len(TASKS)


def test_the_fingerprint_moves_with_anything_a_result_depends_on():
    import dataclasses

    task = TASKS["standard-v1"]
    for change in (dict(table="no-stick"), dict(reward="win"), dict(episode="game"), dict(opponents="random")):
        assert task_fingerprint(dataclasses.replace(task, **change)) != task_fingerprint(task), change


@pytest.mark.parametrize("name", list(TASKS))
def test_every_env_builds_a_task(name):
    task = TASKS[name]
    aec = euchre_v0.env(task=name)
    aec.reset(seed=0)
    vector = EuchreVectorEnv(4, task=name, seed=0)
    single = gymnasium.make(task.gym_id)
    assert aec.unwrapped.rules == vector.rules == single.unwrapped.rules == task.rules
    assert single.unwrapped.specs == {2: task.partner, 1: task.opponents, 3: task.opponents}
    obs, info = single.reset(seed=1)
    assert obs.shape == single.observation_space.shape and info["action_mask"].any()


def test_gymnasium_make_keywords_override_the_tasks_bots():
    env = gymnasium.make("Euchre-standard-v1", opponents="random", seat=1)
    assert env.unwrapped.specs == {3: "heuristic", 2: "random", 0: "random"}
    assert gymnasium.make("EuchreSingle-v0").unwrapped.specs == {2: "random", 1: "random", 3: "random"}


def test_a_task_refuses_settings_it_fixes_and_a_bad_name_names_the_known_tasks():
    with pytest.raises(ValueError, match=r"^unknown task 'standard-v9'; known tasks: standard-v1, no-stick-v1"):
        euchre_v0.env(task="standard-v9")
    with pytest.raises(ValueError, match="fixes the rules; give task= or rules=, not both"):
        EuchreVectorEnv(4, task="standard-v1", rules=Rules())
    with pytest.raises(ValueError, match="plays reward='points'; drop reward='win'"):
        euchre_env.single_agent.EuchreSingleEnv(task="joker32-v1", reward="win")
    assert get_task("openspiel-v1").rules == Rules.openspiel()
    assert task_for(Rules.openspiel()).name == "openspiel-v1" and task_for(Rules(target_points=7)) is None


def test_each_task_has_its_page_with_a_version_history():
    index = (ROOT / "docs" / "tasks.md").read_text()
    for name, task in TASKS.items():
        page = (ROOT / "docs" / "tasks" / f"{task.table}.md").read_text()
        assert f"`{name}`" in page and task.fingerprint in page and f"`{task.gym_id}`" in page, name
        assert "## Version history" in page and f"| {task.version} |" in page, name
        assert task.learned_sha256 is None or task.learned_sha256 in page, name
        assert f"(tasks/{task.table}.md)" in index, name

