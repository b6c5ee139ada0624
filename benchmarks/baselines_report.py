"""The baselines' figure and table: the protocol score against the learner's decisions, from the runs' journals.

    python benchmarks/baselines_report.py                  # -> docs/baselines.png and docs/benchmarks.md's table
    python benchmarks/baselines_report.py experiments/results/baselines --page docs/benchmarks.md --figure docs/baselines.png

Reads every RESULTS/<run>/journal.json that benchmarks/baselines.py wrote and the score files they name, and groups
the seeds of each algorithm and budget.
- The figure: one curve per algorithm through the mean of its seeds' scores, with a band from the lowest seed to
  the highest; filled markers are full-protocol scores, open ones `--quick` scores (1/20 of the pairs), drawn only
  where a budget has no full score; the shipped agent's score and the making method's are dashed lines.
- The table (between `<!-- baselines -->` and `<!-- /baselines -->` in PAGE): per algorithm and budget the seeds,
  the learner's decisions made (mean over the seeds), the training wall time (mean per seed, every session's
  counted up to its last checkpoint), decisions per second of that time, the mean full-protocol score with its 95%
  interval over the seeds (Student's t; one seed: the protocol's own interval) and each seed's score; beside them
  the shipped agent's score, and the score of the agent that the making method's default preset made from nothing,
  with the run's wall time end to end and its command, read from the run's journal.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout: the package's modules sit next to this folder
sys.path.insert(0, str(ROOT / "benchmarks"))  # the driver beside this script

from baselines import JOURNAL, TASK, budget_label  # noqa: E402
from euchre_lab.cli import OptionError, fail, script_options  # noqa: E402
from euchre_lab.evaluation.estimates import Z  # noqa: E402
from euchre_lab.evaluation.leaderboard import interval_text, rewrite_page  # noqa: E402

SCRIPT = "benchmarks/baselines_report.py"
START, END = "<!-- baselines -->", "<!-- /baselines -->"
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}
"""Student's t quantile of a two-sided 95% interval by degrees of freedom (from any t table); Z beyond."""
SHIPPED_COST = ("distilled from search labels over many rounds, then fine-tuned: no one run's decisions; its stages and "
                "their wall times in [EXPERIMENTS.md](../experiments/EXPERIMENTS.md"
                "#the-learned-agent--teacher-data-distillation-checkpointseuchre_ppopt)")


@dataclass
class Options:
    """The report's command line (field docstrings are its --help)."""

    results: str = "experiments/results/baselines"
    """folder of the runs' journals (benchmarks/baselines.py --results)"""
    page: str = "docs/benchmarks.md"
    """the Markdown page whose baselines section is rewritten"""
    figure: str = "docs/baselines.png"
    """the figure drawn beside it"""
    shipped: str = "experiments/results/score_standard-v1_ppo/score.json"
    """the shipped agent's score file (evaluate.py --task standard-v1 ppo), its row and its line"""
    method: str = "experiments/results/score_standard-v1_making/score.json"
    """the score file of an agent that `train.py --config configs/recipe.yaml` made, its row and its line ('' for none)"""
    method_journal: str = "experiments/results/making_standard_10/journal.json"
    """that run's journal (train.py --stage make), for its command and wall time"""


@dataclass
class Reference:
    """A scored agent drawn beside the baselines: its row's name, score record, what it cost, its line's label."""

    name: str
    record: dict[str, Any]
    cost: str
    legend: str


def references(options: Options) -> list[Reference]:
    """The shipped agent's and the making method's rows, where their files are given."""
    rows = []
    if options.shipped:
        record = json.loads(Path(options.shipped).read_text())
        rows.append(Reference(f"shipped `{record['scored']['spec']}`", record, SHIPPED_COST, f"shipped {record['scored']['spec']}"))
    if options.method:
        record = json.loads(Path(options.method).read_text())
        journal = json.loads(Path(options.method_journal).read_text())
        hours = sum(part["wall_s"] for part in journal["parts"].values()) / 3600
        card = os.path.relpath(Path(options.method_journal).with_name("MODEL_CARD.md"), Path(options.page).parent)
        rows.append(Reference(f"the making method `{record['scored']['spec']}`", record,
                              f"`{journal['commands'][0]}` from nothing: {hours:.2f} h end to end on this machine, "
                              f"every part ([its card]({card}))", f"the making method, {hours:.2f} h from nothing"))
    return rows


@dataclass
class SeedPoint:
    """One seed's run at one budget: what it made, how long it trained, its scores (full, quick) if scored."""

    seed: int
    decisions: int
    seconds: float
    full: dict[str, float] | None
    quick: dict[str, float] | None


