"""The bundled bots by name: what `euchre_agents.registry` starts with."""

from __future__ import annotations

from typing import Callable

from euchre_agents.base import Agent, RandomAgent
from euchre_agents.heuristic import EasyAgent, HeuristicAgent
from euchre_agents.pimc import OracleAgent, make_pimc
from euchre_env.engine import Engine
from euchre_env.extras import require

AgentFactory = Callable[[Engine, str, "int | None"], Agent]
"""factory(engine, arg, seed) -> Agent, where arg is what follows the name in `name:ARG`."""

AgentBuilder = Callable[[str, Engine, "int | None"], Agent]
"""build(spec, engine, seed) -> Agent: the registry's `make_agent`, for bots built from other bots."""


def _make_ppo(engine: Engine, arg: str, seed: int | None) -> Agent:
    """`ppo:PATH[,sample]`; torch is imported only when a ppo bot is built."""
    require("train", "torch", what="the ppo bot")
    from euchre_agents.ppo import make_ppo

    return make_ppo(engine, arg, seed)


def _make_search(engine: Engine, arg: str, seed: int | None) -> Agent:
    """`search[:PATH][,options]`; torch is imported only when a search bot is built."""
    require("train", "torch", what="the search bot")
    from euchre_agents.search import make_search

    return make_search(engine, arg, seed)


def _make_rllib(engine: Engine, arg: str, seed: int | None) -> Agent:
    """`rllib:PATH[,policy=ID][,sample]`; ray is imported only when an rllib bot is built."""
    require("ray", "ray", "torch", what="the rllib bot")
    from euchre_agents.rllib import make_rllib

    return make_rllib(engine, arg, seed)


def builtin_factories(build: AgentBuilder) -> dict[str, AgentFactory]:
    """The bundled bots' factories; `build` makes the bots a pimc's `model=` names."""
    return {
        "random": lambda engine, arg, seed: RandomAgent(engine, seed),
        "heuristic": lambda engine, arg, seed: HeuristicAgent(engine, seed),
        "easy": lambda engine, arg, seed: EasyAgent(engine, seed),
        "pimc": lambda engine, arg, seed: make_pimc(engine, arg, seed, build),
        "oracle": lambda engine, arg, seed: OracleAgent(engine, seed),
        "ppo": _make_ppo,
        "search": _make_search,
        "rllib": _make_rllib,
    }
