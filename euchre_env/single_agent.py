"""Euchre for one learning seat as a Gymnasium env; the other three seats are registered bots.

    import gymnasium, euchre_env
    env = gymnasium.make("EuchreSingle-v0", partner="heuristic", opponents="random")

| Observation | Box(0, high, (D,), float32): the learner's information state (the engine's encoding) |
| Actions     | Discrete(A): the engine's action ids (cards, pass, suits, alone, partner)            |
| Mask        | `env.action_masks()` -> (A,) bool, as sb3-contrib's MaskablePPO expects; also `info["action_mask"]` |
| Reward      | the learner's reward summed over everything that happened since its last decision     |

An episode (a hand by default) starts at the learner's first decision: the bots play until it is the
learner's turn. A hand in which the learner never decides (its partner went alone) is skipped in
hand episodes and passes its points on to the next step in game episodes. An illegal action plays a
uniformly random legal action instead and sets `info["illegal_action"]` (`illegal_action="random"`,
so that Gymnasium's env checker can step with unmasked samples), or raises `IllegalActionError`
(`illegal_action="raise"`).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np

from agents.base import Agent, make_agent
from euchre_env.cards import NUM_SEATS
from euchre_env.engine import EPISODE_HAND, Engine, EuchreState, game_keys
from euchre_env.rules import Rules

ILLEGAL_RANDOM = "random"
ILLEGAL_RAISE = "raise"


class EuchreSingleEnv(gymnasium.Env):
    """One learning seat against (and beside) bots built from agent specs."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        rules: Rules | dict | None = None,
        seat: int = 0,
        partner: str = "random",
        opponents: str = "random",
        episode: str = EPISODE_HAND,
        reward: str = "points",
        illegal_action: str = ILLEGAL_RANDOM,
    ):
        if isinstance(rules, dict):
            rules = Rules.from_dict(rules)
        if seat not in range(NUM_SEATS):
            raise ValueError(f"seat must be 0-3, got {seat!r}")
        if illegal_action not in (ILLEGAL_RANDOM, ILLEGAL_RAISE):
            raise ValueError(f"illegal_action must be {ILLEGAL_RANDOM!r} or {ILLEGAL_RAISE!r}, got {illegal_action!r}")
        self.engine = Engine(rules, episode=episode, reward=reward)
        self.rules = self.engine.rules
        self.seat = seat
        self.illegal_action = illegal_action
        self.specs = {(seat + 2) % NUM_SEATS: partner, (seat + 1) % NUM_SEATS: opponents, (seat + 3) % NUM_SEATS: opponents}
        high = float(max(4, self.rules.rubber_games))
        self.observation_space = gymnasium.spaces.Box(0.0, high, (self.engine.observation_size,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(self.engine.num_actions)
        self.bots: dict[int, Agent] = {s: make_agent(spec, self.engine, seed=s) for s, spec in self.specs.items()}
        self.state: EuchreState | None = None
        self._pending_reward = 0.0  # the learner's reward from before its first decision of the episode

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal from the env's random stream and let the bots play up to the learner's first decision."""
        super().reset(seed=seed)
        if seed is not None:
            for s, bot in self.bots.items():
                bot.rng = np.random.default_rng([seed, s])
        while True:
            self.state = self.engine.init(game_keys(self.np_random, 1))
            reward = self._play_bots()
            if not self.state.done[0]:
                break
        self._pending_reward = reward
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's action, then the bots' until the learner is to act again or the episode ends."""
        if self.state is None or self.state.done[0]:
            raise RuntimeError("call reset() before step() (and after an episode ends)")
        action = int(action)
        illegal = not (0 <= action < self.engine.num_actions and self.state.legal[0, action])
        if illegal and self.illegal_action == ILLEGAL_RAISE:
            self.engine.check_actions(self.state, np.array([action]))
        if illegal:
            action = int(self.np_random.choice(np.flatnonzero(self.state.legal[0])))
        reward = self._pending_reward + float(self.engine.step(self.state, np.array([action]))[0, self.seat])
        reward += self._play_bots()
        self._pending_reward = 0.0
        terminated = bool(self.state.done[0])
        info = self._info()
        info["illegal_action"] = illegal
        return self._observation(), reward, terminated, False, info

    def action_masks(self) -> np.ndarray:
        """(A,) bool legal actions of the learner now (all False once the episode is over)."""
        if self.state.done[0]:
            return np.zeros(self.engine.num_actions, bool)
        return self.state.legal[0].copy()

    def _play_bots(self) -> float:
        """Bots act until the learner is to act or the episode ends; the learner's reward meanwhile."""
        total = 0.0
        state = self.state
        while not state.done[0] and (seat := int(state.to_play[0])) != self.seat:
            bot = self.bots[seat]
            obs, mask = self.engine.observe(state), state.legal.copy()
            if bot.needs_full_state:
                action = bot.act(obs, mask, state, np.array([0]))
            else:
                action = bot.act(obs, mask)
            total += float(self.engine.step(state, np.asarray(action, np.int64))[0, self.seat])
        return total

    def _observation(self) -> np.ndarray:
        return self.engine.observe(self.state, np.array([self.seat]))[0]

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks().astype(np.int8)}

