"""play.py's pieces: the referee table shared by the terminal and web front ends, and those front ends."""

from euchre_env import __version__

__all__ = ["__version__"]
