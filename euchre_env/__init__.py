"""Euchre Lab's environment: the rules engine, the PettingZoo AEC env and the batched vector API."""

__version__ = "0.1.0"
"""Euchre Lab's one version, for all four packages (each re-exports it), read by pyproject.toml and written into
every result file; CHANGELOG.md and CITATION.cff state it too (a test holds them equal)."""

import gymnasium

from euchre_env import euchre_v0
from euchre_env.cards import Deck, deck_for
from euchre_env.engine import DealError, Engine, EuchreState, IllegalActionError, Phase, game_keys
from euchre_env.rules import Rules, RulesError
from euchre_env.tasks import TASKS, Task, get_task
from euchre_env.vector import EuchreVectorEnv, random_legal_actions

gymnasium.register("EuchreSingle-v0", entry_point="euchre_env.single_agent:EuchreSingleEnv")
for _task in TASKS.values():
    gymnasium.register(_task.gym_id, entry_point="euchre_env.single_agent:EuchreSingleEnv", kwargs={"task": _task.name})

__all__ = [
    "__version__",
    "DealError",
    "Deck",
    "Engine",
    "EuchreState",
    "EuchreVectorEnv",
    "IllegalActionError",
    "Phase",
    "Rules",
    "RulesError",
    "TASKS",
    "Task",
    "get_task",
    "deck_for",
    "euchre_v0",
    "game_keys",
    "random_legal_actions",
]
