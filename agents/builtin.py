"""Imports every bundled bot so that each registers its name with `agents.base.register`."""

import agents.base  # noqa: F401  (random)
import agents.heuristic  # noqa: F401  (heuristic)
import agents.pimc  # noqa: F401  (pimc, oracle)
from agents.base import register


def _make_ppo(engine, arg, seed):
    """`ppo:PATH[,sample]`; torch is imported only when a ppo bot is built."""
    from agents.ppo import make_ppo

    return make_ppo(engine, arg, seed)


register("ppo", _make_ppo)


def _make_rllib(engine, arg, seed):
    """`rllib:PATH[,policy=ID][,sample]`; ray is imported only when an rllib bot is built."""
    from agents.rllib import make_rllib

    return make_rllib(engine, arg, seed)


register("rllib", _make_rllib)
