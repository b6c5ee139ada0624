"""The one interface every bot implements (the registry that builds bots by name is `euchre_agents.registry`).

A bot acts on batches: `act(obs, mask)` takes (n, D) observations and (n, A) legal masks from the
engine's encoding (the AEC env, the vector API and evaluate.py all produce them) and returns (n,)
legal action ids. Observations hold only what the acting seat may know, so a bot that acts on them
cannot peek. The one exception is the `oracle`, which declares `needs_full_state` and is also given
the engine state; it is a labeled cheating ceiling and never ranked as a fair bot.
"""

from __future__ import annotations

import abc
import hashlib
import os
from typing import Sequence, Union

import numpy as np

from euchre_env.engine import Engine, EuchreState

Seed = Union[int, Sequence[int], np.random.SeedSequence]
"""What `Agent.reseed` takes: anything `np.random.default_rng` accepts."""


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 hex digest of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class Agent(abc.ABC):
    """Base class: a bot for one engine (rules + observation layout)."""

    name = "agent"
    fair = True
    """False for bots that see hidden cards (the oracle)."""
    needs_full_state = False
    """True if `act` must also be given the engine state and the rows acted on."""
    weights_sha256: str | None = None
    """The sha256 of the weights file a learned bot plays, recorded in results (None: no weights)."""
    source_sha256: str | None = None
    """The sha256 of the user's source file an outside bot (`MODULE:ATTR`, `PATH.py:ATTR`) was loaded from."""

    def __init__(self, engine: Engine, seed: int | None = None):
        self.engine = engine
        self.rng = np.random.default_rng(seed)

    def reseed(self, seed: Seed) -> None:
        """Restart every random stream of the bot from `seed`, as if it had been built with it.

        Bots with inner generators override this.
        """
        self.rng = np.random.default_rng(seed)

    @abc.abstractmethod
    def act(
        self,
        obs: np.ndarray,
        mask: np.ndarray,
        state: EuchreState | None = None,
        rows: np.ndarray | None = None,
    ) -> np.ndarray:
        """(n,) legal actions for n decisions, given their observations and legal masks."""

    def act_one(self, observation: dict[str, np.ndarray]) -> int:
        """One action from a PettingZoo observation dict (`{"observation", "action_mask"}`)."""
        obs = np.asarray(observation["observation"])[None]
        mask = np.asarray(observation["action_mask"]).astype(bool)[None]
        return int(self.act(obs, mask)[0])


class RandomAgent(Agent):
    """Uniform over the legal actions."""

    name = "random"

    def act(self, obs, mask, state=None, rows=None):
        """A uniformly random legal action per row."""
        mask = np.asarray(mask, bool)
        noise = self.rng.random(mask.shape)
        return np.argmax(np.where(mask, noise, -1.0), axis=1)

    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n, A) its policy: uniform over each row's legal actions."""
        mask = np.asarray(mask, bool)
        return mask / mask.sum(axis=1, keepdims=True)
