"""The bundled bots by name: what `euchre_agents.registry` starts with."""

from __future__ import annotations

from typing import Callable

from euchre_agents.base import Agent, RandomAgent
from euchre_agents.heuristic import HeuristicAgent
from euchre_agents.pimc import OracleAgent, make_pimc
from euchre_env.engine import Engine

AgentFactory = Callable[[Engine, str, "int | None"], Agent]
"""factory(engine, arg, seed) -> Agent, where arg is what follows the name in `name:ARG`."""


def _make_ppo(engine: Engine, arg: str, seed: int | None) -> Agent:
    """`ppo:PATH[,sample]`; torch is imported only when a ppo bot is built."""
    from euchre_agents.ppo import make_ppo

    return make_ppo(engine, arg, seed)


def _make_rllib(engine, arg, seed):
    """`rllib:PATH[,policy=ID][,sample]`; ray is imported only when an rllib bot is built."""
    from euchre_agents.rllib import make_rllib

    return make_rllib(engine, arg, seed)


BUILTIN: dict[str, AgentFactory] = {
    "random": lambda engine, arg, seed: RandomAgent(engine, seed),
    "heuristic": lambda engine, arg, seed: HeuristicAgent(engine, seed),
    "pimc": make_pimc,
    "oracle": lambda engine, arg, seed: OracleAgent(engine, seed),
    "ppo": _make_ppo,
    "rllib": _make_rllib,
}
