"""Plot a train.py run's training curve from its TensorBoard events.

    python benchmarks/plot_training.py runs/main --out experiments/figures/training_curve.png
    python benchmarks/plot_training.py runs/distill --out experiments/figures/distill_curve.png
    python benchmarks/plot_training.py runs/exploit_heuristic runs/exploit_ppo_target --out probes.png

A PPO run: (top) the periodic duplicate-deal evaluation (margin per hand, with its 95% interval)
against each evaluated bot; (bottom) the learner's mean hand return against each kind of opponent it
trained with. A distillation run: (top) the held-out regret of acting greedily on the policy and on the
action values (teacher value lost per decision), with the evaluations if any; (bottom) its losses.
Several runs, or one without periodic evaluations (an exploitability probe): each run's training return
against each opponent kind, a moving mean over 10 updates.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backend_bases import FigureCanvasBase  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402

from euchre_lab.cli import OptionError, fail, script_options  # noqa: E402

SCRIPT = "benchmarks/plot_training.py"

EVAL_PREFIX = "eval/margin_per_hand_vs_"
RETURN_PREFIX = "charts/return_vs_"
HOLDOUT_PREFIX = "holdout/"
EVENTS = "events.out.tfevents."
"""How the names of TensorBoard's event files start."""


def scalars(events: EventAccumulator, tag: str) -> tuple[list[int], list[float]]:
    """Steps and values of one scalar tag, the last value kept where a resumed run logged a step twice."""
    by_step = {e.step: e.value for e in events.Scalars(tag)}
    steps = sorted(by_step)
    return steps, [by_step[s] for s in steps]


def plot_evaluations(ax, events: EventAccumulator, evaluated: list[str]) -> None:
    """The periodic duplicate-deal margins against each evaluated bot, with their 95% intervals."""
    for bot in evaluated:
        steps, margin = scalars(events, EVAL_PREFIX + bot)
        _, low = scalars(events, f"{EVAL_PREFIX}{bot}_low")
        _, high = scalars(events, f"{EVAL_PREFIX}{bot}_high")
        millions = [s / 1e6 for s in steps]
        ax.plot(millions, margin, marker="o", label=f"vs {bot}")
        ax.fill_between(millions, low, high, alpha=0.2)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_ylabel("margin per hand (points)")
    ax.set_title("Duplicate-deal evaluation of the greedy policy (95% interval)")
    ax.legend()


def plot_distillation(events: EventAccumulator, tags: list[str], evaluated: list[str], out: str) -> None:
    """Held-out regrets, the periodic evaluations (if any) and the held-out losses over decisions seen."""
    rows = 3 if evaluated else 2
    fig, axes = plt.subplots(rows, 1, figsize=(8, 3.2 * rows), sharex=True)
    top, bottom = axes[0], axes[-1]
    for tag in sorted(t for t in tags if t.startswith(HOLDOUT_PREFIX + "regret_")):
        steps, values = scalars(events, tag)
        top.plot([s / 1e6 for s in steps], values, marker=".", label=f"greedy on {tag.split('regret_')[1].replace('_', ' ')}")
    top.set_ylabel("regret (points per decision)")
    top.set_title("Teacher value lost by acting greedily, held-out shards")
    top.legend()
    if evaluated:
        plot_evaluations(axes[1], events, evaluated)
    for tag in sorted(t for t in tags if t.startswith(HOLDOUT_PREFIX) and t.endswith("_loss") and "total" not in t):
        steps, values = scalars(events, tag)
        bottom.plot([s / 1e6 for s in steps], values, marker=".", label=tag[len(HOLDOUT_PREFIX) :])
    bottom.set_xlabel("training decisions seen (millions)")
    bottom.set_ylabel("held-out loss")
    bottom.set_title("Held-out losses")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def plot_return_lines(ax, events: EventAccumulator, label: str = "", window: int = 1) -> None:
    """One line per opponent kind of a run's mean hand return, a moving mean over `window` updates."""
    for tag in (t for t in events.Tags()["scalars"] if t.startswith(RETURN_PREFIX)):
        steps, values = scalars(events, tag)
        width = min(window, len(values))
        smooth = np.convolve(values, np.ones(width) / width, mode="valid")
        ax.plot([s / 1e6 for s in steps[width - 1 :]], smooth, linewidth=0.8 if width == 1 else None,
                label=f"{label}{tag[len(RETURN_PREFIX):]}")


def plot_returns(runs: list[str], out: str, window: int = 10) -> None:
    """Each run's mean hand return against each opponent kind, a moving mean over `window` updates."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for run in runs:
        events = EventAccumulator(run, size_guidance={"scalars": 0})
        events.Reload()
        plot_return_lines(ax, events, f"{Path(run).name} vs ", window)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("environment steps (millions)")
    ax.set_ylabel(f"mean hand return ({window}-update moving mean)")
    ax.set_title("Training return")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


def plot_run(run: str, out: str) -> None:
    """One run's figure: its evaluations and returns, its distillation curves, or (with neither) its returns."""
    events = EventAccumulator(run, size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags()["scalars"]
    evaluated = [t[len(EVAL_PREFIX) :] for t in tags if t.startswith(EVAL_PREFIX) and not t.endswith(("_low", "_high"))]
    if any(t.startswith(HOLDOUT_PREFIX) for t in tags):
        plot_distillation(events, tags, evaluated, out)
        return
    if not evaluated:
        plot_returns([run], out)
        return

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    plot_evaluations(top, events, evaluated)
    plot_return_lines(bottom, events)
    bottom.axhline(0.0, color="grey", linewidth=0.8)
    bottom.set_xlabel("environment steps (millions)")
    bottom.set_ylabel("mean hand return")
    bottom.set_title("Training return by opponent kind")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")


@dataclass
class Options:
    """The command line's options (each field's docstring is its --help)."""

    runs: list[str] = field(default_factory=list)
    """the run folder(s) (runs/NAME)"""
    out: str = "training_curve.png"
    """PNG to write"""


def checked(args: Options) -> Options:
    """`args`, or an OptionError in one line naming the run folder or output path that cannot work, and the fix."""
    for run in map(Path, args.runs):
        if not run.exists():
            raise OptionError(f"run folder {run} not found; give a train.py run folder (runs/NAME)")
        if not any(p.name.startswith(EVENTS) for p in ([run] if run.is_file() else run.iterdir())):
            raise OptionError(f"{run} holds no TensorBoard events ({EVENTS}*); give a train.py run folder (runs/NAME)")
    out = Path(args.out)
    if out.is_dir():
        raise OptionError(f"--out {args.out} is a folder; give the path of a PNG file to write")
    if not out.absolute().parent.is_dir():
        raise OptionError(f"--out {args.out}: folder {out.parent} not found; create it or write elsewhere")
    kinds = FigureCanvasBase.get_supported_filetypes()
    if out.suffix and out.suffix[1:].lower() not in kinds:
        raise OptionError(f"--out {args.out}: matplotlib cannot write {out.suffix} files; "
                          f"end it with .png (or one of {', '.join(sorted(kinds))})")
    return args


def main(argv: list[str] | None = None) -> int:
    """Draw the figure; 0, or 2 on a bad option."""
    try:
        args = checked(script_options(Options, SCRIPT, __doc__.splitlines()[0], argv, special={"out": dict(metavar="PATH")},
                                      positional={"runs": dict(metavar="RUN", nargs="+")}))
    except OptionError as e:
        return fail(SCRIPT, e)
    if len(args.runs) > 1:
        plot_returns(args.runs, args.out)
    else:
        plot_run(args.runs[0], args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
