"""The YAML presets of the tools (`configs/`): one reader for `train.py` and `evaluate.py`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

BUNDLED = Path(__file__).resolve().parent
"""The folder holding `configs/` as the tools ship it: `euchre_lab/configs` links to the checkout's
`configs/`, and an installed package (`pip install .`, a wheel) carries a copy of it."""


def locate(path: str) -> Path:
    """Where preset `path` lies: the path itself, or, when it is relative and missing from the current folder, the
    bundled preset of that name (`configs/ppo.yaml` or `ppo.yaml`); the path itself when neither exists."""
    p = Path(path)
    if not p.exists() and not p.is_absolute():
        for bundled in (BUNDLED / p, BUNDLED / "configs" / p):
            if bundled.is_file():
                return bundled
    return p


def read_preset(path: str, example: str) -> dict[str, Any]:
    """The mapping of YAML preset `path` (found by `locate`), or a ValueError in one line naming the file, the
    problem and (for a missing file) an `example` preset."""
    p = locate(path)
    if not p.is_file():
        raise ValueError(f"config file {path!r} not found; pass --config with a YAML preset such as {example}")
    try:
        loaded = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ValueError(f"{path} is not valid YAML{where}: {getattr(e, 'problem', None) or e}; fix the file") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a text file; pass a YAML preset") from None
    except OSError as e:
        raise ValueError(f"cannot read config file {path!r}: {e}") from None
    if not isinstance(loaded, dict):
        raise ValueError(f"{path} holds a YAML {type(loaded).__name__}, not a mapping of option: value")
    return loaded
