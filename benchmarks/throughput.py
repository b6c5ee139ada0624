"""Decisions per second under random legal play: the vector API, the AEC env, and OpenSpiel's euchre.

Every figure counts one decision as producing the acting seat's observation and legal mask and
applying one legal action chosen at random (the vector API with `EuchreVectorEnv.random_legal_actions`,
the others in Python). All three play the same game: `Rules.openspiel()`, one hand per episode. Runs on
one core (BLAS/OpenMP threads pinned to 1 before numpy loads).

The rows are measured in interleaved rounds (`--rounds`, 3 by default): each round gives every row
its slice of `--seconds`, each loop playing on from where the last round left it. A row's figure is
its median over the rounds, and the vector/OpenSpiel ratio is the median of the rounds' own ratios,
so a machine whose speed drifts during the run moves OpenSpiel and the vector API alike.

    python benchmarks/throughput.py            # 3 s per row, in 3 rounds of 1 s
    python benchmarks/throughput.py --quick    # a fast smoke run
    python benchmarks/throughput.py --seconds 10 --clock wall
    python benchmarks/throughput.py --json results/throughput.json   # also write the figures

Timing uses this process's CPU time by default (`--clock cpu`), which stays meaningful on a
shared machine; `--clock wall` uses elapsed time. The peak memory at 65,536 games is measured in
a fresh subprocess (peak RSS of that process, and numpy's peak allocations through tracemalloc),
started before any measured loop exists (Linux counts in a child's peak RSS the pages it shared with
its parent when forked).
Start-up is measured in fresh subprocesses too: import, then one step of the vector API and of the
AEC env (which compiles every kernel they run), with an empty numba cache (`cold_start_s`, a new
NUMBA_CACHE_DIR) and again with the cache that run filled (`warm_start_s`); wall-clock seconds.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import json  # noqa: E402
import random  # noqa: E402
import statistics  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Callable, Iterator  # noqa: E402

import numpy as np  # noqa: E402

from euchre_env import EuchreVectorEnv, Rules, euchre_v0  # noqa: E402
from euchre_lab.cli import OptionError, above, at_least, check_ranges, fail, script_options  # noqa: E402

SCRIPT = "benchmarks/throughput.py"

VECTOR_SIZES = (1, 64, 256, 512, 1024, 4096, 16384, 65536)
MEMORY_GAMES = 65536
MEMORY_STEPS = 40


@dataclass
class Options:
    """The command line's options (each field's docstring is its --help)."""

    seconds: float = 3.0
    """time per measurement (all rounds together)"""
    rounds: int = 3
    """interleaved rounds: each row gets seconds / rounds per round"""
    quick: bool = False
    """0.5 s per measurement and 10 warm-up steps"""
    clock: str = "cpu"
    """process CPU time or elapsed time"""
    sizes: list[int] = field(default_factory=lambda: list(VECTOR_SIZES))
    """vector API batch sizes"""
    warmup: int = 60
    """untimed vector API steps first (about 2.5 hands)"""
    seed: int = 0
    """seed of the games and of the random play"""
    json: str | None = None
    """also write the figures to this JSON file"""


SPECIAL = {"clock": dict(choices=("cpu", "wall")), "sizes": dict(nargs="+", metavar="N"), "json": dict(metavar="PATH")}
"""The options with argparse keywords of their own."""


def checked(args: Options) -> Options:
    """`args`, or an OptionError in one line naming the option that makes no sense and what it takes."""
    check_ranges(args, {"seconds": above(0), "rounds": at_least(1), "warmup": at_least(0), "sizes": at_least(1)})
    if args.json:
        path = Path(args.json).absolute()
        nearest = next(p for p in path.parents if p.exists())
        if path.is_dir():
            raise OptionError(f"--json {args.json} is a folder; give the path of a JSON file to write")
        if not nearest.is_dir():
            raise OptionError(f"--json {args.json}: {nearest} is a file, not a folder; give a path in a folder")
    return args


def clock_fn(name: str) -> Callable[[], float]:
    """The timer for `--clock`: this process's CPU time, or elapsed time."""
    return time.process_time if name == "cpu" else time.perf_counter


# ----------------------------------------------------------------------------- the measured loops
# Each loop is a generator that plays on between measurements: `measure` times the next slice of it, so
# the rows can be measured in interleaved rounds (a machine whose speed drifts moves every row alike).


def measure(loop: Iterator[int], seconds: float, clock: Callable[[], float]) -> float:
    """Decisions/s of the next `seconds` of `loop` (which yields the decisions made since its last yield)."""
    decisions, start = 0, clock()
    while True:
        decisions += next(loop)
        elapsed = clock() - start
        if elapsed >= seconds:
            return decisions / elapsed


