"""train.py's options: the `Args` dataclass (its field docstrings are `--help`) and how a command line,
a preset and a resumed checkpoint's config stack into one `Args`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from euchre_agents.checkpoint import RESUME, read_checkpoint
from euchre_agents.registry import parse_weighted as agents_parse_weighted
from euchre_lab.cli import OptionError, coerce, given_options, layered, option_parser, option_types, read_options

SCRIPT = "train.py"
SELF = "self"
POOL = "pool"
EXPLOIT = "exploit"
STAGES = ("ppo", "distill", EXPLOIT)
INIT_TARGET = "target"
INIT_SCRATCH = "scratch"
EXPLOIT_INITS = (INIT_TARGET, INIT_SCRATCH)
DEFAULT_PRESET = "configs/ppo.yaml"


@dataclass
class Args:
    """train.py's options for the ppo, distill and exploit stages: each field is a flag, its docstring the flag's help."""

    config: str = DEFAULT_PRESET
    """YAML preset whose keys are these options (a relative path is also looked up next to train.py)"""
    stage: str = "ppo"
    """ppo: PPO self-play (regularised fine-tuning with init_checkpoint and kl_coef); distill: supervised learning on teacher data; exploit: PPO best response to a frozen --target, then a match against it (configs/exploit.yaml); make: make an agent by the method of configs/recipe.yaml (its options: train.py --stage make --help)"""
    run_name: str = ""
    """run folder under runs_dir for TensorBoard logs and checkpoints; empty: {stage}__{seed}__{unix time}"""
    runs_dir: str = "runs"
    """folder that holds the run folders"""
    resume: str = ""
    """checkpoint to continue exactly (bit for bit on CPU); its config is used, and options given here override it"""
    seed: int = 1
    """seed of the deals, the sampled actions, the opponent draws and the minibatches"""
    device: str = "auto"
    """torch device: auto (cuda when present, else cpu), cpu, cuda, cuda:1, ..."""
    torch_threads: int = 2
    """CPU threads for torch (0: torch's default); 1 when other jobs share a 2-core machine"""
    progress: bool = True
    """show a progress bar with samples per second and time left"""

    rules: dict = field(default_factory=dict)
    """table rules that differ from euchre_env.Rules' defaults: key=value items or a YAML mapping, e.g. deck=32 joker=true or "{deck: 32}" """
    episode: str = "hand"
    """what one episode is: hand, game or rubber"""
    reward: str = "points"
    """points: each hand's point margin for the seat's side; win: +1/-1 when the episode ends"""

    total_timesteps: int = 10_000_000
    """environment steps (one decision by any seat, learner or opponent) in the whole run"""
    total_decisions: int = 0
    """ppo stage: when above 0, the budget instead of total_timesteps: the run ends after the update in which the learner's own decisions (not an opponent's) reach this many, and anneal_lr decays over them"""
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
    init_temperature: float = 1.0
    """divide init_checkpoint's policy logits by this (its greedy play unchanged), for the learner and the KL reference alike: below 1, sampling plays closer to the greedy policy (the shipped distilled policy sampled at 1 loses 1.0 point per hand to its greedy play)"""
    kl_coef: float = 0.0
    """weight of KL(learner || reference policy) in the PPO loss; the reference is init_checkpoint's policy, frozen"""
    value_warmup_updates: int = 0
    """first updates that train only the value head, the trunk and policy head frozen, on rollouts of the starting policy (so that PPO's first advantages are not noise); 0: none"""

    teacher_data: str = ""
    """distill (required): folder written by `python -m euchre_lab.training.teacher`, or several, comma-separated (each one's last shards are held out)"""
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
    distill_bf16: bool = False
    """distill: the network's passes in bfloat16 (torch autocast; weights, optimizer and losses stay float32): about twice the samples/s on a CPU with AMX, which it needs (with AVX512-BF16 alone it is slower than float32)"""

    opponent_mix: str = "self=0.6,pool=0.2,heuristic=0.2"
    """per-game draw of who the learner plays: self (it plays all four seats), pool (a past snapshot of itself), or any agent spec (random, heuristic, pimc, ...; no commas), with weights; the exploit stage plays its --target alone"""
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

    target: str = ""
    """exploit (required): the frozen bot a best-response team is trained against, any agent spec (heuristic, pimc, ppo:PATH, search, ...); it is the whole opponent mix"""
    exploit_init: str = INIT_SCRATCH
    """exploit: target (start from the target's own network: ppo, ppo:PATH, search, search:PATH) or scratch (a fresh network of hidden_size x num_layers); it sets init_checkpoint"""
    target_init_options: dict = field(default_factory=dict)
    """exploit with --exploit-init target: options that replace the preset's when the learner starts from the target's network, a YAML mapping such as {learning_rate: 0.00005, clip_coef: 0.1}; the command line still overrides them"""
    exploit_pairs: int = 10_000
    """exploit: duplicate pairs (two hands each, the seats swapped) of the final match of the exploiter against the target"""
    exploit_seed: int = 24102
    """exploit: seed of the final match's deals (keep it apart from every seed used to train or choose a bot)"""
    workers: int = 1
    """exploit: processes that play the final match (its result does not depend on them)"""
    overwrite: bool = False
    """replace an existing run folder of the same name (its checkpoints and logs are deleted first); command line only"""


COMMAND_LINE_ONLY = ("overwrite",)
"""Options a preset or a resumed checkpoint's config never sets: deleting a run takes an explicit flag."""

OPTION_NAMES = frozenset(option_types(Args))


def read_config(path: str) -> dict[str, Any]:
    """A YAML preset's options, checked against `Args`."""
    return read_options(path, Args, DEFAULT_PRESET, command_line_only=COMMAND_LINE_ONLY)


def parse_args(argv: list[str] | None = None, description: str = "") -> tuple[Args, dict[str, Any] | None]:
    """Args from defaults < the preset (or the resumed checkpoint's config) < the command line; with the
    resumed checkpoint (read once, here), if any."""
    cli = given_options(option_parser(Args, SCRIPT, description), Args, argv)
    values = dataclasses.asdict(Args())
    checkpoint = None
    if cli.get("resume"):
        checkpoint = read_checkpoint(cli["resume"], RESUME)
        saved = {k: v for k, v in checkpoint["config"].items() if k in OPTION_NAMES and k not in COMMAND_LINE_ONLY}
        values = layered(values, saved)
    if checkpoint is None or "config" in cli:
        values = layered(values, read_config(cli.get("config", values["config"])))
        values = layered(values, target_init_overrides(layered(values, cli)))
    return Args(**layered(values, cli)), checkpoint


NOT_INIT_OPTIONS = ("config", "stage", "run_name", "runs_dir", "resume", "target", "exploit_init", "target_init_options",
                    *COMMAND_LINE_ONLY)
"""Options `target_init_options` may not set: what names the run and the probe itself."""


def target_init_overrides(values: dict[str, Any]) -> dict[str, Any]:
    """`target_init_options`, typed, when the options describe an exploit run that starts from the target's network;
    else nothing."""
    if values["stage"] != EXPLOIT or values["exploit_init"] != INIT_TARGET:
        return {}
    given = values["target_init_options"]
    refused = sorted(set(given) - (OPTION_NAMES - set(NOT_INIT_OPTIONS)))
    if refused:
        raise OptionError(f"target_init_options: {refused} are not options it can set (train.py --help lists them; "
                          f"{', '.join(NOT_INIT_OPTIONS)} are not among them)")
    kinds = option_types(Args)
    return {name: coerce(name, value, kinds[name]) for name, value in given.items()}


def parse_weighted(text: str, option: str) -> list[tuple[str, float]]:
    """`self=0.6,pool=0.2,heuristic=0.2` -> [(name, number)]; a name may hold `=` but no comma."""
    try:
        return agents_parse_weighted(text, option)
    except ValueError as e:
        raise OptionError(str(e)) from None


def opponent_mix(args: Args) -> list[tuple[str, float]]:
    """Who the PPO learner plays, with probabilities: the target alone in the exploit stage, else --opponent-mix."""
    return [(args.target, 1.0)] if args.stage == EXPLOIT else parse_mix(args.opponent_mix)


def parse_mix(text: str) -> list[tuple[str, float]]:
    """The opponent mix with its weights normalized to probabilities."""
    mix = parse_weighted(text, "opponent_mix")
    total = sum(w for _, w in mix)
    if total <= 0:
        raise OptionError(f"opponent_mix={text!r} needs a positive total weight")
    return [(n, w / total) for n, w in mix]


def eval_opponents(args: Args) -> list[tuple[str, float]]:
    """The evaluation opponents with the hands each match plays."""
    return parse_weighted(args.eval_opponents, "eval_opponents")


def teacher_folders(args: Args) -> list[str]:
    """--teacher-data as a list of folders."""
    return [folder.strip() for folder in args.teacher_data.split(",") if folder.strip()]
