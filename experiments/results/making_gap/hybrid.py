"""Where does the method's agent lose to the shipped one: bidding or card play? A bot that makes the bids (bids,
alone calls and discards) with one agent's network and plays the cards with another's.

    BIDS=PATH CARDS=PATH python evaluate.py experiments/results/making_gap/hybrid.py:agent ppo --hands 20000 --seed S
"""
import os

import numpy as np

from euchre_agents.base import Agent
from euchre_agents.ppo import PPOAgent
from euchre_env.state import Phase


class Hybrid(Agent):
    """Bids, alone calls and discards by `bids`, cards by `cards` (two PPOAgents of the same engine)."""

    def __init__(self, engine, bids: PPOAgent, cards: PPOAgent):
        self.engine, self.bids, self.cards = engine, bids, cards
        self.phase_cells = engine.observation_layout["phase"]
        self.name = "hybrid"

    def reseed(self, seed):
        self.bids.reseed(seed)
        self.cards.reseed(seed)

    def act(self, obs, mask):
        obs = np.asarray(obs, np.float32)
        play = obs[:, self.phase_cells].argmax(axis=1) == Phase.PLAY
        out = np.empty(len(obs), np.int64)
        for who, rows in ((self.cards, play), (self.bids, ~play)):
            if rows.any():
                out[rows] = who.act(obs[rows], np.asarray(mask)[rows])
        return out


def agent(engine, seed=None):
    """The hybrid of the files named by the BIDS and CARDS environment variables (`ppo` paths)."""
    load = lambda path: PPOAgent.from_checkpoint(engine, path, seed=seed)  # noqa: E731
    return Hybrid(engine, load(os.environ["BIDS"]), load(os.environ["CARDS"]))
