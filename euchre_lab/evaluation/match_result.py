"""A duplicate match's result: the per-pair outcomes of A against B and every statistic reported on them.

`euchre_lab.evaluation.match` plays a match and returns a `MatchResult`; `euchre_lab.evaluation.report` writes it to files and
`euchre_lab.evaluation.ratings` fits ratings over several. The unit of every interval (`euchre_lab.evaluation.estimates`) is a
pair of mirrored games.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from euchre_env.rules import Rules
from euchre_lab.evaluation.estimates import CONFIDENCE, Estimate, p_text, ratio_estimate, two_sided_p

WHEN_NAMED = ("share", "euchred", "march", "alone", "margin")
"""The estimates of `MatchResult.when_named`, in its order."""
OPTIONAL_ESTIMATES = ("win_rate_a", *(f"when_{side}_named_{k}" for side in ("a", "b") for k in WHEN_NAMED))
"""The estimates of a match's summary that are None in one of the two modes."""


def rules_changes(rules: dict[str, Any] | Rules) -> dict[str, Any]:
    """The rule options that differ from `Rules()`'s defaults (the primary document), in field order."""
    given, defaults = rules.to_dict() if isinstance(rules, Rules) else dict(rules), Rules().to_dict()
    return {k: v for k, v in given.items() if defaults.get(k) != v}


def rules_label(rules: dict[str, Any] | Rules) -> str:
    """`default` or the changed options as `deck=32 joker=true` (the values as --rules takes them)."""
    changes = rules_changes(rules)
    return " ".join(f"{k}={json.dumps(v).strip(chr(34))}" for k, v in changes.items()) or "default"


# ---------------------------------------------------------------------------------------- the result


