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
other rules or another observation layout. `euchre_agents/ppo.py` plays a checkpoint as the `ppo` bot.
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
import signal
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

from euchre_agents.base import Agent
from euchre_agents.registry import make_agent
from euchre_agents.registry import parse_weighted as agents_parse_weighted
from euchre_agents.ppo import (
    CHECKPOINT_FORMAT,
    MASKED_LOGIT,
    RESUME,
    ActorCritic,
    CheckpointError,
    CheckpointMismatchError,
    PPOAgent,
    build_network,
    check_compatible,
    observation_signature,
    read_checkpoint,
)
from euchre_env import Engine, EuchreState, EuchreVectorEnv, Rules, RulesError
from euchre_env.cards import NUM_SEATS
from euchre_env.engine import EPISODES, REWARDS
from euchre_lab.invocation import help_command, tool_name
from euchre_lab.presets import read_preset

SELF = "self"
POOL = "pool"
STAGES = ("ppo", "distill")


class ConfigError(ValueError):
    """An option, preset or resume request that train.py cannot run with."""


@dataclass
class Args:
    config: str = "configs/ppo.yaml"
    """YAML preset whose keys are these options (a relative path is also looked up next to train.py)"""
    stage: str = "ppo"
    """ppo: PPO self-play (regularised fine-tuning with init_checkpoint and kl_coef); distill: supervised learning on teacher data"""
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
    action_values: bool = False
    """give the network a per-action value head as well (trained by distillation on the teacher's action values)"""
    init_checkpoint: str = ""
    """start from this checkpoint's network (e.g. a distilled policy to fine-tune); its architecture options are used"""
    kl_coef: float = 0.0
    """weight of KL(learner || reference policy) in the PPO loss; the reference is init_checkpoint's policy, frozen"""

    teacher_data: str = "data/teacher_true"
    """distill: folder written by `python -m euchre_agents.teacher`, or several, comma-separated (each one's last shards are held out)"""
    distill_epochs: float = 4.0
    """distill: passes over the training part of the teacher data"""
    distill_batch_size: int = 2048
    """distill: decisions per minibatch (one update)"""
    policy_temperature: float = 1.0
    """distill: the policy's target is softmax(teacher action values / temperature) over the legal actions (points)"""
    action_value_coef: float = 1.0
    """distill: weight of the per-action value regression"""
    state_value_coef: float = 0.25
    """distill: weight of the state value regression (to the hand's outcome as played)"""
    holdout_fraction: float = 0.02
    """distill: share of the teacher shards (the last ones) held out to measure the fit"""

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
    try:
        values = read_preset(path, "configs/ppo.yaml")
    except ValueError as e:
        raise ConfigError(str(e)) from None
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
        """Print `train.py: error: ...` (`euchre-train: error: ...` when installed) with the pointer to --help; exit 2."""
        self.exit(2, f"{tool_name('train.py')}: error: {message} ({help_command('train.py')} lists every option)\n")


def parse_weighted(text: str, option: str) -> list[tuple[str, float]]:
    """`self=0.6,pool=0.2,heuristic=0.2` -> [(name, number)]; a name may hold `=` but no comma."""
    try:
        return agents_parse_weighted(text, option)
    except ValueError as e:
        raise ConfigError(str(e)) from None


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
        from euchre_lab.evaluate import play_match
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


# ---------------------------------------------------------------- runs: setup, checkpoints, evaluation


@dataclass
class Run:
    """What every stage shares: the run folder, engine, device, network, optimizer, logger, evaluator."""

    args: Args
    dir: Path
    ckpt_dir: Path
    engine: Engine
    device: torch.device
    net: ActorCritic
    optimizer: optim.Optimizer
    model_kwargs: dict[str, Any]
    writer: SummaryWriter
    play_match: Callable | None
    resumed_from: str

    def tensor(self, array: np.ndarray) -> torch.Tensor:
        """A numpy array as a tensor on the run's device."""
        return torch.from_numpy(array).to(self.device)


def start_run(args: Args, checkpoint: dict[str, Any] | None, prefix: str, engine: Engine) -> Run:
    """Seed everything, build the network (from the checkpoint, init_checkpoint or fresh), open TensorBoard."""
    resumed_from = args.resume
    run_name = args.run_name or f"{prefix}__{args.seed}__{int(time.time())}"
    args = dataclasses.replace(args, run_name=run_name, resume="")
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    device = torch.device(("cuda" if torch.cuda.is_available() else "cpu") if args.device == "auto" else args.device)
    play_match = evaluation_function(args, engine)
    if checkpoint is not None:
        check_compatible(checkpoint, engine, f"checkpoint {resumed_from!r} (--resume)", same_positions=True)
        model_kwargs = checkpoint["model_kwargs"]
        net = ActorCritic(engine, **model_kwargs)
        net.load_state_dict(checkpoint["model"])
    elif args.init_checkpoint:
        init = reference_checkpoint(args, engine)
        model_kwargs = init["model_kwargs"]
        args = dataclasses.replace(args, **{k: v for k, v in model_kwargs.items() if k in FIELD_TYPES})
        net = build_network(init, engine)
    else:
        model_kwargs = dict(
            hidden_size=args.hidden_size, num_layers=args.num_layers, canonical_suits=args.canonical_suits,
            action_values=args.action_values,
        )
        net = ActorCritic(engine, **model_kwargs)
    net = net.to(device)
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    run_dir = Path(args.runs_dir) / run_name
    run_dir.mkdir(parents=True, exist_ok=True)
    writer = SummaryWriter(str(run_dir))
    writer.add_text(
        "hyperparameters",
        "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()) + f"\n|device|{device}|",
    )
    return Run(args, run_dir, run_dir / "checkpoints", engine, device, net, optimizer, model_kwargs, writer, play_match, resumed_from)


