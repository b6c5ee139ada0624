"""Does attention over the card tokens fit teacher labels better than the MLP, from scratch and at equal data?

An experiment, not a feature: it trains two networks on the same batches of one teacher folder with
train.py's distillation update (`euchre_lab.training.distill.distill_update`) and prints their held-out losses and
regrets as they go.

- `mlp`: the shipped agent's architecture, `ActorCritic` 3 x 512 with canonical suits and an action-value head.
- `cards`: the same heads over a transformer encoder whose tokens are the observation's card records (16 cells
  each, plus a learned embedding of the card) and one token of the cells after them (bids, score, trump, ...).

    python experiments/card_attention.py data/teacher_search_r14x --epochs 1 --seed 0
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import NoReturn

import torch
import torch.nn as nn

from euchre_agents.network import ActorCritic
from euchre_env import Engine, Rules
from euchre_env.observation import CARD_CELLS
from euchre_lab.cli import OptionError
from euchre_lab.training.distill import EpochOrders, TeacherSplit, distill_update, holdout_metrics, load_teacher, teacher_batch
from euchre_lab.training.train_options import Args, parse_args


class CardTokens(nn.Module):
    """(n, D) observations -> (n, width): a pre-norm transformer over one token per card and one for the rest."""

    def __init__(self, engine: Engine, d_model: int, layers: int, heads: int, width: int):
        super().__init__()
        self.cards = engine.num_cards
        self.card_in = nn.Linear(CARD_CELLS, d_model)
        self.card_id = nn.Parameter(torch.randn(self.cards, d_model) * 0.02)
        self.rest_in = nn.Linear(engine.observation_size - self.cards * CARD_CELLS, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, 2 * d_model, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.out = nn.Sequential(nn.Linear(2 * d_model, width), nn.ReLU())

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """The pooled encoding: the rest token and the mean of the card tokens, through one ReLU layer."""
        split = self.cards * CARD_CELLS
        cards = self.card_in(obs[:, :split].reshape(obs.shape[0], self.cards, CARD_CELLS)) + self.card_id
        tokens = torch.cat([self.rest_in(obs[:, split:]).unsqueeze(1), cards], dim=1)
        y = self.norm(self.encoder(tokens))
        return self.out(torch.cat([y[:, 0], y[:, 1:].mean(dim=1)], dim=1))


def card_network(engine: Engine, d_model: int, layers: int, width: int) -> ActorCritic:
    """ActorCritic's heads and suit relabelling over `CardTokens` instead of the MLP trunk."""
    net = ActorCritic(engine, hidden_size=width, num_layers=1, canonical_suits=True, action_values=True)
    net.trunk = CardTokens(engine, d_model, layers, heads=4, width=width)
    return net


def train(nets: dict[str, ActorCritic], split: TeacherSplit, args: Args, epochs: float, lr: float, report_every: int,
          seed: int) -> None:
    """Adam on the same batches for every network, the learning rate annealed linearly; held-out metrics as it goes."""
    device = torch.device("cpu")
    per_epoch = split.train_rows.size // args.distill_batch_size
    updates = max(1, int(per_epoch * epochs))
    optimizers = {name: torch.optim.Adam(net.parameters(), lr=lr, eps=1e-5) for name, net in nets.items()}
    orders, spent = EpochOrders(seed, split.train_rows), dict.fromkeys(nets, 0.0)
    print(f"{split.train_rows.size} training decisions, {split.holdout_rows.size} held out; {updates} updates of {args.distill_batch_size}")
    for update in range(updates):
        batch = teacher_batch(split, orders.batch(update, per_epoch, args.distill_batch_size), device)
        for name, net in nets.items():
            start = time.process_time()
            for group in optimizers[name].param_groups:
                group["lr"] = lr * (1.0 - update / updates)
            distill_update(net, optimizers[name], batch, args)
            spent[name] += time.process_time() - start
        if (update + 1) % report_every == 0 or update + 1 == updates:
            for name, net in nets.items():
                m = holdout_metrics(net, split, args, device)
                print(f"update {update + 1:5d} {name:5s}: held-out regret {m['holdout/regret_policy']:.4f} (action values "
                      f"{m['holdout/regret_action_value']:.4f}), policy loss {m['holdout/policy_loss']:.4f}, "
                      f"action-value loss {m['holdout/action_value_loss']:.4f}; {spent[name] / (update + 1):.3f} CPU s/update", flush=True)


def fail(problem: str) -> NoReturn:
    """One line on stderr and exit status 2, as every tool answers bad input."""
    print(f"card_attention.py: error: {problem}", file=sys.stderr)
    raise SystemExit(2)


def main() -> None:
    """Parse the command line, load the folder, build both networks with one seed, train them side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--learning-rate", type=float, default=0.001)
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=2048)
    parser.add_argument("--report-every", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    cli = parser.parse_args()
    if cli.d_model <= 0 or cli.d_model % 4:
        fail(f"--d-model {cli.d_model}: give a positive multiple of 4 (the attention heads)")
    for name in ("epochs", "learning_rate", "layers", "batch_size", "report_every", "threads"):
        if getattr(cli, name) <= 0:
            fail(f"--{name.replace('_', '-')} {getattr(cli, name)}: give a positive number")
    torch.set_num_threads(cli.threads)
    args, _ = parse_args(["--stage", "distill", "--teacher-data", cli.folder, "--holdout-fraction", "0.02",
                          "--max-grad-norm", "1.0", "--distill-batch-size", str(cli.batch_size)])
    engine = Engine(Rules())
    try:
        split = load_teacher(args, engine, None)
    except OptionError as e:
        fail(str(e))
    if split.train_rows.size < cli.batch_size:
        fail(f"{split.train_rows.size} training decisions make no batch of {cli.batch_size}; give a smaller --batch-size")
    torch.manual_seed(cli.seed)
    mlp = ActorCritic(engine, hidden_size=512, num_layers=3, canonical_suits=True, action_values=True)
    torch.manual_seed(cli.seed)
    cards = card_network(engine, cli.d_model, cli.layers, width=256)
    for name, net in (("mlp", mlp), ("cards", cards)):
        print(f"{name}: {sum(p.numel() for p in net.parameters()):,} parameters")
    train({"mlp": mlp, "cards": cards}, split, args, cli.epochs, cli.learning_rate, cli.report_every, cli.seed)


if __name__ == "__main__":
    main()
