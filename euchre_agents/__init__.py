"""Euchre Lab's bots behind one interface: `make_agent("heuristic", engine)` and friends."""

from euchre_agents.base import Agent, RandomAgent
from euchre_agents.registry import make_agent, register, registered

__all__ = ["Agent", "RandomAgent", "make_agent", "register", "registered"]