def vector_loop(n: int, seed: int, warmup: int, copy: bool = True) -> Iterator[int]:
    """`env.step` on n games with `env.random_legal_actions`, 8 steps per yield. The first `warmup` steps
    are played before the first yield: the games start in step with each other, and only autoreset
    spreads them over the phases of a hand."""
    env = EuchreVectorEnv(n, rules=Rules.openspiel(), episode="hand", seed=seed, copy=copy)
    rng = np.random.default_rng(seed)
    env.reset()
    for _ in range(warmup):
        env.step(env.random_legal_actions(rng))
    while True:
        for _ in range(8):
            env.step(env.random_legal_actions(rng))
        yield 8 * n


def aec_loop(env, seed: int, warmup: int = 500, numpy_generator: bool = False) -> Iterator[int]:
    """`env.last()` + `env.step(random legal action)`, resetting after each hand, 64 decisions per yield
    (the first `warmup` decisions, which compile what they run, before the first yield). The action is drawn
    with `random.Random`, or with `numpy_generator` as the README's loop draws it (`legal[rng.integers(n)]`)."""
    rnd = random.Random(seed)
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)

    def play(count: int) -> None:
        for _ in range(count):
            obs, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                env.reset()
                continue
            legal = np.flatnonzero(obs["action_mask"])
            pick = rng.integers(legal.size) if numpy_generator else int(rnd.random() * legal.size)
            env.step(int(legal[pick]))

    play(warmup)
    while True:
        play(64)
        yield 64


def wrapper_floor_env(fast: bool = False):
    """A no-op AEC env under PettingZoo's standard wrappers: their cost alone. With `fast`, under the
    subclasses `euchre_v0.env()` uses (`euchre_env._wrappers`, the same checks with faster paths)."""
    import gymnasium
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers

    from euchre_env import _wrappers

    real = euchre_v0.raw_env(rules=Rules.openspiel(), episode="hand")
    agents = list(real.possible_agents)

    class NoOp(AECEnv):
        """An AEC env that does nothing: Euchre's spaces, a fixed observation, the turn passed round the table."""

        metadata = {"name": "noop", "render_modes": [], "is_parallelizable": False}

        def __init__(self) -> None:
            super().__init__()
            self.possible_agents = list(agents)
            self.agents = list(agents)
            self.observation_spaces = dict(real.observation_spaces)
            self.action_spaces = dict(real.action_spaces)
            self._obs = {
                "observation": np.zeros(real.engine.observation_size, np.float32),
                "action_mask": np.ones(real.engine.num_actions, np.int8),
            }

        def observation_space(self, agent: str) -> gymnasium.spaces.Space:
            return self.observation_spaces[agent]

        def action_space(self, agent: str) -> gymnasium.spaces.Space:
            return self.action_spaces[agent]

        def reset(self, seed=None, options=None) -> None:
            self.agents = list(agents)
            self.rewards = {a: 0.0 for a in agents}
            self._cumulative_rewards = {a: 0.0 for a in agents}
            self.terminations = {a: False for a in agents}
            self.truncations = {a: False for a in agents}
            self.infos = {a: {} for a in agents}
            self.agent_selection = agents[0]
            self._t = 0

        def observe(self, agent: str) -> dict:
            return self._obs

        def step(self, action) -> None:
            self._t += 1
            self.agent_selection = agents[self._t % len(agents)]

    if fast:
        return _wrappers.OrderEnforcing(_wrappers.AssertOutOfBounds(NoOp()))
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(NoOp()))


# ----------------------------------------------------------------------------- OpenSpiel


def openspiel_loop(seed: int) -> Iterator[int]:
    """OpenSpiel's euchre, one hand per yield: information-state tensor into a reused buffer, legal
    actions, apply (the decisions of the hand are yielded).

    The deal is applied as 22 chance actions drawn directly (dealer, 20 cards, upcard), which is
    the cheapest way through its chance nodes.
    """
    import pyspiel
    from open_spiel.python.observation import make_observation

    game = pyspiel.load_game("euchre")
    observation = make_observation(game, pyspiel.IIGObservationType(perfect_recall=True))
    rnd = random.Random(seed)
    cards = list(range(game.num_distinct_actions() - 7))
    while True:
        decisions = 0
        state = game.new_initial_state()
        state.apply_action(rnd.randrange(4))
        for card in rnd.sample(cards, 21):
            state.apply_action(card)
        while not state.is_terminal():
            observation.set_from(state, state.current_player())
            legal = state.legal_actions()
            state.apply_action(legal[int(rnd.random() * len(legal))])
            decisions += 1
        yield decisions


def openspiel_observation_size() -> int:
    """Floats in OpenSpiel's euchre information-state tensor."""
    import pyspiel

    return pyspiel.load_game("euchre").information_state_tensor_size()


