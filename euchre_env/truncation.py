"""The safety net against endless episodes shared by the environments: truncation after `max_hands` hands.

A hand counts once it is over, scored or thrown in. Real play always ends (every scored hand moves
a side towards the target), but a policy that never names trump under `stick_the_dealer=False`
throws in every hand forever; `max_hands` ends such an episode with `truncated=True` (PettingZoo's
and Gymnasium's flag for "stopped from outside", as opposed to `terminated`). The default is
`ENV_DEFAULTS.max_hands` (`euchre_env.defaults`).
"""

from __future__ import annotations

from numbers import Integral


def check_max_hands(max_hands: int | None) -> int | None:
    """`max_hands` as given if it is None or a positive int, else a ValueError naming the fix."""
    if max_hands is None:
        return None
    if isinstance(max_hands, bool) or not isinstance(max_hands, Integral) or max_hands < 1:
        raise ValueError(f"max_hands must be a positive int or None (no limit), got {max_hands!r}")
    return int(max_hands)
