"""PPO self-play for Euchre: one network plays every seat it controls in thousands of games at once.

    python train.py                                          # the default preset, configs/ppo.yaml
    python train.py --config configs/ppo_tiny.yaml           # another preset; any option below overrides it
    python train.py --opponent-mix self=0.6,pool=0.2,heuristic=0.2 --rules "{deck: 32}"
    python train.py --resume runs/main/checkpoints/latest.pt # continue a run exactly where it stopped
    tensorboard --logdir runs

Each game is one row of `EuchreVectorEnv`; per step, every game asks one seat for a decision. Per game,
the learner controls all four seats (self-play) or one partnership against an opponent drawn from
`--opponent-mix` (a snapshot from the pool of past learners, or any registered bot); the opponent's
decisions are played but not trained on.

Multi-agent bookkeeping: a rollout stores only the learner's decisions, each with the (game, seat)
stream it belongs to. A stream is one seat's own decisions in one game, in order; its rewards arrive
when a hand ends and are credited to that seat's latest decision, and its episode ends with the
game's episode. GAE runs along each stream (a decision's successor is the same seat's next decision
in the same game). A stream still open when the rollout ends is bootstrapped with the value of that
seat's current information state, as CleanRL bootstraps with the value of `next_obs`.

Checkpoints (runs/{run_name}/checkpoints/update_NNNNNN.pt and latest.pt, written atomically) hold the
model, optimizer, every random stream, the games in progress, the opponent pool, the config, the rules
and the observation layout; `--resume` continues bit for bit on CPU and refuses a checkpoint made for
other rules or another observation layout. `agents/ppo.py` plays a checkpoint as the `ppo` bot.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import inspect
import os
import random
import shutil
import sys
import tempfile
import textwrap
import time
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
import yaml
from torch.distributions.categorical import Categorical
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from agents.base import Agent, make_agent
from agents.ppo import (
    CHECKPOINT_FORMAT,
    RESUME,
    ActorCritic,
    CheckpointError,
    CheckpointMismatchError,
    PPOAgent,
    check_compatible,
    observation_signature,
    read_checkpoint,
)
from euchre_env import Engine, EuchreState, EuchreVectorEnv, Rules, RulesError
from euchre_env.cards import NUM_SEATS
from euchre_env.engine import EPISODES, REWARDS

ROOT = Path(__file__).resolve().parent
SELF = "self"
POOL = "pool"


class ConfigError(ValueError):
    """An option, preset or resume request that train.py cannot run with."""


@dataclass
class Args:
    config: str = "configs/ppo.yaml"
    """YAML preset whose keys are these options (a relative path is also looked up next to train.py)"""
    run_name: str = ""
    """run folder under runs_dir for TensorBoard logs and checkpoints; empty: ppo__{seed}__{unix time}"""
    runs_dir: str = "runs"
    """folder that holds the run folders"""
    resume: str = ""
    """checkpoint to continue exactly (bit for bit on CPU); its config is used, and options given here override it"""
    seed: int = 1
    """seed of the deals, the sampled actions, the opponent draws and the minibatches"""
    device: str = "auto"
    """torch device: auto (cuda when present, else cpu), cpu, cuda, cuda:1, ..."""
    torch_threads: int = 1
    """CPU threads for torch; 0 keeps torch's default (one thread is much faster on a busy 2-core machine)"""
    progress: bool = True
    """show a progress bar with samples per second and time left"""

    rules: dict = field(default_factory=dict)
    """table rules that differ from euchre_env.Rules' defaults, a YAML mapping such as "{deck: 32, joker: true}" """
    episode: str = "hand"
    """what one episode is: hand, game or rubber"""
    reward: str = "points"
    """points: each hand's point margin for the seat's side; win: +1/-1 when the episode ends"""

    total_timesteps: int = 10_000_000
    """environment steps (one decision by any seat, learner or opponent) in the whole run"""
    num_envs: int = 512
    """games stepped together"""
    num_steps: int = 64
    """steps of every game per rollout; a rollout is num_envs * num_steps environment steps"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to zero over the run"""
    gamma: float = 1.0
    """discount per decision of the same seat"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    num_minibatches: int = 8
    """minibatches per epoch over the rollout's learner decisions"""
    update_epochs: int = 4
    """passes over each rollout"""
    norm_adv: bool = True
    """normalize advantages per minibatch"""
    clip_coef: float = 0.2
    """PPO's surrogate clipping coefficient"""
    clip_vloss: bool = True
    """clip the value loss as PPO's reference implementation does"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient norm clip"""
    target_kl: float = 0.0
    """stop an update's epochs early once the approximate KL exceeds this; 0: never"""
    hidden_size: int = 256
    """width of the network's hidden layers"""
    num_layers: int = 2
    """hidden layers in the trunk shared by the policy and value heads"""
    canonical_suits: bool = True
    """relabel suits in the network's input and output so that trump (before it is made, the upcard's suit) is always the same suit"""

    opponent_mix: str = "self=0.6,pool=0.2,heuristic=0.2"
    """per-game draw of who the learner plays: self (it plays all four seats), pool (a past snapshot of itself), or any agent spec (random, heuristic, pimc, ...; no commas), with weights"""
    pool_size: int = 8
    """past snapshots kept in the opponent pool (the oldest is replaced)"""
    pool_interval: int = 10
    """updates between snapshots of the learner into the pool"""

    save_interval: int = 20
    """updates between checkpoints (one is always written at the end)"""
    keep_checkpoints: int = 3
    """numbered checkpoints kept besides latest.pt (older ones are deleted); 0 keeps all"""
    eval_interval: int = 50
    """updates between evaluations with evaluate.py's duplicate-deal matches (and one at the end); 0: none"""
    eval_opponents: str = "heuristic=4000,pimc=400"
    """agent specs the greedy policy is evaluated against, each with the hands to play (half of them mirrored deals)"""
    eval_seed: int = 12345
    """seed of the evaluation deals (the same deals at every evaluation)"""
    overwrite: bool = False
    """replace an existing run folder of the same name (its checkpoints and logs are deleted first); command line only"""


