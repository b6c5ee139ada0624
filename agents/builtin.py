"""Imports every bundled bot so that each registers its name with `agents.base.register`."""

import agents.base  # noqa: F401  (random)
