"""The `ppo` bot: plays a policy network from a train.py checkpoint.

`make_agent("ppo:runs/main/checkpoints/latest.pt", engine)` plays greedily (the most probable legal
action); `ppo:PATH,sample` samples from the masked policy instead, and `ppo:PATH,q` plays greedily on
the per-action value head. The bare `ppo` plays the shipped agent of the table being played (`shipped_for`): each
named table (`euchre_env.named_tables`) has its own, and a table that is not named is played by the agent of the
nearest one, which a line on stderr names (carried card by card where its deck differs). The network is
`euchre_agents.network`'s, and reading and checking the file is `euchre_agents.checkpoint`'s.
"""

from __future__ import annotations

import multiprocessing
import sys
from pathlib import Path

import numpy as np
import torch

from euchre_agents.base import Agent
from euchre_agents.checkpoint import PLAY, build_network, check_compatible, network_for, read_checkpoint_and_sha256
from euchre_agents.network import MASKED_LOGIT, ActorCritic, bfloat16_trunk, sharpen_policy
from euchre_env.engine import Engine
from euchre_env.named_tables import NAMED_TABLES, differing_options, nearest_table, table_name
from euchre_env.rules import Rules


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
        cls, engine: Engine, path: str, sample: bool = False, seed: int | None = None, action_values: bool = False,
        other_rules: bool = False,
    ) -> "PPOAgent":
        """Load a train.py checkpoint, refusing one made for other rules or another observation layout (unless
        `other_rules`: then `network_for` these rules, carried card by card to another deck); `weights_sha256` is
        the sha256 of the file's bytes (`euchre_agents.base.file_sha256`), taken from the very bytes the network was
        loaded from."""
        checkpoint, file_digest = read_checkpoint_and_sha256(path, PLAY, "cpu")
        if other_rules:
            net = network_for(checkpoint, engine, f"checkpoint {path!r}")
        else:
            check_compatible(checkpoint, engine, f"checkpoint {path!r}")
            net = build_network(checkpoint, engine)
        agent = cls(engine, net, sample=sample, seed=seed, action_values=action_values)
        agent.weights_sha256 = file_digest
        return agent

    def act(self, obs, mask, state=None, rows=None):
        """The policy's action per row (or, with `q`, the legal action of highest value); never an illegal one.
        A forced move (one legal action) costs no forward pass: 40-45% of a play-out's moves are forced."""
        mask = np.asarray(mask, bool)
        out = np.argmax(mask, axis=1).astype(np.int64)
        choice = np.flatnonzero(mask.sum(axis=1) > 1)
        u = self.rng.random((mask.shape[0], 1))[choice] if self.sample else None  # one draw per row, forced or not
        if choice.size:
            out[choice] = self._choose(np.asarray(obs, np.float32)[choice], mask[choice], u)
        return out

    @torch.no_grad()
    def _choose(self, obs: np.ndarray, mask: np.ndarray, u: np.ndarray | None) -> np.ndarray:
        """The actions of decisions with a choice; `u` the uniform draws that sample them (None: greedy)."""
        obs_t = torch.as_tensor(obs, device=self.device)
        mask_t = torch.as_tensor(mask, device=self.device)
        logits, _, q = self.net.heads(obs_t, mask_t)
        if self.action_values:
            return torch.where(mask_t, q, torch.full((), MASKED_LOGIT)).argmax(dim=-1).cpu().numpy()
        if u is None:
            return logits.argmax(dim=-1).cpu().numpy()
        # Inverse-CDF sampling from self.rng's draws (so reseeding the bot reseeds its play); the first action
        # whose cumulative probability exceeds u always has a probability above zero.
        cumulative = torch.softmax(logits, dim=-1).cumsum(dim=-1).cpu().numpy()
        return np.argmax(cumulative > u * cumulative[:, -1:], axis=1)

    @torch.no_grad()
    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n, A) the masked policy's probabilities (zero on illegal actions)."""
        obs_t = torch.as_tensor(np.asarray(obs, np.float32), device=self.device)
        logits, _ = self.net(obs_t, torch.as_tensor(np.asarray(mask, bool), device=self.device))
        return torch.softmax(logits.double(), dim=-1).cpu().numpy()


SHIPPED_FOLDER = Path(__file__).parent / "shipped"
"""The shipped agents, one per named table: checkpoints/ in a checkout (through links), copies inside the package
when installed from a wheel."""


def shipped_path(table: str) -> Path:
    """Where the shipped agent of a named table lies (whether or not one is shipped yet)."""
    return (SHIPPED_FOLDER / ("euchre_ppo.pt" if table == "standard" else f"euchre_ppo_{table}.pt")).resolve()


SHIPPED = shipped_path("standard")
"""The default table's agent."""
USAGE = "ppo[:PATH][,sample[,temp=T]|,q][,bf16]"
_SAID: set[str] = set()


def shipped_for(rules: Rules) -> tuple[Path, str | None]:
    """The shipped agent that plays `rules`: its named table's, else the nearest named table's (`nearest_table`),
    with a line saying which (None for a named table); one made for another deck is carried to this one card by card
    (`PPOAgent.from_checkpoint`). A ValueError when that table has no agent shipped yet."""
    table, note = table_name(rules), None
    if table is None:
        table = nearest_table(rules)
        changed = ", ".join(differing_options(NAMED_TABLES[table], rules))
        carried = "" if (NAMED_TABLES[table].deck, NAMED_TABLES[table].joker) == (rules.deck, rules.joker) else \
            ", its weights carried to this deck card by card (a card its deck lacks plays like a stand-in)"
        note = f"these rules are no named table: the learned agent of the nearest, {table} (other {changed}), plays them{carried}"
    path = shipped_path(table)
    if not path.exists():
        raise ValueError(f"no learned agent is shipped for the {table} table yet; make one with "
                         f"`python train.py --config configs/recipe_{table}.yaml`, or name a checkpoint: {USAGE}")
    return path, note


def say_once(note: str | None, who: str) -> None:
    """Print a note on the table a bare learned bot plays, once per process, and not from a pool's worker processes."""
    if note and note not in _SAID and multiprocessing.parent_process() is None:
        _SAID.add(note)
        print(f"{who}: {note}", file=sys.stderr, flush=True)


def make_ppo(engine: Engine, arg: str, seed: int | None) -> PPOAgent:
    """`ppo` (the shipped agent of the table), `ppo:PATH` (greedy on the policy), `ppo:PATH,sample` (sampling the policy;
    `temp=T` samples its logits divided by T), or `ppo:PATH,q` (greedy on action values); `bf16` computes the network's
    trunk in bfloat16 (`bfloat16_trunk`: faster on CPUs with AVX512-BF16, nearly the same play)."""
    path, *options = arg.split(",")
    temps = [o.removeprefix("temp=") for o in options if o.startswith("temp=")]
    unknown = [o for o in options if o not in ("sample", "q", "bf16") and not o.startswith("temp=")]
    if unknown:
        raise ValueError(f"unknown ppo option(s) {unknown}; usage: {USAGE}")
    temperature = _temperature(temps, "sample" in options)
    note = None
    if not path:
        shipped, note = shipped_for(engine.rules)
        path = str(shipped)
    agent = PPOAgent.from_checkpoint(
        engine, path, sample="sample" in options, seed=seed, action_values="q" in options, other_rules=note is not None
    )
    say_once(note, "ppo")
    sharpen_policy(agent.net, temperature)
    if "bf16" in options:
        bfloat16_trunk(agent.net)
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