# ---------------------------------------------------------------- configuration


def field_docs(cls: type) -> dict[str, str]:
    """Each dataclass field's docstring (the string literal right after it)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    return {
        node.target.id: after.value.value.strip()
        for node, after in zip(body, body[1:])
        if isinstance(node, ast.AnnAssign) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
    }


COMMAND_LINE_ONLY = ("overwrite",)
"""Options a preset or a resumed checkpoint's config never sets: deleting a run takes an explicit flag."""

FIELD_TYPES: dict[str, type] = {
    name: typing.get_origin(kind) or kind for name, kind in typing.get_type_hints(Args).items()
}


def coerce(name: str, value: Any) -> Any:
    """A config or command-line value converted to the type of `Args.<name>`, or a clear error."""
    kind = FIELD_TYPES[name]
    if isinstance(value, str) and kind is not str:
        try:
            value = kind(value.replace("_", "")) if kind in (int, float) else yaml.safe_load(value)
        except (ValueError, yaml.YAMLError):
            pass
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is dict and value is None:
        value = {}
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"option {name}: expected {kind.__name__}, got {value!r}")
    return value


def read_config(path: str) -> dict[str, Any]:
    """A YAML preset's options, checked against `Args`."""
    p = Path(path)
    if not p.exists() and not p.is_absolute() and (ROOT / p).exists():
        p = ROOT / p
    if not p.is_file():
        raise ConfigError(f"config file {path!r} not found; pass --config with a YAML preset such as configs/ppo.yaml")
    try:
        values = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ConfigError(f"{path} is not valid YAML{where}: {getattr(e, 'problem', None) or e}; fix the file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read config file {path!r}: {e}") from None
    if not isinstance(values, dict):
        raise ConfigError(f"{path} holds a YAML {type(values).__name__}, not a mapping of option: value")
    unknown = sorted(set(values) - set(FIELD_TYPES) - set(COMMAND_LINE_ONLY))
    if unknown:
        raise ConfigError(f"{path}: unknown option(s) {unknown}; known: {sorted(set(FIELD_TYPES) - set(COMMAND_LINE_ONLY))}")
    refused = sorted(set(values) & set(COMMAND_LINE_ONLY))
    if refused:
        raise ConfigError(f"{path}: {refused} can only be given on the command line")
    return {k: coerce(k, v) for k, v in values.items()}


