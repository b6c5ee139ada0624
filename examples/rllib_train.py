"""Multi-agent PPO for Euchre with RLlib (new API stack), on a local Ray or a cluster.

    pip install -e ".[ray]"
    python examples/rllib_train.py                                  # configs/rllib_ppo.yaml
    python examples/rllib_train.py --policies team --iterations 50  # one policy per partnership
    python examples/rllib_train.py --address auto --num-env-runners 16   # on a running cluster
    python examples/rllib_train.py --total-decisions 1000000 --run-dir runs/rllib_1m     # a budget of env steps
    python examples/rllib_train.py --total-decisions 5000000 --run-dir runs/rllib_1m --resume runs/rllib_1m/checkpoint
    python evaluate.py rllib:runs/rllib/checkpoint heuristic --hands 2000
    python evaluate.py --task standard-v1 rllib:runs/rllib_1m/policy_1000000/shared

The env is `euchre_v0.env()` wrapped by RLlib's `PettingZooEnv`; `euchre_agents.rllib.EuchreRLModule` masks
illegal actions in its logits, so none is ever sampled (the engine raises if one were). With
`--policies shared` all four seats train one policy (self-play); with `team` the partnerships train
`team_0` and `team_1`, each against the other. The checkpoint (an `Algorithm.save_to_path` folder) is
written to `<run_dir>/checkpoint` every --save-interval iterations and at the end, and plays in evaluate.py as
`rllib:PATH` (`rllib:PATH,policy=team_0`); at the end each policy's module is also copied to
`<run_dir>/policy_<env steps>/<policy id>/`, the policy at that many env steps, which a later resume leaves as it
is. `--resume CHECKPOINT` continues a run (its weights, optimizer, counters and iteration: RLlib's
`restore_from_path`) given the options it was started with; `--iterations` and `--total-decisions` count the whole
run. Prints env steps (one decision by any seat, as in train.py; with `--policies shared` each one a decision of
the learner's) per second after every iteration. The
engine and the bots reach remote env runners through Ray's runtime_env, and Ray is joined or started
as `evaluate.py --ray` does it (`euchre_lab.evaluation.backends.connect_ray`).
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout: the package's modules sit next to this folder

from euchre_env.extras import MissingExtraError, require  # noqa: E402
from euchre_lab.cli import (  # noqa: E402
    OptionError, Range, above, at_least, between, check_ranges, exit_from, fail, given_options, layered, option_parser, read_options,
)

SCRIPT = "examples/rllib_train.py"
"""How the trainer names itself in its one-line errors."""

try:
    require("ray", "ray", "torch", what="RLlib training")
except MissingExtraError as missing:
    sys.exit(fail(SCRIPT, missing))
from euchre_agents import rllib  # noqa: E402
from euchre_lab.evaluation.backends import RAY_LOCAL, connect_ray  # noqa: E402
from euchre_lab.training.train_checks import check_game  # noqa: E402

EXAMPLE = "configs/rllib_ppo.yaml"
"""The preset that a missing --config's error points to (and the default one)."""
CHECKPOINT = "checkpoint"


