"""The experiment log stays apart from the product and stays true to its files: experiments/ is not
installed, its presets still pass train.py's option checks, the files it cites are there, and nothing the
package runs by default points into it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from euchre_lab.training import train_checks, train_options
from euchre_lab.making.driver import prepare
from euchre_lab.making.options import parse_args, wants_make

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "experiments"
LOG = EXPERIMENTS / "EXPERIMENTS.md"
PRESETS = sorted(p.name for p in (EXPERIMENTS / "configs").glob("*.yaml"))


def test_the_log_and_its_folders_are_there():
    assert LOG.read_text().startswith("# Experiments")
    assert {"configs", "results", "figures"} <= {p.name for p in EXPERIMENTS.iterdir() if p.is_dir()}
    assert {"ppo_long.yaml", "distill.yaml", "distill_round11.yaml"} <= set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_every_experiment_preset_passes_train_py_s_option_checks(name, tmp_path):
    path = f"experiments/configs/{name}"
    if wants_make(["--config", path]):  # a preset of the agent-making method
        prepare(parse_args(["--config", path, "--runs-dir", str(tmp_path)]))
        return
    args, _ = train_options.parse_args(["--config", path])
    train_checks.check_numbers(args)


def test_the_figures_and_presets_the_log_cites_exist():
    text = LOG.read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert len(images) >= 8
    for image in images:
        assert (EXPERIMENTS / image).resolve().is_file(), image
    for preset in set(re.findall(r"experiments/configs/[\w.]+\.yaml", text)):
        assert (ROOT / preset).is_file(), preset


def test_every_results_folder_kept_is_one_the_log_or_the_benchmarks_cite():
    cited = LOG.read_text() + (ROOT / "docs" / "benchmarks.md").read_text()
    for folder in (EXPERIMENTS / "results").iterdir():
        assert re.search(rf"\b{re.escape(folder.name)}\b", cited), f"experiments/results/{folder.name} is cited nowhere"


def test_the_product_never_points_into_experiments():
    for package in ("euchre_env", "euchre_agents", "euchre_lab", "euchre_play"):
        for source in (ROOT / package).rglob("*.py"):
            assert "experiments/" not in source.read_text(), source
    for preset in (ROOT / "configs").glob("*.yaml"):
        values = yaml.safe_load(preset.read_text())
        assert "experiments/" not in str(values), preset
    assert "experiments" not in (ROOT / "pyproject.toml").read_text().split("[tool.setuptools]")[1]


def test_the_card_attention_experiment_trains_both_networks_and_refuses_a_folder_without_a_batch(tmp_path):
    from euchre_agents.teacher import generate
    from euchre_agents.teacher_data import TeacherSettings
    from euchre_env import Rules

    folder = tmp_path / "data"
    generate(folder, 3, Rules(), TeacherSettings(behaviour="heuristic=1,random=1", games_per_shard=6, seed=9), progress=False)
    script = [sys.executable, str(EXPERIMENTS / "card_attention.py"), str(folder), "--threads", "1", "--d-model", "16"]
    done = subprocess.run([*script, "--batch-size", "64", "--epochs", "2", "--report-every", "1000"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    finals = re.findall(r"update +(\d+) (mlp|cards) *: held-out regret (\d\.\d+)", done.stdout)
    assert [name for _, name, _ in finals] == ["mlp", "cards"] and finals[0][0] == finals[1][0] != "0", done.stdout
    refused = subprocess.run([*script, "--batch-size", "100000"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "--batch-size" in refused.stderr, refused.stderr
