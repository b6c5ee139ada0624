"""Build a bot from a spec string (`random`, `pimc:worlds=20`, `ppo:run/ckpt.pt`, the user's `MODULE:ATTR`); register more names.

Starts with the bundled bots (`euchre_agents.builtin`). This is also the bot registry the single-agent env
finds through the `euchre_env.bots` entry point, so `EuchreSingle-v0` builds bots without
`euchre_env` importing `euchre_agents`.
"""

from __future__ import annotations

from euchre_agents.base import Agent
from euchre_agents.builtin import AgentFactory, builtin_factories
from euchre_agents.outside import USAGE, is_outside_spec, make_outside
from euchre_env.engine import Engine


def register(name: str, factory: AgentFactory) -> None:
    """Make `name` (or `name:ARG`) buildable by `make_agent`; factory(engine, arg, seed) -> Agent."""
    _REGISTRY[name] = factory


def registered() -> list[str]:
    """Names the registry knows."""
    return sorted(_REGISTRY)


def make_agent(spec: str, engine: Engine, seed: int | None = None) -> Agent:
    """Build a bot from a command-line spec such as `random`, `pimc:worlds=20` or `ppo:run/ckpt.pt`; a spec
    whose name is not registered and that reads `MODULE:ATTR` or `PATH.py:ATTR` loads the user's own bot
    (`euchre_agents.outside`): registered names win."""
    name, _, arg = spec.partition(":")
    if name in _REGISTRY:
        return _REGISTRY[name](engine, arg, seed)
    if is_outside_spec(spec):
        return make_outside(spec, engine, seed)
    raise ValueError(f"unknown agent {spec!r}; known agents: {', '.join(sorted(_REGISTRY))}; or your own as {USAGE}")


_REGISTRY: dict[str, AgentFactory] = builtin_factories(make_agent)


def parse_weighted(text: str, option: str) -> list[tuple[str, float]]:
    """`heuristic=0.6,pimc:worlds=10=0.4` -> [(spec, weight)]; a spec may hold `=` but no comma."""
    items = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, number = part.rpartition("=")
        try:
            value = float(number)
        except ValueError:
            value = -1.0
        if not sep or not name or value < 0:
            raise ValueError(f"{option} entry {part!r} is not NAME=NUMBER with a number >= 0")
        items.append((name, value))
    if not items or len({n for n, _ in items}) != len(items):
        raise ValueError(f"{option}={text!r} needs one or more entries with distinct names")
    return items
