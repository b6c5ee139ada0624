"""The defaults that the three environments share: the AEC env, the vector env and the single-agent env.

Each env's signature reads its defaults from `ENV_DEFAULTS`, and docs/environment.md states them in
one table (a test holds the signatures and the table to this module).
"""

from __future__ import annotations

from dataclasses import dataclass

from euchre_env.state import EPISODE_HAND, REWARD_POINTS


@dataclass(frozen=True)
class EnvDefaults:
    """The options every environment takes, with the value each gets when not given."""

    episode: str = EPISODE_HAND
    """One hand per episode: the unit the engine, OpenSpiel's euchre and training use."""
    reward: str = REWARD_POINTS
    """Each hand's points, its team's minus the other team's, paid when the hand ends."""
    max_hands: int | None = 10_000
    """Truncate an episode after this many hands are over: more than twice the scored hands of the
    longest legal episode (a rubber of 19 games to 100 points has at most 19 * 199), so it never
    cuts a real game, and it ends a policy that throws in every hand forever."""


ENV_DEFAULTS = EnvDefaults()
"""The defaults of `euchre_v0.env`, `EuchreVectorEnv` and `EuchreSingleEnv`."""
