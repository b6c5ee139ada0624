"""Every option of train.py checked once, before anything is written; the first bad one is an
`OptionError` naming it and the fix. `check_args` hands back what the checks built (`Inputs`), so
that nothing is built or read twice."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from euchre_agents.checkpoint import check_compatible, read_checkpoint
from euchre_agents.network import native_bfloat16
from euchre_env import Engine, Rules, RulesError
from euchre_env.engine import EPISODES, REWARDS
from euchre_lab.cli import OptionError, above, at_least, between, check_ranges, checked_agent, flag
from euchre_lab.training.checkpoints import LEARNER_DECISIONS
from euchre_lab.training.paths import CHECKPOINTS, latest_checkpoint
from euchre_lab.training.train_options import (
    EXPLOIT,
    EXPLOIT_INITS,
    POOL,
    SELF,
    STAGES,
    Args,
    eval_opponents,
    opponent_mix,
    teacher_folders,
)

RANGES = {
    **dict.fromkeys(("total_timesteps", "num_envs", "num_steps", "num_minibatches", "update_epochs", "hidden_size",
                     "pool_size", "pool_interval", "save_interval", "learning_rate", "clip_coef", "max_grad_norm",
                     "distill_epochs", "distill_batch_size", "policy_temperature", "init_temperature", "exploit_pairs",
                     "workers"), above(0)),
    **dict.fromkeys(("seed", "eval_seed", "torch_threads", "num_layers", "keep_checkpoints", "eval_interval", "ent_coef",
                     "vf_coef", "target_kl", "kl_coef", "action_value_coef", "state_value_coef", "value_warmup_updates",
                     "exploit_seed", "total_decisions"), at_least(0)),
    **dict.fromkeys(("gamma", "gae_lambda", "holdout_fraction"), between(0, 1)),
}
"""The range of each number the stages take."""
NETWORK_OPTIONS = ("hidden_size", "num_layers", "canonical_suits", "action_values")
TEACHER_HINT = "write it with python -m euchre_lab.training.teacher"

RUN_FILES = "events.out.tfevents"
"""What a run folder holds besides checkpoints/: TensorBoard event files."""
EXPLOIT_FILES = ("agent.pt", "exploit.json", "match")
"""What the exploit stage adds to its run folder: the exported exploiter, the probe's result and the final match."""


@dataclass
class Inputs:
    """What the checks built, for the stage to use: the engine, the resumed checkpoint, init_checkpoint's
    contents and `play_match` for the periodic evaluation (None while it is off)."""

    engine: Engine
    checkpoint: dict[str, Any] | None = None
    init: dict[str, Any] | None = None
    play_match: Callable | None = None


def check_args(args: Args, checkpoint: dict[str, Any] | None) -> Inputs:
    """Every option checked before anything is written; an OptionError names the first bad one and the fix."""
    check_stage_name(args, checkpoint)
    check_numbers(args)
    engine = check_game(args)
    check_device(args.device)
    check_bfloat16(args)
    check_opponents(args, engine)
    init = check_stage(args, engine)
    if checkpoint is not None:
        check_resume(args, checkpoint, engine)
    check_run_folder(args)
    return Inputs(engine, checkpoint, init, evaluation_function(args))


def check_stage_name(args: Args, checkpoint: dict[str, Any] | None) -> None:
    """A known stage, and the stage the resumed checkpoint was written by (an exploit run writes PPO checkpoints
    whose config names the exploit stage)."""
    if args.stage not in STAGES:
        raise OptionError(f"--stage {args.stage!r} is not one of {', '.join(STAGES)}")
    if checkpoint is None:
        return
    written_by = checkpoint.get("stage", "ppo")
    if written_by == "ppo" and checkpoint["config"].get("stage") == EXPLOIT:
        written_by = EXPLOIT
    if written_by != args.stage:
        raise OptionError(f"--resume {args.resume!r} is a {written_by} checkpoint, not a {args.stage} one")


def check_numbers(args: Args) -> None:
    """Sizes, counts and coefficients in range, and at least one rollout in the run."""
    check_ranges(args, RANGES)
    batch_size = args.num_envs * args.num_steps
    if args.stage == "distill":
        for name in ("value_warmup_updates", "init_temperature"):
            if getattr(args, name) != getattr(Args, name):
                raise OptionError(f"{flag(name)} is a PPO option (ppo and exploit stages); drop it for distill")
        return
    if args.total_decisions and args.stage != "ppo":
        raise OptionError(f"--total-decisions is a budget of the ppo stage; the {args.stage} stage counts --total-timesteps")
    if args.total_decisions:
        return
    if args.total_timesteps < batch_size:
        raise OptionError(
            f"--total-timesteps {args.total_timesteps} is less than one rollout (num_envs * num_steps = {batch_size}); "
            "raise it or lower --num-envs / --num-steps"
        )
    num_updates = args.total_timesteps // batch_size
    if args.value_warmup_updates and args.value_warmup_updates >= num_updates:
        raise OptionError(
            f"--value-warmup-updates {args.value_warmup_updates} leaves no PPO update of the run's {num_updates}; "
            "lower it or raise --total-timesteps"
        )


