"""Baselines at equal budgets of the learner's own decisions: train, score by the protocol, keep a journal.

    python benchmarks/baselines.py --plan                  # the queue: each run, its trainer's command, where it stands
    python benchmarks/baselines.py cleanrl:1M:1            # one baseline run: train (or continue) to 1M decisions, score it
    python benchmarks/baselines.py                         # the whole queue (benchmarks/baselines.yaml), one run at a time
    setsid nohup nice -n 19 python benchmarks/baselines.py > baselines.log 2>&1 &   # detached
    python benchmarks/baselines.py trainpy:2M:1 --quick    # a point for the curve, scored with evaluate.py --quick
    python benchmarks/baselines_report.py                  # the figure and docs/benchmarks.md's table

A run is ALGORITHM:BUDGET:SEED (BUDGET as 1000000, 1000k or 1M) on the task standard-v1:
- `trainpy`: `train.py` with its default preset (configs/ppo.yaml), `--total-decisions BUDGET`. Its learning rate
  anneals over the budget, so each budget is a run folder of its own;
- `cleanrl`: examples/cleanrl_masked_ppo.py; `sb3`: examples/sb3_maskable_ppo.py; `rllib`: examples/rllib_train.py
  (configs/rllib_ppo.yaml, one shared policy). Their learning rates are constant, so one run folder per seed is
  continued from budget to budget: a seed's smaller budgets come first in the queue.
The budget counts the learner's own decisions: in train.py the seats it plays (all four against itself, one
partnership against a pool snapshot or the heuristic bot); in cleanrl and rllib every decision (all seats share the
policy); in sb3 its seat's, not the bots' inside a step. A trainer stops at the end of the rollout or iteration that
reaches the budget, so a run makes up to one rollout more; the journal has the decisions it made.

Each run's training goes to RUNS/<run>/ (its checkpoints and TensorBoard events) and its record to
RESULTS/<run>/journal.json, <run> being `<algorithm>_seed<seed>` (`trainpy_<budget>_seed<seed>` for train.py). The
journal holds every training session (the command, its wall time, the load average) and every point reached
(the decisions made, the wall time of training up to it, the bot spec that plays it, its score files); the scores
are `evaluate.py --task standard-v1 SPEC --out RESULTS/<run>/<budget>` (`<budget>_quick` with --quick).

Stopping: Ctrl-C or `kill PID` stops the trainer as Ctrl-C does (train.py saves a checkpoint first) and exits; the
same command continues the queue where it stopped, each run from its latest checkpoint. After a `kill -9` of the
whole process group (or a lost machine) the same command closes the session at its last checkpoint; the wall
time counted is the time up to that checkpoint, since the work after it is done again. A run whose folder is gone
(another machine) trains again from 0 decisions; the time of its next point counts from that session.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout: the package's modules sit next to this folder

from euchre_agents.atomic import write_atomic  # noqa: E402
from euchre_lab.cli import OptionError, at_least, check_ranges, fail, interrupted, script_options  # noqa: E402
from euchre_lab.training.paths import latest_checkpoint  # noqa: E402

SCRIPT = "benchmarks/baselines.py"
TASK = "standard-v1"
JOURNAL = "journal.json"
QUEUE = "benchmarks/baselines.yaml"
STOP_WAIT_S = 300
"""How long a stopped trainer may take to save its checkpoint before it is killed."""


@dataclass
class Options:
    """The driver's options (field docstrings are its --help)."""

    runs: list[str] = field(default_factory=list)
    """runs to do in this order, each ALGORITHM:BUDGET:SEED (e.g. cleanrl:1M:1); none: the queue file's"""
    queue: str = QUEUE
    """YAML file: `runs`, the list in order, and `options`, extra options per algorithm (e.g. {cleanrl: [--num-envs, 50]})"""
    runs_dir: str = "runs/baselines"
    """folder of the run folders (checkpoints and TensorBoard events)"""
    results: str = "experiments/results/baselines"
    """folder of the journals and the score files"""
    quick: bool = False
    """score with evaluate.py --quick (1/20 of the pairs, not comparable): for points along a curve"""
    score: bool = True
    """score each run once trained (false: train only; the same command with scoring on scores it later)"""
    workers: int = os.cpu_count() or 1
    """evaluate.py's worker processes (the score does not depend on them)"""
    torch_threads: int = 1
    """torch threads of every trainer, the same for all so that their speeds compare"""
    plan: bool = False
    """print each run with its trainer's next command or where it stands, and exit"""