def reference_checkpoint(args: Args, engine: Engine) -> dict[str, Any]:
    """init_checkpoint, checked against this game."""
    checkpoint = read_checkpoint(args.init_checkpoint)
    check_compatible(checkpoint, engine, f"--init-checkpoint {args.init_checkpoint!r}")
    return checkpoint


def save_run_checkpoint(run: Run, checkpoint: dict[str, Any], update: int) -> None:
    """update_NNNNNN.pt and latest.pt, atomically; keep only the newest keep_checkpoints numbered ones."""
    save_checkpoint(run.ckpt_dir / f"update_{update:06d}.pt", checkpoint)
    save_checkpoint(run.ckpt_dir / "latest.pt", checkpoint)
    if run.args.keep_checkpoints > 0:
        for old in sorted(run.ckpt_dir.glob("update_*.pt"))[: -run.args.keep_checkpoints]:
            old.unlink()


def save_and_stop(run: Run, checkpoint: dict[str, Any], update: int) -> None:
    """After Ctrl-C: write the checkpoint of the last finished update, say how to continue, exit 130."""
    save_run_checkpoint(run, checkpoint, update)
    latest = run.ckpt_dir / "latest.pt"
    print(f"\n{tool_name('train.py')}: interrupted after update {update}, checkpoint written; continue the run with: "
          f"{train_command()} --resume {latest}", file=sys.stderr, flush=True)
    raise SystemExit(130)


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


# ---------------------------------------------------------------- PPO: opponents and rollout storage


class League:
    """Who the learner plays in each game: itself, a past snapshot (the pool) or a bot, and which side it holds."""

    def __init__(self, args: Args, run: Run, rng: np.random.Generator):
        mix = parse_mix(args.opponent_mix)
        self.args, self.run, self.rng = args, run, rng
        self.names = [name for name, _ in mix]
        self.weights = np.array([w for _, w in mix])
        self.self_kind = self.names.index(SELF) if SELF in self.names else -1
        self.pool_kind = self.names.index(POOL) if POOL in self.names else -1
        self.bots = {
            name: make_agent(name, run.engine, seed=args.seed + 1 + k)
            for k, name in enumerate(self.names)
            if name not in (SELF, POOL)
        }
        self.pool: list[ActorCritic] = []
        self.pool_count = 0
        n = args.num_envs
        self.kind = np.zeros(n, np.int64)
        self.team = np.zeros(n, np.int64)
        self.pool_slot = np.zeros(n, np.int64)

    def snapshot(self) -> None:
        """Copy the learner into the pool (replacing the oldest snapshot when full)."""
        slot = self.pool_count % self.args.pool_size
        if slot == len(self.pool):
            self.pool.append(ActorCritic(self.run.engine, **self.run.model_kwargs).to(self.run.device).eval())
        self.pool[slot].load_state_dict(self.run.net.state_dict())
        self.pool_count += 1

    def draw(self, rows: np.ndarray) -> None:
        """New opponents and sides for the games in `rows`."""
        self.kind[rows] = self.rng.choice(len(self.names), size=rows.size, p=self.weights)
        self.team[rows] = self.rng.integers(0, 2, size=rows.size)
        self.pool_slot[rows] = self.rng.integers(0, len(self.pool), size=rows.size)

    def learner_rows(self, to_play: np.ndarray) -> np.ndarray:
        """(N,) bool: the learner decides in this game now."""
        return (self.kind == self.self_kind) | (to_play % 2 == self.team)

    def act(self, actions: np.ndarray, learner: np.ndarray, obs: np.ndarray, mask: np.ndarray, state: EuchreState) -> None:
        """Fill in the opponents' actions (bots and pool snapshots) where the learner does not decide."""
        for k, name in enumerate(self.names):
            their = np.flatnonzero(~learner & (self.kind == k))
            if k == self.self_kind or their.size == 0:
                continue
            if k != self.pool_kind:
                actions[their] = bot_act(self.bots[name], obs, mask, state, their)
                continue
            for slot in np.unique(self.pool_slot[their]):
                r = their[self.pool_slot[their] == slot]
                with torch.no_grad():
                    a, _, _ = sample_actions(self.pool[slot], self.run.tensor(obs[r]), self.run.tensor(mask[r]))
                actions[r] = a.cpu().numpy()

    def state_dict(self) -> dict[str, Any]:
        return {
            "pool": [p.state_dict() for p in self.pool],
            "pool_count": self.pool_count,
            "games": {name: torch.from_numpy(getattr(self, name).copy()) for name in ("kind", "team", "pool_slot")},
        }

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        for weights in saved["pool"]:
            self.pool.append(ActorCritic(self.run.engine, **self.run.model_kwargs).to(self.run.device).eval())
            self.pool[-1].load_state_dict(weights)
        self.pool_count = saved["pool_count"]
        for name in ("kind", "team", "pool_slot"):
            getattr(self, name)[:] = saved["games"][name].numpy()


