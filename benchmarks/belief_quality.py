"""How well `pimc:infer=true`'s layout weights locate the hidden cards, and what that is worth to its decisions.

    python benchmarks/belief_quality.py --hands 300 --players pimc --seed 5 --regret \
        uniform model=heuristic "model=heuristic,eps=0.1,plays=true" "model=ppo,temp=0,plays=true"

Bots in `--players` play every seat of `--hands` one-hand deals. At each decision with more than one
legal action, `candidates` x `worlds` layouts of the acting seat's unseen cards are drawn as
`pimc:infer=true` draws them (the same draw for every variant), and each variant weighs them
(`PimcAgent.weigh`; `uniform` gives every layout weight 1, which is what plain `pimc` searches).

- placed: the weighted share of the unseen cards that a layout puts where they really are (in the
  right seat's hand, or out of play), averaged over decisions, overall and per phase. Higher is better.
- effective layouts: the weights' mean effective sample size (Kish), how many distinct layouts the
  search keeps.
- with `--regret`: each variant searches as the bot would (`PimcAgent.values`, the same seed for every
  variant) and the action it picks is scored on the true layout by `oracle` (a card by its
  double-dummy value, a bid, alone call or discard by the same rollouts `pimc` runs, on the true
  layout): regret = best true value - the picked action's, in points per decision, for the auction
  (bids, alone calls, discards) and the card play apart. Lower is better; `uniform` is plain `pimc`.

Intervals are 95% over decisions; each variant's paired difference to the first is printed too. Only
single decisions are measured, so variants can be compared on a few hundred hands in minutes,
before a match that takes a quarter of an hour.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np

from euchre_agents.registry import make_agent
from euchre_agents.belief import effective_size
from euchre_agents.heuristic import HeuristicAgent
from euchre_agents.layouts import View, card_counts, sample_hands
from euchre_agents.pimc import DEFAULT_CANDIDATES, DEFAULT_WORLDS, OracleAgent, choose
from euchre_agents.solver import hand_masks
from euchre_env import Engine, Phase, game_keys
from euchre_env.infoset import decode
from euchre_lab.cli import OptionError, at_least, check_ranges, checked_agent, fail, script_options

SCRIPT = "benchmarks/belief_quality.py"

NUM_SEATS = 4
COLUMNS = ("placed", "size", "regret")


def true_placement(state, row: int) -> tuple[np.ndarray, int]:
    """(4,) uint64 current hands of game `row` by seat relative to the player to act (a seat sitting out
    holds none once the play begins: its cards are out of play), and the cards in play."""
    me = int(state.to_play[row])
    hands = hand_masks(state.hand[row])
    if state.phase[row] == Phase.PLAY:
        hands = np.where(state.active[row], hands, np.uint64(0))
    relative = np.array([hands[(me + r) % NUM_SEATS] for r in range(NUM_SEATS)], np.uint64)
    return relative, int(np.bitwise_or.reduce(hands))


def placed_share(layouts, truth: np.ndarray, in_hands: int, num_cards: int) -> np.ndarray:
    """(W,) share of the unseen cards that each layout places where they really are."""
    hidden = layouts.hands[:, 1:]
    right_seat = np.bitwise_or.reduce(hidden & truth[None, 1:], axis=1)
    right_pool = layouts.pool & ~np.uint64(in_hands)
    unseen = np.bitwise_or.reduce(hidden, axis=1) | layouts.pool
    return card_counts(right_seat | right_pool, num_cards) / np.maximum(card_counts(unseen, num_cards), 1)


def check_truth(layouts, truth: np.ndarray, num_cards: int) -> None:
    """The true layout has the sampled hands' sizes (the seats are oriented as the sampler's)."""
    if layouts.hands[0, 0] != truth[0] or (card_counts(layouts.hands[0], num_cards) != card_counts(truth, num_cards)).any():
        raise AssertionError(f"the true layout {truth} does not match the sampled layout {layouts.hands[0]}")


class Variant:
    """One belief: `uniform` (plain `pimc`) or the options of a `pimc:infer=true,<options>`."""

    def __init__(self, engine: Engine, spec: str, seed: int):
        self.spec = spec
        self.agent = make_agent("pimc" if spec == "uniform" else f"pimc:infer=true,{spec}", engine, seed)

    def log_weights(self, view: View, layouts) -> np.ndarray:
        """(W,) the variant's log-weights of the layouts (0 for `uniform`)."""
        if not self.agent.infer:
            return np.zeros(layouts.hands.shape[0])
        return self.agent.weigh(view, layouts)[1]