def bench_conversion_floor(n: int, seconds: float, clock: Callable[[], float], size: int) -> float:
    """Microseconds per decision to only write n float32 observations from prebuilt uint8 ones."""
    marks = np.zeros((n, size), np.uint8)
    out = np.empty((n, size), np.float32)
    np.copyto(out, marks)  # untimed: the first copy also maps the output's pages (seconds at this size)
    count, start = 0, clock()
    while True:
        np.copyto(out, marks)
        count += 1
        elapsed = clock() - start
        if elapsed >= min(seconds, 1.0):
            return elapsed / (count * n) * 1e6


# ----------------------------------------------------------------------------- memory


def in_fresh_process(call: str, env: dict[str, str] | None = None) -> str:
    """Run `call`, a call of one of this module's probes written as Python, in a fresh interpreter; its stdout."""
    code = f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); import throughput; throughput.{call}"
    return subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env).stdout


def memory_probe(n: int, seed: int) -> None:
    """Run in a fresh process: reset and step n games; print peak RSS and traced peak as JSON."""
    tracemalloc.start()
    env = EuchreVectorEnv(n, rules=Rules.openspiel(), episode="hand", seed=seed)
    rng = np.random.default_rng(seed)
    env.reset()
    for _ in range(MEMORY_STEPS):
        env.step(env.random_legal_actions(rng))
    _, traced_peak = tracemalloc.get_traced_memory()
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    print(json.dumps({"rss_peak": rss_peak, "traced_peak": traced_peak}))


def measure_memory(n: int, seed: int) -> dict[str, int]:
    """Peak memory of n games, measured by `memory_probe` in a fresh process."""
    return json.loads(in_fresh_process(f"memory_probe({n}, {seed})").strip().splitlines()[-1])


# ----------------------------------------------------------------------------- start-up


def start_probe() -> None:
    """Run in a fresh process (timed from outside): one vector API step and one AEC step."""
    env = EuchreVectorEnv(4, rules=Rules.openspiel(), episode="hand", seed=0)
    _, info = env.reset()
    env.step(np.argmax(info["action_mask"], axis=1))
    aec = euchre_v0.env(rules=Rules.openspiel(), episode="hand")
    aec.reset(seed=0)
    obs, *_ = aec.last()
    aec.step(int(np.argmax(obs["action_mask"])))


def measure_start() -> dict[str, float]:
    """Seconds from launch to the end of `start_probe`, with an empty numba cache and with a filled one."""
    out = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for name in ("cold_start_s", "warm_start_s"):
            start = time.perf_counter()
            in_fresh_process("start_probe()", env)
            out[name] = time.perf_counter() - start
    return out


# ----------------------------------------------------------------------------- report

VECTOR_ROW, REUSED_ROW = "vector API EuchreVectorEnv", "vector API, copy=False (obs buffer reused)"
AEC_ROW = "AEC euchre_v0.env() (last + step)"
RAW_ROW = "AEC euchre_v0.raw_env() (no wrappers)"
FLOOR_ROW = "PettingZoo wrappers around a no-op env"
FAST_FLOOR_ROW = "env()'s wrappers (fast paths) around a no-op env"


def best_rate(rates: dict[tuple[str, str], float], row: str) -> float:
    """The best rate among the rows named `row` (one per batch size), 0 if there is none."""
    return max((rate for (name, _), rate in rates.items() if name == row), default=0.0)


def build_loops(args: Options, warmup: int) -> dict[tuple[str, str], Iterator[int]]:
    """Every measured row, (name, games) -> its decision loop; OpenSpiel's first, the peer every ratio divides by."""
    loops = {("OpenSpiel euchre (info-state tensor + legal_actions)", "1"): openspiel_loop(args.seed)}
    for n in args.sizes:
        loops[VECTOR_ROW, f"{n:,}"] = vector_loop(n, args.seed, warmup)
    for n in (4096, 16384, 65536):
        if n in args.sizes:
            loops[REUSED_ROW, f"{n:,}"] = vector_loop(n, args.seed, warmup, copy=False)
    loops[AEC_ROW, "1"] = aec_loop(euchre_v0.env(rules=Rules.openspiel(), episode="hand"), args.seed)
    loops[RAW_ROW, "1"] = aec_loop(euchre_v0.raw_env(rules=Rules.openspiel(), episode="hand"), args.seed)
    loops[FLOOR_ROW, "1"] = aec_loop(wrapper_floor_env(), args.seed)
    loops[FAST_FLOOR_ROW, "1"] = aec_loop(wrapper_floor_env(fast=True), args.seed)
    return loops


