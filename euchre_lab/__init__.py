"""Euchre Lab's tools: `train` (PPO self-play, distillation, fine-tuning), `evaluate` (duplicate-deal
matches and ratings) and `play` (a person against the bots).

Installed, they are the commands `euchre-train`, `euchre-evaluate` and `euchre-play`; in a checkout,
`python train.py`, `python evaluate.py` and `python play.py` run the same modules.
"""

from euchre_env import __version__

__all__ = ["__version__"]
