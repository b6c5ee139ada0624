"""Build a bot from a spec string (`random`, `pimc:worlds=20`, `ppo:run/ckpt.pt`); register more names.

Starts with the bundled bots (`agents.builtin`). This is also the bot registry the single-agent env
finds through the `euchre_env.bots` entry point, so `EuchreSingle-v0` builds bots without
`euchre_env` importing `agents`.
"""

from __future__ import annotations

from agents.base import Agent
from agents.builtin import BUILTIN, AgentFactory
from euchre_env.engine import Engine

_REGISTRY: dict[str, AgentFactory] = dict(BUILTIN)


def register(name: str, factory: AgentFactory) -> None:
    """Make `name` (or `name:ARG`) buildable by `make_agent`; factory(engine, arg, seed) -> Agent."""
    _REGISTRY[name] = factory


def registered() -> list[str]:
    """Names the registry knows."""
    return sorted(_REGISTRY)


def make_agent(spec: str, engine: Engine, seed: int | None = None) -> Agent:
    """Build a bot from a command-line spec such as `random`, `pimc:worlds=20` or `ppo:run/ckpt.pt`."""
    name, _, arg = spec.partition(":")
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {spec!r}; known agents: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](engine, arg, seed)
