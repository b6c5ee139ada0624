"""The statistics of a duplicate match: ratio estimates over independent units, their intervals and p-values.

(Named `estimates`, not `statistics`, so that it never shadows the standard library's module.)

A match's unit is a pair of mirrored games (see `euchre_lab.evaluation.match`). Points per hand, the A-B margin
per hand and A's point share are ratio estimates, sum(y) / sum(x) over the pairs, with a
delta-method standard error over pairs; the game win rate likewise. Intervals are
normal-approximation 95% intervals (fine for the hundreds of pairs or more that a meaningful match
has); a proportion's interval is clipped to [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

CONFIDENCE = 0.95
Z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
"""The normal quantile of a two-sided `CONFIDENCE` interval (1.95996...)."""


@dataclass(frozen=True)
class Estimate:
    """A value with its standard error and 95% interval."""

    value: float
    se: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.value:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"

    @property
    def half_width(self) -> float:
        """Half the width of the 95% normal interval, z * se (before any clipping to [0, 1])."""
        return Z * self.se

    def percent(self) -> str:
        """As a percentage with its interval."""
        return f"{100 * self.value:.1f}% [{100 * self.low:.1f}, {100 * self.high:.1f}]"


def ratio_estimate(y: np.ndarray, x: np.ndarray, proportion: bool = False) -> Estimate:
    """sum(y) / sum(x) over independent units, with the delta-method standard error over units.

    se = sqrt(n / (n - 1) * sum((y - r x)^2)) / sum(x) for r = sum(y) / sum(x); for a proportion the
    interval is clipped to [0, 1].
    """
    y = np.asarray(y, np.float64)
    x = np.asarray(x, np.float64)
    n, total = y.size, x.sum()
    if n == 0 or total == 0:
        return Estimate(math.nan, math.nan, math.nan, math.nan)
    value = y.sum() / total
    residual = y - value * x
    se = math.sqrt(n / (n - 1) * float(residual @ residual)) / total if n > 1 else math.nan
    low, high = value - Z * se, value + Z * se
    if proportion:
        low, high = max(low, 0.0), min(high, 1.0)
    return Estimate(value, se, low, high)


def running_ratio_estimate(y: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`ratio_estimate`'s value and standard error over every prefix of the units (the first 1, 2, ... of them).

    Computed from running sums, so the whole curve costs one pass; the first unit's se is 0.
    """
    y = np.asarray(y, np.float64)
    x = np.asarray(x, np.float64)
    n = np.arange(1, y.size + 1)
    sy, sx = np.cumsum(y), np.cumsum(x)
    r = sy / sx
    # sum of (y - r x)^2 over the prefix, expanded into running sums
    ss = np.cumsum(y * y) - 2 * r * np.cumsum(x * y) + r * r * np.cumsum(x * x)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.sqrt(np.maximum(ss, 0) * n / np.maximum(n - 1, 1)) / sx
    return r, se


def two_sided_p(estimate: Estimate) -> float:
    """Normal-approximation p-value of `value == 0`: erfc(|value / se| / sqrt 2)."""
    if estimate.se == 0 or math.isnan(estimate.se):
        return 1.0 if estimate.value == 0 or math.isnan(estimate.value) else 0.0
    return math.erfc(abs(estimate.value / estimate.se) / math.sqrt(2))


def p_text(p: float) -> str:
    """A p-value for a report line: `< 1e-12` or `= 0.0312`."""
    return "< 1e-12" if p < 1e-12 else f"= {p:.3g}"


def mean_of_ratios(ys: list[np.ndarray], xs: list[np.ndarray]) -> Estimate:
    """The equal-weight mean of k ratio estimates sum(y_i) / sum(x_i) taken over the *same* units (the pairs of
    one set of deal keys, each played against k opponents), with its delta-method standard error over units.

    Each ratio's influence on unit p is (y_ip - r_i x_ip) / sum(x_i); the mean's is their mean, so the
    correlation between the k matches through their shared deals is counted, not assumed away.
    """
    if not ys or len(ys) != len(xs) or len({np.size(y) for y in (*ys, *xs)}) != 1:
        raise ValueError("mean_of_ratios needs k >= 1 matches of the same units (equal lengths)")
    ys = [np.asarray(y, np.float64) for y in ys]
    xs = [np.asarray(x, np.float64) for x in xs]
    n = ys[0].size
    ratios = [y.sum() / x.sum() for y, x in zip(ys, xs)]
    influence = sum((y - r * x) / x.sum() for y, x, r in zip(ys, xs, ratios)) / len(ys)
    value = float(np.mean(ratios))
    se = math.sqrt(n / (n - 1) * float(influence @ influence)) if n > 1 else math.nan
    return Estimate(value, se, value - Z * se, value + Z * se)
