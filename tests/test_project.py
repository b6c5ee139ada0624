"""The project's own files: the version, the license, and `make clean` leaving trained models and results alone."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
from pathlib import Path

import pytest

import euchre_env

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_the_installed_packages():
    assert euchre_env.__version__ == importlib.metadata.version("euchre-lab")


def test_the_mit_license_ships_with_the_package():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    assert importlib.metadata.metadata("euchre-lab")["License-Expression"] == "MIT"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_clean_removes_the_venv_and_caches_but_not_runs_or_results(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    kept = ["runs/main/checkpoints/latest.pt", "results/a_vs_b_seed0/match.json", "checkpoints/euchre_ppo.pt"]
    removed = [".venv/bin/python", ".pytest_cache/v/x", ".hypothesis/examples/x", "agents/__pycache__/x.pyc", "build/lib/x"]
    for name in kept + removed:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    subprocess.run(["make", "clean"], cwd=tmp_path, check=True, capture_output=True)
    assert all((tmp_path / name).exists() for name in kept)
    assert not any((tmp_path / name.split("/")[0]).exists() for name in removed if not name.startswith("agents"))
    assert not (tmp_path / "agents" / "__pycache__").exists()