def merge(values: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Overrides replace values, except `rules`, whose keys are merged."""
    out = {**values, **overrides}
    out["rules"] = {**values.get("rules", {}), **overrides.get("rules", {})}
    return out


def parse_args(argv: list[str] | None = None) -> tuple[Args, dict[str, Any] | None]:
    """Args from defaults < the preset (or the resumed checkpoint's config) < the command line."""
    docs = field_docs(Args)
    defaults = Args()
    parser = OneLineErrorParser(
        description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False
    )
    for f in dataclasses.fields(Args):
        flags = dict.fromkeys([f"--{f.name.replace('_', '-')}", f"--{f.name}"])
        switch = dict(nargs="?", const="true") if FIELD_TYPES[f.name] is bool else {}  # `--overwrite` = `--overwrite true`
        parser.add_argument(
            *flags,
            **switch,
            dest=f.name,
            default=argparse.SUPPRESS,
            metavar=FIELD_TYPES[f.name].__name__.upper(),
            help=f"{docs[f.name]} (default: {getattr(defaults, f.name)!r})".replace("%", "%%"),
        )
    cli = {k: coerce(k, v) for k, v in vars(parser.parse_args(argv)).items()}
    values = dataclasses.asdict(defaults)
    checkpoint = None
    if cli.get("resume"):
        checkpoint = read_checkpoint(cli["resume"], RESUME)
        saved = {k: v for k, v in checkpoint["config"].items() if k in FIELD_TYPES and k not in COMMAND_LINE_ONLY}
        values = merge(values, saved)
    if checkpoint is None or "config" in cli:
        values = merge(values, read_config(cli.get("config", values["config"])))
    return Args(**merge(values, cli)), checkpoint


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse with its errors on one line (the usage of some forty options would bury them)."""

    def error(self, message: str) -> typing.NoReturn:
        """Print `train.py: error: ...` with the pointer to --help, and exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (python {self.prog} --help lists every option)\n")


def parse_weighted(text: str, option: str) -> list[tuple[str, float]]:
    """`self=0.6,pool=0.2,heuristic=0.2` -> [(name, number)]; a name may hold `=` but no comma."""
    items = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, number = part.rpartition("=")
        try:
            value = float(number)
        except ValueError:
            value = -1.0
        if not sep or not name or value < 0:
            raise ConfigError(f"{option} entry {part!r} is not NAME=NUMBER with a number >= 0")
        items.append((name, value))
    if not items or len({n for n, _ in items}) != len(items):
        raise ConfigError(f"{option}={text!r} needs one or more entries with distinct names")
    return items


def parse_mix(text: str) -> list[tuple[str, float]]:
    """The opponent mix with its weights normalized to probabilities."""
    mix = parse_weighted(text, "opponent_mix")
    total = sum(w for _, w in mix)
    if total <= 0:
        raise ConfigError(f"opponent_mix={text!r} needs a positive total weight")
    return [(n, w / total) for n, w in mix]


# ---------------------------------------------------------------- acting


def sample_actions(
    net: ActorCritic, obs: torch.Tensor, mask: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(actions, log-probabilities, values) drawn from the masked policy: illegal actions have probability 0."""
    logits, value = net(obs, mask)
    dist = Categorical(logits=logits, validate_args=False)
    action = dist.sample()
    return action, dist.log_prob(action), value


def bot_act(bot: Agent, obs: np.ndarray, mask: np.ndarray, state: EuchreState, rows: np.ndarray) -> np.ndarray:
    """A bot's actions for the given games (the oracle also gets the engine state)."""
    if bot.needs_full_state:
        return bot.act(obs[rows], mask[rows], state, rows)
    return bot.act(obs[rows], mask[rows])


def stream_advantages(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    successors: np.ndarray,
    bootstrap: np.ndarray,
    step_starts: list[int],
    gamma: float,
    gae_lambda: float,
) -> np.ndarray:
    """GAE along interleaved streams: decision i continues at `successors[i]` (a later step), or ends the
    episode (`dones[i]`), or is the stream's last in the rollout (successor -1: bootstrap with `bootstrap[i]`).
    `step_starts` holds the first decision index of each step; steps are processed from the last."""
    count = rewards.size
    not_done = ~dones
    next_values = np.where(successors >= 0, values[successors], bootstrap)
    deltas = rewards + gamma * next_values * not_done - values
    advantages = np.zeros(count + 1, np.float32)  # the extra last slot stays 0: what successor -1 reads
    for start, stop in reversed(list(zip(step_starts, step_starts[1:] + [count]))):
        i = slice(start, stop)
        advantages[i] = deltas[i] + gamma * gae_lambda * not_done[i] * advantages[successors[i]]
    return advantages[:count]


# ---------------------------------------------------------------- checkpoints


def save_checkpoint(path: Path, checkpoint: dict[str, Any]) -> None:
    """Write atomically: a temp file in the same folder, fsync, then rename over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "wb") as f:
            torch.save(checkpoint, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def state_to_tensors(state: EuchreState) -> dict[str, torch.Tensor]:
    """The engine state as plain tensors (uint64 deal keys viewed as int64)."""
    arrays = dataclasses.asdict(state)
    arrays["key"] = arrays["key"].view(np.int64)
    return {k: torch.from_numpy(v.copy()) for k, v in arrays.items()}


def state_from_tensors(tensors: dict[str, torch.Tensor]) -> EuchreState:
    """Inverse of `state_to_tensors`."""
    arrays = {k: v.numpy().copy() for k, v in tensors.items()}
    arrays["key"] = arrays["key"].view(np.uint64)
    return EuchreState(**arrays)


def rng_states(rng: np.random.Generator, bots: dict[str, Agent]) -> dict[str, Any]:
    """Every random stream the run draws from."""
    return {
        "numpy": rng.bit_generator.state,
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "python": random.getstate(),
        "bots": {name: bot.rng.bit_generator.state for name, bot in bots.items()},
    }


def restore_rng_states(states: dict[str, Any], rng: np.random.Generator, bots: dict[str, Agent]) -> None:
    """Inverse of `rng_states`."""
    rng.bit_generator.state = states["numpy"]
    torch.set_rng_state(states["torch"])
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
    random.setstate(states["python"])
    for name, bot in bots.items():
        bot.rng.bit_generator.state = states["bots"][name]


def batch_digest(*arrays: np.ndarray) -> str:
    """sha256 over a rollout's arrays: equal digests mean the same batch."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


# ---------------------------------------------------------------- evaluation


def evaluation_function(args: Args, engine: Engine) -> Callable | None:
    """evaluate.py's `play_match` when periodic evaluation is on (its opponents built once to check them);
    a clear error if it cannot be imported."""
    if args.eval_interval <= 0:
        return None
    try:
        from evaluate import play_match
    except ImportError as e:
        raise ConfigError(
            f"periodic evaluation (eval_interval={args.eval_interval}) uses play_match from evaluate.py, "
            f"which cannot be imported ({e}); pass --eval-interval 0 to train without evaluation"
        ) from e
    for spec, _ in parse_weighted(args.eval_opponents, "eval_opponents"):
        make_agent(spec, engine)
    return play_match


def evaluate_policy(play_match: Callable, net: ActorCritic, engine: Engine, args: Args) -> dict[str, Any]:
    """The greedy policy against each evaluation opponent on duplicate deals -> {spec: evaluate.MatchResult}."""
    learner = PPOAgent(engine, net)
    return {
        spec: play_match(engine.rules, learner, spec, hands=int(hands), seed=args.eval_seed)
        for spec, hands in parse_weighted(args.eval_opponents, "eval_opponents")
    }


# ---------------------------------------------------------------- checking the options

POSITIVE = ("total_timesteps", "num_envs", "num_steps", "num_minibatches", "update_epochs", "hidden_size",
            "pool_size", "pool_interval", "save_interval", "learning_rate", "clip_coef", "max_grad_norm")
NON_NEGATIVE = ("seed", "eval_seed", "torch_threads", "num_layers", "keep_checkpoints", "eval_interval",
                "ent_coef", "vf_coef", "target_kl")
FRACTIONS = ("gamma", "gae_lambda")
NETWORK_OPTIONS = ("hidden_size", "num_layers", "canonical_suits")


def flag(name: str) -> str:
    """The command-line flag of an option."""
    return "--" + name.replace("_", "-")


def check_numbers(args: Args) -> None:
    """Sizes, counts and coefficients in range, and at least one rollout in the run."""
    docs = field_docs(Args)
    for names, test, needs in (
        (POSITIVE, lambda v: v > 0, "greater than 0"),
        (NON_NEGATIVE, lambda v: v >= 0, "0 or more"),
        (FRACTIONS, lambda v: 0 <= v <= 1, "between 0 and 1"),
    ):
        for name in names:
            value = getattr(args, name)
            if not (test(value) and np.isfinite(value)):
                raise ConfigError(f"{flag(name)} must be {needs}, got {value!r} ({docs[name]})")
    batch_size = args.num_envs * args.num_steps
    if args.total_timesteps < batch_size:
        raise ConfigError(
            f"--total-timesteps {args.total_timesteps} is less than one rollout (num_envs * num_steps = {batch_size}); "
            "raise it or lower --num-envs / --num-steps"
        )


def check_game(args: Args) -> Engine:
    """The engine the options describe (rules, episode, reward), or a ConfigError naming the bad one."""
    if args.episode not in EPISODES:
        raise ConfigError(f"--episode {args.episode!r} is not one of {', '.join(EPISODES)}")
    if args.reward not in REWARDS:
        raise ConfigError(f"--reward {args.reward!r} is not one of {', '.join(REWARDS)}")
    try:
        return Engine(Rules.from_dict(args.rules), episode=args.episode, reward=args.reward)
    except RulesError as e:
        raise ConfigError(f"--rules: {e}") from None


def check_agents(specs: list[str], option: str, engine: Engine) -> None:
    """Build each agent spec once, so that a misspelt bot or a bad checkpoint fails before training."""
    for spec in specs:
        try:
            make_agent(spec, engine)
        except (ValueError, RulesError) as e:  # CheckpointError is a ValueError
            raise ConfigError(f"{flag(option)}: {e}") from None


def check_opponents(args: Args, engine: Engine) -> None:
    """The opponent mix and the evaluation opponents: known bots, sensible weights and hand counts."""
    mix = parse_mix(args.opponent_mix)
    check_agents([name for name, _ in mix if name not in (SELF, POOL)], "opponent_mix", engine)
    evaluation = parse_weighted(args.eval_opponents, "eval_opponents")  # checked even while evaluation is off
    for spec, hands in evaluation:
        if hands != int(hands) or hands < 2:
            raise ConfigError(f"--eval-opponents {spec}={hands:g}: the hands must be a whole number of at least 2")
    check_agents([spec for spec, _ in evaluation], "eval_opponents", engine)


def check_device(name: str) -> None:
    """A torch device this machine has, or a ConfigError saying what is there instead."""
    if name == "auto":
        return
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        raise ConfigError(f"--device {name!r} is not a torch device; use auto, cpu, cuda or cuda:N") from None
    if device.type == "cuda":
        if not torch.cuda.is_available():
            why = "is a CPU-only build" if torch.version.cuda is None else "finds no GPU"
            raise ConfigError(f"--device {name}: this torch ({torch.__version__}) {why}; use --device cpu (or auto)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise ConfigError(f"--device {name}: there are only {torch.cuda.device_count()} GPU(s), cuda:0 ...")
    elif device.type == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"--device {name}: MPS is not available here; use --device cpu (or auto)")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise ConfigError(f"--device {name}: train.py runs on cpu, cuda or mps")


def check_resume(args: Args, checkpoint: dict[str, Any], engine: Engine) -> None:
    """A resumed checkpoint fits these rules, this layout, these games and this network."""
    check_compatible(checkpoint, engine, f"checkpoint {args.resume!r} (--resume)", same_positions=True)
    games = len(checkpoint["env_state"]["phase"])
    if games != args.num_envs:
        raise ConfigError(f"--num-envs {args.num_envs}, but the checkpoint holds {games} games; resume with --num-envs {games}")
    saved = checkpoint["model_kwargs"]
    for name in NETWORK_OPTIONS:
        if name in saved and saved[name] != getattr(args, name):
            raise ConfigError(
                f"{flag(name)} {getattr(args, name)!r}, but the checkpoint's network has {saved[name]!r}; "
                f"a resumed run keeps its network: drop {flag(name)}"
            )


RUN_FILES = "events.out.tfevents"
"""What a run folder holds besides checkpoints/: TensorBoard event files."""


def run_folder(args: Args) -> Path:
    """Where the run's TensorBoard logs and checkpoints go."""
    return Path(args.runs_dir) / args.run_name


def check_run_folder(args: Args) -> None:
    """A plain run name, and no earlier run in its folder unless resuming it or told to --overwrite."""
    name = args.run_name
    if name in (".", "..") or "/" in name or os.sep in name:
        raise ConfigError(f"--run-name {name!r} must be a plain folder name (no '/'); --runs-dir sets the parent folder")
    runs, run_dir = Path(args.runs_dir), run_folder(args)
    for path in (runs, run_dir):
        if path.exists() and not path.is_dir():
            raise ConfigError(f"{path} is a file, not a folder; choose another --runs-dir or --run-name")
    if not run_dir.is_dir() or not any(run_dir.iterdir()):
        return
    if args.resume and Path(args.resume).resolve().is_relative_to(run_dir.resolve()):
        if args.overwrite:
            raise ConfigError(f"--overwrite would delete {args.resume}, the checkpoint being resumed; drop --overwrite")
        return
    if args.overwrite:
        foreign = sorted(p.name for p in run_dir.iterdir() if p.name != "checkpoints" and not p.name.startswith(RUN_FILES))
        if foreign:
            raise ConfigError(
                f"--overwrite deletes only run folders, and {run_dir} also holds {', '.join(foreign[:3])}; "
                "remove it yourself or choose another --run-name"
            )
        return
    latest = run_dir / "checkpoints" / "latest.pt"
    resume = f"continue it with --resume {latest}, " if latest.exists() else ""
    raise ConfigError(
        f"run folder {run_dir} already holds an earlier run; {resume}replace it with --overwrite, or choose another --run-name"
    )


def check_args(args: Args, checkpoint: dict[str, Any] | None) -> None:
    """Every option checked before anything is written; a ConfigError names the first bad one and the fix."""
    check_numbers(args)
    engine = check_game(args)
    check_device(args.device)
    check_opponents(args, engine)
    if checkpoint is not None:
        check_resume(args, checkpoint, engine)
    check_run_folder(args)


# ---------------------------------------------------------------- the command line


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


def announce(args: Args) -> None:
    """Say at the start where the run's logs and checkpoints go, and how to watch them."""
    run_dir = run_folder(args)
    watch = command("tensorboard")
    print(
        f"train.py: run {args.run_name}: TensorBoard logs in {run_dir}, checkpoints in {run_dir / 'checkpoints'} "
        f"(every {args.save_interval} update{'s' * (args.save_interval != 1)} and at the end)\n"
        f"train.py: watch it with: {watch} --logdir {args.runs_dir}",
        flush=True,
    )


def interrupted(args: Args | None) -> str:
    """What to tell a user who pressed Ctrl-C: the exact command that continues the run, if it can be."""
    if args is None:
        return "train.py: interrupted before training started; nothing was written"
    latest = run_folder(args) / "checkpoints" / "latest.pt"
    if not latest.exists():
        return f"train.py: interrupted before the run's first checkpoint; nothing to resume in {run_folder(args)}"
    script = sys.argv[0] if sys.argv[0].endswith(".py") else "train.py"
    return f"train.py: interrupted; continue the run with: {python_command()} {script} --resume {latest}"


def main(argv: list[str] | None = None) -> None:
    """train.py's command line: check every option, then train; one line and exit status 2 for a bad input."""
    args = None
    try:
        args, checkpoint = parse_args(argv)
        args = dataclasses.replace(args, run_name=args.run_name or f"ppo__{args.seed}__{int(time.time())}")
        check_args(args, checkpoint)
        if args.overwrite and run_folder(args).exists():
            shutil.rmtree(run_folder(args))
        announce(args)
        train(dataclasses.replace(args, overwrite=False), checkpoint)
    except (ConfigError, CheckpointError, RulesError) as e:
        print(f"train.py: error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(interrupted(args), file=sys.stderr)
        sys.exit(130)


# ---------------------------------------------------------------- training


def train(args: Args, checkpoint: dict[str, Any] | None = None) -> None:
    """Run PPO as configured; continue from `checkpoint` when resuming."""
    resumed_from = args.resume
    run_name = args.run_name or f"ppo__{args.seed}__{int(time.time())}"
    args = dataclasses.replace(args, run_name=run_name, resume="")
    run_dir = Path(args.runs_dir) / run_name
    ckpt_dir = run_dir / "checkpoints"

    # ---- sizes, seeding, device
    batch_size = args.num_envs * args.num_steps
    num_updates = args.total_timesteps // batch_size
    if num_updates < 1:
        raise ConfigError(f"total_timesteps={args.total_timesteps} is less than one rollout (num_envs * num_steps = {batch_size})")
    mix = parse_mix(args.opponent_mix)
    random.seed(args.seed)
    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device)

    # ---- environment, network, opponents
    env = EuchreVectorEnv(args.num_envs, Rules.from_dict(args.rules), episode=args.episode, reward=args.reward, seed=args.seed)
    engine = env.engine
    play_match = evaluation_function(args, engine)
    if checkpoint is not None:
        check_compatible(checkpoint, engine, f"checkpoint {resumed_from!r} (--resume)", same_positions=True)
    model_kwargs = dict(hidden_size=args.hidden_size, num_layers=args.num_layers, canonical_suits=args.canonical_suits)
    net = ActorCritic(engine, **model_kwargs).to(device)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    names = [name for name, _ in mix]
    weights = np.array([w for _, w in mix])
    self_kind = names.index(SELF) if SELF in names else -1
    pool_kind = names.index(POOL) if POOL in names else -1
    bots = {name: make_agent(name, engine, seed=args.seed + 1 + k) for k, name in enumerate(names) if name not in (SELF, POOL)}
    pool: list[ActorCritic] = []

    def snapshot_into_pool(count: int) -> None:
        slot = count % args.pool_size
        if slot == len(pool):
            pool.append(ActorCritic(engine, **model_kwargs).to(device).eval())
        pool[slot].load_state_dict(net.state_dict())

    # Per game: opponent kind (index into mix), the learner's side (0 or 1), the pool slot it plays.
    n = args.num_envs
    games = np.arange(n)
    kind = np.zeros(n, np.int64)
    team = np.zeros(n, np.int64)
    pool_slot = np.zeros(n, np.int64)
    episode_return = np.zeros(n, np.float64)

    def draw_opponents(rows: np.ndarray) -> None:
        kind[rows] = rng.choice(len(names), size=rows.size, p=weights)
        team[rows] = rng.integers(0, 2, size=rows.size)
        pool_slot[rows] = rng.integers(0, len(pool), size=rows.size)

    # ---- start fresh or restore everything a checkpoint holds
    if checkpoint is None:
        update, global_step, pool_count = 0, 0, 1
        snapshot_into_pool(0)
        env.reset(seed=args.seed)
        draw_opponents(games)
    else:
        net.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        update, global_step, pool_count = checkpoint["update"], checkpoint["global_step"], checkpoint["pool_count"]
        for slot, weights_dict in enumerate(checkpoint["pool"]):
            pool.append(ActorCritic(engine, **model_kwargs).to(device).eval())
            pool[slot].load_state_dict(weights_dict)
        env.state = state_from_tensors(checkpoint["env_state"])
        if env.state.num_games != n:
            raise ConfigError(f"num_envs={n} but the checkpoint holds {env.state.num_games} games; resume with the same num_envs")
        saved = checkpoint["games"]
        for array, name in ((kind, "kind"), (team, "team"), (pool_slot, "pool_slot"), (episode_return, "episode_return")):
            array[:] = saved[name].numpy()
        restore_rng_states(checkpoint["rng"], rng, bots)
    obs = engine.observe(env.state)

    # ---- logging
    run_dir.mkdir(parents=True, exist_ok=True)
    writer = SummaryWriter(str(run_dir))
    writer.add_text(
        "hyperparameters",
        "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items())
        + f"\n|derived: batch_size|{batch_size}|\n|derived: num_updates|{num_updates}|\n|device|{device}|",
    )
    print(
        f"run {run_dir}: {num_updates} updates of {batch_size} steps ({args.num_envs} games x {args.num_steps}), "
        f"opponents {dict(mix)}, device {device}, {engine.observation_size} inputs, {engine.num_actions} actions",
        flush=True,
    )

    # ---- rollout storage: at most one learner decision per game per step
    cap = batch_size
    b_obs = np.zeros((cap, engine.observation_size), np.float32)
    b_mask = np.zeros((cap, engine.num_actions), bool)
    b_actions = np.zeros(cap, np.int64)
    b_logprobs = np.zeros(cap, np.float32)
    b_values = np.zeros(cap, np.float32)
    b_rewards = np.zeros(cap, np.float32)
    b_dones = np.zeros(cap, bool)
    b_next = np.zeros(cap, np.int64)  # index of the same stream's next decision, -1 if none in this rollout
    b_boot = np.zeros(cap, np.float32)  # bootstrap value for a stream still open at the rollout's end

    start_time, start_step = time.time(), global_step
    bar = tqdm(total=num_updates * batch_size, initial=global_step, unit="step", unit_scale=True, disable=not args.progress, dynamic_ncols=True)
    evaluation: dict[str, Any] = {}
    while update < num_updates:
        update += 1
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (update - 1.0) / num_updates) * args.learning_rate

        # ---- rollout
        last = np.full((n, NUM_SEATS), -1, np.int64)  # latest decision index of each (game, seat) stream
        count = 0
        b_rewards[:] = 0
        b_dones[:] = False
        b_next[:] = -1
        b_boot[:] = 0
        returns_by_kind: dict[int, list[float]] = {}
        step_starts = []
        for _ in range(args.num_steps):
            step_starts.append(count)
            mask = env.state.legal
            to_play = env.state.to_play.astype(np.int64)
            learner = (kind == self_kind) | (to_play % 2 == team)
            rows = np.flatnonzero(learner)
            idx = np.arange(count, count + rows.size)
            i = slice(count, count + rows.size)
            b_obs[i] = obs[rows]
            b_mask[i] = mask[rows]
            with torch.no_grad():
                a, logp, v = sample_actions(net, torch.from_numpy(b_obs[i]).to(device), torch.from_numpy(b_mask[i]).to(device))
            b_actions[i], b_logprobs[i], b_values[i] = a.cpu().numpy(), logp.cpu().numpy(), v.cpu().numpy()
            actions = np.zeros(n, np.int64)
            actions[rows] = b_actions[i]
            previous = last[rows, to_play[rows]]
            b_next[previous[previous >= 0]] = idx[previous >= 0]
            last[rows, to_play[rows]] = idx
            count += rows.size

            for k, name in enumerate(names):
                if k == self_kind:
                    continue
                their = np.flatnonzero(~learner & (kind == k))
                if their.size == 0:
                    continue
                if k != pool_kind:
                    actions[their] = bot_act(bots[name], obs, mask, env.state, their)
                    continue
                for slot in np.unique(pool_slot[their]):
                    r = their[pool_slot[their] == slot]
                    with torch.no_grad():
                        a, _, _ = sample_actions(pool[slot], torch.from_numpy(obs[r]).to(device), torch.from_numpy(mask[r]).to(device))
                    actions[r] = a.cpu().numpy()

            obs, rewards, terminated, _, _ = env.step(actions)
            global_step += n

            # Hand-end rewards go to each learner seat's latest decision; episode ends close the streams.
            credited = (last >= 0) & (rewards != 0)
            b_rewards[last[credited]] += rewards[credited]
            episode_return += rewards[games, team]
            ended = np.flatnonzero(terminated)
            if ended.size:
                closing = last[ended]
                b_dones[closing[closing >= 0]] = True
                last[ended] = -1
                for g in ended[kind[ended] != self_kind]:
                    returns_by_kind.setdefault(int(kind[g]), []).append(float(episode_return[g]))
                episode_return[ended] = 0
                draw_opponents(ended)

        # ---- bootstrap open streams with the value of their seat's current information state
        with torch.no_grad():
            for seat in range(NUM_SEATS):
                open_games = np.flatnonzero(last[:, seat] >= 0)
                if open_games.size:
                    seat_obs = engine.observe(env.state, np.full(n, seat))[open_games]
                    b_boot[last[open_games, seat]] = net.get_value(torch.from_numpy(seat_obs).to(device)).cpu().numpy()

        # ---- GAE along each (game, seat) stream
        advantages = stream_advantages(
            b_rewards[:count], b_values[:count], b_dones[:count], b_next[:count], b_boot[:count], step_starts, args.gamma, args.gae_lambda
        )
        returns = advantages + b_values[:count]

        # ---- PPO update
        t_obs = torch.from_numpy(b_obs[:count]).to(device)
        t_mask = torch.from_numpy(b_mask[:count]).to(device)
        t_actions = torch.from_numpy(b_actions[:count]).to(device)
        t_logprobs = torch.from_numpy(b_logprobs[:count]).to(device)
        t_values = torch.from_numpy(b_values[:count]).to(device)
        t_adv = torch.from_numpy(advantages).to(device)
        t_returns = torch.from_numpy(returns).to(device)
        minibatch_size = -(-count // args.num_minibatches)
        clipfracs = []
        for _ in range(args.update_epochs):
            order = rng.permutation(count)
            for start in range(0, count, minibatch_size):
                mb = torch.from_numpy(order[start : start + minibatch_size]).to(device)
                logits, new_value = net(t_obs[mb], t_mask[mb])
                dist = Categorical(logits=logits, validate_args=False)
                new_logprob = dist.log_prob(t_actions[mb])
                entropy = dist.entropy()
                logratio = new_logprob - t_logprobs[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    old_approx_kl = (-logratio).mean()
                    approx_kl = ((ratio - 1) - logratio).mean()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = t_adv[mb]
                if args.norm_adv and mb_adv.numel() > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
                if args.clip_vloss:
                    v_unclipped = (new_value - t_returns[mb]) ** 2
                    v_clipped = t_values[mb] + torch.clamp(new_value - t_values[mb], -args.clip_coef, args.clip_coef)
                    v_loss = 0.5 * torch.max(v_unclipped, (v_clipped - t_returns[mb]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((new_value - t_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()
            if args.target_kl > 0 and approx_kl > args.target_kl:
                break
        var_y = np.var(returns)
        explained_var = np.nan if var_y == 0 else 1 - np.var(returns - b_values[:count]) / var_y

        # ---- pool, logging, checkpoint, evaluation
        if POOL in names and update % args.pool_interval == 0:
            snapshot_into_pool(pool_count)
            pool_count += 1
        sps = (global_step - start_step) / (time.time() - start_time)
        scalars = {
            "charts/learning_rate": optimizer.param_groups[0]["lr"],
            "charts/SPS": sps,
            "charts/learner_decisions": count,
            "charts/pool_size": len(pool),
            "losses/value_loss": v_loss.item(),
            "losses/policy_loss": pg_loss.item(),
            "losses/entropy": entropy_loss.item(),
            "losses/old_approx_kl": old_approx_kl.item(),
            "losses/approx_kl": approx_kl.item(),
            "losses/clipfrac": float(np.mean(clipfracs)),
            "losses/explained_variance": explained_var,
        }
        for k, values in returns_by_kind.items():
            scalars[f"charts/return_vs_{names[k]}"] = float(np.mean(values))
        for tag, value in scalars.items():
            writer.add_scalar(tag, value, global_step)

        if update % args.save_interval == 0 or update == num_updates:
            checkpoint_now = {
                "format": CHECKPOINT_FORMAT,
                "model": net.state_dict(),
                "model_kwargs": model_kwargs,
                "optimizer": optimizer.state_dict(),
                "config": dataclasses.asdict(args),
                "rules": engine.rules.to_dict(),
                "observation": observation_signature(engine),
                "update": update,
                "global_step": global_step,
                "pool": [p.state_dict() for p in pool],
                "pool_count": pool_count,
                "env_state": state_to_tensors(env.state),
                "games": {
                    "kind": torch.from_numpy(kind.copy()),
                    "team": torch.from_numpy(team.copy()),
                    "pool_slot": torch.from_numpy(pool_slot.copy()),
                    "episode_return": torch.from_numpy(episode_return.copy()),
                },
                "rng": rng_states(rng, bots),
                "batch_digest": batch_digest(b_obs[:count], b_mask[:count], b_actions[:count], b_logprobs[:count], b_rewards[:count], b_dones[:count], b_next[:count]),
            }
            numbered = ckpt_dir / f"update_{update:06d}.pt"
            save_checkpoint(numbered, checkpoint_now)
            save_checkpoint(ckpt_dir / "latest.pt", checkpoint_now)
            if args.keep_checkpoints > 0:
                for old in sorted(ckpt_dir.glob("update_*.pt"))[: -args.keep_checkpoints]:
                    old.unlink()

        if play_match is not None and (update % args.eval_interval == 0 or update == num_updates):
            with torch.random.fork_rng(devices=[]):
                evaluation = evaluate_policy(play_match, net, engine, args)
            for spec, match in evaluation.items():
                margin = match.margin_per_hand
                writer.add_scalar(f"eval/margin_per_hand_vs_{spec}", margin.value, global_step)
                writer.add_scalar(f"eval/margin_per_hand_vs_{spec}_low", margin.low, global_step)
                writer.add_scalar(f"eval/margin_per_hand_vs_{spec}_high", margin.high, global_step)
                writer.add_scalar(f"eval/points_per_hand_vs_{spec}", match.points_per_hand_a.value, global_step)
            tqdm.write(
                f"update {update}/{num_updates}, step {global_step}: margin per hand (95% interval) "
                + ", ".join(f"vs {spec} {match.margin_per_hand}" for spec, match in evaluation.items())
            )
        writer.flush()
        bar.update(batch_size)
        bar.set_postfix(
            {f"return_vs_{names[k]}": f"{np.mean(v):+.2f}" for k, v in returns_by_kind.items()}
            | {f"eval_margin_vs_{spec}": f"{match.margin_per_hand.value:+.2f}" for spec, match in evaluation.items()},
            refresh=False,
        )

    bar.close()
    writer.close()
    print(f"done: {global_step} steps; checkpoints in {ckpt_dir}", flush=True)


if __name__ == "__main__":
    main()
