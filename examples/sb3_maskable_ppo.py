"""sb3-contrib's MaskablePPO on a task's single-agent env, with checkpoints and resume.

    pip install -e ".[dev]"                                                 # stable-baselines3 and sb3-contrib
    python examples/sb3_maskable_ppo.py                                     # standard-v1, 1M learner decisions
    python examples/sb3_maskable_ppo.py --resume runs/sb3/checkpoint.zip --total-decisions 5000000
    tensorboard --logdir runs
    python evaluate.py --task standard-v1 runs/sb3/policy_1000000/agent.py:agent --out results/sb3

The env is `gymnasium.make("Euchre-<task>")`: one learning seat beside the task's partner and opponents (the
heuristic bot on standard-v1). One env step is one decision of the learner's own; the bots' decisions happen
inside it and do not count, so `--total-decisions` is SB3's `total_timesteps`. MaskablePPO keeps sb3-contrib's
defaults (MlpPolicy 64 x 64, n_steps 2048, batch 64, 10 epochs, learning rate 3e-4, gamma 0.99) except where an
option below sets them. A run stops at the end of the rollout that reaches its budget, up to n_steps - 1 decisions past it.

Outputs, in runs/<run-name>/: TensorBoard events (`MaskablePPO_1/`); `checkpoint.zip` (SB3's `model.save`: the
weights, the optimizer, the step count and this script's options) after every --save-interval rollouts and at
the end; and once the budget is spent, `policy_<decisions>/` with the model and `agent.py`, the outside bot that
plays it greedily (`euchre_agents.outside.write_weights_bot`), for `evaluate.py --task`. `--resume` continues from
the checkpoint's weights, optimizer and step count with a constant learning rate, so a run continued to 1M, 5M and
20M decisions gives the policy at each budget; SB3 saves neither the games in progress nor its random streams, so
a resumed run deals fresh games and is not bit for bit the run it continues.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout: the package's modules sit next to this folder

from euchre_agents.atomic import write_atomic  # noqa: E402
from euchre_agents.base import Agent, file_sha256  # noqa: E402
from euchre_agents.outside import write_weights_bot  # noqa: E402
from euchre_env import Engine, get_task  # noqa: E402
from euchre_env.extras import MissingExtraError, require  # noqa: E402
from euchre_lab.cli import (  # noqa: E402
    OptionError, above, at_least, between, check_ranges, exit_from, fail, flag, given_options, layered, option_parser,
)

SCRIPT = "examples/sb3_maskable_ppo.py"
CHECKPOINT = "checkpoint.zip"
MODEL = "model.zip"
OPTIONS = "euchre_options"
"""The model attribute that carries this script's options in every file it saves (SB3 saves a model's attributes)."""


@dataclass
class Args:
    """The trainer's options (field docstrings are its --help)."""

    task: str = "standard-v1"
    """the task: its rules, and the partner and opponents the learning seat plays with (evaluate.py --list-tasks)"""
    run_name: str = "sb3"
    """run folder under runs_dir: TensorBoard events, checkpoint.zip and policy_<decisions>/"""
    runs_dir: str = "runs"
    """folder that holds the run folders"""
    resume: str = ""
    """checkpoint.zip to continue (weights, optimizer, step count); its options are used, and options given here override them"""
    seed: int = 1
    """seed of the deals, the bots, the sampled actions and the minibatches"""
    torch_threads: int = 1
    """CPU threads for torch (0: torch's default)"""
    total_decisions: int = 1_000_000
    """the learner's own decisions in the whole run (SB3's total_timesteps)"""
    n_steps: int = 2048
    """decisions per rollout (sb3-contrib's default)"""
    batch_size: int = 64
    """decisions per minibatch (sb3-contrib's default)"""
    n_epochs: int = 10
    """passes over each rollout (sb3-contrib's default)"""
    learning_rate: float = 3e-4
    """Adam learning rate, constant (sb3-contrib's default)"""
    gamma: float = 0.99
    """discount per decision (sb3-contrib's default)"""
    save_interval: int = 10
    """rollouts between checkpoints (one is always written at the end)"""


