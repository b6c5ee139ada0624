"""Round robins and their ratings: Bradley-Terry fits on the Elo scale with bootstrap intervals.

Round-robin ratings are a Bradley-Terry fit by maximum likelihood on points won (hands) or games won
(games), on the Elo scale, with a bootstrap over the deals (shared by every pairing) for their
uncertainty. Bots that see hidden cards (`fair = False`, the oracle) play and are reported, but are
rated only afterwards against the fixed ratings of the fair bots and never ranked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from euchre_env.engine import Engine
from euchre_env.rules import Rules
from euchre_lab.evaluation.estimates import CONFIDENCE
from euchre_lab.evaluation.match import check_bots, mode_and_pairs, play_matches, rules_of
from euchre_lab.evaluation.match_result import MatchResult, rules_label

ELO_PER_NAT = 400 / math.log(10)
ELO_MEAN = 1500.0
"""The fair bots' ratings average this."""
PRIOR_WINS = 0.5
"""Virtual wins each way added to every rated pairing, so that a clean sweep still has a finite rating."""
MAX_NEWTON = 100
MAX_NEWTON_STEP = 2.0
"""Largest change of a rating (in natural units) in one Newton step, for stability far from the optimum."""


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * x))


def fit_bradley_terry(wins: np.ndarray, prior: float = PRIOR_WINS) -> np.ndarray:
    """Elo-scale ratings (mean 0) maximising the Bradley-Terry likelihood; wins[i, j] = i's wins over j.

    P(i beats j) = 1 / (1 + 10 ** ((R_j - R_i) / 400)), a point or a game counting as one "win".
    Newton's method on the concave log-likelihood; every pairing that was played gets `prior` virtual
    wins each way. The pairings must connect all bots.
    """
    wins = np.asarray(wins, np.float64)
    k = wins.shape[0]
    w = wins + prior * ((wins + wins.T) > 0)
    n = w + w.T
    r = np.zeros(k)
    for _ in range(MAX_NEWTON):
        p = _sigmoid(r[:, None] - r[None, :])
        grad = (w - n * p).sum(axis=1)
        info = n * p * (1 - p)
        # The negative Hessian is a graph Laplacian (singular along all-ones); + 1/k pins the mean.
        hessian = np.diag(info.sum(axis=1)) - info + 1.0 / k
        step = np.clip(np.linalg.solve(hessian, grad), -MAX_NEWTON_STEP, MAX_NEWTON_STEP)
        r += step
        if np.abs(step).max() < 1e-10:
            break
    return (r - r.mean()) * ELO_PER_NAT


def fit_against(wins: np.ndarray, losses: np.ndarray, opponents: np.ndarray, prior: float = PRIOR_WINS) -> float:
    """Elo rating of one bot from its wins and losses against opponents whose Elo ratings are fixed."""
    wins = np.asarray(wins, np.float64)
    losses = np.asarray(losses, np.float64)
    played = (wins + losses) > 0
    w, n = wins + prior * played, wins + losses + 2 * prior * played
    opp = np.asarray(opponents, np.float64) / ELO_PER_NAT
    r = float(np.average(opp, weights=n)) if n.sum() else 0.0
    for _ in range(MAX_NEWTON):
        p = _sigmoid(r - opp)
        info = float((n * p * (1 - p)).sum())
        if info == 0:
            break
        step = float(np.clip((w - n * p).sum() / info, -MAX_NEWTON_STEP, MAX_NEWTON_STEP))
        r += step
        if abs(step) < 1e-10:
            break
    return r * ELO_PER_NAT


def _outcomes(match: MatchResult) -> tuple[np.ndarray, np.ndarray]:
    """Per-pair (A's, B's) rated outcomes: points won (hands mode) or games won (games mode)."""
    if match.a_wins is None:
        return match.a_points.astype(np.float64), match.b_points.astype(np.float64)
    return match.a_wins.astype(np.float64), (2 - match.a_wins).astype(np.float64)


def _ratings_from(totals: list[tuple[float, float]], matches: list[tuple[int, int]], fair: list[bool]) -> np.ndarray:
    """All bots' Elo ratings from total outcomes per match: fair bots fitted jointly, the others against them."""
    k = len(fair)
    ranked = [i for i in range(k) if fair[i]]
    index = {bot: j for j, bot in enumerate(ranked)}
    wins = np.zeros((len(ranked), len(ranked)))
    against = {i: (np.zeros(len(ranked)), np.zeros(len(ranked))) for i in range(k) if not fair[i]}
    for (i, j), (ti, tj) in zip(matches, totals):
        if fair[i] and fair[j]:
            wins[index[i], index[j]] += ti
            wins[index[j], index[i]] += tj
        elif fair[j]:
            against[i][0][index[j]] += ti
            against[i][1][index[j]] += tj
        elif fair[i]:
            against[j][0][index[i]] += tj
            against[j][1][index[i]] += ti
    out = np.full(k, math.nan)
    fitted = fit_bradley_terry(wins) if ranked else np.zeros(0)
    out[ranked] = fitted + ELO_MEAN
    for i, (w, l) in against.items():
        if ranked and (w + l).sum() > 0:
            out[i] = fit_against(w, l, fitted) + ELO_MEAN
    return out


