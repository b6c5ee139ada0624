"""What every training stage shares: the run (its folder, device, network, optimizer, TensorBoard
writer), periodic evaluation, Ctrl-C handling and the hints that tell a user how to watch or continue
a run."""

from __future__ import annotations

import dataclasses
import random
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
import torch.optim as optim
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from euchre_agents.checkpoint import build_network
from euchre_agents.network import ActorCritic, sharpen_policy
from euchre_agents.ppo import PPOAgent
from euchre_env import Engine
from euchre_lab.training.checkpoints import save_numbered
from euchre_lab.training.paths import checkpoint_folder, latest_checkpoint
from euchre_lab.cli import interrupted, remove_stale_temp_files
from euchre_lab.invocation import tool_name
from euchre_lab.training.train_checks import Inputs, run_folder, torch_device
from euchre_lab.training.train_options import OPTION_NAMES, SCRIPT, Args, eval_opponents


@dataclass
class Run:
    """What every stage shares: the run folder, engine, device, network, optimizer, logger, evaluator."""

    args: Args
    dir: Path
    engine: Engine
    device: torch.device
    net: ActorCritic
    optimizer: optim.Optimizer
    model_kwargs: dict[str, Any]
    writer: SummaryWriter
    play_match: Callable | None

    @property
    def ckpt_dir(self) -> Path:
        """The run's checkpoints folder."""
        return checkpoint_folder(self.dir)

    def tensor(self, array: np.ndarray) -> torch.Tensor:
        """A numpy array as a tensor on the run's device."""
        return torch.from_numpy(array).to(self.device)

    def save(self, checkpoint: dict[str, Any], update: int) -> None:
        """Write the update's numbered checkpoint and latest.pt, keeping keep_checkpoints numbered ones."""
        save_numbered(self.ckpt_dir, checkpoint, update, self.args.keep_checkpoints)


def default_run_name(args: Args) -> Args:
    """`args` with its run name filled in when empty: {stage}__{seed}__{unix time}."""
    return dataclasses.replace(args, run_name=args.run_name or f"{args.stage}__{args.seed}__{int(time.time())}")


def start_run(args: Args, inputs: Inputs) -> Run:
    """Seed everything, build the network (from the resumed checkpoint, init_checkpoint or fresh), open TensorBoard,
    and clear the temp files an interrupted checkpoint write left."""
    if not args.run_name:
        raise ValueError("start_run needs args.run_name (default_run_name fills it in)")
    args = dataclasses.replace(args, resume="")
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    device = torch_device(args.device)
    engine = inputs.engine
    if inputs.checkpoint is not None:
        model_kwargs = inputs.checkpoint["model_kwargs"]
        net = ActorCritic(engine, **model_kwargs)
        net.load_state_dict(inputs.checkpoint["model"])
    elif inputs.init is not None:
        model_kwargs = inputs.init["model_kwargs"]
        args = dataclasses.replace(args, **{k: v for k, v in model_kwargs.items() if k in OPTION_NAMES})
        net = sharpen_policy(build_network(inputs.init, engine), args.init_temperature)
    else:
        model_kwargs = dict(
            hidden_size=args.hidden_size, num_layers=args.num_layers, canonical_suits=args.canonical_suits,
            action_values=args.action_values,
        )
        net = ActorCritic(engine, **model_kwargs)
    net = net.to(device)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    run_dir = run_folder(args)
    run_dir.mkdir(parents=True, exist_ok=True)
    writer = SummaryWriter(str(run_dir))
    writer.add_text(
        "hyperparameters",
        "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()) + f"\n|device|{device}|",
    )
    run = Run(args, run_dir, engine, device, net, optimizer, model_kwargs, writer, inputs.play_match)
    remove_stale_temp_files(run.ckpt_dir, SCRIPT)
    return run


def anneal(run: Run, spent: int, budget: int) -> None:
    """Set the learning rate for a run that has spent `spent` of its `budget` (updates, or the learner's decisions):
    linearly down to zero when anneal_lr."""
    if run.args.anneal_lr:
        run.optimizer.param_groups[0]["lr"] = (1.0 - spent / budget) * run.args.learning_rate


# ---------------------------------------------------------------- evaluation


def due(update: int, interval: int, last: bool) -> bool:
    """Whether a periodic job (a checkpoint, an evaluation) runs after `update`: every `interval`, and after the `last`."""
    return interval > 0 and (update % interval == 0 or last)