@dataclass
class MatchResult:
    """Per-pair outcomes of a duplicate match of A against B, and the statistics over them."""

    a: str
    b: str
    mode: str
    """"hands" (one hand per game) or "games" (games to the target)."""
    seed: int
    chunk: int
    rules: dict[str, Any]
    keys: np.ndarray
    """(pairs,) the deal key each pair played twice."""
    a_points: np.ndarray
    """(pairs,) points A scored over the pair's two games."""
    b_points: np.ndarray
    hands: np.ndarray
    """(pairs,) hands played over the pair's two games (2 in hands mode)."""
    a_wins: np.ndarray | None
    """(pairs,) games A won of the pair's two (games mode only)."""
    seconds: float = 0.0
    """Time spent playing this match's chunks, summed over the processes that played them."""
    weights: dict[str, str] = field(default_factory=dict)
    """The sha256 of the weights each bot that plays weights played (`Agent.weights_sha256`), by bot."""
    trump_calls: dict[str, np.ndarray] | None = None
    """(pairs,) arrays per `trump_calls` key, summed over the pair's two hands (hands mode only)."""

    @property
    def num_pairs(self) -> int:
        """Pairs of mirrored games (the statistical unit)."""
        return int(self.keys.size)

    @property
    def num_hands(self) -> int:
        """Hands played in all."""
        return int(self.hands.sum())

    @property
    def num_games(self) -> int:
        """Games played in all (two per pair)."""
        return 2 * self.num_pairs

    @property
    def points_per_hand_a(self) -> Estimate:
        """Points A scores per hand."""
        return ratio_estimate(self.a_points, self.hands)

    @property
    def points_per_hand_b(self) -> Estimate:
        """Points B scores per hand."""
        return ratio_estimate(self.b_points, self.hands)

    @property
    def margin_per_hand(self) -> Estimate:
        """A's points minus B's, per hand: the headline number."""
        return ratio_estimate(self.a_points - self.b_points, self.hands)

    @property
    def point_share_a(self) -> Estimate:
        """A's share of all points scored."""
        return ratio_estimate(self.a_points, self.a_points + self.b_points, proportion=True)

    @property
    def win_rate_a(self) -> Estimate | None:
        """A's share of the games won (games mode), else None."""
        if self.a_wins is None:
            return None
        return ratio_estimate(self.a_wins, np.full(self.num_pairs, 2), proportion=True)

    def when_named(self, side: str) -> dict[str, Estimate] | None:
        """Where the margin comes from, for the hands `side` ("a" or "b") named trump (hands mode, else None):
        the share of hands it named, of those the share euchred, marched and played alone, and A's margin
        on them per hand of the match (so A's margins when A and when B named add up to the margin)."""
        calls = self.trump_calls
        if calls is None:
            return None
        named = calls[f"{side}_named"]
        return {
            "share": ratio_estimate(named, self.hands, proportion=True),
            "euchred": ratio_estimate(calls[f"{side}_euchred"], named, proportion=True),
            "march": ratio_estimate(calls[f"{side}_march"], named, proportion=True),
            "alone": ratio_estimate(calls[f"{side}_alone"], named, proportion=True),
            "margin": ratio_estimate(calls[f"{side}_named_margin"], self.hands),
        }

    @property
    def p_value(self) -> float:
        """Two-sided p-value of a zero margin."""
        return two_sided_p(self.margin_per_hand)

    @property
    def significant(self) -> bool:
        """The margin's 95% interval excludes zero."""
        return self.p_value < 1 - CONFIDENCE

    def summary(self) -> dict[str, Any]:
        """Everything reported about the match, JSON-ready."""
        win_rate = self.win_rate_a
        return {
            "a": self.a,
            "b": self.b,
            "mode": self.mode,
            "seed": self.seed,
            "chunk": self.chunk,
            "pairs": self.num_pairs,
            "hands": self.num_hands,
            "games": self.num_games,
            "points_per_hand_a": dataclasses.asdict(self.points_per_hand_a),
            "points_per_hand_b": dataclasses.asdict(self.points_per_hand_b),
            "margin_per_hand": dataclasses.asdict(self.margin_per_hand),
            "point_share_a": dataclasses.asdict(self.point_share_a),
            "win_rate_a": None if win_rate is None else dataclasses.asdict(win_rate),
            **{f"when_{side}_named_{k}": None if calls is None else dataclasses.asdict(calls[k])
               for side in ("a", "b") for calls in [self.when_named(side)] for k in WHEN_NAMED},
            "p_value": self.p_value,
            "significant": self.significant,
            "confidence": CONFIDENCE,
            "process_seconds": self.seconds,
            "hands_per_process_second": self.num_hands / self.seconds if self.seconds > 0 else None,
            "weights_sha256": self.weights,
            "rules": self.rules,
        }

    def report(self) -> str:
        """A few lines for the terminal."""
        m = self.margin_per_hand
        leader = self.a if m.value > 0 else self.b
        verdict = f"{leader} is better" if self.significant else "no significant difference"
        lines = [
            f"{self.a} (A) vs {self.b} (B): {self.num_hands} hands in {self.num_games} games "
            f"({self.num_pairs} duplicate pairs, {self.mode} mode, seed {self.seed})",
            f"  rules              {rules_label(self.rules)}",
            f"  points per hand    A {self.points_per_hand_a}   B {self.points_per_hand_b}",
            f"  margin per hand    {m}   p {p_text(self.p_value)}: {verdict}",
            f"  A's point share    {self.point_share_a.percent()}",
        ]
        if self.win_rate_a is not None:
            lines.append(f"  A's game win rate  {self.win_rate_a.percent()}")
        for side in ("a", "b") if self.trump_calls is not None else ():
            w, x = self.when_named(side), side.upper()
            lines.append(f"  {x + ' names trump':<19}{100 * w['share'].value:.1f}% of hands (euchred "
                         f"{100 * w['euchred'].value:.1f}%, march {100 * w['march'].value:.1f}%, alone "
                         f"{100 * w['alone'].value:.1f}%): A's margin per hand {w['margin']}")
        if self.seconds > 0:
            lines.append(f"  {self.num_hands / self.seconds:,.0f} hands/s per process ({self.seconds:.1f} s of play)")
        return "\n".join(lines)
