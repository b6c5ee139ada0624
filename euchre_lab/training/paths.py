"""Where a training run keeps its checkpoints: `<run>/checkpoints/latest.pt` beside the numbered ones.

Paths only, without torch, so that tools that only look for a run's checkpoint (the making driver's plan, the
baselines' queue) do not load it."""

from __future__ import annotations

from pathlib import Path

CHECKPOINTS = "checkpoints"
LATEST = "latest.pt"


def checkpoint_folder(run_dir: Path) -> Path:
    """The folder of a training run's checkpoints."""
    return Path(run_dir) / CHECKPOINTS


def latest_checkpoint(run_dir: Path) -> Path:
    """The path of a training run's latest checkpoint (there once the run has written its first)."""
    return checkpoint_folder(run_dir) / LATEST
