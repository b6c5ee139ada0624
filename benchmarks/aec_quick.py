"""The AEC rows of throughput.py alone, as the best of many short runs (steady on a busy machine).

    python benchmarks/aec_quick.py               # 20 runs of 0.25 s CPU time per row
    python benchmarks/aec_quick.py --runs 40 --seconds 0.5

Rows: `euchre_v0.env()`, the same with the README's way of drawing the action, `euchre_v0.raw_env()`, PettingZoo's standard wrappers around a no-op env,
and env()'s wrappers around the same no-op env. Each row is one `throughput.aec_loop` (last + step,
reset after each hand, Rules.openspiel(), warmed up first) and a run times its next slice; the rows
take turns so that a burst of other work on the machine slows every row alike, and the fastest run
of each row is reported.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402

from throughput import aec_loop, measure, wrapper_floor_env  # noqa: E402

from euchre_env import Rules, euchre_v0  # noqa: E402
from euchre_lab.cli import OptionError, above, at_least, check_ranges, fail, script_options  # noqa: E402

SCRIPT = "benchmarks/aec_quick.py"
README_ROW = "env(), the README's numpy idiom"
"""The README's loop: the action drawn as `legal[rng.integers(legal.size)]` from a numpy Generator."""

ROWS = {
    "AEC euchre_v0.env()": lambda: euchre_v0.env(rules=Rules.openspiel(), episode="hand"),
    README_ROW: lambda: euchre_v0.env(rules=Rules.openspiel(), episode="hand"),
    "AEC euchre_v0.raw_env()": lambda: euchre_v0.raw_env(rules=Rules.openspiel(), episode="hand"),
    "PettingZoo wrappers around a no-op env": wrapper_floor_env,
    "env()'s wrappers around a no-op env": lambda: wrapper_floor_env(fast=True),
}


@dataclass
class Options:
    """The command line of the AEC speed table (field docstrings are its --help)."""

    runs: int = 20
    """runs per row"""
    seconds: float = 0.25
    """CPU seconds per run"""


def main(argv: list[str] | None = None) -> int:
    """Run every row `--runs` times, taking turns, and print each row's fastest run."""
    try:
        args = script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv)
        check_ranges(args, {"runs": at_least(1), "seconds": above(0)})
    except OptionError as e:
        return fail(SCRIPT, e)
    loops = {name: aec_loop(make(), seed, numpy_generator=name == README_ROW) for seed, (name, make) in enumerate(ROWS.items())}
    best = dict.fromkeys(ROWS, 0.0)
    for _ in range(args.runs):
        for name, loop in loops.items():
            best[name] = max(best[name], measure(loop, args.seconds, time.process_time))
    for name, rate in best.items():
        print(f"{name:40s} {rate:10,.0f} decisions/s  {1e6 / rate:7.2f} us/decision")
    return 0


if __name__ == "__main__":
    sys.exit(main())