@dataclass
class Args:
    """The RLlib trainer's options: defaults < the --config preset < the command line (field docstrings are its --help)."""

    config: str = EXAMPLE
    """YAML preset whose keys are these options (a relative path is also looked up in the repository)"""
    run_dir: str = "runs/rllib"
    """folder for the checkpoint (<run_dir>/checkpoint) and the policies at the end of each session (<run_dir>/policy_<env steps>)"""
    resume: str = ""
    """checkpoint folder to continue (<run_dir>/checkpoint); give the options the run was started with"""
    address: str = ""
    """Ray cluster to run on (`auto`, `HOST:PORT`); empty: start a local Ray for the run"""
    num_cpus: int = 2
    """CPUs of the local Ray (ignored with --address)"""
    seed: int = 1
    """seed of RLlib's env runners and learners"""
    rules: dict = field(default_factory=dict)
    """table rules that differ from euchre_env.Rules' defaults, e.g. "{deck: 32}" """
    episode: str = "hand"
    """what one episode is: hand, game or rubber"""
    reward: str = "points"
    """points: each hand's point margin; win: +1/-1 when the episode ends"""
    policies: str = "shared"
    """shared: one policy for all four seats; team: one policy per partnership (team_0, team_1)"""
    iterations: int = 20
    """training iterations in the whole run (each samples train_batch_size env steps, then updates)"""
    total_decisions: int = 0
    """when above 0, the run's budget instead of --iterations: it ends after the iteration whose env steps (decisions by
    any seat) reach this many"""
    save_interval: int = 10
    """iterations between checkpoints (one is always written at the end)"""
    train_batch_size: int = 4000
    """env steps per iteration"""
    minibatch_size: int = 500
    """agent steps per SGD minibatch"""
    num_epochs: int = 4
    """passes over each iteration's batch"""
    lr: float = 3e-4
    """Adam learning rate"""
    gamma: float = 1.0
    """discount per decision of the same seat"""
    lambda_: float = 0.95
    """lambda of generalized advantage estimation"""
    entropy_coeff: float = 0.01
    """entropy bonus coefficient"""
    num_env_runners: int = 0
    """remote env runner actors (0 samples in the driver)"""
    num_envs_per_env_runner: int = 16
    """envs stepped together by each env runner"""
    hidden_size: int = 256
    """width of the network's hidden layers"""
    num_layers: int = 2
    """hidden layers of the trunk shared by the policy and value heads"""
    canonical_suits: bool = True
    """relabel suits so that trump (before it is made, the upcard's suit) is always the same suit"""
    torch_threads: int = 1
    """CPU threads for torch in this process (the driver samples and learns); 0 keeps torch's default"""


RANGES = {
    **{name: at_least(1) for name in ("num_cpus", "iterations", "train_batch_size", "minibatch_size", "num_epochs",
                                      "num_envs_per_env_runner", "hidden_size", "num_layers", "save_interval")},
    "num_env_runners": at_least(0), "total_decisions": at_least(0), "torch_threads": at_least(0), "lr": above(0),
    "gamma": Range(0, 1, above=True),
    "lambda_": between(0, 1), "entropy_coeff": at_least(0),
}
"""The range of each count, rate and coefficient."""


def preset(given: dict[str, Any]) -> dict[str, Any]:
    """The --config preset's options; a relative path missing here is looked up in the repository, and a
    missing default preset (not given) is no preset."""
    path = Path(given.get("config", Args.config))
    if not path.exists() and (ROOT / path).exists():
        path = ROOT / path
    if not path.exists() and "config" not in given:
        return {}
    return read_options(str(path), Args, EXAMPLE, command_line_only=("config",))