def check_game(args: Any) -> Engine:
    """The engine that options with `rules`, `episode` and `reward` describe (train's, or the RLlib example's),
    or an OptionError naming the bad one."""
    if args.episode not in EPISODES:
        raise OptionError(f"--episode {args.episode!r} is not one of {', '.join(EPISODES)}")
    if args.reward not in REWARDS:
        raise OptionError(f"--reward {args.reward!r} is not one of {', '.join(REWARDS)}")
    try:
        return Engine(Rules.from_dict(args.rules), episode=args.episode, reward=args.reward)
    except RulesError as e:
        raise OptionError(f"--rules: {e}") from None


def check_agents(specs: list[str], option: str, engine: Engine) -> None:
    """Build each agent spec once, so that a misspelt bot or a bad checkpoint fails before training."""
    for spec in specs:
        checked_agent(spec, flag(option), engine)


def check_opponents(args: Args, engine: Engine) -> None:
    """The opponent mix and the evaluation opponents: known bots, sensible weights and hand counts."""
    from euchre_lab.evaluation.match import mode_and_pairs

    if args.stage == EXPLOIT:
        check_target(args, engine)
    else:
        mix = opponent_mix(args)
        check_agents([name for name, _ in mix if name not in (SELF, POOL)], "opponent_mix", engine)
    evaluation = eval_opponents(args)  # checked even while evaluation is off
    for spec, hands in evaluation:
        try:
            mode_and_pairs(int(hands) if float(hands).is_integer() else hands, None)
        except ValueError as e:
            raise OptionError(f"--eval-opponents {spec}={hands:g}: {e}") from None
    check_agents([spec for spec, _ in evaluation], "eval_opponents", engine)


def check_target(args: Args, engine: Engine) -> None:
    """The exploit stage's frozen side: a bot spec that builds (not the learner itself) and a known --exploit-init."""
    if args.exploit_init not in EXPLOIT_INITS:
        raise OptionError(f"--exploit-init {args.exploit_init!r} is not one of {', '.join(EXPLOIT_INITS)}")
    if not args.target:
        raise OptionError("--stage exploit needs --target SPEC, the frozen bot to exploit (heuristic, pimc, ppo:PATH, search, ...)")
    if args.target in (SELF, POOL):
        raise OptionError(f"--target {args.target!r} is the learner itself, not a frozen bot; name a bot spec")
    check_agents([args.target], "target", engine)


def check_bfloat16(args: Args) -> None:
    """--distill-bf16 only on a GPU or a CPU that multiplies bfloat16 fast (AMX; elsewhere it is slower than float32)."""
    if args.distill_bf16 and torch_device(args.device).type == "cpu" and not native_bfloat16():
        raise OptionError("--distill-bf16: this CPU has no AMX, where bfloat16 runs slower than float32; "
                          "drop --distill-bf16")


def torch_device(name: str) -> torch.device:
    """The torch device a checked --device names (auto: cuda where torch sees a GPU, else cpu)."""
    return torch.device(("cuda" if torch.cuda.is_available() else "cpu") if name == "auto" else name)