# ---------------------------------------------------------------- the trainers


@dataclass(frozen=True)
class Point:
    """A policy a run has finished: the learner's decisions it took, the bot spec that plays it, the env steps."""

    decisions: int
    spec: str
    env_steps: int


def python(script: str) -> list[str]:
    """This interpreter running a script of the checkout."""
    return [sys.executable, str(ROOT / script)]


def policies(run_dir: Path, last_written: str) -> list[int]:
    """The decisions of each policy_<decisions>/ folder an example trainer finished exporting (it holds the file or
    folder written last), in order."""
    return sorted(int(p.name.split("_")[1]) for p in run_dir.glob("policy_*")
                  if re.fullmatch(r"policy_\d+", p.name) and (p / last_written).exists())


@dataclass(frozen=True)
class Example:
    """examples/cleanrl_masked_ppo.py and examples/sb3_maskable_ppo.py: a run folder, --resume, policy_<N>/agent.py."""

    what: str
    script: str
    checkpoint_file: str
    per_budget = False

    def checkpoint(self, run_dir: Path) -> Path:
        """Where the run keeps the checkpoint it resumes from."""
        return run_dir / self.checkpoint_file

    def command(self, run_dir: Path, budget: int, seed: int, threads: int) -> list[str]:
        """The trainer's command that trains the run to `budget`, from its checkpoint if it has one."""
        where = (["--resume", str(self.checkpoint(run_dir))] if self.checkpoint(run_dir).exists()
                 else ["--runs-dir", str(run_dir.parent), "--run-name", run_dir.name, "--seed", str(seed)])
        return [*python(self.script), *where, "--total-decisions", str(budget), "--torch-threads", str(threads)]

    def trained(self, run_dir: Path) -> Point | None:
        """The newest policy the run has exported, if any."""
        done = policies(run_dir, "agent.py")
        return Point(done[-1], f"{run_dir / f'policy_{done[-1]}' / 'agent.py'}:agent", done[-1]) if done else None


@dataclass(frozen=True)
class RLlib(Example):
    """examples/rllib_train.py: its --run-dir, its checkpoint folder, and the shared policy's module in policy_<N>/."""

    def command(self, run_dir: Path, budget: int, seed: int, threads: int) -> list[str]:
        """The same options every session (RLlib restores only the state), with --resume once there is a checkpoint."""
        resume = ["--resume", str(self.checkpoint(run_dir))] if self.checkpoint(run_dir).exists() else []
        return [*python(self.script), "--run-dir", str(run_dir), "--seed", str(seed), "--policies", "shared",
                "--total-decisions", str(budget), "--torch-threads", str(threads), *resume]

    def trained(self, run_dir: Path) -> Point | None:
        """The newest policy the run has exported, if any."""
        done = policies(run_dir, "shared")
        return Point(done[-1], f"rllib:{run_dir / f'policy_{done[-1]}' / 'shared'}", done[-1]) if done else None


@dataclass(frozen=True)
class TrainPy:
    """train.py with its default preset: one run folder per budget, --resume from checkpoints/latest.pt."""

    what: str
    per_budget = True

    def checkpoint(self, run_dir: Path) -> Path:
        """Where the run keeps the checkpoint it resumes from."""
        return latest_checkpoint(run_dir)

    def command(self, run_dir: Path, budget: int, seed: int, threads: int) -> list[str]:
        """train.py's command for the run, resuming it (with its own options) once it has a checkpoint."""
        where = (["--resume", str(self.checkpoint(run_dir))] if self.checkpoint(run_dir).exists()
                 else ["--runs-dir", str(run_dir.parent), "--run-name", run_dir.name, "--seed", str(seed),
                       "--total-decisions", str(budget)])
        return [*python("train.py"), *where, "--progress", "false", "--torch-threads", str(threads)]

    def trained(self, run_dir: Path) -> Point | None:
        """The run's policy once its budget is spent (train.py's latest checkpoint), else None."""
        if not self.checkpoint(run_dir).exists():
            return None
        import torch

        saved = torch.load(self.checkpoint(run_dir), map_location="cpu", weights_only=True)
        made = saved.get("learner_decisions", 0)
        if made < saved["config"]["total_decisions"]:
            return None
        return Point(made, f"ppo:{self.checkpoint(run_dir)}", saved["global_step"])


