"""How much better bot A1 does than bot A2 against the same opponent, on the same duplicate deals.

    python benchmarks/paired_difference.py experiments/results/tune2_r6 experiments/results/tune2_r4

Each argument is a folder written by `evaluate.py A B --seed S` (its `match.json` and `pairs.csv`). Both
matches must have the same opponent B, the same rules, mode and seed, so that they hold the same deals
(pairs with the same key). The difference of the two margins is then estimated pair by pair, so the luck
of the cards that both matches share cancels: its interval is narrower than that of two independent
matches of the same size, by as much as the two bots' results on a deal are correlated (printed). Where
both folders split the margin by who named trump (hands-mode matches of evaluate.py since that split), the
difference is split alike: on the hands A named and on the hands B named, each per hand of the match.
"""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from euchre_lab.cli import OptionError, fail, script_options
from euchre_lab.evaluation.estimates import Estimate, ratio_estimate, two_sided_p

SCRIPT = "benchmarks/paired_difference.py"

SAME = ("b", "mode", "seed", "rules")
"""What two matches must share to hold the same deals against the same opponent."""


SPLIT = ("a_named_margin", "b_named_margin")
"""pairs.csv's columns that split A's margin by who named trump."""


def read_match(folder: Path) -> tuple[dict, dict[str, tuple[float, ...]]]:
    """A match folder's summary and {deal key: (A's margin in points, hands[, A's margin on A's calls, on B's])}
    per duplicate pair (the split where pairs.csv has it)."""
    try:
        summary = json.loads((folder / "match.json").read_text())["match"]
        with open(folder / "pairs.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        split = SPLIT if rows and set(SPLIT) <= set(rows[0]) else ()
        pairs = {row["key"]: (float(row["a_points"]) - float(row["b_points"]), float(row["hands"]),
                              *(float(row[c]) for c in split)) for row in rows}
    except (OSError, KeyError, ValueError) as e:
        raise ValueError(f"{folder} is not a match folder of evaluate.py (match.json and pairs.csv): {e}") from None
    return summary, pairs


def paired_difference(first: Path, second: Path) -> tuple[Estimate, Estimate, Estimate, int, float, list[Estimate]]:
    """Margins per hand of the two matches and their difference (first - second) over the deals both
    played, the number of those pairs, the correlation of the two margins per pair, and the difference
    split into the hands A named and the hands B named (empty unless both matches have the split); a
    ValueError if they are not matches on the same deals."""
    (one, pairs_one), (two, pairs_two) = read_match(first), read_match(second)
    for field in SAME:
        if one.get(field) != two.get(field):
            raise ValueError(f"{first} and {second} differ in {field} ({one.get(field)!r} vs {two.get(field)!r}); "
                             f"compare matches against the same opponent with the same rules, mode and seed")
    keys = sorted(pairs_one.keys() & pairs_two.keys())
    if len(keys) < 2:
        raise ValueError(f"{first} and {second} share {len(keys)} deals; they need the same seed and two or more pairs")
    one_rows, two_rows = np.array([pairs_one[k] for k in keys]), np.array([pairs_two[k] for k in keys])
    (m1, h1), (m2, h2) = one_rows.T[:2], two_rows.T[:2]
    if not np.array_equal(h1, h2):
        raise ValueError(f"{first} and {second} played different numbers of hands on the same deals (games mode?); "
                         f"compare hands-mode matches")
    correlation = float(np.corrcoef(m1, m2)[0, 1]) if m1.std() > 0 and m2.std() > 0 else float("nan")
    both_split = one_rows.shape[1] == two_rows.shape[1] == 2 + len(SPLIT)
    split = [ratio_estimate(one_rows[:, c] - two_rows[:, c], h1) for c in range(2, 2 + len(SPLIT))] if both_split else []
    return ratio_estimate(m1, h1), ratio_estimate(m2, h2), ratio_estimate(m1 - m2, h1), len(keys), correlation, split


@dataclass
class Options:
    """The command line of the paired comparison (field docstrings are its --help)."""

    first: str = ""
    """match folder of the first bot against the opponent"""
    second: str = ""
    """match folder of the second bot against the same opponent"""


def main(argv: list[str] | None = None) -> int:
    """Print the two margins and their paired difference."""
    try:
        args = script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv,
                              positional={"first": dict(metavar="FIRST"), "second": dict(metavar="SECOND")})
        first, second, difference, pairs, correlation, split = paired_difference(Path(args.first), Path(args.second))
    except (OptionError, ValueError) as e:
        return fail(SCRIPT, e)
    print(f"{args.first}: margin {first} per hand")
    print(f"{args.second}: margin {second} per hand")
    print(f"difference over the same {pairs} pairs: {difference} per hand, p = {two_sided_p(difference):.3g} "
          f"(the margins' correlation per pair {correlation:.2f})")
    for who, part in zip(("A", "B"), split):
        print(f"  of it, on the hands {who} named trump: {part} per hand, p = {two_sided_p(part):.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
