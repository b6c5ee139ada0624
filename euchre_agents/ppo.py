"""The `ppo` bot: plays a policy network from a train.py checkpoint.

`make_agent("ppo:runs/main/checkpoints/latest.pt", engine)` plays greedily (the most probable legal
action); `ppo:PATH,sample` samples from the masked policy instead, and `ppo:PATH,q` plays greedily on
the per-action value head. The bare `ppo` plays the shipped agent (`SHIPPED`). The network is
`euchre_agents.network`'s, and reading and checking the file is `euchre_agents.checkpoint`'s.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from euchre_agents.base import Agent
from euchre_agents.checkpoint import PLAY, build_network, check_compatible, read_checkpoint_and_sha256
from euchre_agents.network import MASKED_LOGIT, ActorCritic, sharpen_policy
from euchre_env.engine import Engine


class PPOAgent(Agent):
    """Plays a policy network: greedy over the legal actions, or sampling the masked policy."""

    name = "ppo"

    def __init__(
        self, engine: Engine, net: ActorCritic, sample: bool = False, seed: int | None = None, action_values: bool = False
    ):
        super().__init__(engine, seed)
        if action_values and net.action_value is None:
            raise ValueError("this network has no per-action value head (train it with --action-values true)")
        if action_values and sample:
            raise ValueError("the ppo options `q` (greedy on action values) and `sample` exclude each other")
        self.net = net
        self.sample = sample
        self.action_values = action_values
        self.device = next(net.parameters()).device

    @classmethod
    def from_checkpoint(
        cls, engine: Engine, path: str, sample: bool = False, seed: int | None = None, action_values: bool = False
    ) -> "PPOAgent":
        """Load a train.py checkpoint, refusing one made for other rules or another observation layout;
        `weights_sha256` is the sha256 of the file's bytes (`euchre_agents.base.file_sha256`), taken from the
        very bytes the network was loaded from."""
        checkpoint, file_digest = read_checkpoint_and_sha256(path, PLAY, "cpu")
        check_compatible(checkpoint, engine, f"checkpoint {path!r}")
        agent = cls(engine, build_network(checkpoint, engine), sample=sample, seed=seed, action_values=action_values)
        agent.weights_sha256 = file_digest
        return agent

    @torch.no_grad()
    def act(self, obs, mask, state=None, rows=None):
        """The policy's action per row (or, with `q`, the legal action of highest value); never an illegal one."""
        obs_t = torch.as_tensor(np.asarray(obs, np.float32), device=self.device)
        mask_t = torch.as_tensor(np.asarray(mask, bool), device=self.device)
        logits, _, q = self.net.heads(obs_t, mask_t)
        if self.action_values:
            return torch.where(mask_t, q, torch.full((), MASKED_LOGIT)).argmax(dim=-1).cpu().numpy()
        if not self.sample:
            return logits.argmax(dim=-1).cpu().numpy()
        # Inverse-CDF sampling from self.rng (so reseeding the bot reseeds its play); the first action
        # whose cumulative probability exceeds u always has a probability above zero.
        cumulative = torch.softmax(logits, dim=-1).cumsum(dim=-1).cpu().numpy()
        u = self.rng.random((cumulative.shape[0], 1)) * cumulative[:, -1:]
        return np.argmax(cumulative > u, axis=1)

    @torch.no_grad()
    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n, A) the masked policy's probabilities (zero on illegal actions)."""
        obs_t = torch.as_tensor(np.asarray(obs, np.float32), device=self.device)
        logits, _ = self.net(obs_t, torch.as_tensor(np.asarray(mask, bool), device=self.device))
        return torch.softmax(logits.double(), dim=-1).cpu().numpy()


SHIPPED = (Path(__file__).parent / "shipped" / "euchre_ppo.pt").resolve()
"""The strongest learned agent, which the bare spec `ppo` plays: checkpoints/euchre_ppo.pt in a checkout (through a
link), a copy inside the package when installed from a wheel."""
USAGE = "ppo[:PATH][,sample[,temp=T]|,q]"


def make_ppo(engine: Engine, arg: str, seed: int | None) -> PPOAgent:
    """`ppo` (the shipped agent), `ppo:PATH` (greedy on the policy), `ppo:PATH,sample` (sampling the policy;
    `temp=T` samples its logits divided by T), or `ppo:PATH,q` (greedy on action values)."""
    path, *options = arg.split(",")
    temps = [o.removeprefix("temp=") for o in options if o.startswith("temp=")]
    unknown = [o for o in options if o not in ("sample", "q") and not o.startswith("temp=")]
    if unknown:
        raise ValueError(f"unknown ppo option(s) {unknown}; usage: {USAGE}")
    temperature = _temperature(temps, "sample" in options)
    if not path and not SHIPPED.exists():
        raise ValueError(f"the shipped agent {SHIPPED} is missing; name a checkpoint: {USAGE}")
    agent = PPOAgent.from_checkpoint(
        engine, path or str(SHIPPED), sample="sample" in options, seed=seed, action_values="q" in options
    )
    sharpen_policy(agent.net, temperature)
    return agent


def _temperature(values: list[str], sample: bool) -> float:
    """The one `temp=T` of a ppo spec (1 without it): a number above 0, and only with `sample`."""
    if not values:
        return 1.0
    if len(values) > 1 or not sample:
        raise ValueError(f"ppo option temp=T goes once, with sample (greedy play does not depend on it); usage: {USAGE}")
    try:
        temperature = float(values[0])
    except ValueError:
        temperature = float("nan")
    if not (temperature > 0 and np.isfinite(temperature)):
        raise ValueError(f"ppo option temp takes a number above 0, got {values[0]!r}; usage: {USAGE}")
    return temperature