@dataclass
class Rollout:
    """One rollout's learner decisions (at most one per game per step) and their (game, seat) streams."""

    obs: np.ndarray
    mask: np.ndarray
    actions: np.ndarray
    logprobs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    next: np.ndarray  # index of the same stream's next decision, -1 if none in this rollout
    boot: np.ndarray  # bootstrap value for a stream still open at the rollout's end
    count: int = 0
    step_starts: list[int] = field(default_factory=list)
    returns_by_kind: dict[int, list[float]] = field(default_factory=dict)

    @classmethod
    def empty(cls, capacity: int, engine: Engine) -> "Rollout":
        z = lambda dtype, *shape: np.zeros((capacity, *shape), dtype)  # noqa: E731
        return cls(
            z(np.float32, engine.observation_size), z(bool, engine.num_actions), z(np.int64), z(np.float32),
            z(np.float32), z(np.float32), z(bool), z(np.int64), z(np.float32),
        )

    def digest(self) -> str:
        c = self.count
        return batch_digest(self.obs[:c], self.mask[:c], self.actions[:c], self.logprobs[:c], self.rewards[:c], self.dones[:c], self.next[:c])


# ---------------------------------------------------------------- PPO: the stages of one update


def collect_rollout(run: Run, env: EuchreVectorEnv, league: League, buf: Rollout, obs: np.ndarray, episode_return: np.ndarray) -> np.ndarray:
    """Step every game num_steps times, storing the learner's decisions; returns the next observations."""
    n = run.args.num_envs
    games = np.arange(n)
    last = np.full((n, NUM_SEATS), -1, np.int64)  # latest decision index of each (game, seat) stream
    buf.count, buf.step_starts, buf.returns_by_kind = 0, [], {}
    buf.rewards[:], buf.dones[:], buf.next[:], buf.boot[:] = 0, False, -1, 0
    for _ in range(run.args.num_steps):
        buf.step_starts.append(buf.count)
        mask = env.state.legal
        to_play = env.state.to_play.astype(np.int64)
        learner = league.learner_rows(to_play)
        rows = np.flatnonzero(learner)
        idx = np.arange(buf.count, buf.count + rows.size)
        i = slice(buf.count, buf.count + rows.size)
        buf.obs[i], buf.mask[i] = obs[rows], mask[rows]
        with torch.no_grad():
            a, logp, v = sample_actions(run.net, run.tensor(buf.obs[i]), run.tensor(buf.mask[i]))
        buf.actions[i], buf.logprobs[i], buf.values[i] = a.cpu().numpy(), logp.cpu().numpy(), v.cpu().numpy()
        actions = np.zeros(n, np.int64)
        actions[rows] = buf.actions[i]
        previous = last[rows, to_play[rows]]
        buf.next[previous[previous >= 0]] = idx[previous >= 0]
        last[rows, to_play[rows]] = idx
        buf.count += rows.size
        league.act(actions, learner, obs, mask, env.state)

        obs, rewards, terminated, _, _ = env.step(actions)
        # Hand-end rewards go to each learner seat's latest decision; episode ends close the streams.
        credited = (last >= 0) & (rewards != 0)
        buf.rewards[last[credited]] += rewards[credited]
        episode_return += rewards[games, league.team]
        ended = np.flatnonzero(terminated)
        if ended.size:
            closing = last[ended]
            buf.dones[closing[closing >= 0]] = True
            last[ended] = -1
            for g in ended[league.kind[ended] != league.self_kind]:
                buf.returns_by_kind.setdefault(int(league.kind[g]), []).append(float(episode_return[g]))
            episode_return[ended] = 0
            league.draw(ended)
    bootstrap_open_streams(run, env, buf, last)
    return obs


@torch.no_grad()
def bootstrap_open_streams(run: Run, env: EuchreVectorEnv, buf: Rollout, last: np.ndarray) -> None:
    """Streams still open at the rollout's end take the value of their seat's current information state."""
    n = run.args.num_envs
    for seat in range(NUM_SEATS):
        open_games = np.flatnonzero(last[:, seat] >= 0)
        if open_games.size:
            seat_obs = run.engine.observe(env.state, np.full(n, seat))[open_games]
            buf.boot[last[open_games, seat]] = run.net.get_value(run.tensor(seat_obs)).cpu().numpy()