RANGES = {
    **dict.fromkeys(("total_decisions", "n_steps", "batch_size", "n_epochs", "learning_rate", "save_interval"), above(0)),
    **dict.fromkeys(("seed", "torch_threads"), at_least(0)),
    "gamma": between(0, 1),
}
KEPT_ON_RESUME = ("task", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma")
"""Options the checkpoint's model fixes."""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Args from the defaults < the resumed checkpoint's options < the command line."""
    given = given_options(option_parser(Args, SCRIPT, __doc__.split("\n\n")[0]), Args, argv)
    values = dataclasses.asdict(Args())
    if given.get("resume"):
        saved = saved_options(given["resume"])
        changed = [name for name in KEPT_ON_RESUME if name in given and given[name] != saved[name]]
        if changed:
            raise OptionError(f"--resume keeps the model's {', '.join(changed)}; drop {' '.join(map(flag, changed))}")
        values = layered(values, saved)
    args = Args(**layered(values, given))
    check_ranges(args, RANGES)
    get_task(args.task)
    run_dir = Path(args.runs_dir) / args.run_name
    if not args.resume and (run_dir / CHECKPOINT).exists():
        raise OptionError(f"{run_dir} already holds a run; continue it with --resume {run_dir / CHECKPOINT}, or choose another --run-name")
    return args


def saved_options(path: str) -> dict[str, Any]:
    """The options a checkpoint was trained with (read from its zip without building the model), or an OptionError."""
    from stable_baselines3.common.save_util import load_from_zip_file

    if not Path(path).is_file():
        raise OptionError(f"--resume {path}: no such file; give the checkpoint.zip of a run folder")
    try:
        data, _, _ = load_from_zip_file(path, device="cpu", load_data=True)
    except Exception as e:
        raise OptionError(f"--resume {path}: not an SB3 model ({type(e).__name__}); give the checkpoint.zip of a run folder") from None
    if OPTIONS not in (data or {}):
        raise OptionError(f"--resume {path}: not a checkpoint of {SCRIPT}; give the checkpoint.zip of one of its run folders")
    return data[OPTIONS]


# ---------------------------------------------------------------- the trained policy as a bot


class GreedyPolicy(Agent):
    """A trained MaskablePPO as a bot: its most likely legal action."""

    name = "sb3_maskable_ppo"

    def __init__(self, engine: Engine, model: Any, seed: int | None = None):
        super().__init__(engine, seed)
        self.model = model

    def act(self, obs, mask, state=None, rows=None):
        """MaskablePPO's deterministic prediction for each row."""
        actions, _ = self.model.predict(np.asarray(obs, np.float32), action_masks=np.asarray(mask, bool), deterministic=True)
        return np.asarray(actions, np.int64)


def load_agent(path: Path, engine: Engine, seed: int | None = None) -> GreedyPolicy:
    """The model saved at `path` (a policy_<decisions>/model.zip) as a bot for `engine`; a ValueError for other rules."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(path, device="cpu")
    task = getattr(model, OPTIONS)["task"]
    if engine.rules != get_task(task).rules:
        raise ValueError(f"{path} was trained on {task}; these are other rules")
    agent = GreedyPolicy(engine, model, seed)
    agent.weights_sha256 = file_sha256(path)
    return agent


def export_policy(run_dir: Path, model: Any) -> str:
    """Write policy_<decisions>/ (the model and the bot file that plays it); the bot spec."""
    folder = run_dir / f"policy_{model.num_timesteps}"
    write_atomic(folder / MODEL, model.save)
    return write_weights_bot(folder, __file__, load_agent.__name__, MODEL)


# ---------------------------------------------------------------- training


def checkpoints(path: Path, every: int) -> Any:
    """An SB3 callback that saves the model at `path` after every `every` rollouts' updates, and says how far it is."""
    from stable_baselines3.common.callbacks import BaseCallback

    class Checkpoints(BaseCallback):
        def _on_training_start(self) -> None:
            self.rollouts, self.start, self.start_step = 0, time.time(), self.model.num_timesteps

        def _on_rollout_start(self) -> None:  # the previous rollout's update is done
            if self.rollouts and self.rollouts % every == 0:
                write_atomic(path, self.model.save)
                rate = (self.model.num_timesteps - self.start_step) / (time.time() - self.start)
                print(f"{self.model.num_timesteps:,} decisions, {rate:,.0f} decisions/s; checkpoint {path}", flush=True)
            self.rollouts += 1

        def _on_step(self) -> bool:
            return True

    return Checkpoints()


def build_model(args: Args, run_dir: Path) -> Any:
    """A new MaskablePPO on the task's single-agent env, or the checkpoint's with the env attached."""
    import gymnasium
    from sb3_contrib import MaskablePPO

    env = gymnasium.make(get_task(args.task).gym_id)
    if args.resume:
        model = MaskablePPO.load(args.resume, env=env, device="cpu")
        model.set_random_seed(args.seed + model.num_timesteps)  # fresh streams: SB3 does not save them
    else:
        model = MaskablePPO("MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size, n_epochs=args.n_epochs,
                            learning_rate=args.learning_rate, gamma=args.gamma, seed=args.seed, device="cpu",
                            tensorboard_log=str(run_dir))
    setattr(model, OPTIONS, dataclasses.asdict(args))
    return model


def main(argv: Sequence[str] | None = None) -> int:
    """Train (or continue) a run; 0 when its budget is spent, 2 with one line for a bad option or a missing extra."""
    try:
        require("train", what="the sb3-contrib baseline")
        if importlib.util.find_spec("sb3_contrib") is None:
            raise OptionError("the sb3-contrib baseline needs sb3-contrib (not installed): pip install sb3-contrib, "
                              "or pip install 'euchre-lab[dev]'")
        args = parse_args(argv)
    except (MissingExtraError, OptionError, ValueError) as error:
        return fail(SCRIPT, error)
    import torch

    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    run_dir = Path(args.runs_dir) / args.run_name
    model = build_model(args, run_dir)
    remaining = args.total_decisions - model.num_timesteps
    print(f"{SCRIPT}: run {run_dir}: from {model.num_timesteps:,} to {args.total_decisions:,} decisions", flush=True)
    if remaining > 0:
        model.learn(remaining, callback=checkpoints(run_dir / CHECKPOINT, args.save_interval), reset_num_timesteps=False,
                    tb_log_name="MaskablePPO")
    write_atomic(run_dir / CHECKPOINT, model.save)
    spec = export_policy(run_dir, model)
    print(f"{SCRIPT}: done: {model.num_timesteps:,} decisions; checkpoint {run_dir / CHECKPOINT}; "
          f"score it with: python evaluate.py --task {args.task} {spec}", flush=True)
    return 0


if __name__ == "__main__":
    exit_from(main, SCRIPT, "checkpoint.zip, written every --save-interval rollouts, is kept: the same command with --resume RUNS_DIR/RUN_NAME/checkpoint.zip continues from it")