def read_points(results: Path) -> tuple[dict[tuple[str, int], list[SeedPoint]], dict[str, str]]:
    """Every run's points by (algorithm, budget), and what each algorithm is."""
    groups: dict[tuple[str, int], list[SeedPoint]] = defaultdict(list)
    what: dict[str, str] = {}
    for path in sorted(results.glob(f"*/{JOURNAL}")):
        journal = json.loads(path.read_text())
        what[journal["algorithm"]] = journal["what"]
        for budget, point in journal["points"].items():
            scores = {kind: json.loads((path.parent / s["file"]).read_text())["score"] for kind, s in point["scores"].items()}
            groups[journal["algorithm"], int(budget)].append(
                SeedPoint(journal["seed"], point["decisions"], point["training_seconds"], scores.get("full"), scores.get("quick")))
    return dict(groups), what


def over_seeds(scores: list[dict[str, float]]) -> dict[str, float]:
    """The mean of the seeds' scores with its 95% interval over the seeds (one seed: its own interval)."""
    if len(scores) == 1:
        return scores[0]
    values = [s["value"] for s in scores]
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    half = T95.get(len(values) - 1, Z) * sd / math.sqrt(len(values))
    return {"value": mean, "low": mean - half, "high": mean + half}


def duration(seconds: float) -> str:
    """12.5 min, or 3.2 h."""
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def table(groups: dict[tuple[str, int], list[SeedPoint]], what: dict[str, str], refs: list[Reference]) -> str:
    """What each algorithm is, then the Markdown table: one row per algorithm and budget, the references' beside them."""
    described = [f"- `{algorithm}`: {text}" for algorithm, text in sorted(what.items())]
    head = ["baseline", "budget", "seeds", "learner decisions", "training wall time", "decisions/s", "score [95% over seeds]", "each seed"]
    lines = [*described, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (algorithm, budget), points in sorted(groups.items()):
        decisions = sum(p.decisions for p in points) / len(points)
        seconds = sum(p.seconds for p in points) / len(points)
        scored = [p for p in points if p.full]
        score = interval_text(over_seeds([p.full for p in scored])) if scored else "not scored yet"
        each = ", ".join(f"{p.full['value']:+.3f}".replace("-", "−") for p in scored) or "–"
        rate = f"{decisions / seconds:,.0f}" if seconds > 0 else "–"
        lines.append(f"| `{algorithm}` | {budget_label(budget)} | {len(points)} | {decisions:,.0f} | {duration(seconds)} | "
                     f"{rate} | {score} | {each} |")
    for ref in refs:
        lines.append(f"| {ref.name} | – | – | – | {ref.cost} | – | {interval_text(ref.record['score'])} (the protocol's interval) | – |")
    return "\n".join(lines)


def plot(groups: dict[tuple[str, int], list[SeedPoint]], refs: list[Reference], path: Path) -> None:
    """Score against decisions: per algorithm the mean over seeds with a lowest-to-highest band; quick points open."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for k, algorithm in enumerate(sorted({a for a, _ in groups})):
        curve = []  # (budget, mean, lowest, highest, full) of each budget scored
        for budget in sorted(b for a, b in groups if a == algorithm):
            points = groups[algorithm, budget]
            kind = "full" if any(p.full for p in points) else "quick"
            values = [getattr(p, kind)["value"] for p in points if getattr(p, kind)]
            if values:
                curve.append((budget, sum(values) / len(values), min(values), max(values), kind == "full"))
        if not curve:
            continue
        xs, means, lows, highs, full = zip(*curve)
        ax.plot(xs, means, color=f"C{k}", label=algorithm)
        ax.fill_between(xs, lows, highs, color=f"C{k}", alpha=0.2)
        for x, mean, filled in zip(xs, means, full):
            ax.plot(x, mean, marker="o", color=f"C{k}", markerfacecolor=f"C{k}" if filled else "white")
    for ref, style in zip(refs, ("--", ":")):
        ax.axhline(ref.record["score"]["value"], color="black", linestyle=style, linewidth=1,
                   label=f"{ref.legend} ({ref.record['score']['value']:+.3f})")
    ax.set_xscale("log")
    ax.set_xlabel("the learner's own decisions (log scale)")
    ax.set_ylabel("protocol score (mean margin per hand)")
    ax.set_title(f"Baselines on {TASK}: mean over seeds, band lowest to highest seed\n"
                 "filled: the full protocol; open: --quick, 1/20 of its pairs", fontsize="medium")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """Draw the figure and rewrite the page's table; 2 with one line for a bad input."""
    try:
        options = script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv,
                                 positional={"results": dict(nargs="?", metavar="RESULTS")})
        groups, what = read_points(Path(options.results))
        if not groups:
            raise OptionError(f"{options.results} holds no run journal with a point; run python benchmarks/baselines.py first")
        refs = references(options)
        figure = os.path.relpath(options.figure, Path(options.page).parent)
        rewrite_page(Path(options.page), table(groups, what, refs) + f"\n\n![the baselines' scores]({figure})", START, END)
    except (OptionError, OSError, ValueError, KeyError) as error:
        return fail(SCRIPT, error)
    plot(groups, refs, Path(options.figure))
    print(f"{sum(map(len, groups.values()))} points in {len(groups)} rows of algorithm x budget: rewrote {options.page} "
          f"and drew {options.figure}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
