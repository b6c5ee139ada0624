"""Named, versioned tasks: what a published result is a result on.

A task is a frozen bundle: a named table's rules (`euchre_env.named_tables`), the episode kind, the reward,
the observation and action layouts, the bots a single learning seat sits beside, and the ladder a bot is
scored against (`euchre_lab.evaluation.protocol`). Its name is `<table>-v<version>`, and changing anything a result
depends on makes a new version: `fingerprint` pins the env's side (a test recomputes it), `protocol` the
ladder's (a learned rung added or its weights changed bump it; `learned_sha256` pins them). docs/tasks.md has a page per task with its history.

    euchre_v0.env(task="standard-v1"); EuchreVectorEnv(512, task="no-stick-v1")
    gymnasium.make("Euchre-standard-v1", opponents="pimc")     # the single-agent env, `gym_id`
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from euchre_env.defaults import ENV_DEFAULTS
from euchre_env.engine import Engine
from euchre_env.named_tables import DESCRIPTIONS, NAMED_TABLES
from euchre_env.rules import Rules
from euchre_env.state import EPISODE_HAND, REWARD_POINTS

GYM_PREFIX = "Euchre-"
"""A task's Gymnasium id is this prefix and its name: `Euchre-standard-v1`."""


@dataclass(frozen=True)
class Task:
    """One named, versioned task (see the module docstring)."""

    table: str
    """The named table whose rules it plays (a key of `NAMED_TABLES`)."""
    version: int
    fingerprint: str
    """The first 16 hex digits of `task_fingerprint`: the env's side of the task, frozen."""
    episode: str = EPISODE_HAND
    reward: str = REWARD_POINTS
    observation_version: int = 1
    """The observation layout's version (docs/environment.md)."""
    action_version: int = 1
    """The action ids' version (docs/environment.md)."""
    partner: str = "heuristic"
    """The single-agent env's partner bot (a spec)."""
    opponents: str = "heuristic"
    """The single-agent env's opponent bots (a spec)."""
    learned: str | None = None
    """The spec of the task's shipped learned agent, the ladder's learned rung; None while the table has none."""
    learned_sha256: str | None = None
    """The sha256 of the weights the learned rung plays under this protocol version: other weights are refused."""
    protocol: int = 1
    """The version of this task's scoring protocol (`euchre_lab.evaluation.protocol`): bumped when its ladder changes."""

    @property
    def name(self) -> str:
        """`<table>-v<version>`."""
        return f"{self.table}-v{self.version}"

    @property
    def gym_id(self) -> str:
        """The Gymnasium id of its single-agent env."""
        return GYM_PREFIX + self.name

    @property
    def rules(self) -> Rules:
        """The table's rules."""
        return NAMED_TABLES[self.table]

    @property
    def description(self) -> str:
        """One line on the table, for listings."""
        return DESCRIPTIONS[self.table]


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("standard", 1, "397ea0acfacfa80b", learned="ppo",
             learned_sha256="6e97eb1f0a1804f9eb1c042e5681e74f4446eb265800b0a78ff1123d9b9a652e"),
        Task("no-stick", 1, "fa6f35e97b8c747b", learned="ppo", protocol=2,
             learned_sha256="9f95e8d2c074645427a26f6fcbd40c0b1bd2a0b3655984b072d9271083f6b670"),
        Task("openspiel", 1, "e1e7af0f673c5623", learned="ppo", protocol=2,
             learned_sha256="499756e7032fbd417284af77e301d3293ea3ebe8a5f9afb105878afb1a0b8064"),
        Task("joker32", 1, "dd0048b064b81333", learned="ppo", protocol=2,
             learned_sha256="e763ebb91adee09a8a8cbb450e9ca856543ed2b00e877418640098ae772fe410"),
        Task("lone-defender", 1, "4ee319c8a059121f", learned="ppo", protocol=2,
             learned_sha256="fdf6a9f35aefbf1f83613626114fe80dd32cffc0fe8f7a1f0cb3b7dcd59e056f"),
    )
}
"""Every task by name. A task is never edited in place: a change is a new version beside it."""


def get_task(name: str | Task) -> Task:
    """The task of that name (a Task is returned as it is); a ValueError naming the known tasks."""
    if isinstance(name, Task):
        return name
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; known tasks: {', '.join(TASKS)}")
    return TASKS[name]


def task_for(rules: Rules, episode: str = EPISODE_HAND) -> Task | None:
    """The newest task that plays these rules in this episode kind, None if none does."""
    return next((t for t in reversed(TASKS.values()) if t.rules == rules and t.episode == episode), None)


def task_settings(task: str | Task | None, rules: Any, episode: str, reward: str) -> tuple[Any, str, str]:
    """An env's (rules, episode, reward): the task's when `task` is given (then `rules` must be None and the
    episode and reward the env's defaults or the task's), else the ones given."""
    if task is None:
        return rules, episode, reward
    task = get_task(task)
    if rules is not None:
        raise ValueError(f"task {task.name!r} fixes the rules; give task= or rules=, not both")
    for option, given, default, fixed in (("episode", episode, ENV_DEFAULTS.episode, task.episode),
                                          ("reward", reward, ENV_DEFAULTS.reward, task.reward)):
        if given not in (default, fixed):
            raise ValueError(f"task {task.name!r} plays {option}={fixed!r}; drop {option}={given!r} or drop task=")
    return task.rules, task.episode, task.reward


def task_fingerprint(task: Task) -> str:
    """sha256 over everything the env's side of a task fixes: rules, episode, reward, observation layout,
    action ids and the single-agent env's bots (its first 16 hex digits are `Task.fingerprint`)."""
    engine = Engine(task.rules, episode=task.episode, reward=task.reward)
    frozen = {
        "rules": task.rules.to_dict(),
        "episode": task.episode,
        "reward": task.reward,
        "observation": [engine.observation_size, {k: v.tolist() for k, v in engine.observation_layout.items()}],
        "actions": [engine.action_label(a) for a in range(engine.num_actions)],
        "bots": [task.partner, task.opponents],
    }
    return hashlib.sha256(json.dumps(frozen, sort_keys=True).encode()).hexdigest()