def evaluate_policy(run: Run) -> dict[str, Any]:
    """The greedy policy against each evaluation opponent on duplicate deals -> {spec: evaluate.MatchResult}."""
    learner = PPOAgent(run.engine, run.net)
    return {
        spec: run.play_match(run.engine.rules, learner, spec, hands=int(hands), seed=run.args.eval_seed)
        for spec, hands in eval_opponents(run.args)
    }


def log_evaluation(run: Run, evaluation: dict[str, Any], step: int, where: str) -> None:
    """Each evaluation match's margin (with its 95% interval) to TensorBoard and the console."""
    for spec, match in evaluation.items():
        margin = match.margin_per_hand
        run.writer.add_scalar(f"eval/margin_per_hand_vs_{spec}", margin.value, step)
        run.writer.add_scalar(f"eval/margin_per_hand_vs_{spec}_low", margin.low, step)
        run.writer.add_scalar(f"eval/margin_per_hand_vs_{spec}_high", margin.high, step)
        run.writer.add_scalar(f"eval/points_per_hand_vs_{spec}", match.points_per_hand_a.value, step)
    tqdm.write(
        f"{where}, step {step}: margin per hand (95% interval) "
        + ", ".join(f"vs {spec} {match.margin_per_hand}" for spec, match in evaluation.items())
    )


# ---------------------------------------------------------------- stopping


def save_and_stop(run: Run, checkpoint: dict[str, Any], update: int) -> None:
    """After Ctrl-C: write the checkpoint of the last finished update, say how to continue, exit 130."""
    run.save(checkpoint, update)
    raise SystemExit(interrupted(SCRIPT, f"update {update}'s checkpoint is written; continue the run with: "
                                         f"{train_command()} --resume {latest_checkpoint(run.dir)}"))


class StopRequest:
    """Ctrl-C while training: the first one lets the current update finish, then the run saves and stops;
    a second one stops at once without saving."""

    def __init__(self) -> None:
        self.requested = False
        self.previous: Any = None

    def __enter__(self) -> "StopRequest":
        try:
            self.previous = signal.signal(signal.SIGINT, self._handle)
        except ValueError:  # not the main thread: Ctrl-C cannot reach this run anyway
            self.previous = None
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        tqdm.write("Ctrl-C: stopping after this update and saving a checkpoint (Ctrl-C again stops at once, unsaved)")

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)


# ---------------------------------------------------------------- hints


def command(name: str) -> str:
    """How a program beside this interpreter is spelled in a hint: its path relative to here when it
    lies below (the project's .venv), else its bare name (an activated environment)."""
    path = Path(sys.executable).with_name(name)
    try:
        return str(path.relative_to(Path.cwd())) if path.exists() else name
    except ValueError:
        return name


def python_command() -> str:
    """This interpreter, as a hint spells it (`.venv/bin/python` when run as `make run` does)."""
    name = Path(sys.executable).name
    spelled = command(name)
    return spelled if spelled != name else "python"


def train_command() -> str:
    """How this run was started, as a hint spells it: `python train.py` in a checkout, `euchre-train` installed."""
    name = tool_name(SCRIPT)
    if name != SCRIPT:
        return name
    script = sys.argv[0]
    return f"{python_command()} {script if script.endswith('.py') else SCRIPT}"


def announce(args: Args) -> None:
    """Say at the start where the run's logs and checkpoints go, and how to watch them."""
    run_dir = run_folder(args)
    watch = command("tensorboard")
    print(
        f"{tool_name(SCRIPT)}: run {args.run_name}: TensorBoard logs in {run_dir}, checkpoints in {run_dir / 'checkpoints'} "
        f"(every {args.save_interval} update{'s' * (args.save_interval != 1)} and at the end)\n"
        f"{tool_name(SCRIPT)}: watch it with: {watch} --logdir {args.runs_dir}",
        flush=True,
    )


def kept_after_interrupt(args: Args | None) -> str:
    """What a run stopped by Ctrl-C leaves: the exact command that continues it, if it can be continued."""
    if args is None:
        return "training had not started; nothing was written"
    latest = latest_checkpoint(run_folder(args))
    if not latest.exists():
        return f"the run had not reached its first checkpoint; nothing to resume in {run_folder(args)}"
    return f"continue the run with: {train_command()} --resume {latest}"