def masked_kl(logits: torch.Tensor, reference_logits: torch.Tensor) -> torch.Tensor:
    """(n,) KL(policy || reference) of two masked categorical policies over the same legal actions."""
    log_p, log_q = torch.log_softmax(logits, dim=1), torch.log_softmax(reference_logits, dim=1)
    return (log_p.exp() * (log_p - log_q)).sum(dim=1)


def ppo_update(
    run: Run, buf: Rollout, advantages: np.ndarray, rng: np.random.Generator, reference: ActorCritic | None
) -> dict[str, float]:
    """update_epochs passes of clipped PPO over the rollout's decisions (plus the KL toward the reference)."""
    args, c = run.args, buf.count
    t = {name: run.tensor(getattr(buf, name)[:c]) for name in ("obs", "mask", "actions", "logprobs", "values")}
    t_adv = run.tensor(advantages)
    t_returns = t_adv + t["values"]
    minibatch_size = -(-c // args.num_minibatches)
    clipfracs, stats = [], {}
    for _ in range(args.update_epochs):
        order = rng.permutation(c)
        for start in range(0, c, minibatch_size):
            mb = run.tensor(order[start : start + minibatch_size])
            logits, new_value = run.net(t["obs"][mb], t["mask"][mb])
            dist = Categorical(logits=logits, validate_args=False)
            logratio = dist.log_prob(t["actions"][mb]) - t["logprobs"][mb]
            ratio = logratio.exp()
            with torch.no_grad():
                stats["old_approx_kl"] = (-logratio).mean()
                stats["approx_kl"] = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
            mb_adv = t_adv[mb]
            if args.norm_adv and mb_adv.numel() > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
            v_loss = value_loss(new_value, t["values"][mb], t_returns[mb], args)
            entropy_loss = dist.entropy().mean()
            loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
            if reference is not None:
                with torch.no_grad():
                    reference_logits, _ = reference(t["obs"][mb], t["mask"][mb])
                stats["reference_kl"] = masked_kl(logits, reference_logits).mean()
                loss = loss + args.kl_coef * stats["reference_kl"]
            run.optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(run.net.parameters(), args.max_grad_norm)
            run.optimizer.step()
        if args.target_kl > 0 and stats["approx_kl"] > args.target_kl:
            break
    stats |= {"value_loss": v_loss, "policy_loss": pg_loss, "entropy": entropy_loss}
    out = {k: v.detach().item() for k, v in stats.items()}
    returns = advantages + buf.values[:c]
    var_y = np.var(returns)
    out["clipfrac"] = float(np.mean(clipfracs))
    out["explained_variance"] = np.nan if var_y == 0 else float(1 - np.var(returns - buf.values[:c]) / var_y)
    return out


def value_loss(new_value: torch.Tensor, old_value: torch.Tensor, returns: torch.Tensor, args: Args) -> torch.Tensor:
    """PPO's value loss, clipped around the rollout's values as the reference implementation does when clip_vloss."""
    unclipped = (new_value - returns) ** 2
    if not args.clip_vloss:
        return 0.5 * unclipped.mean()
    clipped = old_value + torch.clamp(new_value - old_value, -args.clip_coef, args.clip_coef)
    return 0.5 * torch.max(unclipped, (clipped - returns) ** 2).mean()


def ppo_checkpoint(run: Run, env: EuchreVectorEnv, league: League, buf: Rollout, rng, update: int, global_step: int, episode_return) -> dict[str, Any]:
    """Everything needed to continue bit for bit: model, optimizer, games in progress, pool, every random stream."""
    saved_league = league.state_dict()
    saved_league["games"]["episode_return"] = torch.from_numpy(episode_return.copy())
    return {
        "format": CHECKPOINT_FORMAT,
        "stage": "ppo",
        "model": run.net.state_dict(),
        "model_kwargs": run.model_kwargs,
        "optimizer": run.optimizer.state_dict(),
        "config": dataclasses.asdict(run.args),
        "rules": run.engine.rules.to_dict(),
        "observation": observation_signature(run.engine),
        "update": update,
        "global_step": global_step,
        **saved_league,
        "env_state": state_to_tensors(env.state),
        "rng": rng_states(rng, league.bots),
        "batch_digest": buf.digest(),
    }


def log_update(run: Run, league: League, buf: Rollout, stats: dict[str, float], global_step: int, sps: float) -> None:
    """The update's losses and the learner's returns by opponent, to TensorBoard."""
    scalars = {
        "charts/learning_rate": run.optimizer.param_groups[0]["lr"],
        "charts/SPS": sps,
        "charts/learner_decisions": buf.count,
        "charts/pool_size": len(league.pool),
        **{f"losses/{k}": v for k, v in stats.items()},
    }
    for k, values in buf.returns_by_kind.items():
        scalars[f"charts/return_vs_{league.names[k]}"] = float(np.mean(values))
    for tag, value in scalars.items():
        run.writer.add_scalar(tag, value, global_step)


# ---------------------------------------------------------------- PPO: the driver


def train(args: Args, checkpoint: dict[str, Any] | None = None) -> None:
    """Run PPO as configured (fine-tuning toward init_checkpoint's policy when kl_coef > 0); continue from `checkpoint`."""
    batch_size = args.num_envs * args.num_steps
    num_updates = args.total_timesteps // batch_size
    if num_updates < 1:
        raise ConfigError(f"total_timesteps={args.total_timesteps} is less than one rollout (num_envs * num_steps = {batch_size})")
    env = EuchreVectorEnv(args.num_envs, Rules.from_dict(args.rules), episode=args.episode, reward=args.reward, seed=args.seed)
    run = start_run(args, checkpoint, "ppo", env.engine)
    args = run.args
    rng = np.random.default_rng(args.seed)
    league = League(args, run, rng)
    reference = None
    if args.kl_coef > 0:
        reference = build_network(reference_checkpoint(args, run.engine), run.engine).to(run.device).eval()
    episode_return = np.zeros(args.num_envs, np.float64)
    if checkpoint is None:
        update, global_step = 0, 0
        league.snapshot()
        env.reset(seed=args.seed)
        league.draw(np.arange(args.num_envs))
    else:
        run.optimizer.load_state_dict(checkpoint["optimizer"])
        update, global_step = checkpoint["update"], checkpoint["global_step"]
        league.load_state_dict(checkpoint)
        env.state = state_from_tensors(checkpoint["env_state"])
        if env.state.num_games != args.num_envs:
            raise ConfigError(f"num_envs={args.num_envs} but the checkpoint holds {env.state.num_games} games; resume with the same num_envs")
        episode_return[:] = checkpoint["games"]["episode_return"].numpy()
        restore_rng_states(checkpoint["rng"], rng, league.bots)
    obs = run.engine.observe(env.state)
    print(
        f"run {run.dir}: {num_updates} updates of {batch_size} steps ({args.num_envs} games x {args.num_steps}), "
        f"opponents {dict(parse_mix(args.opponent_mix))}, device {run.device}, {run.engine.observation_size} inputs, "
        f"{run.engine.num_actions} actions",
        flush=True,
    )
    buf = Rollout.empty(batch_size, run.engine)
    start_time, start_step = time.time(), global_step
    bar = tqdm(total=num_updates * batch_size, initial=global_step, unit="step", unit_scale=True, disable=not args.progress, dynamic_ncols=True)
    evaluation: dict[str, Any] = {}
    with StopRequest() as stop:
        while update < num_updates:
            if args.anneal_lr:
                run.optimizer.param_groups[0]["lr"] = (1.0 - update / num_updates) * args.learning_rate
            obs = collect_rollout(run, env, league, buf, obs, episode_return)
            advantages = stream_advantages(
                buf.rewards[: buf.count], buf.values[: buf.count], buf.dones[: buf.count], buf.next[: buf.count],
                buf.boot[: buf.count], buf.step_starts, args.gamma, args.gae_lambda,
            )
            stats = ppo_update(run, buf, advantages, rng, reference)
            update += 1
            global_step += batch_size
            if POOL in league.names and update % args.pool_interval == 0:
                league.snapshot()
            log_update(run, league, buf, stats, global_step, (global_step - start_step) / (time.time() - start_time))
            if update % args.save_interval == 0 or update == num_updates:
                save_run_checkpoint(run, ppo_checkpoint(run, env, league, buf, rng, update, global_step, episode_return), update)
            if run.play_match is not None and (update % args.eval_interval == 0 or update == num_updates):
                with torch.random.fork_rng(devices=[]):
                    evaluation = evaluate_policy(run.play_match, run.net, run.engine, args)
                log_evaluation(run, evaluation, global_step, f"update {update}/{num_updates}")
            run.writer.flush()
            bar.update(batch_size)
            bar.set_postfix(
                {f"return_vs_{league.names[k]}": f"{np.mean(v):+.2f}" for k, v in buf.returns_by_kind.items()}
                | {f"eval_margin_vs_{spec}": f"{match.margin_per_hand.value:+.2f}" for spec, match in evaluation.items()},
                refresh=False,
            )
            if stop.requested:
                bar.close()
                save_and_stop(run, ppo_checkpoint(run, env, league, buf, rng, update, global_step, episode_return), update)
    bar.close()
    run.writer.close()
    print(f"done: {global_step} steps; checkpoints in {run.ckpt_dir}", flush=True)


# ---------------------------------------------------------------- distillation


@dataclass
class TeacherSplit:
    """Teacher data (one or several folders, as one data set) split by shard into a training and a held-out part."""

    data: Any  # euchre_agents.teacher.TeacherData
    train_rows: np.ndarray
    holdout_rows: np.ndarray
    sources: list[dict[str, Any]]
    """per folder: its path, generator settings and the shards read (what a checkpoint records)"""


def teacher_folders(args: Args) -> list[str]:
    """--teacher-data as a list of folders."""
    return [folder.strip() for folder in args.teacher_data.split(",") if folder.strip()]


def checkpoint_shards(args: Args, teacher: dict[str, Any] | None) -> list[list[int] | None]:
    """The shards a resumed run reads from each folder (all the folders list, for a new run)."""
    folders = teacher_folders(args)
    if teacher is None:
        return [None] * len(folders)
    sources = teacher.get("sources") or [{"folder": folders[0], "shards": teacher["shards"]}]  # one-folder checkpoints
    if [s["folder"] for s in sources] != folders:
        raise ConfigError(f"the checkpoint read teacher data from {[s['folder'] for s in sources]}; --teacher-data is {folders}")
    return [list(s["shards"]) for s in sources]


def load_teacher(args: Args, engine: Engine, teacher: dict[str, Any] | None) -> TeacherSplit:
    """The teacher data of every folder (exactly the checkpoint's shards when resuming), split by shard: the last
    holdout_fraction of each folder's shards are held out (at most 65,536 held-out decisions, spread evenly)."""
    from euchre_agents.teacher import TeacherDataError, concatenate, load

    folders, shards = teacher_folders(args), checkpoint_shards(args, teacher)
    parts, held_parts, sources = [], [], []
    for folder, wanted in zip(folders, shards):
        try:
            part = load(folder, engine, shards=wanted)
        except TeacherDataError as e:
            raise ConfigError(str(e)) from None
        used = np.unique(part.arrays["shard"])
        if used.size < 2:
            raise ConfigError(f"{folder} holds {used.size} shard(s); distillation needs at least 2 (one held out)")
        held = used[-max(1, int(round(used.size * args.holdout_fraction))) :]
        parts.append(part)
        held_parts.append(np.isin(part.arrays["shard"], held))
        sources.append({"folder": folder, "settings": part.manifest["settings"], "shards": used.tolist()})
    data = concatenate(parts)
    is_held = np.concatenate(held_parts)
    held_rows = np.flatnonzero(is_held)
    if held_rows.size > 1 << 16:
        held_rows = held_rows[np.linspace(0, held_rows.size - 1, 1 << 16).astype(np.int64)]
    return TeacherSplit(data, np.flatnonzero(~is_held), held_rows, sources)


def teacher_batch(split: TeacherSplit, rows: np.ndarray, device: torch.device) -> dict[str, torch.Tensor]:
    """Unpacked tensors of the given decisions: observations, masks, teacher action values (0 where illegal), outcomes."""
    data = split.data
    values = data.arrays["values"][rows].astype(np.float32)
    return {
        "obs": torch.from_numpy(data.observations(rows)).to(device),
        "mask": torch.from_numpy(data.masks(rows)).to(device),
        "values": torch.from_numpy(np.nan_to_num(values, nan=0.0)).to(device),
        "outcome": torch.from_numpy(data.arrays["outcome"][rows].astype(np.float32)).to(device),
    }


def distill_losses(net: ActorCritic, batch: dict[str, torch.Tensor], args: Args) -> dict[str, torch.Tensor]:
    """Cross-entropy to softmax(teacher values / T) over legal actions, per-action value MSE, state value MSE."""
    logits, value, q = net.heads(batch["obs"], batch["mask"])
    mask = batch["mask"]
    target = torch.softmax(torch.where(mask, batch["values"] / args.policy_temperature, torch.full((), MASKED_LOGIT)), dim=1)
    log_policy = torch.log_softmax(logits, dim=1)
    losses = {"policy": -(target * torch.where(mask, log_policy, torch.zeros(()))).sum(dim=1).mean()}
    losses["state_value"] = ((value - batch["outcome"]) ** 2).mean()
    if q is not None:
        losses["action_value"] = (((q - batch["values"]) ** 2) * mask).sum() / mask.sum()
    losses["total"] = (
        losses["policy"]
        + args.state_value_coef * losses["state_value"]
        + args.action_value_coef * losses.get("action_value", torch.zeros(()))
    )
    return losses


@torch.no_grad()
def holdout_metrics(net: ActorCritic, split: TeacherSplit, args: Args, device: torch.device) -> dict[str, float]:
    """Held-out losses and regrets: the teacher value lost by acting greedily on the policy (and the action values)."""
    sums: dict[str, float] = {}
    rows = split.holdout_rows
    for start in range(0, rows.size, 8192):
        batch = teacher_batch(split, rows[start : start + 8192], device)
        size = batch["mask"].shape[0]
        for name, loss in distill_losses(net, batch, args).items():
            sums[f"holdout/{name}_loss"] = sums.get(f"holdout/{name}_loss", 0.0) + loss.item() * size
        logits, _, q = net.heads(batch["obs"], batch["mask"])
        best = torch.where(batch["mask"], batch["values"], torch.full((), -1e9)).max(dim=1).values
        picks = {"policy": logits} | ({} if q is None else {"action_value": torch.where(batch["mask"], q, torch.full((), -1e9))})
        for name, scores in picks.items():
            chosen = batch["values"].gather(1, scores.argmax(dim=1, keepdim=True)).squeeze(1)
            sums[f"holdout/regret_{name}"] = sums.get(f"holdout/regret_{name}", 0.0) + (best - chosen).sum().item()
    return {k: v / max(rows.size, 1) for k, v in sums.items()}


def distill_checkpoint(net, optimizer, args, engine, model_kwargs, update, samples, split) -> dict[str, Any]:
    """Everything a distillation run needs to continue exactly (the data shards it reads included)."""
    return {
        "format": CHECKPOINT_FORMAT,
        "stage": "distill",
        "model": net.state_dict(),
        "model_kwargs": model_kwargs,
        "optimizer": optimizer.state_dict(),
        "config": dataclasses.asdict(args),
        "rules": engine.rules.to_dict(),
        "observation": observation_signature(engine),
        "update": update,
        "global_step": samples,
        "teacher": {"sources": split.sources},
        "rng": {"torch": torch.get_rng_state()},
    }


class EpochOrders:
    """The order in which an epoch visits the training rows: a pure function of (seed, epoch), so a resumed run
    sees the same batches; drawn once per epoch (a permutation of millions of rows costs about a second)."""

    def __init__(self, seed: int, rows: np.ndarray):
        self.seed, self.rows = seed, rows
        self.epoch, self.cached = -1, rows

    def order(self, epoch: int) -> np.ndarray:
        """The rows in epoch `epoch`'s order."""
        if epoch != self.epoch:
            self.epoch, self.cached = epoch, np.random.default_rng([self.seed, epoch]).permutation(self.rows)
        return self.cached


def distill(args: Args, checkpoint: dict[str, Any] | None = None) -> None:
    """Supervised distillation of the teacher's action values into the actor-critic (stage `distill`)."""
    run = start_run(args, checkpoint, "distill", Engine(Rules.from_dict(args.rules), episode=args.episode, reward=args.reward))
    args, engine, device, net, optimizer = run.args, run.engine, run.device, run.net, run.optimizer
    split = load_teacher(args, engine, None if checkpoint is None else checkpoint["teacher"])
    per_epoch = -(-split.train_rows.size // args.distill_batch_size)
    num_updates = max(1, int(args.distill_epochs * per_epoch))
    update = 0 if checkpoint is None else checkpoint["update"]
    if checkpoint is not None:
        optimizer.load_state_dict(checkpoint["optimizer"])
        torch.set_rng_state(checkpoint["rng"]["torch"])
    print(
        f"run {run.dir}: distilling {split.train_rows.size} decisions ({split.holdout_rows.size} held out) from "
        f"{args.teacher_data}, {num_updates} updates of {args.distill_batch_size}",
        flush=True,
    )
    bar = tqdm(total=num_updates, initial=update, unit="update", disable=not args.progress, dynamic_ncols=True)
    start_time, start_update = time.time(), update
    orders = EpochOrders(args.seed, split.train_rows)
    with StopRequest() as stop:
        while update < num_updates:
            epoch, position = divmod(update, per_epoch)
            order = orders.order(epoch)
            rows = np.sort(order[position * args.distill_batch_size : (position + 1) * args.distill_batch_size])
            if args.anneal_lr:
                optimizer.param_groups[0]["lr"] = (1.0 - update / num_updates) * args.learning_rate
            losses = distill_losses(net, teacher_batch(split, rows, device), args)
            optimizer.zero_grad()
            losses["total"].backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            update += 1
            samples = update * args.distill_batch_size
            if update % 50 == 0 or update == num_updates:
                for name, loss in losses.items():
                    run.writer.add_scalar(f"losses/distill_{name}", loss.item(), samples)
                run.writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], samples)
                run.writer.add_scalar("charts/SPS", (update - start_update) * args.distill_batch_size / (time.time() - start_time), samples)
            if update % args.save_interval == 0 or update == num_updates:
                for name, value in holdout_metrics(net, split, args, device).items():
                    run.writer.add_scalar(name, value, samples)
                save_run_checkpoint(run, distill_checkpoint(net, optimizer, args, engine, run.model_kwargs, update, samples, split), update)
            if run.play_match is not None and (update % args.eval_interval == 0 or update == num_updates):
                log_evaluation(run, evaluate_policy(run.play_match, net, engine, args), samples, f"update {update}/{num_updates}")
            run.writer.flush()
            bar.update(1)
            bar.set_postfix(policy_loss=f"{losses['policy'].item():.3f}", refresh=False)
            if stop.requested:
                bar.close()
                save_and_stop(run, distill_checkpoint(net, optimizer, args, engine, run.model_kwargs, update, samples, split), update)
    bar.close()
    run.writer.close()
    print(f"done: {update} updates; checkpoints in {run.ckpt_dir}", flush=True)


