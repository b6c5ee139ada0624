"""Bots from the user's own code: the specs `MODULE:ATTR` (a dotted module importable from the current
folder) and `PATH.py:ATTR` (a file), which `euchre_agents.registry.make_agent` builds when the part
before the colon is no registered name.

ATTR is one of:
- a factory of a batched `Agent`: a callable with a parameter named `engine`, called as
  `ATTR(engine=engine, seed=seed)` (an `Agent` subclass is one);
- a plain policy: a function of one PettingZoo observation dict (`{"observation", "action_mask"}`) that
  returns an action id. If it has a parameter named `rng` it is also handed the bot's generator,
  `rng=np.random.Generator`, seeded by the match like every built-in bot's, so a match that draws from it
  gives the same result for any number of workers (a function drawing from its own generator does not).

A bad module, a missing ATTR or a factory that returns no Agent is a ValueError naming it; an exception
raised by the user's function or Agent while playing is a `BotError` naming the spec and the exception.

A spec names no weights, so a trained policy travels as a weights file with a small bot file beside it:
`write_weights_bot(FOLDER, SOURCE, LOADER, WEIGHTS)` writes FOLDER/agent.py, whose `agent` factory calls
`LOADER(FOLDER/WEIGHTS, engine=..., seed=...)` from the Python file SOURCE; the spec `FOLDER/agent.py:agent` then
plays those weights (the examples' trainers write one for every policy they finish).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

from euchre_agents.base import Agent, file_sha256
from euchre_env.engine import Engine
from euchre_env.play import BotError

USAGE = "MODULE:ATTR or PATH.py:ATTR"


def is_outside_spec(spec: str) -> bool:
    """Whether a spec has the form of an outside bot: something, a colon, an attribute name."""
    target, sep, attr = spec.rpartition(":")
    return bool(sep and target and all(part.isidentifier() for part in attr.split(".")))


def load_module(target: str) -> ModuleType:
    """The module a spec names: a file when it ends in `.py`, else a dotted module importable from the current folder."""
    if target.endswith(".py"):
        path = Path(target).expanduser().resolve()
        if not path.is_file():
            raise ValueError(f"outside bot file {target!r} not found ({USAGE})")
        name = f"euchre_outside_{path.stem}_{abs(hash(str(path))):x}"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            del sys.modules[name]
            raise ValueError(f"outside bot file {target!r} failed to load: {type(e).__name__}: {e}") from None
        return module
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        raise ValueError(f"cannot import module {target!r} for the bot spec ({e}); give {USAGE}") from None
    except Exception as e:
        raise ValueError(f"module {target!r} failed to import: {type(e).__name__}: {e}") from None


def _attribute(module: ModuleType, target: str, attr: str) -> Any:
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"{target!r} has no attribute {attr!r}; give {USAGE}")
        obj = getattr(obj, part)
    return obj


def _parameters(obj: Callable) -> dict[str, inspect.Parameter]:
    try:
        return dict(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return {}


class PolicyFunction(Agent):
    """A plain policy function of one PettingZoo observation dict, played as a batched bot, row by row."""

    def __init__(self, engine: Engine, function: Callable, name: str, seed: int | None = None):
        super().__init__(engine, seed)
        self.function = function
        self.name = name
        self.takes_rng = "rng" in _parameters(function)

    def act(self, obs, mask, state=None, rows=None):
        """The function's action for each row (its legality is the play loop's to check)."""
        mask = np.asarray(mask).astype(np.int8)
        actions = np.empty(mask.shape[0], np.int64)
        for i in range(mask.shape[0]):
            observation = {"observation": obs[i], "action_mask": mask[i]}
            try:
                action = self.function(observation, rng=self.rng) if self.takes_rng else self.function(observation)
                actions[i] = int(action)
            except Exception as e:
                raise BotError(f"bot {self.name!r} raised {type(e).__name__}: {e}") from None
        return actions


def _source_file(obj: Any) -> str | None:
    """The file that defines the user's function or class (it may live in another module than the one named)."""
    try:
        return inspect.getsourcefile(obj)
    except TypeError:
        return None


def _reporting(act: Callable, spec: str) -> Callable:
    """The user's Agent's `act`, with any exception it raises turned into a one-line `BotError` naming the spec."""

    def reported_act(*args: Any) -> Any:
        try:
            return act(*args)
        except Exception as e:
            raise BotError(f"bot {spec!r} raised {type(e).__name__}: {e}") from None

    return reported_act


def make_outside(spec: str, engine: Engine, seed: int | None = None) -> Agent:
    """The bot an outside spec names (see the module docstring), its `source_sha256` the sha256 of the file
    that defines ATTR."""
    target, _, attr = spec.rpartition(":")
    module = load_module(target)
    obj = _attribute(module, target, attr)
    if not callable(obj):
        raise ValueError(f"{spec!r}: {attr} is not callable; give an Agent factory or a policy function")
    if "engine" in _parameters(obj):
        try:
            agent = obj(engine=engine, seed=seed)
        except Exception as e:
            raise ValueError(f"{spec!r}: the factory {attr} raised {type(e).__name__}: {e}") from None
        if not isinstance(agent, Agent):
            raise ValueError(f"{spec!r}: the factory {attr} returned a {type(agent).__name__}, not an Agent")
        agent.act = _reporting(agent.act, spec)
    else:
        agent = PolicyFunction(engine, obj, spec, seed)
    source = _source_file(obj) or getattr(module, "__file__", None)
    agent.source_sha256 = file_sha256(source) if source else None
    return agent


WEIGHTS_BOT_FILE = "agent.py"
WEIGHTS_BOT_TEXT = '''"""The policy in {weights} beside this file, as an outside bot: `{loader}` of {source} plays it.

    python evaluate.py --task TASK {spec}
"""

from pathlib import Path

from euchre_agents.outside import load_module


def agent(engine, seed=None):
    """The bot: an Agent for `engine` (rules and observation layout), its random stream seeded by `seed`."""
    load = load_module({source!r}).{loader}
    return load(Path(__file__).with_name({weights!r}), engine=engine, seed=seed)
'''
"""What `write_weights_bot` writes."""


def write_weights_bot(folder: str | os.PathLike, source: str | os.PathLike, loader: str, weights: str) -> str:
    """Write FOLDER/agent.py, a bot file whose factory `agent` plays FOLDER/WEIGHTS through `loader(path, engine=,
    seed=)` of the Python file `source` (named by its absolute path); the spec that plays it."""
    folder = Path(folder)
    spec = f"{folder / WEIGHTS_BOT_FILE}:agent"
    text = WEIGHTS_BOT_TEXT.format(weights=weights, loader=loader, source=str(Path(source).resolve()), spec=spec)
    (folder / WEIGHTS_BOT_FILE).write_text(text)
    return spec
