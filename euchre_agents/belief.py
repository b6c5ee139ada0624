"""Models of how the other seats act, for weighing sampled layouts by the actions seen so far.

`pimc:infer=true` replays the public history (bids, alone calls, plays) on each candidate layout
and multiplies, over every action another seat took, the probability a model of that seat gives the
action in that layout: P(layout | history) is proportional to the product. A model is any bot from
the registry (`model=heuristic` by default, `model=ppo:PATH`, ...):

  - a bot with `action_probabilities(obs, mask)` (a policy, e.g. `ppo`) gives its probabilities,
    raised to the power 1 / `temperature` and renormalised (temperature 0: one-hot on its most
    probable action, the one a greedy `ppo` plays; a distilled policy is far flatter than its play);
  - any other bot is a deterministic choice: probability 1 for the action it would take, 0 else;

and both are softened towards uniform over the legal actions, P = (1 - eps) * P_model + eps / n_legal,
so that no layout is ruled out by a seat that plays differently from the model. A uniform model
(`model=random`) is uninformative: every layout keeps weight 1.
"""

from __future__ import annotations

import numpy as np

from euchre_agents.base import Agent


class ActionModel:
    """A bot as a probability model of the action each seat takes, softened by `eps`."""

    def __init__(self, agent: Agent, eps: float, temperature: float = 1.0):
        if not 0.0 < eps <= 1.0:
            raise ValueError(f"the action model's eps must be in (0, 1], got {eps}")
        if temperature < 0.0:
            raise ValueError(f"the action model's temperature must be >= 0, got {temperature}")
        if temperature != 1.0 and not hasattr(agent, "action_probabilities"):
            raise ValueError(
                f"a temperature applies to a policy model (such as model=ppo); bot {agent.name!r} only picks an action"
            )
        self.agent = agent
        self.eps = eps
        self.temperature = temperature

    def probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n, A) the unsoftened model: the bot's policy at `temperature`, or one-hot on the action it would take."""
        out = np.zeros(mask.shape, np.float64)
        rows = np.arange(mask.shape[0])
        if not hasattr(self.agent, "action_probabilities"):
            out[rows, self.agent.act(obs, mask)] = 1.0
            return out
        policy = np.asarray(self.agent.action_probabilities(obs, mask), np.float64)
        if self.temperature == 0.0:
            out[rows, policy.argmax(axis=1)] = 1.0
            return out
        if self.temperature == 1.0:
            return policy
        logits = np.where(policy > 0.0, np.log(np.maximum(policy, 1e-300)) / self.temperature, -np.inf)
        out = np.exp(logits - logits.max(axis=1, keepdims=True))
        return out / out.sum(axis=1, keepdims=True)

    def log_prob(self, obs: np.ndarray, mask: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """(n,) log P(actions) of n decisions under the softened model."""
        mask = np.asarray(mask, bool)
        rows = np.arange(mask.shape[0])
        n_legal = mask.sum(axis=1)
        p = (1.0 - self.eps) * self.probabilities(obs, mask)[rows, actions] + self.eps / n_legal
        return np.log(p)


def resample(log_weights: np.ndarray, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Systematic resampling of `count` draws: (distinct indices, how often each was drawn).

    With equal weights over a multiple of `count` candidates, it keeps `count` distinct ones.
    """
    w = np.exp(log_weights - log_weights.max())
    edges = np.cumsum(w / w.sum())
    edges[-1] = 1.0
    draws = np.searchsorted(edges, (rng.random() + np.arange(count)) / count, side="right")
    index, counts = np.unique(draws, return_counts=True)
    return index, counts.astype(np.float64)


def effective_size(log_weights: np.ndarray) -> float:
    """Kish's effective sample size of importance weights (= their number when all are equal)."""
    w = np.exp(log_weights - log_weights.max())
    return float(w.sum() ** 2 / (w**2).sum())
