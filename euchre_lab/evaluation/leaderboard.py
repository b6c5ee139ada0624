"""The leaderboard: every comparable score file under a folder, as a table in docs/benchmarks.md and a figure.

    python -m euchre_lab.evaluation.leaderboard RESULTS                 # -> docs/benchmarks.md, docs/leaderboard.png
    python -m euchre_lab.evaluation.leaderboard RESULTS --page PAGE --figure PNG

Reads each `score.json` that `evaluate.py --task` wrote (a `--quick` one is left out: it is not comparable),
groups them by task and protocol version (scores of different protocol versions are never ranked together),
and rewrites the part of PAGE between `<!-- leaderboard -->` and `<!-- /leaderboard -->`.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from euchre_lab.cli import OptionError, fail, script_options

SCRIPT = "python -m euchre_lab.evaluation.leaderboard"
START, END = "<!-- leaderboard -->", "<!-- /leaderboard -->"


@dataclass
class Options:
    """The leaderboard's command line (field docstrings are its --help)."""

    results: str = ""
    """folder searched (recursively) for score.json files: the project's are under its experiments' results"""
    page: str = "docs/benchmarks.md"
    """the Markdown page whose leaderboard section is rewritten"""
    figure: str = "docs/leaderboard.png"
    """the figure drawn beside it"""


def read_scores(folder: Path) -> list[dict[str, Any]]:
    """Every comparable score record under `folder`, with its file's path, best first within each task."""
    records = []
    for path in sorted(folder.rglob("score.json")):
        record = json.loads(path.read_text())
        if record.get("comparable"):
            records.append({**record, "path": path.parent.as_posix()})
    return sorted(records, key=lambda r: (r["task"], r["protocol"], -r["score"]["value"]))


def interval_text(estimate: dict[str, float]) -> str:
    """`+0.097 [+0.090, +0.104]` from a score file's estimate, with true minus signs."""
    return f"{estimate['value']:+.3f} [{estimate['low']:+.3f}, {estimate['high']:+.3f}]".replace("-", "−")


def table(records: list[dict[str, Any]]) -> str:
    """The leaderboard as Markdown: one row per score, each rung's margin beside the headline."""
    rungs = list(dict.fromkeys(o["rung"] for r in records for o in r["opponents"]))
    head = ["task", "protocol", "bot", "score [95%]", *(f"vs {name}" for name in rungs), "package", "result"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in records:
        margins = {o["rung"]: interval_text(o["margin"]) for o in r["opponents"]}
        cells = [f"`{r['task']}`", str(r["protocol"]), f"`{r['scored']['spec']}`", f"**{interval_text(r['score'])}**",
                 *(margins.get(name, "–") for name in rungs), r["package_version"], f"`{r['path']}`"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rewrite_page(page: Path, text: str, start: str = START, end: str = END) -> None:
    """Replace what lies between the page's markers (the leaderboard's unless given) with `text`."""
    content = page.read_text()
    if start not in content or end not in content:
        raise OptionError(f"{page} has no {start} ... {end} section to rewrite")
    before, rest = content.split(start, 1)
    after = rest.split(end, 1)[1]
    page.write_text(f"{before}{start}\n{text}\n{end}{after}")


def plot(records: list[dict[str, Any]], path: Path) -> None:
    """Each score with its 95% interval and each rung's margin, one row per bot and task."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = records[::-1]
    fig, ax = plt.subplots(figsize=(9, 1.6 + 0.6 * len(rows)))
    for y, r in enumerate(rows):
        s = r["score"]
        ax.errorbar(s["value"], y, xerr=[[s["value"] - s["low"]], [s["high"] - s["value"]]], fmt="o", color="black",
                    capsize=4, label="score" if y == 0 else None)
        for k, o in enumerate(o for o in r["opponents"] if o["in_score"]):
            ax.plot(o["margin"]["value"], y, "x", color=f"C{k}", label=f"vs {o['rung']}" if y == 0 else None)
    ax.set_yticks(range(len(rows)), [f"{r['scored']['spec']} on {r['task']} (p{r['protocol']})" for r in rows])
    ax.axvline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("margin per hand (points), 95% interval")
    ax.set_title("the scoring protocol's leaderboard")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Rewrite the page's leaderboard and its figure; 2 with one line for a bad input."""
    try:
        options = script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv,
                                 positional={"results": dict(metavar="RESULTS")})
        records = read_scores(Path(options.results))
        if not records:
            raise OptionError(f"{options.results} holds no comparable score.json (evaluate.py --task writes them)")
        figure = os.path.relpath(options.figure, Path(options.page).parent)
        rewrite_page(Path(options.page), table(records) + f"\n\n![the leaderboard]({figure})")
    except (OptionError, OSError, ValueError, KeyError) as error:
        return fail(SCRIPT, error)
    plot(records, Path(options.figure))
    print(f"{len(records)} scores: rewrote {options.page} and drew {options.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