def print_table(rates: dict[tuple[str, str], float], os_rate: float) -> None:
    """One line per row: decisions/s, microseconds per decision and the ratio to OpenSpiel."""
    width = max(len(name) for name, _ in rates)
    print(f"{'':{width}}  {'games':>7}  {'decisions/s':>12}  {'us/decision':>11}  {'vs OpenSpiel':>12}")
    for (name, games), rate in rates.items():
        print(f"{name:{width}}  {games:>7}  {rate:>12,.0f}  {1e6 / rate:>11.2f}  {rate / os_rate:>11.2f}x")
    print()


def print_summary(args, rounds, rates, os_row, seconds: float, obs_size: int, floor_us: float, start: dict[str, float]) -> dict:
    """The headline ratios against their targets (`floor_us`: converting prebuilt observations of `obs_size` cells
    alone); returns the figures `--json` keeps."""
    ratios = [best_rate(r, VECTOR_ROW) / r[os_row] for r in rounds]
    reused_ratios = [best_rate(r, REUSED_ROW) / r[os_row] for r in rounds]
    aec_rate = rates[AEC_ROW, "1"]
    print(f"observation sizes: ours {obs_size} floats, OpenSpiel's information state {openspiel_observation_size()} "
          f"floats; only converting {max(args.sizes):,} prebuilt uint8 observations to float32 takes {floor_us:.2f} us/decision")
    print(f"best vector API / OpenSpiel, median of {args.rounds} rounds: {statistics.median(ratios):.2f}x "
          f"(rounds {min(ratios):.2f}-{max(ratios):.2f}x; copy=False {statistics.median(reused_ratios):.2f}x)"
          f"   (target >= 10x)")
    print(
        f"AEC env: {aec_rate:,.0f} decisions/s   (target >= 75,000; PettingZoo's standard wrappers alone allow "
        f"{rates[FLOOR_ROW, '1']:,.0f}, env()'s {rates[FAST_FLOOR_ROW, '1']:,.0f})"
    )
    print(f"start-up (import + first JIT compile, fresh process): cold {start['cold_start_s']:.1f} s "
          f"(empty numba cache, target <= 20 s), warm {start['warm_start_s']:.1f} s (target <= 2 s)")
    return {
        "openspiel": rates[os_row],
        "vector_best": best_rate(rates, VECTOR_ROW),
        "vector_best_ratio": statistics.median(ratios),
        "vector_best_ratio_rounds": ratios,
        "vector_copy_false_best": best_rate(rates, REUSED_ROW),
        "aec_env": aec_rate,
        "aec_raw_env": rates[RAW_ROW, "1"],
        "vector": {games: rate for (name, games), rate in rates.items() if name == VECTOR_ROW},
        **start,
        "clock": args.clock,
        "seconds": seconds,
        "rounds": args.rounds,
    }


def print_memory(mem: dict[str, int], figures: dict) -> None:
    """The peak memory of the many-games probe, also added to `figures`."""
    gib = 2.0**30
    figures[f"memory_gib_{MEMORY_GAMES}"] = mem["rss_peak"] / gib
    print(
        f"memory at {MEMORY_GAMES:,} games (fresh process, reset + {MEMORY_STEPS} steps): "
        f"peak RSS {mem['rss_peak'] / gib:.2f} GiB, traced numpy/python peak {mem['traced_peak'] / gib:.2f} GiB"
        f"   (target < 2 GiB)"
    )


def run(args: Options) -> None:
    """Measure every row and print the table, the ratios and the memory (and write `--json`)."""
    start = measure_start()
    # Before any loop exists: a child's peak RSS counts what it shared with this process when it was forked.
    mem = measure_memory(MEMORY_GAMES, args.seed) if MEMORY_GAMES in args.sizes else None
    seconds = 0.5 if args.quick else args.seconds
    clock = clock_fn(args.clock)
    print("Euchre throughput: Rules.openspiel(), one hand per episode, random legal play, one core")
    print(f"{seconds:g} s per measurement, {args.clock} clock; numpy {np.__version__}, python {sys.version.split()[0]}")
    print()

    loops = build_loops(args, 10 if args.quick else args.warmup)
    rounds = [{row: measure(loop, seconds / args.rounds, clock) for row, loop in loops.items()} for _ in range(args.rounds)]
    rates = {row: statistics.median(r[row] for r in rounds) for row in loops}
    os_row = next(iter(loops))
    print_table(rates, rates[os_row])
    obs_size = euchre_v0.raw_env(rules=Rules.openspiel()).engine.observation_size
    floor_us = bench_conversion_floor(max(args.sizes), seconds, clock, obs_size)
    figures = print_summary(args, rounds, rates, os_row, seconds, obs_size, floor_us, start)
    if mem is not None:
        print_memory(mem, figures)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
        print(f"wrote {args.json}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; 0, or 2 on a bad option."""
    try:
        args = checked(script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv, special=SPECIAL))
    except OptionError as e:
        return fail(SCRIPT, e)
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
