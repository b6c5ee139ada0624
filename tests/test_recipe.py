"""The recipe (euchre_lab/recipe.py) end to end on configs/recipe_smoke.yaml, in subprocesses: every stage
finishes, the agent plays, a second run redoes nothing, a killed run resumes (the fine-tune exactly from its
checkpoint), changed settings are refused."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SUBPROCESS_TIMEOUT
from euchre_lab.recipe import first_difference
from euchre_lab.recipe_options import parse_args, wants_recipe
from euchre_lab.recipe_plan import check_plan, plan

ROOT = Path(__file__).resolve().parents[1]
SMOKE = "configs/recipe_smoke.yaml"
STAGES = ["teacher_r1", "distill_r1", "teacher_r2", "distill_r2", "finetune_ft1", "export", "evaluate_heuristic",
          "evaluate_pimc_worlds=2", "model_card"]


def recipe(runs: Path, *extra: str, **kwargs) -> subprocess.CompletedProcess:
    """`python train.py --config configs/recipe_smoke.yaml --runs-dir RUNS ...`, waited for."""
    return subprocess.run([sys.executable, "train.py", "--config", SMOKE, "--runs-dir", str(runs), *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT, **kwargs)


def manifest(runs: Path) -> dict:
    return json.loads((runs / "recipe_smoke" / "manifest.json").read_text())


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[Path, float]:
    """One finished smoke run: its runs folder and how long it took."""
    runs = tmp_path_factory.mktemp("recipe")
    start = time.perf_counter()
    done = recipe(runs)
    assert done.returncode == 0, done.stderr[-3000:]
    return runs, time.perf_counter() - start


def test_every_stage_finishes_and_the_agent_plays(smoke):
    from euchre_agents.registry import make_agent
    from euchre_env import Engine
    from euchre_env.engine import EPISODE_HAND
    from euchre_env.play import play

    runs, _ = smoke
    stages = manifest(runs)["stages"]
    assert list(stages) == STAGES
    assert all(r["status"] == "finished" and r["wall_s"] >= 0 for r in stages.values())
    assert stages["teacher_r1"]["facts"]["decisions"] > 0 and stages["distill_r2"]["facts"]["updates"] > 0
    assert stages["finetune_ft1"]["facts"]["samples"] == 2048 and stages["export"]["settings"]["checkpoint"].endswith("finetune_ft1/checkpoints/latest.pt")
    engine = Engine(episode=EPISODE_HAND)
    agent = make_agent(f"ppo:{runs / 'recipe_smoke' / 'agent.pt'}", engine, seed=0)
    points = play(engine, engine.init(list(range(8))), [agent], [0, 0, 0, 0])
    assert points.shape == (8, 2)
    card = (runs / "recipe_smoke" / "MODEL_CARD.md").read_text()
    for needed in ("Rules", "teacher_r1", "labelled decisions", "KL 0.1 toward r2", "8 updates, 2,048 steps",
                   "| heuristic | 100 | 200 |", "9101", "wall time"):
        assert needed in card


def test_a_second_run_redoes_nothing(smoke):
    runs, first = smoke
    before = manifest(runs)["stages"]
    outputs = [Path(p) for r in before.values() for p in r["outputs"].values()]
    mtimes = [p.stat().st_mtime_ns for p in outputs]
    start = time.perf_counter()
    again = recipe(runs)
    assert again.returncode == 0, again.stderr[-3000:]
    assert time.perf_counter() - start < first
    assert manifest(runs)["stages"] == before
    assert [p.stat().st_mtime_ns for p in outputs] == mtimes
    assert again.stdout.count("), kept") == len(STAGES)


def test_changed_settings_are_refused_naming_the_stage(smoke):
    runs, _ = smoke
    before = manifest(runs)
    refused = recipe(runs, "--rules", "deck=32")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert "stage teacher_r1" in refused.stderr and "--run-name" in refused.stderr and "--overwrite" in refused.stderr
    assert manifest(runs) == before


def test_an_unfinished_stage_is_done_again_and_only_it(smoke):
    runs, _ = smoke
    path = runs / "recipe_smoke" / "manifest.json"
    data = json.loads(path.read_text())
    data["stages"]["evaluate_heuristic"]["status"] = "running"
    path.write_text(json.dumps(data))
    again = recipe(runs, "--resume", "--run-name", "recipe_smoke")
    assert again.returncode == 0, again.stderr[-3000:]
    after = manifest(runs)["stages"]
    assert after["evaluate_heuristic"]["status"] == "finished" and after["evaluate_heuristic"]["attempts"] == 2
    assert after["evaluate_heuristic"]["facts"] == data["stages"]["evaluate_heuristic"]["facts"]
    assert {k: v for k, v in after.items() if k != "evaluate_heuristic"} == {
        k: v for k, v in data["stages"].items() if k != "evaluate_heuristic"}


def test_a_run_killed_mid_stage_resumes_and_finishes(tmp_path):
    """Killed while writing round 2's teacher data, then a fine-tune stopped halfway: each continues."""
    process = subprocess.Popen([sys.executable, "train.py", "--config", SMOKE, "--runs-dir", str(tmp_path)], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + SUBPROCESS_TIMEOUT
    try:
        while time.time() < deadline and process.poll() is None:
            try:
                stages = manifest(tmp_path)["stages"]
            except (FileNotFoundError, json.JSONDecodeError, KeyError):
                stages = {}
            if stages.get("teacher_r2", {}).get("status") == "running":
                break
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    killed = manifest(tmp_path)["stages"]
    assert killed["teacher_r2"]["status"] == "running"
    resumed = recipe(tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    stages = manifest(tmp_path)["stages"]
    assert all(r["status"] == "finished" for r in stages.values()) and list(stages) == STAGES
    assert stages["teacher_r2"]["attempts"] == 2 and stages["teacher_r1"] == killed["teacher_r1"]
    fine_tune_stopped_halfway_continues_exactly(tmp_path)


def fine_tune_stopped_halfway_continues_exactly(runs: Path) -> None:
    """The finished fine-tune set back to its update-4 checkpoint continues from it to the same weights."""
    import torch

    checkpoints = runs / "recipe_smoke" / "finetune_ft1" / "checkpoints"
    finished = torch.load(checkpoints / "latest.pt", weights_only=False)
    shutil.copy(checkpoints / "update_000004.pt", checkpoints / "latest.pt")
    for later in ("update_000006.pt", "update_000008.pt"):
        (checkpoints / later).unlink()
    data = manifest(runs)
    data["stages"]["finetune_ft1"]["status"] = "running"
    (runs / "recipe_smoke" / "manifest.json").write_text(json.dumps(data))
    again = recipe(runs)
    assert again.returncode == 0, again.stderr[-3000:]
    stage = manifest(runs)["stages"]["finetune_ft1"]
    assert stage["status"] == "finished" and stage["attempts"] == 2 and stage["facts"]["samples"] == 2048
    resumed = torch.load(checkpoints / "latest.pt", weights_only=False)
    assert all(torch.equal(resumed["model"][k], finished["model"][k]) for k in finished["model"])


def test_fine_tunes_start_from_the_agent_before_and_their_options_are_checked(tmp_path):
    from euchre_lab.recipe_options import RecipeError

    def fine_tunes(value: list) -> list:
        args = dataclasses.replace(parse_args(["--config", SMOKE, "--runs-dir", str(tmp_path)]), finetunes=value)
        return [s for s in plan(args) if s.kind == "finetune"]

    (smoke,) = [s for s in plan(parse_args(["--config", SMOKE, "--runs-dir", str(tmp_path)])) if s.kind == "finetune"]
    assert smoke.settings["train"]["init_checkpoint"].endswith("agents/r2.pt") and "teacher_data" not in smoke.settings["train"]
    a, b = fine_tunes([{"name": "a"}, {"name": "b", "ppo": {"opponent_mix": "self=0.5,ppo:{a}=0.5"}}])
    assert b.settings["train"]["init_checkpoint"] == a.outputs["agent"] and a.outputs["agent"] in b.settings["train"]["opponent_mix"]
    for bad, message in (([{"ppo": {"teacher_data": "x"}}], "not PPO's"), ([{"ppo": {"init_checkpoint": "x"}}], "set by the recipe"),
                         ([{"init": "r9"}], r"\{r9\} names no earlier round"), ([{"steps": 3}], "a mapping with keys ppo"),
                         ([{"name": "r1"}], "must be a plain word")):
        with pytest.raises(RecipeError, match=message):
            fine_tunes(bad)


def test_train_py_dispatches_the_recipe_by_stage_or_preset():
    assert wants_recipe(["--config", SMOKE]) and wants_recipe(["--stage=recipe"])
    assert not wants_recipe(["--config", "configs/ppo_tiny.yaml"]) and not wants_recipe([])


def test_a_placeholder_must_name_an_earlier_round(tmp_path):
    from euchre_lab.recipe_options import RecipeError

    args = parse_args(["--config", SMOKE, "--runs-dir", str(tmp_path)])
    assert [s.name for s in plan(args)] == STAGES
    args.rounds[0]["teacher"]["behaviour"] = "ppo:{r2}=1"
    with pytest.raises(RecipeError, match=r"\{r2\} names no earlier round"):
        plan(args)


def test_a_round_s_search_labels_can_come_from_an_earlier_round_s_agent(tmp_path):
    from euchre_lab.recipe_options import RecipeError

    args = parse_args(["--config", SMOKE, "--runs-dir", str(tmp_path)])
    args.rounds[1]["teacher"].update(label="search", search_agent="search:{r1},worlds=2")
    del args.rounds[1]["teacher"]["rollout_agent"], args.rounds[1]["teacher"]["rollout_cards"]
    stages = plan(args)
    (teacher,) = [s for s in stages if s.name == "teacher_r2"]
    r1 = next(s for s in stages if s.name == "distill_r1").outputs["agent"]
    assert teacher.settings["settings"]["search_agent"] == f"search:{r1},worlds=2"
    check_plan(args, stages)
    for spec, message in (("search:nowhere.pt", "search_agent 'search:nowhere.pt': no checkpoint at"),
                          ("heuristic", "search_agent 'heuristic' is not a search bot")):
        args.rounds[1]["teacher"]["search_agent"] = spec
        with pytest.raises(RecipeError, match=f"^teacher_r2: {message}"):
            check_plan(args, plan(args))
    args.rounds[0]["teacher"].update(label="search", search_agent="search:{r2}")
    with pytest.raises(RecipeError, match=r"\{r2\} names no earlier round"):
        plan(args)


def test_first_difference_names_the_nested_key():
    assert first_difference({"a": {"b": 1}}, {"a": {"b": 1}}) is None
    assert first_difference({"a": {"b": 1}}, {"a": {"b": 2}}) == "a.b: 1 there, 2 here"


@pytest.mark.parametrize("name", ["recipe.yaml", "recipe_smoke.yaml"])
def test_every_recipe_preset_plans_its_stages_and_passes_their_checks(name, tmp_path):
    """A recipe preset with a typo, a bad number or a placeholder naming no round fails here, not hours into a run."""
    args = parse_args(["--config", f"configs/{name}", "--runs-dir", str(tmp_path)])
    stages = plan(args)
    assert {s.kind for s in stages} >= {"teacher", "distill", "evaluate"}
    check_plan(args, stages)
