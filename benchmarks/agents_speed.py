"""Speed of the bots: heuristic and learned-agent decisions/s, the search bots' ms per decision by phase, and the raw solver per layout.

    python benchmarks/agents_speed.py [--games 2000] [--per-phase 200] [--search pimc search search:z=2]

CPU time of this process (one core), so the figures hold on a machine shared with other work.
Positions are collected from heuristic self-play; pimc is timed on decisions with more than one
legal action, one decision per call, at its default number of worlds, on positions spread evenly over
those collected (so over every trick of the hand); so is `search`, the network's play-time search, with
one torch thread.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np

from euchre_agents.base import Agent
from euchre_agents.registry import make_agent
from euchre_agents.solver import DoubleDummy, hand_masks
from euchre_env import Engine, Phase, Rules, game_keys
from euchre_env.engine import NUM_DECISION_PHASES
from euchre_lab.cli import OptionError, at_least, check_ranges, checked_agent, fail, script_options

SCRIPT = "benchmarks/agents_speed.py"


def collect_positions(engine: Engine, games: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of every decision in `games` hands of heuristic self-play."""
    bot = make_agent("heuristic", engine, seed=0)
    state = engine.init(game_keys(7, games))
    observations, masks = [], []
    while not state.done.all():
        obs = engine.observe(state)
        live = np.flatnonzero(~state.done)
        observations.append(obs[live])
        masks.append(state.legal[live].copy())
        actions = np.zeros(state.num_games, np.int64)
        actions[live] = bot.act(obs[live], state.legal[live])
        engine.step(state, actions)
    return np.concatenate(observations), np.concatenate(masks)


def with_a_choice(engine: Engine, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The positions with more than one legal action: (observations, masks, decision phase of each)."""
    choice = masks.sum(axis=1) > 1
    obs, masks = obs[choice], masks[choice]
    return obs, masks, obs[:, engine.observation_layout["phase"]].argmax(axis=1)


def one_per_call_rate(agent, obs: np.ndarray, masks: np.ndarray, count: int) -> float:
    """Decisions per CPU-second when the first `count` positions are asked one at a time."""
    single = min(count, len(obs))
    t = time.process_time()
    for k in range(single):
        agent.act(obs[k : k + 1], masks[k : k + 1])
    return single / (time.process_time() - t)


def time_learned_agent(engine: Engine, obs: np.ndarray, masks: np.ndarray) -> None:
    """The shipped learned agent (`ppo`), one torch thread: batches of 1,024 decisions, then one per call."""
    import torch

    torch.set_num_threads(1)
    agent = make_agent("ppo", engine, seed=0)
    batch = 1024
    agent.act(obs[:batch], masks[:batch])  # warm-up
    t = time.process_time()
    for start in range(0, len(obs), batch):
        agent.act(obs[start : start + batch], masks[start : start + batch])
    print(f"ppo (shipped), batches of {batch}, one thread: {len(obs) / (time.process_time() - t):,.0f} decisions/s")
    print(f"ppo (shipped), one decision per call: {one_per_call_rate(agent, obs, masks, 2000):,.0f} decisions/s")


def time_search(spec: str, bot: Agent, obs: np.ndarray, masks: np.ndarray, phase: np.ndarray, per_phase: int) -> None:
    """Print the CPU time per decision in each phase (one decision per call) of `bot`, the search bot `spec` names."""
    print(f"{spec} at {bot.worlds} worlds, decisions with a choice, one per call:")
    mean = 0.0
    for p in range(NUM_DECISION_PHASES):
        idx = np.flatnonzero(phase == p)
        idx = idx[np.linspace(0, idx.size - 1, min(per_phase, idx.size)).astype(int)]  # early and late in the hand
        if idx.size == 0:
            continue
        t = time.process_time()
        for k in idx:
            bot.act(obs[k : k + 1], masks[k : k + 1])
        per = (time.process_time() - t) / idx.size
        print(f"  {Phase(p).name:15s} n={idx.size:4d}  {per * 1e3:7.2f} ms/decision  {per * 1e3 / bot.worlds:6.3f} ms/layout  {1 / per:6.1f} decisions/s")
        mean += per * np.mean(phase == p)
    print(f"  {'ALL':15s} {mean * 1e3:7.2f} ms/decision ({1 / mean:.1f} decisions/s), the phases weighted by how often self-play meets them")


def time_solver(layouts: int) -> None:
    """Print the raw solver's CPU time per random full deal, with 24 cards and with 32 and the joker."""
    rng = np.random.default_rng(0)
    for rules in (Rules(), Rules(deck=32, joker=True)):
        deck = Engine(rules).deck
        solver = DoubleDummy(deck)
        hands = np.array(
            [
                [hand_masks(np.isin(np.arange(deck.num_cards), h)) for h in rng.permutation(deck.num_cards)[:20].reshape(4, 5)]
                for _ in range(layouts)
            ],
            np.uint64,
        )
        trump = rng.integers(0, 4, layouts)
        leader = rng.integers(0, 4, layouts)
        t = time.process_time()
        solver.move_values(hands, trump, leader)
        per = (time.process_time() - t) / layouts
        print(f"solver, {deck.num_cards} cards, full five-trick deal, value of every opening lead: {per * 1e6:.0f} us/layout")


@dataclass
class Options:
    """The command line of the bots' speed table (field docstrings are its --help)."""

    games: int = 2000
    """hands of self-play to collect positions from"""
    per_phase: int = 200
    """search decisions timed per phase"""
    layouts: int = 3000
    """random full deals for the solver timing"""
    search: list[str] = field(default_factory=lambda: ["pimc", "search"])
    """search bot specs to time per phase"""


def options(argv: list[str] | None, engine: Engine) -> tuple[Options, dict[str, Agent]]:
    """The command line's options and the search bots they name, built for `engine`; or an OptionError
    naming the first option that makes no sense."""
    args = script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv,
                          special={"search": dict(nargs="+", metavar="SPEC")})
    check_ranges(args, {"games": at_least(1), "per_phase": at_least(1), "layouts": at_least(1)})
    bots = {spec: checked_agent(spec, "--search", engine, seed=0) for spec in args.search}
    for spec, bot in bots.items():
        if not hasattr(bot, "worlds"):
            raise OptionError(f"--search {spec!r} is not a search bot; give pimc or search specs (such as pimc:worlds=20 search:z=2)")
    return args, bots


def main(argv: list[str] | None = None) -> int:
    """Print the table."""
    engine = Engine(Rules())
    try:
        args, search_bots = options(argv, engine)
    except OptionError as e:
        return fail(SCRIPT, e)
    obs, masks = collect_positions(engine, args.games)
    heuristic = make_agent("heuristic", engine, seed=0)
    t = time.process_time()
    heuristic.act(obs, masks)
    print(f"heuristic, {len(obs):,} decisions in one batch: {len(obs) / (time.process_time() - t):,.0f} decisions/s")
    print(f"heuristic, one decision per call: {one_per_call_rate(heuristic, obs, masks, 3000):,.0f} decisions/s")

    time_learned_agent(engine, obs, masks)

    obs, masks, phase = with_a_choice(engine, obs, masks)
    for spec, bot in search_bots.items():
        time_search(spec, bot, obs, masks, phase, args.per_phase)
    time_solver(args.layouts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
