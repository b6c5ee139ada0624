"""Who the PPO learner plays in each game: itself (all four seats), a past snapshot of itself (the pool)
or a registered bot, drawn per game from `--opponent-mix`, with the side the learner holds."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch.distributions.categorical import Categorical

from euchre_agents.network import ActorCritic
from euchre_agents.registry import make_agent
from euchre_env import EuchreState
from euchre_env.play import act
from euchre_lab.training.runs import Run
from euchre_lab.training.train_options import POOL, SELF, opponent_mix

GAME_ARRAYS = ("kind", "team", "pool_slot")
"""The per-game draws a checkpoint saves."""


def sample_actions(
    net: ActorCritic, obs: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(actions, log-probabilities, values) drawn from the masked policy: illegal actions have probability 0."""
    logits, value = net(obs, mask)
    dist = Categorical(logits=logits, validate_args=False)
    action = dist.sample()
    return action, dist.log_prob(action), value


class League:
    """Who the learner plays in each game: itself, a past snapshot (the pool) or a bot, and which side it holds."""

    def __init__(self, run: Run, rng: np.random.Generator):
        args = run.args
        mix = opponent_mix(args)
        self.run, self.rng, self.pool_size = run, rng, args.pool_size
        self.names = [name for name, _ in mix]
        self.weights = np.array([w for _, w in mix])
        self.self_kind = self.names.index(SELF) if SELF in self.names else -1
        self.pool_kind = self.names.index(POOL) if POOL in self.names else -1
        self.bots = {
            name: make_agent(name, run.engine, seed=args.seed + 1 + k)
            for k, name in enumerate(self.names)
            if name not in (SELF, POOL)
        }
        self.needs_full_state = any(bot.needs_full_state for bot in self.bots.values())
        """Some opponent (the oracle) sees every hand: the rollout then hands it the engine state."""
        self.pool: list[ActorCritic] = []
        self.pool_count = 0
        n = args.num_envs
        self.kind = np.zeros(n, np.int64)
        self.team = np.zeros(n, np.int64)
        self.pool_slot = np.zeros(n, np.int64)

    def _new_snapshot(self) -> ActorCritic:
        return ActorCritic(self.run.engine, **self.run.model_kwargs).to(self.run.device).eval()

    def snapshot(self) -> None:
        """Copy the learner into the pool (replacing the oldest snapshot when full)."""
        slot = self.pool_count % self.pool_size
        if slot == len(self.pool):
            self.pool.append(self._new_snapshot())
        self.pool[slot].load_state_dict(self.run.net.state_dict())
        self.pool_count += 1

    def draw(self, rows: np.ndarray) -> None:
        """New opponents and sides for the games in `rows`."""
        self.kind[rows] = self.rng.choice(len(self.names), size=rows.size, p=self.weights)
        self.team[rows] = self.rng.integers(0, 2, size=rows.size)
        self.pool_slot[rows] = self.rng.integers(0, len(self.pool), size=rows.size)

    def learner_rows(self, to_play: np.ndarray) -> np.ndarray:
        """(N,) bool: the learner decides in this game now."""
        return (self.kind == self.self_kind) | (to_play % 2 == self.team)

    def act(self, actions: np.ndarray, learner: np.ndarray, obs: np.ndarray, mask: np.ndarray,
            state: EuchreState | None) -> None:
        """Fill in the opponents' actions (bots and pool snapshots) where the learner does not decide;
        `state` is needed (and read) only when `needs_full_state`."""
        for k, name in enumerate(self.names):
            their = np.flatnonzero(~learner & (self.kind == k))
            if k == self.self_kind or their.size == 0:
                continue
            if k != self.pool_kind:
                actions[their] = act(self.bots[name], obs[their], mask[their], state, their, label=name)
                continue
            for slot in np.unique(self.pool_slot[their]):
                r = their[self.pool_slot[their] == slot]
                with torch.no_grad():
                    a, _, _ = sample_actions(self.pool[slot], self.run.tensor(obs[r]), self.run.tensor(mask[r]))
                actions[r] = a.cpu().numpy()

    def state_dict(self) -> dict[str, Any]:
        """The pool and the per-game draws, as a checkpoint holds them."""
        return {
            "pool": [p.state_dict() for p in self.pool],
            "pool_count": self.pool_count,
            "games": {name: torch.from_numpy(getattr(self, name).copy()) for name in GAME_ARRAYS},
        }

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        """Inverse of `state_dict`."""
        for weights in saved["pool"]:
            self.pool.append(self._new_snapshot())
            self.pool[-1].load_state_dict(weights)
        self.pool_count = saved["pool_count"]
        for name in GAME_ARRAYS:
            getattr(self, name)[:] = saved["games"][name].numpy()