# ---------------------------------------------------------------- checking the options

POSITIVE = ("total_timesteps", "num_envs", "num_steps", "num_minibatches", "update_epochs", "hidden_size",
            "pool_size", "pool_interval", "save_interval", "learning_rate", "clip_coef", "max_grad_norm",
            "distill_epochs", "distill_batch_size", "policy_temperature")
NON_NEGATIVE = ("seed", "eval_seed", "torch_threads", "num_layers", "keep_checkpoints", "eval_interval",
                "ent_coef", "vf_coef", "target_kl", "kl_coef", "action_value_coef", "state_value_coef")
FRACTIONS = ("gamma", "gae_lambda", "holdout_fraction")
NETWORK_OPTIONS = ("hidden_size", "num_layers", "canonical_suits", "action_values")


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
    if args.stage == "ppo" and args.total_timesteps < batch_size:
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
    games = len(checkpoint["env_state"]["phase"]) if args.stage == "ppo" else args.num_envs
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


def check_stage(args: Args, engine: Engine) -> None:
    """The stage's inputs: the teacher data for distillation; the reference policy for fine-tuning."""
    if args.stage == "distill":
        from euchre_agents.teacher import TeacherDataError, check_data

        if not teacher_folders(args):
            raise ConfigError("--teacher-data names no folder; write one with python -m euchre_agents.teacher")
        for folder in teacher_folders(args):
            try:
                check_data(folder, engine)
            except TeacherDataError as e:
                raise ConfigError(f"--teacher-data: {e}; write it with python -m euchre_agents.teacher") from None
    if args.kl_coef > 0 and not args.init_checkpoint:
        raise ConfigError("--kl-coef > 0 needs --init-checkpoint: the reference policy the KL term keeps the learner close to")
    if args.init_checkpoint:
        check_compatible(read_checkpoint(args.init_checkpoint), engine, f"--init-checkpoint {args.init_checkpoint!r}")


