"""PettingZoo's standard AEC wrappers with fast paths for the calls made on every decision.

`OrderEnforcingWrapper` and `AssertOutOfBoundsWrapper` reach every attribute of the wrapped env
through a chain of `__getattr__` calls (a few microseconds per attribute), and the bounds check
goes through `Discrete.contains`. Around a fast raw env that chain costs more than the game itself.
The subclasses below keep the classes, checks, errors and warnings of the originals and only
shorten the common case:

- `last()` after `reset()` reads the raw env's attributes directly and calls its `observe` (the
  wrappers in between add nothing to either); before `reset()` it takes the standard path, which
  raises as usual.
- `step(action)` after `reset()` with agents left calls the next wrapper directly.
- the bounds check accepts a plain `int` (or a numpy integer the space's dtype can hold) inside
  the Discrete range at once: `Discrete.contains` is True for exactly those. Anything else (None,
  floats, out of range, other types) goes through the standard check.

The fast paths are taken only when the wrapper stack is exactly `OrderEnforcing(AssertOutOfBounds(raw))`;
the action spaces are read once, when the wrapper is built (the env's spaces are fixed).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from euchre_env.engine import IllegalActionError


class ActionOutOfBoundsError(IllegalActionError, AssertionError):
    """An action outside the agent's action space. An AssertionError, as PettingZoo's check raises,
    and an IllegalActionError, as the env raises for an illegal action; the state is unchanged."""


class AssertOutOfBounds(wrappers.AssertOutOfBoundsWrapper):
    """`AssertOutOfBoundsWrapper` with an exact fast check for in-range integer actions."""

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._raw = env.unwrapped
        self._ranges = {}
        """agent -> (first action, end) for Discrete action spaces."""
        self._int_types = {int}
        """Action types Discrete.contains accepts whenever the value is in range."""
        for agent in self._raw.possible_agents:
            space = self._raw.action_space(agent)
            if type(space) is gymnasium.spaces.Discrete:
                self._ranges[agent] = (int(space.start), int(space.start) + int(space.n))
                self._int_types |= {t for t in (np.int8, np.int16, np.int32, np.int64) if np.can_cast(t, space.dtype)}

    def step(self, action: Any) -> None:
        """Check the action is in the action space (fast for in-range integers), then step."""
        bounds = self._ranges.get(self._raw.agent_selection)
        if bounds is not None and type(action) in self._int_types and bounds[0] <= action < bounds[1]:
            self.env.step(action)
            return
        agent = self._raw.agent_selection
        done = self._raw.terminations[agent] or self._raw.truncations[agent]
        if not ((action is None and done) or self.action_space(agent).contains(action)):
            raise ActionOutOfBoundsError(self._out_of_bounds_message(agent, action, done))
        super().step(action)

    def _out_of_bounds_message(self, agent: str, action: Any, done: bool) -> str:
        """'action is not in action space' (PettingZoo's words), what was given, and what is allowed."""
        space = self.action_space(agent)
        given = f"{agent} was given {action!r} ({type(action).__name__})"
        if done:
            return f"action is not in action space: {given}, but it is done: step it with None"
        legal = []
        raw = self._raw
        if hasattr(raw, "legal_actions") and hasattr(raw, "action_name"):
            legal = [f"{raw.action_name(a)} ({a})" for a in raw.legal_actions()]
        ids = f"0..{space.n - 1}" if isinstance(space, gymnasium.spaces.Discrete) else str(space)
        allowed = f"an action id {ids}" + (f"; legal now: {', '.join(legal)}" if legal else "")
        return f"action is not in action space: {given}; give {allowed}"


class OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """`OrderEnforcingWrapper` whose `last()` and `step()` skip the attribute chain once reset."""

    def __init__(self, env: AECEnv):
        super().__init__(env)
        direct = isinstance(env, AssertOutOfBounds) and env.env is env.unwrapped
        self._raw = env.unwrapped if direct else None

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Observation, cumulative reward, terminated, truncated and info of the agent to act."""
        raw = self._raw
        if raw is None or not self._has_reset:
            return super().last(observe)
        agent = raw.agent_selection
        assert agent is not None
        return (
            raw.observe(agent) if observe else None,
            raw._cumulative_rewards[agent],
            raw.terminations[agent],
            raw.truncations[agent],
            raw.infos[agent],
        )

    def __str__(self) -> str:
        """The same name as the standard wrapper gives: the wrapped env's."""
        return str(self.env) if hasattr(self, "metadata") else repr(self)

    def step(self, action: Any) -> None:
        """Step the agent to act; before reset or with no agents left, the standard error or warning."""
        if self._raw is None or not self._has_reset or not self._raw.agents:
            super().step(action)
            return
        self._has_updated = True
        self.env.step(action)