TRAINERS: dict[str, Any] = {
    "trainpy": TrainPy("train.py, its default preset (configs/ppo.yaml): self-play, a pool of past selves, heuristic"),
    "cleanrl": Example("examples/cleanrl_masked_ppo.py: CleanRL-style masked PPO, self-play on the vector env",
                       "examples/cleanrl_masked_ppo.py", "checkpoint.pt"),
    "sb3": Example("examples/sb3_maskable_ppo.py: sb3-contrib MaskablePPO beside the heuristic bots",
                   "examples/sb3_maskable_ppo.py", "checkpoint.zip"),
    "rllib": RLlib("examples/rllib_train.py: RLlib PPO, one policy shared by the four seats",
                   "examples/rllib_train.py", "checkpoint"),
}
"""Every algorithm the driver runs, by the name a run gives it."""


# ---------------------------------------------------------------- runs and journals


@dataclass(frozen=True)
class Run:
    """One baseline run: an algorithm trained to a budget of the learner's decisions with a seed."""

    algorithm: str
    budget: int
    seed: int

    @property
    def trainer(self) -> Any:
        """How its algorithm is trained."""
        return TRAINERS[self.algorithm]

    @property
    def name(self) -> str:
        """Its run folder's name (and its journal's folder)."""
        budget = f"_{budget_label(self.budget)}" if self.trainer.per_budget else ""
        return f"{self.algorithm}{budget}_seed{self.seed}"

    def __str__(self) -> str:
        return f"{self.algorithm}:{budget_label(self.budget)}:{self.seed}"


def budget_label(budget: int) -> str:
    """1000000 -> 1M, 250000 -> 250k, 1234 -> 1234."""
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if budget % size == 0:
            return f"{budget // size}{unit}"
    return str(budget)


def parse_run(text: str) -> Run:
    """ALGORITHM:BUDGET:SEED -> Run, or an OptionError naming the fix."""
    match = re.fullmatch(r"(\w+):(\d+)([kM]?):(\d+)", text.strip())
    if not match:
        raise OptionError(f"run {text!r} is not ALGORITHM:BUDGET:SEED, e.g. cleanrl:1M:1")
    algorithm, number, unit, seed = match.groups()
    if algorithm not in TRAINERS:
        raise OptionError(f"run {text!r}: unknown algorithm {algorithm!r}; known: {', '.join(TRAINERS)}")
    budget = int(number) * {"": 1, "k": 1_000, "M": 1_000_000}[unit]
    if budget < 1:
        raise OptionError(f"run {text!r}: the budget must be at least 1 decision")
    return Run(algorithm, budget, int(seed))


def read_queue(path: str) -> tuple[list[Run], dict[str, list[str]]]:
    """The queue file's runs, in order, and its extra options per algorithm."""
    found = Path(path) if Path(path).exists() or not (ROOT / path).exists() else ROOT / path
    try:
        queue = yaml.safe_load(found.read_text()) or {}
    except FileNotFoundError:
        raise OptionError(f"--queue {path}: no such file; give a YAML file with `runs:` (see {QUEUE})") from None
    except yaml.YAMLError as e:
        raise OptionError(f"--queue {path}: not valid YAML ({getattr(e, 'problem', None) or 'unreadable'})") from None
    extra = queue.get("options") or {}
    if not isinstance(queue, dict) or not isinstance(queue.get("runs", []), list) or not isinstance(extra, dict):
        raise OptionError(f"--queue {path}: expected `runs:` a list of ALGORITHM:BUDGET:SEED and `options:` a mapping")
    unknown = sorted(set(extra) - set(TRAINERS))
    if unknown:
        raise OptionError(f"--queue {path}: options for unknown algorithms {unknown}; known: {', '.join(TRAINERS)}")
    return [parse_run(str(r)) for r in queue.get("runs") or []], {k: [str(v) for v in vs] for k, vs in extra.items()}