class Meter:
    """Measures every decision with a choice while the hands are played (module docstring)."""

    def __init__(self, engine: Engine, variants: list[Variant], layouts: int, regret: bool, seed: int):
        self.engine, self.variants, self.layouts, self.regret = engine, variants, layouts, regret
        self.rng = np.random.default_rng(seed)
        self.oracle, self.heuristic = OracleAgent(engine, seed), HeuristicAgent(engine, seed)
        self.rows: dict[str, list[np.ndarray]] = {name: [] for name in (*COLUMNS, "phase")}

    def decision(self, state, row: int, info, i: int, mask: np.ndarray, trick: np.ndarray) -> None:
        """Record the figures of the decision in game `row` (row i of the decoded batch `info`, whose
        current trick is `trick`)."""
        view = View.from_info(info, i)
        seed = int(self.rng.integers(0, 2**63))
        layouts = sample_hands(self.engine, view, self.layouts, seed)
        truth, in_hands = true_placement(state, row)
        check_truth(layouts, truth, self.engine.num_cards)
        share = placed_share(layouts, truth, in_hands, self.engine.num_cards)
        out = np.full((len(COLUMNS), len(self.variants)), np.nan)
        for v, variant in enumerate(self.variants):
            log_w = variant.log_weights(view, layouts)
            w = np.exp(log_w - log_w.max())
            out[0, v] = float((w * share).sum() / w.sum())
            out[1, v] = effective_size(log_w)
        if self.regret:
            true = self.oracle.values(state, row)
            preferred = self.heuristic.decide(info, i, mask, trick)
            for v, variant in enumerate(self.variants):
                picked = choose(variant.agent.values(view, seed), preferred)
                out[2, v] = np.nanmax(true) - true[picked]
        for name, values in zip(COLUMNS, out):
            self.rows[name].append(values)
        self.rows["phase"].append(np.array([view.phase]))

    def results(self) -> dict[str, np.ndarray]:
        """(decisions, variants) arrays per figure, and the (decisions,) phases."""
        return {name: np.stack(values) if name != "phase" else np.concatenate(values) for name, values in self.rows.items()}


def play(engine: Engine, players, meter: Meter, hands: int, seed: int) -> dict[str, np.ndarray]:
    """Play the hands with `players` in the seats, measuring every decision with a choice."""
    state = engine.init(game_keys(seed, hands))
    while not state.done.all():
        live = np.flatnonzero(~state.done)
        obs = engine.observe(state)[live]
        mask = state.legal[live]
        choice = np.flatnonzero(mask.sum(axis=1) > 1)
        if choice.size:
            info = decode(engine, obs[choice])
            trick = info.current_trick()
            for i, row in enumerate(live[choice].tolist()):
                meter.decision(state, row, info, i, mask[choice[i]], trick[i])
        actions = np.zeros(state.num_games, np.int64)
        seat = state.to_play[live]
        for s in range(NUM_SEATS):
            mine = np.flatnonzero(seat == s)
            if mine.size:
                actions[live[mine]] = players[s].act(obs[mine], mask[mine], state, live[mine])
        engine.step(state, actions)
    return meter.results()


def interval(x: np.ndarray) -> str:
    """Mean [95% interval] of the finite values of x."""
    x = x[np.isfinite(x)]
    half = 1.96 * x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else float("nan")
    return f"{x.mean():.4f} [{x.mean() - half:+.4f}, {x.mean() + half:+.4f}]"


def report(names: list[str], results: dict[str, np.ndarray], layouts: int) -> None:
    """Print one line per variant."""
    placed, size, regret, phases = results["placed"], results["size"], results["regret"], results["phase"]
    parts = {"auction": phases != Phase.PLAY, "card": phases == Phase.PLAY}
    for v, name in enumerate(names):
        by_phase = ", ".join(f"{Phase(p).name} {placed[phases == p, v].mean():.4f}" for p in np.unique(phases))
        line = f"{name}: placed {interval(placed[:, v])} ({by_phase}); effective layouts {size[:, v].mean():.1f} of {layouts}"
        if v:
            line += f"; placed minus {names[0]} {interval(placed[:, v] - placed[:, 0])}"
        for part, rows in parts.items():
            if np.isfinite(regret[rows, v]).any():
                line += f"\n    {part} regret {interval(regret[rows, v])} over {rows.sum()} decisions"
                if v:
                    line += f"; minus {names[0]} {interval(regret[rows, v] - regret[rows, 0])}"
        print(line, flush=True)


@dataclass
class Options:
    """The command line of the belief-quality table (field docstrings are its --help)."""

    variants: list[str] = field(default_factory=list)
    """`uniform` or pimc infer options, e.g. model=ppo,temp=0"""
    players: str = "pimc"
    """bot spec playing every seat"""
    hands: int = 200
    """one-hand deals played"""
    seed: int = 0
    """seed of the deals, the bots and the layouts drawn"""
    layouts: int = DEFAULT_CANDIDATES * DEFAULT_WORLDS
    """layouts per decision"""
    regret: bool = False
    """also each decision's regret on the true layout"""


def setup(argv: list[str] | None) -> tuple[Options, Engine, list, list[Variant]]:
    """The options, the engine, the players of the four seats and the variants; an OptionError naming the
    first option that makes no sense."""
    args = script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv,
                          positional={"variants": dict(nargs="+", metavar="VARIANT")})
    check_ranges(args, {"hands": at_least(1), "layouts": at_least(1), "seed": at_least(0)})
    engine = Engine()
    players = [checked_agent(args.players, "--players", engine, seed=args.seed + s) for s in range(NUM_SEATS)]
    variants = []
    for spec in args.variants:
        try:
            variants.append(Variant(engine, spec, args.seed))
        except ValueError as e:
            raise OptionError(f"variant {spec!r}: {e}") from None
    return args, engine, players, variants


def main(argv: list[str] | None = None) -> int:
    """Play, measure and print the figures of each variant."""
    try:
        args, engine, players, variants = setup(argv)
    except OptionError as e:
        return fail(SCRIPT, e)
    meter = Meter(engine, variants, args.layouts, args.regret, args.seed)
    results = play(engine, players, meter, args.hands, args.seed)
    print(f"{results['phase'].size} decisions of {args.hands} hands played by {args.players} (seed {args.seed})")
    report(args.variants, results, args.layouts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
