"""The project's own files: the version, the license, `make clean` leaving trained models and results alone, and
the installed names (console scripts, only `euchre_*` packages, the shipped agent inside the wheel)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

import euchre_env
from conftest import SUBPROCESS_TIMEOUT

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
    removed = [".venv/bin/python", ".pytest_cache/v/x", ".hypothesis/examples/x", "euchre_agents/__pycache__/x.pyc", "build/lib/x"]
    for name in kept + removed:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    subprocess.run(["make", "clean"], cwd=tmp_path, check=True, capture_output=True, timeout=SUBPROCESS_TIMEOUT)
    assert all((tmp_path / name).exists() for name in kept)
    assert not any((tmp_path / name.split("/")[0]).exists() for name in removed if not name.startswith("euchre_agents"))
    assert not (tmp_path / "euchre_agents" / "__pycache__").exists()


TOOLS = {"euchre-train": "euchre_lab.training.train:main", "euchre-evaluate": "euchre_lab.evaluation.evaluate:main", "euchre-play": "euchre_lab.play:main"}


def test_the_tools_are_installed_as_console_scripts():
    scripts = {e.name: e.value for e in importlib.metadata.entry_points(group="console_scripts") if e.name.startswith("euchre-")}
    assert scripts == TOOLS
    bin_dir = Path(sys.executable).parent
    refused = subprocess.run([str(bin_dir / "euchre-evaluate"), "heuristc", "random"], capture_output=True, text=True,
                             cwd=ROOT, timeout=SUBPROCESS_TIMEOUT)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines() == [refused.stderr.strip()] and "unknown agent 'heuristc'" in refused.stderr
    assert refused.stderr.startswith("euchre-evaluate: error:")  # the command's name, not the checkout's evaluate.py
    bad_flag = subprocess.run([str(bin_dir / "euchre-train"), "--num-env", "8"], capture_output=True, text=True,
                              cwd=ROOT, timeout=SUBPROCESS_TIMEOUT)
    assert bad_flag.returncode == 2 and bad_flag.stderr.startswith("euchre-train: error:")
    assert "(euchre-train --help lists every option)" in bad_flag.stderr
    for tool in ("euchre-train", "euchre-play"):
        shown = subprocess.run([str(bin_dir / tool), "--help"], capture_output=True, text=True, cwd=ROOT,
                               timeout=SUBPROCESS_TIMEOUT)
        assert shown.returncode == 0 and shown.stdout.startswith(f"usage: {tool}"), shown.stderr


def test_the_checkout_scripts_are_the_package_modules():
    import euchre_lab.evaluation.evaluate
    import euchre_lab.training.train
    import evaluate
    import train

    assert train is euchre_lab.training.train and evaluate is euchre_lab.evaluation.evaluate


@pytest.mark.skipif(importlib.util.find_spec("setuptools") is None, reason="building the wheel needs setuptools")
def test_the_wheel_installs_only_euchre_names_and_bundles_the_shipped_agent(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path)],
        capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT,
    )
    assert built.returncode == 0, built.stderr
    assert "Warning" not in built.stderr, built.stderr
    (wheel,) = tmp_path.glob("euchre_lab-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        top = {name.split("/")[0] for name in names}
        assert {t for t in top if not t.endswith(".dist-info")} == {"euchre_env", "euchre_agents", "euchre_lab", "euchre_play"}
        assert archive.read("euchre_agents/shipped/euchre_ppo.pt") == (ROOT / "checkpoints" / "euchre_ppo.pt").read_bytes()
        assert "euchre_play/static/index.html" in names
        for preset in (ROOT / "configs").glob("*.yaml"):
            assert archive.read(f"euchre_lab/configs/{preset.name}") == preset.read_bytes()
        info = next(t for t in top if t.endswith(".dist-info"))
        assert set(archive.read(f"{info}/top_level.txt").decode().split()) == {"euchre_env", "euchre_agents", "euchre_lab", "euchre_play"}
        for name, target in TOOLS.items():
            assert f"{name} = {target}" in archive.read(f"{info}/entry_points.txt").decode()
        archive.extractall(tmp_path / "site")
    probe = "from euchre_agents.checkpoint import read_checkpoint; from euchre_agents.ppo import SHIPPED; read_checkpoint(SHIPPED); print(SHIPPED)"
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}, timeout=SUBPROCESS_TIMEOUT)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) == (tmp_path / "site" / "euchre_agents" / "shipped" / "euchre_ppo.pt").resolve()
    presets = ("from euchre_lab.presets import read_preset; "
               "print(read_preset('configs/ppo.yaml', '')['total_timesteps'], read_preset('ppo_tiny.yaml', '')['num_envs'])")
    read = subprocess.run([sys.executable, "-c", presets], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}, timeout=SUBPROCESS_TIMEOUT)
    assert read.returncode == 0, read.stderr
    ppo, tiny = (yaml.safe_load((ROOT / "configs" / name).read_text()) for name in ("ppo.yaml", "ppo_tiny.yaml"))
    assert read.stdout.split() == [str(ppo["total_timesteps"]), str(tiny["num_envs"])]


def test_the_citation_and_the_changelog_name_the_packages_version():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] and str(citation["version"]) == euchre_env.__version__
    versions = [line.split()[1] for line in (ROOT / "CHANGELOG.md").read_text().splitlines() if line.startswith("## ")]
    assert euchre_env.__version__ in versions and versions[0] in ("Unreleased", euchre_env.__version__)
    import euchre_agents, euchre_lab, euchre_play

    assert euchre_agents.__version__ == euchre_lab.__version__ == euchre_play.__version__ == euchre_env.__version__
