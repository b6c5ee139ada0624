"""Writing a file so that no reader ever sees it half written, even if the writer is killed (`kill -9`):
every checkpoint, exported policy, teacher shard and result file of the lab goes through `write_atomic`.
A killed write leaves only a temp file named by `TEMP_FILES`, which the tools clear when they start again
(`euchre_lab.cli.remove_stale_temp_files`)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, Callable

TEMP_FILES = ".*.tmp"
"""The temp files of an atomic write (`.NAME.<random suffix>.tmp`, renamed over NAME once complete)."""


def write_atomic(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write `path` so that it is never seen half written: `write` fills a temp file in the same folder,
    which is flushed to disk and renamed over `path` (the folder synced after)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