def new_journal(run: Run, run_dir: Path) -> dict[str, Any]:
    """The journal of a run not started yet: what it is and the machine it runs on."""
    return {"run": run.name, "algorithm": run.algorithm, "what": run.trainer.what, "seed": run.seed, "task": TASK,
            "run_dir": str(run_dir), "sessions": [], "points": {},
            "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}}


def read_journal(path: Path, run: Run, run_dir: Path) -> dict[str, Any]:
    """The run's journal, or a new one."""
    return json.loads(path.read_text()) if path.exists() else new_journal(run, run_dir)


def save_journal(path: Path, journal: dict[str, Any]) -> None:
    """Write the journal atomically."""
    write_atomic(path, lambda f: f.write((json.dumps(journal, indent=1) + "\n").encode()))


def shown(argv: list[str]) -> str:
    """A command as a person would type it: `python`, and paths relative to the current folder where they can be."""
    cwd = Path.cwd()

    def short(arg: str) -> str:
        path = Path(arg)
        return str(path.relative_to(cwd)) if path.is_absolute() and path.is_relative_to(cwd) else arg

    return shlex.join(["python", *map(short, argv[1:])])


# ---------------------------------------------------------------- sessions


def load_average() -> list[float]:
    """The machine's load average over 1, 5 and 15 minutes: how busy it was beside the run."""
    return [round(x, 2) for x in os.getloadavg()]


def alive(pid: int) -> bool:
    """Whether a process with this id is running (a zombie, dead but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # gone, unless there is no /proc to ask


def close_open_session(journal: dict[str, Any], run: Run, run_dir: Path) -> None:
    """A session a stopped or killed queue left open: refuse while its trainer still runs, else count its time up to its last
    checkpoint and record the point it reached, if it did."""
    session = journal["sessions"][-1] if journal["sessions"] else None
    if session is None or session.get("ended"):
        return
    if session.get("pid") and alive(session["pid"]):
        raise OptionError(f"{run}: its trainer (pid {session['pid']}) still runs from a queue that was stopped; "
                          "wait for it or stop it, then run this again")
    checkpoint = run.trainer.checkpoint(run_dir)
    saved_at = checkpoint.stat().st_mtime if checkpoint.exists() else session["started_unix"]
    session["seconds"] = round(max(0.0, saved_at - session["started_unix"]), 1)
    session["ended"] = "finished" if record_point(journal, run, run_dir, session["to_budget"]) else "stopped"


def record_point(journal: dict[str, Any], run: Run, run_dir: Path, budget: int) -> bool:
    """Record the point at `budget` from the run's newest policy, if the last session trained toward `budget` and
    reached it; whether it did."""
    sessions = journal["sessions"]
    point = run.trainer.trained(run_dir)
    if not sessions or sessions[-1]["to_budget"] != budget or point is None or point.decisions < budget:
        return False
    start = max((i for i, s in enumerate(sessions) if s.get("from_checkpoint") is False), default=0)
    seconds = sum(s.get("seconds", 0.0) for s in sessions[start:] if s["to_budget"] <= budget)  # since it last began at 0
    journal["points"].setdefault(str(budget), {"decisions": point.decisions, "env_steps": point.env_steps,
                                               "spec": point.spec, "training_seconds": round(seconds, 1), "scores": {}})
    return True


def run_child(argv: list[str], on_start: Any = None) -> int:
    """Run a command in the foreground, its output ours; on Ctrl-C or SIGTERM stop it as Ctrl-C does and re-raise."""
    child = subprocess.Popen(argv)
    if on_start is not None:
        on_start(child.pid)
    try:
        return child.wait()
    except KeyboardInterrupt:
        try:
            child.wait(timeout=5)  # a terminal's Ctrl-C reached it too
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        raise


def train(journal: dict[str, Any], path: Path, run: Run, run_dir: Path, options: Options, extra: list[str]) -> None:
    """One training session toward the run's budget, journaled before it starts and after it ends."""
    argv = [*run.trainer.command(run_dir, run.budget, run.seed, options.torch_threads), *extra]
    resumed = run.trainer.checkpoint(run_dir).exists()
    session = {"to_budget": run.budget, "command": shown(argv), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
               "started_unix": time.time(), "load_before": load_average(), "from_checkpoint": resumed}
    if not resumed and journal["sessions"]:
        print(f"{SCRIPT}: {run}: {run_dir} holds no checkpoint to continue (a new machine?): the run trains again from "
              "0 decisions, and this budget's time counts from here", flush=True)
    journal["sessions"].append(session)
    print(f"{SCRIPT}: {run}: {session['command']}", flush=True)

    def started(pid: int) -> None:
        session["pid"] = pid
        save_journal(path, journal)

    try:
        code = run_child(argv, started)
    except KeyboardInterrupt:
        close_open_session(journal, run, run_dir)
        save_journal(path, journal)
        raise
    session.update(seconds=round(time.time() - session["started_unix"], 1), load_after=load_average(),
                   ended="finished" if code == 0 else f"failed (exit status {code})")
    save_journal(path, journal)
    if code != 0:
        raise RuntimeError(f"{run}: the trainer exited with status {code} (its output is above); run this again to continue it")


def score(journal: dict[str, Any], path: Path, run: Run, options: Options) -> None:
    """Score the run's point at its budget by the protocol, unless its score file is there."""
    label = budget_label(run.budget) + ("_quick" if options.quick else "")
    out = path.parent / label
    point = journal["points"][str(run.budget)]
    if (out / "score.json").exists():
        return
    argv = [*python("evaluate.py"), "--task", TASK, point["spec"], "--out", str(out), "--workers", str(options.workers),
            "--no-progress", *(["--quick"] if options.quick else [])]
    print(f"{SCRIPT}: {run}: {shown(argv)}", flush=True)
    start = time.time()
    code = run_child(argv)
    if code != 0:
        raise RuntimeError(f"{run}: evaluate.py exited with status {code} (its output is above); run this again to score it")
    point["scores"]["quick" if options.quick else "full"] = {"file": f"{label}/score.json", "wall_seconds": round(time.time() - start, 1)}
    save_journal(path, journal)


def do_run(run: Run, options: Options, extra: list[str]) -> None:
    """Train the run to its budget (continuing it where it stands) and score it, journaling every step."""
    run_dir = Path(options.runs_dir) / run.name
    path = Path(options.results) / run.name / JOURNAL
    journal = read_journal(path, run, run_dir)
    close_open_session(journal, run, run_dir)
    if str(run.budget) not in journal["points"] and not record_point(journal, run, run_dir, run.budget):
        newest = run.trainer.trained(run_dir)
        if newest is not None and newest.decisions > run.budget:
            raise OptionError(f"{run}: its run folder {run_dir} is already at {newest.decisions:,} decisions, past the "
                              "budget; a seed's budgets run from the smallest up")
        train(journal, path, run, run_dir, options, extra)
        if not record_point(journal, run, run_dir, run.budget):
            raise RuntimeError(f"{run}: the trainer finished without a policy at {run.budget:,} decisions in {run_dir}")
    save_journal(path, journal)
    if options.score:
        score(journal, path, run, options)


def status(run: Run, options: Options, extra: list[str]) -> str:
    """Where the run stands, and the command of its next training session if it needs one."""
    path = Path(options.results) / run.name / JOURNAL
    run_dir = Path(options.runs_dir) / run.name
    point = read_journal(path, run, run_dir)["points"].get(str(run.budget))
    if point is None:
        argv = [*run.trainer.command(run_dir, run.budget, run.seed, options.torch_threads), *extra]
        return f"{run}: to train: {shown(argv)}"
    scores = ", ".join(sorted(point["scores"])) or "none yet"
    return f"{run}: trained ({point['decisions']:,} decisions, {point['training_seconds']:.0f} s); scores: {scores}"


def main(argv: list[str] | None = None) -> int:
    """Run the queue, or the runs named; 0 when all are done, 2 for a bad input, 1 when a trainer fails, 130 stopped."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # started in the background by a shell, this process inherits SIGINT ignored, and so would the trainers that
    # run_child stops with it; a handled signal is reset to the default in a child, so they hear it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        options = script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv, positional={"runs": dict(nargs="*", metavar="RUN")})
        check_ranges(options, {"workers": at_least(1), "torch_threads": at_least(0)})
        queued, extra = read_queue(options.queue)
        runs = [parse_run(r) for r in options.runs] or queued
        if options.plan:
            print("\n".join(status(r, options, extra.get(r.algorithm, [])) for r in runs))
            return 0
        for run in runs:
            do_run(run, options, extra.get(run.algorithm, []))
    except (OptionError, OSError, ValueError) as error:
        return fail(SCRIPT, error)
    except RuntimeError as error:
        print(f"{SCRIPT}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return interrupted(SCRIPT, "each run's checkpoints and journal are kept: the same command continues where it stopped")
    print(f"{SCRIPT}: {len(runs)} run{'s' * (len(runs) != 1)} done; the figure and table: python benchmarks/baselines_report.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
