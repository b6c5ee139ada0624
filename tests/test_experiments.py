"""The experiment log stays apart from the product and stays true to its files: experiments/ is not
installed, its presets still pass train.py's option checks, the files it cites are there, and nothing the
package runs by default points into it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from euchre_lab import train_checks, train_options

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ROOT / "experiments"
LOG = EXPERIMENTS / "EXPERIMENTS.md"
PRESETS = sorted(p.name for p in (EXPERIMENTS / "configs").glob("*.yaml"))


def test_the_log_and_its_folders_are_there():
    assert LOG.read_text().startswith("# Experiments")
    assert {"configs", "results", "figures"} <= {p.name for p in EXPERIMENTS.iterdir() if p.is_dir()}
    assert {"ppo_long.yaml", "distill.yaml", "distill_round11.yaml"} <= set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_every_experiment_preset_passes_train_py_s_option_checks(name):
    args, _ = train_options.parse_args(["--config", f"experiments/configs/{name}"])
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