def check_device(name: str) -> None:
    """A torch device this machine has, or an OptionError saying what is there instead."""
    if name == "auto":
        return
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise OptionError(f"--device {name!r} is not a torch device; use auto, cpu, cuda or cuda:N") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            why = "is a CPU-only build" if torch.version.cuda is None else "finds no GPU"
            raise OptionError(f"--device {name}: this torch ({torch.__version__}) {why}; use --device cpu (or auto)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise OptionError(f"--device {name}: there are only {torch.cuda.device_count()} GPU(s), cuda:0 ...")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise OptionError(f"--device {name}: MPS is not available here; use --device cpu (or auto)")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise OptionError(f"--device {name}: train.py runs on cpu, cuda or mps")


def check_stage(args: Args, engine: Engine) -> dict[str, Any] | None:
    """The stage's inputs: the teacher data for distillation; the reference policy for fine-tuning (read
    here and handed back, checked against this game)."""
    if args.stage == "distill":
        from euchre_agents.teacher_data import TeacherDataError, check_data

        if not teacher_folders(args):
            raise OptionError(f"--stage distill needs --teacher-data, a folder of teacher data; {TEACHER_HINT}")
        for folder in teacher_folders(args):
            try:
                check_data(folder, engine)
            except TeacherDataError as e:
                raise OptionError(f"--teacher-data: {e}; {TEACHER_HINT}") from None
    if args.kl_coef > 0 and not args.init_checkpoint:
        raise OptionError("--kl-coef > 0 needs --init-checkpoint: the reference policy the KL term keeps the learner close to")
    if args.init_temperature != 1 and not args.init_checkpoint:
        raise OptionError("--init-temperature needs --init-checkpoint: it sharpens the policy the run starts from")
    if not args.init_checkpoint:
        return None
    init = read_checkpoint(args.init_checkpoint)
    check_compatible(init, engine, f"--init-checkpoint {args.init_checkpoint!r}")
    return init


def check_resume(args: Args, checkpoint: dict[str, Any], engine: Engine) -> None:
    """A resumed checkpoint fits these rules, this layout, these games and this network."""
    check_compatible(checkpoint, engine, f"checkpoint {args.resume!r} (--resume)", same_positions=True)
    if args.total_decisions and LEARNER_DECISIONS not in checkpoint:
        raise OptionError(f"checkpoint {args.resume!r} predates the count of the learner's decisions, so --total-decisions "
                          "cannot continue it; resume it with --total-timesteps")
    games = len(checkpoint["env_state"]["phase"]) if args.stage == "ppo" else args.num_envs
    if games != args.num_envs:
        raise OptionError(f"--num-envs {args.num_envs}, but the checkpoint holds {games} games; resume with --num-envs {games}")
    saved = checkpoint["model_kwargs"]
    for name in NETWORK_OPTIONS:
        if name in saved and saved[name] != getattr(args, name):
            raise OptionError(
                f"{flag(name)} {getattr(args, name)!r}, but the checkpoint's network has {saved[name]!r}; "
                f"a resumed run keeps its network: drop {flag(name)}"
            )


def run_folder(args: Args) -> Path:
    """Where the run's TensorBoard logs and checkpoints go."""
    return Path(args.runs_dir) / args.run_name


def check_run_folder(args: Args) -> None:
    """A plain run name, and no earlier run in its folder unless resuming it or told to --overwrite."""
    name = args.run_name
    if name in (".", "..") or "/" in name or os.sep in name:
        raise OptionError(f"--run-name {name!r} must be a plain folder name (no '/'); --runs-dir sets the parent folder")
    runs, run_dir = Path(args.runs_dir), run_folder(args)
    for path in (runs, run_dir):
        if path.exists() and not path.is_dir():
            raise OptionError(f"{path} is a file, not a folder; choose another --runs-dir or --run-name")
    if not run_dir.is_dir() or not any(run_dir.iterdir()):
        return
    if args.resume and Path(args.resume).resolve().is_relative_to(run_dir.resolve()):
        if args.overwrite:
            raise OptionError(f"--overwrite would delete {args.resume}, the checkpoint being resumed; drop --overwrite")
        return
    if args.overwrite:
        kept = (CHECKPOINTS, *EXPLOIT_FILES)
        foreign = sorted(p.name for p in run_dir.iterdir() if p.name not in kept and not p.name.startswith(RUN_FILES))
        if foreign:
            raise OptionError(
                f"--overwrite deletes only run folders, and {run_dir} also holds {', '.join(foreign[:3])}; "
                "remove it yourself or choose another --run-name"
            )
        return
    latest = latest_checkpoint(run_dir)
    resume = f"continue it with --resume {latest}, " if latest.exists() else ""
    raise OptionError(
        f"run folder {run_dir} already holds an earlier run; {resume}replace it with --overwrite, or choose another --run-name"
    )


def evaluation_function(args: Args) -> Callable | None:
    """`euchre_lab.evaluation.match.play_match` when periodic evaluation is on; a clear error if it cannot be imported."""
    if args.eval_interval <= 0:
        return None
    try:
        from euchre_lab.evaluation.match import play_match
    except ImportError as e:
        raise OptionError(
            f"periodic evaluation (eval_interval={args.eval_interval}) uses play_match from euchre_lab.evaluation.match, "
            f"which cannot be imported ({e}); pass --eval-interval 0 to train without evaluation"
        ) from e
    return play_match
