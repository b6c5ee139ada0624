"""A batched API over the engine for self-play training and fast evaluation.

`EuchreVectorEnv` advances N games with one call holding one action per game (for the seat to act in
that game) and returns that seat's observation and legal mask, the acting seat per game, rewards for
all four seats, and done flags. Finished games restart in the same call (Gymnasium's `SAME_STEP`
autoreset): the observation returned for a finished game is the first decision of its next episode,
while the rewards and `terminated` flag belong to the episode that just ended.

`max_hands` (default None: no limit) truncates a game once that many of its hands are over (scored or
thrown in) and its episode is not: `truncated[i]` is True and the game restarts in the same call, like
a finished one. Real play always ends; this only guards against a policy that never names trump
under `stick_the_dealer=False`.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode

from euchre_env.engine import EPISODE_HAND, Engine, EuchreState, game_keys
from euchre_env.rules import Rules
from euchre_env.truncation import check_max_hands


class EuchreVectorEnv:
    """N Euchre games stepped together. Same engine and observation encoding as `euchre_v0`.

    `copy=False` returns one observation buffer that every reset and step overwrites (as Gymnasium's
    vector envs do with `copy=False`): faster for large N, but an observation kept across a step
    must be copied by the caller. `obs_dtype=np.uint8` returns the same cells as uint8 (4x less
    memory traffic to a GPU learner); the score cells of game and rubber episodes then hold points:
    multiply by `engine.observation_scale` for the float32 values.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "name": "euchre_vector_v0"}

    def __init__(
        self,
        num_envs: int,
        rules: Rules | None = None,
        episode: str = EPISODE_HAND,
        reward: str = "points",
        seed: int | None = None,
        copy: bool = True,
        max_hands: int | None = None,
        obs_dtype: type = np.float32,
    ):
        self.max_hands = check_max_hands(max_hands)
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.obs_dtype = np.dtype(obs_dtype)
        if self.obs_dtype not in (np.float32, np.uint8):
            raise ValueError(f"obs_dtype must be float32 or uint8, got {self.obs_dtype}")
        self.engine = Engine(rules, episode=episode, reward=reward)
        self.rules = self.engine.rules
        high = float(max(4, self.rules.rubber_games))
        if self.obs_dtype == np.uint8:  # score cells in points
            high = float(max(high, self.rules.target_points + 3))
        size = self.engine.observation_size
        self.single_observation_space = gymnasium.spaces.Box(0, high, (size,), self.obs_dtype)
        self.single_action_space = gymnasium.spaces.Discrete(self.engine.num_actions)
        self.observation_space = gymnasium.spaces.Box(0, high, (self.num_envs, size), self.obs_dtype)
        self.action_space = gymnasium.spaces.MultiDiscrete(np.full(self.num_envs, self.engine.num_actions))
        self.state: EuchreState | None = None
        self._seed = seed
        self.copy = bool(copy)
        self._obs_buffer: np.ndarray | None = None
        self._first_deal: np.ndarray | None = None
        """(N,) each game's `deal_count` when its episode began (for `max_hands`)."""

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start N new episodes. Game i's deals depend only on (seed, i)."""
        if seed is None:
            seed = self._seed
        self.state = self.engine.init(game_keys(seed, self.num_envs))
        self._first_deal = self.state.deal_count.copy()
        return self._observe(), self._info()

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per game -> (obs, rewards (N, 4), terminated, truncated, info).

        Raises IllegalActionError (nothing applied) if any game's action is illegal.
        """
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        if self._first_deal is None or self._first_deal.shape != self.state.deal_count.shape:
            self._first_deal = self.state.deal_count.copy()  # a state set from outside: count from now
        rewards = self.engine.step(self.state, actions)
        terminated = self.state.done.copy()
        truncated = np.zeros(self.num_envs, bool)
        if self.max_hands is not None:
            truncated = ~terminated & (self.state.deal_count - self._first_deal >= self.max_hands)
        info: dict[str, Any] = {}
        ended = terminated | truncated
        if ended.any():
            rows = np.flatnonzero(ended)
            info["final_score"] = self.state.score.copy()
            info["final_hand_points"] = self.state.hand_points.copy()
            self.engine.restart(self.state, rows)
            self._first_deal[rows] = self.state.deal_count[rows]
        obs = self._observe()
        info.update(self._info())
        return obs, rewards, terminated, truncated, info

    def _observe(self) -> np.ndarray:
        if self.copy:
            return self.engine.observe(self.state, dtype=self.obs_dtype)
        if self._obs_buffer is None:
            self._obs_buffer = np.empty((self.num_envs, self.engine.observation_size), self.obs_dtype)
        return self.engine.observe(self.state, out=self._obs_buffer)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.state.legal.copy(), "to_play": self.state.to_play.astype(np.int64)}

    @property
    def action_masks(self) -> np.ndarray:
        """(N, A) bool legal mask of the seat to act in each game (a view; do not modify)."""
        return self.state.legal

    @property
    def to_play(self) -> np.ndarray:
        """(N,) seat to act in each game."""
        return self.state.to_play

    def close(self) -> None:
        """Nothing to release."""
