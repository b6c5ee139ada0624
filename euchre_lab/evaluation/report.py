"""What a match or a round robin writes: JSON and CSV files, and the plots.

A match folder holds match.json (summary and config), match.csv (one row), pairs.csv (one row per
duplicate pair: what `benchmarks/paired_difference.py` reads) and margin.png; a round robin's holds
tournament.json, matches.csv, ratings.csv, pairs.csv, ratings.png and head_to_head.png. The JSON and
match rows name the sha256 of the weights each learned bot played (`weights_sha256`).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from euchre_lab.evaluation.estimates import CONFIDENCE, Z, running_ratio_estimate
from euchre_lab.evaluation.match_result import OPTIONAL_ESTIMATES, MatchResult, rules_label
from euchre_lab.evaluation.ratings import ELO_MEAN, Ratings, Tournament


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, default=_json_default) + "\n")


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to JSON")


def _flat(summary: dict[str, Any]) -> dict[str, Any]:
    """A match summary as one CSV row: each estimate becomes value/se/low/high columns."""
    row = {}
    for key, value in summary.items():
        if key == "rules":
            row["rules"] = rules_label(value)
            continue
        if key == "weights_sha256":
            row["weights_sha256_a"], row["weights_sha256_b"] = (value.get(summary[side], "") for side in ("a", "b"))
            continue
        if isinstance(value, dict) or (value is None and key in OPTIONAL_ESTIMATES):
            for part in ("value", "se", "low", "high"):
                row[f"{key}_{part}"] = None if value is None else value[part]
        else:
            row[key] = value
    return row


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _pair_rows(match: MatchResult) -> list[dict[str, Any]]:
    """pairs.csv's rows: one per duplicate pair, its key and outcomes."""
    rows = []
    for p in range(match.num_pairs):
        row = {
            "a": match.a,
            "b": match.b,
            "pair": p,
            "key": int(match.keys[p]),
            "a_points": int(match.a_points[p]),
            "b_points": int(match.b_points[p]),
            "hands": int(match.hands[p]),
        }
        if match.a_wins is not None:
            row["a_wins"] = int(match.a_wins[p])
        for key, counts in (match.trump_calls or {}).items():
            row[key] = int(counts[p])
        rows.append(row)
    return rows


def _pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend (imported on use: plots are optional)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_match(match: MatchResult, path: Path) -> None:
    """The running margin per hand with its 95% band, as pairs accumulate."""
    plt = _pyplot()
    hands = np.cumsum(match.hands)
    margin, se = running_ratio_estimate(match.a_points - match.b_points, match.hands)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(hands, margin, color="C0", label=f"{match.a} - {match.b}")
    ax.fill_between(hands, margin - Z * se, margin + Z * se, color="C0", alpha=0.25, label=f"{CONFIDENCE:.0%} interval")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("hands played")
    ax.set_ylabel("margin per hand (points)")
    ax.set_title(f"{match.a} vs {match.b}, duplicate deals\nrules: {rules_label(match.rules)}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_ratings(ratings: Ratings, path: Path, rules: dict[str, Any] | None = None) -> None:
    """Ratings with their 95% bootstrap intervals, best at the top; unranked bots in grey; the rules in the title."""
    plt = _pyplot()
    rows = [r for r in ratings.table() if not math.isnan(r["rating"])][::-1]
    fig, ax = plt.subplots(figsize=(7, 1 + 0.5 * len(rows)))
    for y, row in enumerate(rows):
        colour = "C0" if row["fair"] else "grey"
        err = None
        if not math.isnan(row["low"]):
            err = [[max(row["rating"] - row["low"], 0)], [max(row["high"] - row["rating"], 0)]]
        ax.errorbar(row["rating"], y, xerr=err, fmt="o", color=colour, capsize=4)
    ax.set_yticks(range(len(rows)), [r["bot"] + ("" if r["fair"] else " (unranked)") for r in rows])
    ax.set_xlabel(f"rating (Elo scale, Bradley-Terry on {ratings.outcome} won)")
    fig.suptitle(  # over the figure, not the axes: long bot names push the axes right and would clip it
        f"ratings with {CONFIDENCE:.0%} bootstrap intervals ({ratings.bootstrap} resamples)\nrules: {rules_label(rules or {})}",
        fontsize="medium",
    )
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_head_to_head(tournament: Tournament, path: Path) -> None:
    """The matrix of margins per hand, row bot against column bot, with interval half-widths."""
    plt = _pyplot()
    value, half = tournament.margins()
    k = len(tournament.bots)
    limit = max(np.nanmax(np.abs(value)), 1e-9) if np.isfinite(value).any() else 1.0
    fig, ax = plt.subplots(figsize=(2 + 1.3 * k, 1.5 + 1.1 * k))
    image = ax.imshow(value, cmap="RdBu", vmin=-limit, vmax=limit)
    for i in range(k):
        for j in range(k):
            if i != j and np.isfinite(value[i, j]):
                star = "*" if abs(value[i, j]) > half[i, j] else ""
                colour = "white" if abs(value[i, j]) > 0.6 * limit else "black"
                text = f"{value[i, j]:+.2f}{star}\n±{half[i, j]:.2f}"
                ax.text(j, i, text, ha="center", va="center", fontsize=8, color=colour)
    ax.set_xticks(range(k), tournament.bots, rotation=30, ha="right")
    ax.set_yticks(range(k), tournament.bots)
    ax.set_title(f"margin per hand, row vs column (* = significant)\nrules: {rules_label(tournament.matches[0].rules)}")
    fig.colorbar(image, ax=ax, label="points per hand")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def save_match(match: MatchResult, out: Path, config: dict[str, Any], plots: bool = True) -> list[Path]:
    """match.json (summary and config), match.csv (one row), pairs.csv (per pair), margin.png."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "match.json", out / "match.csv", out / "pairs.csv"]
    _write_json(written[0], {"config": config, "match": match.summary()})
    _write_csv(written[1], [_flat(match.summary())])
    _write_csv(written[2], _pair_rows(match))
    if plots:
        written.append(out / "margin.png")
        plot_match(match, written[-1])
    return written


def save_tournament(tournament: Tournament, out: Path, config: dict[str, Any], plots: bool = True) -> list[Path]:
    """tournament.json, matches.csv, ratings.csv, pairs.csv, ratings.png and head_to_head.png."""
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "tournament.json", out / "matches.csv", out / "ratings.csv", out / "pairs.csv"]
    r = tournament.ratings
    _write_json(
        written[0],
        {
            "config": config,
            "matches": [m.summary() for m in tournament.matches],
            "ratings": {
                "outcome": r.outcome,
                "bootstrap": r.bootstrap,
                "elo_mean_of_fair_bots": ELO_MEAN,
                "table": r.table(),
            },
        },
    )
    _write_csv(written[1], [_flat(m.summary()) for m in tournament.matches])
    rules = tournament.matches[0].rules
    _write_csv(written[2], [{**row, "rules": rules_label(rules)} for row in r.table()])
    _write_csv(written[3], [row for m in tournament.matches for row in _pair_rows(m)])
    if plots:
        written += [out / "ratings.png", out / "head_to_head.png"]
        plot_ratings(r, written[-2], rules)
        plot_head_to_head(tournament, written[-1])
    return written