@dataclass
class Ratings:
    """Bradley-Terry ratings on the Elo scale with bootstrap uncertainty; unfair bots are not ranked."""

    bots: list[str]
    fair: list[bool]
    rating: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    outcome: str
    """What was rated: "points" or "games"."""
    bootstrap: int

    def table(self) -> list[dict[str, Any]]:
        """One row per bot, best first; fair bots ranked 1, 2, ... and unfair bots unranked."""

        def order(i: int) -> tuple[bool, float]:
            return (not self.fair[i], -self.rating[i] if np.isfinite(self.rating[i]) else math.inf)

        rows, rank = [], 0
        for i in sorted(range(len(self.bots)), key=order):
            rank += self.fair[i]
            rows.append(
                {
                    "rank": rank if self.fair[i] else None,
                    "bot": self.bots[i],
                    "fair": self.fair[i],
                    "rating": float(self.rating[i]),
                    "se": float(self.se[i]),
                    "low": float(self.low[i]),
                    "high": float(self.high[i]),
                }
            )
        return rows


def rate(
    bots: list[str], fair: list[bool], matches: list[MatchResult], bootstrap: int = 1000, seed: int = 0
) -> Ratings:
    """Fit ratings to the round robin's matches; bootstrap the deals for their spread.

    Every match of a round robin plays the same deal keys, so one resample of the deal indices is
    applied to all matches at once, keeping the correlation that the shared deals create.
    """
    where = {bot: i for i, bot in enumerate(bots)}
    pairs = [(where[m.a], where[m.b]) for m in matches]
    outcomes = [_outcomes(m) for m in matches]
    if len({m.keys.tobytes() for m in matches}) > 1:
        raise ValueError("the matches of a round robin must share their deal keys (one seed, one size)")
    rating = _ratings_from([(a.sum(), b.sum()) for a, b in outcomes], pairs, fair)
    rng = np.random.default_rng(seed)
    samples = np.empty((bootstrap, len(bots)))
    num_deals = matches[0].num_pairs if matches else 0
    for s in range(bootstrap):
        idx = rng.integers(0, num_deals, num_deals)
        samples[s] = _ratings_from([(a[idx].sum(), b[idx].sum()) for a, b in outcomes], pairs, fair)
    if bootstrap > 1:
        se = samples.std(axis=0, ddof=1)
        low, high = np.percentile(samples, [50 * (1 - CONFIDENCE), 50 * (1 + CONFIDENCE)], axis=0)
    else:
        se = low = high = np.full(len(bots), math.nan)
    outcome = "games" if matches and matches[0].a_wins is not None else "points"
    return Ratings(bots, list(fair), rating, se, low, high, outcome, bootstrap)


@dataclass
class Tournament:
    """A round robin: every pairing's duplicate match, and the ratings fitted to them."""

    bots: list[str]
    fair: list[bool]
    matches: list[MatchResult]
    ratings: Ratings

    def margins(self) -> tuple[np.ndarray, np.ndarray]:
        """(k, k) margin per hand of the row bot against the column bot, and its interval half-width."""
        k = len(self.bots)
        value, half = np.full((k, k), np.nan), np.full((k, k), np.nan)
        where = {bot: i for i, bot in enumerate(self.bots)}
        for m in self.matches:
            i, j, e = where[m.a], where[m.b], m.margin_per_hand
            value[i, j], value[j, i] = e.value, -e.value
            half[i, j] = half[j, i] = e.half_width
        return value, half

    def report(self) -> str:
        """Head-to-head lines and the rating table."""
        lines = [f"round robin, rules: {rules_label(self.matches[0].rules)}"] + [m.report() for m in self.matches]
        what = f"Bradley-Terry on {self.ratings.outcome} won, Elo scale, {CONFIDENCE:.0%} bootstrap interval"
        lines.append(f"\nratings ({what}):")
        for row in self.ratings.table():
            rank = f"{row['rank']:>2}" if row["rank"] else " -"
            note = "" if row["fair"] else "   (sees hidden cards: not ranked)"
            interval = f"[{row['low']:.0f}, {row['high']:.0f}]"
            lines.append(f"  {rank}  {row['bot']:<28} {row['rating']:7.0f}  {interval}{note}")
        return "\n".join(lines)


def round_robin(
    engine_or_rules: Engine | Rules | dict | None, specs: Sequence[str], *, bootstrap: int = 1000, **options: Any
) -> Tournament:
    """Every pairing of `specs` plays a duplicate match on the same deals, with `play_matches`' keywords
    (hands or games, seed, workers, chunk, progress, ray); then the ratings, their intervals from
    `bootstrap` resamples seeded by the match seed."""
    specs = list(specs)
    if len(specs) < 2 or len(set(specs)) != len(specs):
        raise ValueError(f"a round robin needs two or more different bots, got {specs}")
    rules = rules_of(engine_or_rules)
    mode, _ = mode_and_pairs(options.get("hands"), options.get("games"))
    fair = check_bots(rules, specs, mode)
    pairings = [(specs[i], specs[j]) for i in range(len(specs)) for j in range(i + 1, len(specs))]
    matches = play_matches(rules, pairings, **options)
    return Tournament(specs, fair, matches, rate(specs, fair, matches, bootstrap=bootstrap, seed=matches[0].seed))
