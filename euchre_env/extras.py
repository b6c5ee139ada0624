"""The optional installs and the one way code asks for one.

`pip install euchre-lab` (the core) plays every env and the bots that need no torch, and runs
evaluate.py. Each extra adds one use:

| extra   | adds                                   | needed by                                              |
|---------|----------------------------------------|--------------------------------------------------------|
| `train` | torch, tensorboard                     | train.py, the `ppo`, `ppo:PATH` and `search` bots      |
| `play`  | rich, fastapi, uvicorn                 | play.py (terminal and web table)                       |
| `ray`   | ray[rllib] (with `train`)              | `evaluate.py --ray`, the `rllib:PATH` bot, RLlib runs  |
| `dev`   | every extra, pytest and the references | the test suite                                         |

Code that needs an extra calls `require(extra, module, ..., what=...)` before importing the module;
a missing one raises `MissingExtraError`, whose message is one line naming the install command. The
tools report it as they report any bad input: that line and exit status 2.
"""

from __future__ import annotations

import importlib

EXTRAS: dict[str, tuple[str, ...]] = {
    "train": ("torch", "tensorboard"),
    "play": ("rich", "fastapi", "uvicorn"),
    "ray": ("ray",),
}
"""Each extra's importable modules (what `require(extra)` checks when given none)."""


class MissingExtraError(ImportError, ValueError):
    """A module of an extra is not installed. A ValueError too, so that every tool's one-line error path
    (which catches ValueError) reports it; its message names the `pip install` command."""


def install_command(extra: str) -> str:
    """The command that installs `extra`: `pip install 'euchre-lab[EXTRA]'`."""
    return f"pip install 'euchre-lab[{extra}]'"


def require(extra: str, *modules: str, what: str) -> None:
    """Import `modules` (default: all of the extra's), or raise MissingExtraError naming `what` needs it."""
    if extra not in EXTRAS:
        raise KeyError(f"no extra {extra!r}; the extras are {', '.join(EXTRAS)}")
    for name in modules or EXTRAS[extra]:
        try:
            importlib.import_module(name)
        except ImportError:
            raise MissingExtraError(
                f"{what} needs the [{extra}] extra ({name} is not installed): {install_command(extra)}", name=name
            ) from None
