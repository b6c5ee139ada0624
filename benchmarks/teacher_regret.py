"""Regret of bots on held-out teacher data: the teacher value each loses per decision, by phase.

    python benchmarks/teacher_regret.py data/teacher_true --shards 15 --decisions 4000 ppo pimc heuristic

Reads the last `--shards` shards of the folder (those a distillation run holds out by default), draws
`--decisions` of their decisions at random, and for each bot spec prints the mean, over those decisions,
of (best teacher value - teacher value of the bot's choice), overall and per decision phase.
"""

from __future__ import annotations

import argparse

import numpy as np

from euchre_agents.registry import make_agent
from euchre_agents.teacher import load, read_manifest
from euchre_env import Engine, Phase


def main() -> None:
    """Print one line per bot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="teacher-data folder (python -m euchre_agents.teacher)")
    parser.add_argument("bots", nargs="+", help="bot specs, e.g. ppo pimc heuristic")
    parser.add_argument("--shards", type=int, default=15, help="the last N shards are read")
    parser.add_argument("--decisions", type=int, default=4000, help="decisions drawn from them")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draw and of the bots")
    args = parser.parse_args()

    engine = Engine()
    shards = sorted(int(k) for k in read_manifest(args.data)["shards"])[-args.shards :]
    data = load(args.data, engine, shards=shards)
    rng = np.random.default_rng(args.seed)
    rows = np.sort(rng.choice(len(data), size=min(len(data), args.decisions), replace=False))
    obs, mask = data.observations(rows), data.masks(rows)
    values = data.arrays["values"][rows].astype(np.float64)
    best = np.nanmax(values, axis=1)
    phase = data.arrays["phase"][rows]
    print(f"{rows.size} decisions from shards {shards[0]}-{shards[-1]} of {args.data}")
    for spec in args.bots:
        bot = make_agent(spec, engine, seed=args.seed)
        actions = np.concatenate([bot.act(obs[i : i + 256], mask[i : i + 256]) for i in range(0, rows.size, 256)])
        regret = best - values[np.arange(rows.size), actions]
        by_phase = ", ".join(f"{Phase(p).name} {regret[phase == p].mean():.3f}" for p in np.unique(phase))
        print(f"{spec}: regret {regret.mean():.4f} points per decision ({by_phase})", flush=True)


if __name__ == "__main__":
    main()
