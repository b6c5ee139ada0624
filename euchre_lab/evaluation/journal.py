"""A match's journal: every finished chunk's per-pair outcomes on disk, so that a long match stopped part way
(Ctrl-C, a lost machine) continues where it stopped. A chunk is a pure function of the match's settings and its
index (`euchre_lab.evaluation.match`), so a chunk read back is the chunk that would be played again.

    journal = Journal(folder, identity)   # refuses a folder that holds the chunks of another match
    journal.load(match, index)            # a finished chunk's outcomes, or None
    journal.save(match, index, outcomes)  # written atomically as the chunk arrives
    play_continuing(folder, play, drop_other)  # a match played through its journal; the chunks it read back
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np

from euchre_agents.atomic import write_atomic

Result = TypeVar("Result")

IDENTITY = "journal.json"
FORMAT = "euchre-match-journal-v1"


class JournalError(ValueError):
    """A journal folder that belongs to another match, or is not a journal."""


class Journal:
    """The finished chunks of one match (or of one round robin's matches) in a folder of their own."""

    def __init__(self, folder: str | Path, identity: dict[str, Any]):
        self.folder = Path(folder)
        self.identity = json.loads(json.dumps({"format": FORMAT, **identity}))
        path = self.folder / IDENTITY
        if self.folder.exists() and not self.folder.is_dir():
            raise JournalError(f"{self.folder} is a file, not a match's journal folder; choose another results folder")
        if path.is_file():
            try:
                held = json.loads(path.read_text())
            except ValueError:
                held = {}
            differ = [k for k in self.identity if held.get(k) != self.identity[k]]
            if differ:
                raise JournalError(f"{self.folder} holds the finished chunks of another match (other {', '.join(differ)}); "
                                   "delete that folder to start this match over, or choose another results folder")
        elif self.folder.is_dir() and any(not p.name.startswith(".") for p in self.folder.iterdir()):  # not a killed write's temp file
            raise JournalError(f"{self.folder} holds files but no {IDENTITY}; it is not a match's journal: delete it or choose another results folder")

    def _path(self, match: int, index: int) -> Path:
        return self.folder / f"match{match:03d}_chunk{index:05d}.npz"

    def load(self, match: int, index: int) -> dict[str, np.ndarray] | None:
        """The chunk's outcomes as they were saved, or None if it is not finished (or its file is unreadable)."""
        path = self._path(match, index)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                return {k: data[k] for k in data.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError):
            return None

    def save(self, match: int, index: int, outcomes: dict[str, np.ndarray]) -> None:
        """Record a finished chunk (the identity file first, so that the folder is never an anonymous one)."""
        if not (self.folder / IDENTITY).is_file():
            write_atomic(self.folder / IDENTITY, lambda f: f.write(json.dumps(self.identity, indent=1).encode()))
        write_atomic(self._path(match, index), lambda f: np.savez(f, **outcomes))


def finished_chunks(folder: str | Path) -> int:
    """How many chunks a journal folder records (0 when there is none)."""
    folder = Path(folder)
    return len(list(folder.glob("match*_chunk*.npz"))) if folder.is_dir() else 0


def remove(folder: str | Path) -> None:
    """Delete a journal folder (once its match's results are written)."""
    shutil.rmtree(folder, ignore_errors=True)


def play_continuing(folder: str | Path, play: Callable[[], Result], drop_other: bool) -> tuple[Result, int]:
    """`play()` (a match or round robin keeping its chunks in `folder`) and how many chunks it read back from a
    stopped attempt. A journal of another match there raises JournalError before any chunk is played, or with
    `drop_other` is deleted and the match played from the start."""
    read_back = finished_chunks(folder)
    try:
        return play(), read_back
    except JournalError:
        if not drop_other:
            raise
    remove(folder)
    return play(), 0