def check_args(args: Args, checkpoint: dict[str, Any] | None) -> None:
    """Every option checked before anything is written; a ConfigError names the first bad one and the fix."""
    check_numbers(args)
    engine = check_game(args)
    check_device(args.device)
    check_opponents(args, engine)
    check_stage(args, engine)
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


def train_command() -> str:
    """How this run was started, as a hint spells it: `python train.py` in a checkout, `euchre-train` installed."""
    name = tool_name("train.py")
    if name != "train.py":
        return name
    script = sys.argv[0]
    return f"{python_command()} {script if script.endswith('.py') else 'train.py'}"


def announce(args: Args) -> None:
    """Say at the start where the run's logs and checkpoints go, and how to watch them."""
    run_dir = run_folder(args)
    watch = command("tensorboard")
    print(
        f"{tool_name('train.py')}: run {args.run_name}: TensorBoard logs in {run_dir}, checkpoints in {run_dir / 'checkpoints'} "
        f"(every {args.save_interval} update{'s' * (args.save_interval != 1)} and at the end)\n"
        f"{tool_name('train.py')}: watch it with: {watch} --logdir {args.runs_dir}",
        flush=True,
    )


def interrupted_message(args: Args | None) -> str:
    """What to tell a user who pressed Ctrl-C: the exact command that continues the run, if it can be."""
    if args is None:
        return f"{tool_name('train.py')}: interrupted before training started; nothing was written"
    latest = run_folder(args) / "checkpoints" / "latest.pt"
    if not latest.exists():
        return f"{tool_name('train.py')}: interrupted before the run's first checkpoint; nothing to resume in {run_folder(args)}"
    return f"{tool_name('train.py')}: interrupted; continue the run with: {train_command()} --resume {latest}"


def main(argv: list[str] | None = None) -> None:
    """train.py's command line: check every option, then train; one line and exit status 2 for a bad input."""
    args = None
    try:
        args, checkpoint = parse_args(argv)
        if args.stage not in STAGES:
            raise ConfigError(f"--stage {args.stage!r} is not one of {', '.join(STAGES)}")
        if checkpoint is not None and checkpoint.get("stage", "ppo") != args.stage:
            raise ConfigError(f"--resume {args.resume!r} is a {checkpoint.get('stage', 'ppo')} checkpoint, not a {args.stage} one")
        args = dataclasses.replace(args, run_name=args.run_name or f"{args.stage}__{args.seed}__{int(time.time())}")
        check_args(args, checkpoint)
        if args.overwrite and run_folder(args).exists():
            shutil.rmtree(run_folder(args))
        announce(args)
        (distill if args.stage == "distill" else train)(dataclasses.replace(args, overwrite=False), checkpoint)
    except (ConfigError, CheckpointError, RulesError) as e:
        print(f"{tool_name('train.py')}: error: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print(interrupted_message(args), file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