def checked(args: Args) -> Args:
    """`args`, or a ValueError in one line naming the option that makes no sense (here, not inside an env runner)."""
    check_game(args)
    rllib.policy_ids(args.policies)
    check_ranges(args, RANGES)
    checkpoint = Path(args.run_dir) / CHECKPOINT
    if args.resume and not (Path(args.resume) / rllib.MODULE_FILE).is_file():
        raise OptionError(f"--resume {args.resume}: not an RLlib checkpoint folder; give the <run_dir>/checkpoint a run wrote")
    if not args.resume and checkpoint.exists():
        raise OptionError(f"{args.run_dir} already holds a run; continue it with --resume {checkpoint}, or choose another --run-dir")
    return args


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Args from defaults, then the --config preset, then the command line (sys.argv's when None)."""
    parser = option_parser(Args, SCRIPT, __doc__.split("\n\n")[0])
    given = given_options(parser, Args, argv)
    return checked(Args(**layered(dataclasses.asdict(Args()), preset(given), given)))


def ppo_config(args: Args) -> Any:
    """RLlib's PPOConfig for the env, the masked RLModule and the policy mapping."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    register_env(rllib.ENV_NAME, rllib.make_env)
    env_config = {"rules": args.rules, "episode": args.episode, "reward": args.reward}
    model = rllib.module_config(env_config, args.hidden_size, args.num_layers, args.canonical_suits)
    ids = rllib.policy_ids(args.policies)
    specs = {i: RLModuleSpec(module_class=rllib.EuchreRLModule, model_config=model) for i in ids}
    return (
        PPOConfig()
        .environment(rllib.ENV_NAME, env_config=env_config, disable_env_checking=True)  # its check plays unmasked actions
        .framework("torch")
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=args.num_envs_per_env_runner)
        .learners(num_learners=0)
        .multi_agent(policies=set(ids), policy_mapping_fn=rllib.policy_mapping(args.policies))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.num_epochs,
            lr=args.lr,
            gamma=args.gamma,
            lambda_=args.lambda_,
            entropy_coeff=args.entropy_coeff,
        )
        .debugging(seed=args.seed)
    )


def sampled(algo: Any) -> int:
    """The env steps the run has sampled, a restored run's included."""
    from ray.rllib.utils.metrics import ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME

    return int(algo.metrics.peek((ENV_RUNNER_RESULTS, NUM_ENV_STEPS_SAMPLED_LIFETIME), default=0))


def save(algo: Any, folder: Path) -> None:
    """`algo.save_to_path(folder)`, the old checkpoint kept until the new one is whole."""
    new, old = folder.with_name(folder.name + ".new"), folder.with_name(folder.name + ".old")
    algo.save_to_path(str(new))
    if folder.exists():
        folder.rename(old)
    new.rename(folder)
    shutil.rmtree(old, ignore_errors=True)


def export_policies(checkpoint: Path, run_dir: Path, steps: int) -> Path:
    """Copy each policy's module out of the checkpoint into <run_dir>/policy_<steps>/ (rllib:<that>/<policy id> plays
    it), the folder whole or absent."""
    folder, partial = run_dir / f"policy_{steps}", run_dir / f".policy_{steps}.tmp"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(checkpoint / rllib.MODULE_PATH, partial)
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return folder


def train(args: Args) -> Path:
    """Train until the budget (--iterations, or --total-decisions) is spent, printing env steps/s; save and return the
    checkpoint folder."""
    import ray

    if args.torch_threads > 0:
        import torch

        torch.set_num_threads(args.torch_threads)
    started = connect_ray(args.address or RAY_LOCAL, num_cpus=args.num_cpus)  # ships the code, bounds the wait
    try:
        algo = ppo_config(args).build_algo()
        if args.resume:
            try:
                algo.restore_from_path(str(Path(args.resume).resolve()))
            except Exception as e:  # RLlib raises many kinds for a checkpoint of other options
                first_line = (str(e).splitlines() or [""])[0]
                raise OptionError(f"--resume {args.resume}: RLlib cannot restore it ({type(e).__name__}: {first_line}); "
                                  "give the options the run was started with") from None
        checkpoint = Path(args.run_dir).resolve() / CHECKPOINT
        start, steps = time.perf_counter(), sampled(algo)
        first = steps
        while steps < args.total_decisions if args.total_decisions else algo.iteration < args.iterations:
            result = algo.train()
            steps = int(result["num_env_steps_sampled_lifetime"])
            returns = result["env_runners"].get("module_episode_returns_mean", {})
            shown = "  ".join(f"{k} {v:+.3f}" for k, v in sorted(returns.items()))
            rate = (steps - first) / (time.perf_counter() - start)
            print(f"iteration {algo.iteration}: {steps} env steps, {rate:,.0f} env steps/s; mean return {shown}", flush=True)
            if algo.iteration % args.save_interval == 0:
                save(algo, checkpoint)
        save(algo, checkpoint)
        policies = export_policies(checkpoint, Path(args.run_dir), steps)
        algo.stop()
        print(f"done: {steps} env steps, {steps - first} of them in {time.perf_counter() - start:.1f} s; checkpoint in "
              f"{checkpoint}; the policies at {steps} env steps in {policies}", flush=True)
        return checkpoint
    finally:
        if started:
            ray.shutdown()


def main(argv: Sequence[str] | None = None) -> int:
    """Train from the command line; 0 on success, 2 on a bad option."""
    try:
        args = parse_args(argv)
        train(args)
    except (ValueError, OSError) as error:  # OptionError is a ValueError, ConnectionError an OSError
        return fail(SCRIPT, error)
    return 0


if __name__ == "__main__":
    exit_from(main, SCRIPT, "the checkpoint folder, written every --save-interval iterations, is kept: the same command with --resume RUN_DIR/checkpoint continues from it")
