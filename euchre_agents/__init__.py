"""Euchre Lab's bots: the interface in `euchre_agents.base`, built by name by `euchre_agents.registry.make_agent`."""

from euchre_agents.base import Agent, RandomAgent
from euchre_env import __version__

__all__ = ["Agent", "RandomAgent", "__version__"]
