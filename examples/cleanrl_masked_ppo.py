"""Masked PPO self-play on the batched vector env, in one file that reads top to bottom (CleanRL's ppo.py, for Euchre).

    python examples/cleanrl_masked_ppo.py                                      # standard-v1, 1M learner decisions
    python examples/cleanrl_masked_ppo.py --seed 2 --run-name cleanrl_s2 --total-decisions 5000000
    python examples/cleanrl_masked_ppo.py --resume runs/cleanrl_s2/checkpoint.pt --total-decisions 20000000
    tensorboard --logdir runs
    python evaluate.py --task standard-v1 runs/cleanrl_s2/policy_5000000/agent.py:agent --out results/cleanrl_s2

What it trains: one policy that plays all four seats of every game of `EuchreVectorEnv(task=...)`. So every env
step is one of the learner's own decisions, and `--total-decisions` counts env steps as CleanRL's `global_step`
does. Self-play, not the task's heuristic partner and opponents: the vector env has no seats for bots, and the
sb3-contrib baseline (examples/sb3_maskable_ppo.py) already learns beside them.

Advantages: the seats take turns, so the steps of one game row belong to different seats. Euchre is zero-sum
between the partnerships and partners share their points, so the value of the next decision, seen from the seat
that acts now, is +V when it or its partner acts next and -V when an opponent does: CleanRL's GAE runs along
each game row with that sign. The reward of a step is the acting seat's points when the step ends the hand.

Outputs, in runs/<run-name>/: TensorBoard events; `checkpoint.pt` every --save-interval iterations and at the end
(the networks, the optimizer, the games in progress and every random stream: `--resume` continues bit for bit on
CPU); and once the budget is spent, `policy_<decisions>/` with the actor's weights and `agent.py`, the outside bot
that plays them greedily (`euchre_agents.outside.write_weights_bot`), for `evaluate.py --task`. The learning rate
is constant unless --anneal-lr, so one run continued to 1M, 5M and 20M decisions gives the policy at each budget.

Options: the lab's command-line layer (`euchre_lab.cli`), as every tool of the lab takes them: an `Args` dataclass
whose field docstrings are `--help`, and one line with exit status 2 for a bad option, as CleanRL's tyro does.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout: the package's modules sit next to this folder

from euchre_agents.atomic import write_atomic  # noqa: E402
from euchre_agents.base import Agent, file_sha256  # noqa: E402
from euchre_agents.outside import write_weights_bot  # noqa: E402
from euchre_env import Engine, EuchreVectorEnv, EuchreState, get_task  # noqa: E402
from euchre_lab.cli import (  # noqa: E402
    OptionError, above, at_least, between, check_ranges, exit_from, fail, flag, given_options, layered, option_parser,
)

SCRIPT = "examples/cleanrl_masked_ppo.py"
CHECKPOINT = "checkpoint.pt"
ACTOR = "actor.pt"
MASKED_LOGIT = -1e8
"""The logit of an illegal action: its probability is exactly zero."""


@dataclass
class Args:
    """The trainer's options (field docstrings are its --help)."""

    task: str = "standard-v1"
    """the task whose rules the games play (evaluate.py --list-tasks)"""
    run_name: str = "cleanrl"
    """run folder under runs_dir: TensorBoard events, checkpoint.pt and policy_<decisions>/"""
    runs_dir: str = "runs"
    """folder that holds the run folders"""
    resume: str = ""
    """checkpoint.pt to continue exactly; its options are used, and options given here override them"""
    seed: int = 1
    """seed of the deals, the sampled actions and the minibatches"""
    torch_threads: int = 1
    """CPU threads for torch (0: torch's default)"""
    total_decisions: int = 1_000_000
    """the learner's decisions in the whole run (every env step is one)"""
    num_envs: int = 500
    """games stepped together"""
    num_steps: int = 40
    """steps of every game per rollout; the default 500 x 40 = 20,000 divides 1M, 5M and 20M"""
    learning_rate: float = 2.5e-4
    """Adam learning rate"""
    anneal_lr: bool = False
    """decay the learning rate linearly to zero over total_decisions (a run then serves one budget only)"""
    gamma: float = 1.0
    """discount per decision"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    num_minibatches: int = 4
    """minibatches per epoch"""
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
    hidden_size: int = 256
    """width of the two hidden layers of the actor and of the critic"""
    save_interval: int = 10
    """iterations between checkpoints (one is always written at the end)"""


RANGES = {
    **dict.fromkeys(("total_decisions", "num_envs", "num_steps", "learning_rate", "num_minibatches", "update_epochs",
                     "clip_coef", "max_grad_norm", "hidden_size", "save_interval"), above(0)),
    **dict.fromkeys(("seed", "torch_threads", "ent_coef", "vf_coef"), at_least(0)),
    **dict.fromkeys(("gamma", "gae_lambda"), between(0, 1)),
}
KEPT_ON_RESUME = ("task", "num_envs", "hidden_size")
"""Options a resumed run cannot change: its games and its networks are of these sizes."""


def read_checkpoint(path: str) -> dict[str, Any]:
    """A checkpoint this script wrote, or an OptionError naming the file."""
    try:
        checkpoint = torch.load(path, weights_only=False)  # this script's own file: it holds numpy arrays and RNG states
    except FileNotFoundError:
        raise OptionError(f"--resume {path}: no such file; give the checkpoint.pt of a run folder") from None
    except Exception as e:
        raise OptionError(f"--resume {path}: not a checkpoint ({type(e).__name__}); give the checkpoint.pt of a run folder") from None
    if not isinstance(checkpoint, dict) or "args" not in checkpoint or "games" not in checkpoint:
        raise OptionError(f"--resume {path}: not a checkpoint of {SCRIPT}; give the checkpoint.pt of one of its run folders")
    return checkpoint


def parse_args(argv: Sequence[str] | None = None) -> tuple[Args, dict[str, Any] | None]:
    """Args from the defaults < the resumed checkpoint's options < the command line; with the checkpoint, if any."""
    given = given_options(option_parser(Args, SCRIPT, __doc__.split("\n\n")[0]), Args, argv)
    checkpoint = None
    values = dataclasses.asdict(Args())
    if given.get("resume"):
        checkpoint = read_checkpoint(given["resume"])
        values = layered(values, checkpoint["args"])
        changed = [name for name in KEPT_ON_RESUME if name in given and given[name] != checkpoint["args"][name]]
        if changed:
            raise OptionError(f"--resume keeps the run's {', '.join(changed)}; drop {' '.join(map(flag, changed))}")
    args = Args(**layered(values, given))
    check_ranges(args, RANGES)
    get_task(args.task)
    if args.num_envs * args.num_steps % args.num_minibatches:
        raise OptionError(f"--num-minibatches {args.num_minibatches} does not divide a rollout of "
                          f"{args.num_envs * args.num_steps} decisions")
    if args.total_decisions < args.num_envs * args.num_steps:
        raise OptionError(f"--total-decisions {args.total_decisions} is less than one rollout of {args.num_envs * args.num_steps}")
    run_dir = Path(args.runs_dir) / args.run_name
    if checkpoint is None and (run_dir / CHECKPOINT).exists():
        raise OptionError(f"{run_dir} already holds a run; continue it with --resume {run_dir / CHECKPOINT}, or choose another --run-name")
    return args, checkpoint


# ---------------------------------------------------------------- the networks


def layer_init(layer: nn.Linear, std: float = np.sqrt(2), bias_const: float = 0.0) -> nn.Linear:
    """CleanRL's orthogonal initialisation."""
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


def mlp(inputs: int, hidden: int, outputs: int, out_std: float) -> nn.Sequential:
    """Two tanh hidden layers, then a linear output."""
    return nn.Sequential(
        layer_init(nn.Linear(inputs, hidden)), nn.Tanh(),
        layer_init(nn.Linear(hidden, hidden)), nn.Tanh(),
        layer_init(nn.Linear(hidden, outputs), std=out_std),
    )


class ActorCritic(nn.Module):
    """A separate actor and critic, as CleanRL's; the actor's logits of illegal actions are MASKED_LOGIT."""

    def __init__(self, observation_size: int, num_actions: int, hidden: int):
        super().__init__()
        self.critic = mlp(observation_size, hidden, 1, out_std=1.0)
        self.actor = mlp(observation_size, hidden, num_actions, out_std=0.01)

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        """(n,) the value of each observation, for the seat that sees it."""
        return self.critic(x).squeeze(-1)

    def get_action_and_value(self, x: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        """A legal action sampled from the masked policy (or the given one), its log-probability, the entropy, the value."""
        logits = torch.where(mask, self.actor(x), MASKED_LOGIT)
        probs = Categorical(logits=logits, validate_args=False)
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.get_value(x)


# ---------------------------------------------------------------- the trained policy as a bot


class GreedyActor(Agent):
    """The trained actor as a bot: the most likely legal action."""

    name = "cleanrl_masked_ppo"

    def __init__(self, engine: Engine, actor: nn.Sequential, seed: int | None = None):
        super().__init__(engine, seed)
        self.actor = actor.eval()

    @torch.no_grad()
    def act(self, obs, mask, state=None, rows=None):
        """The argmax of the masked logits, row by row."""
        logits = self.actor(torch.as_tensor(np.asarray(obs, np.float32)))
        return torch.where(torch.as_tensor(np.asarray(mask, bool)), logits, MASKED_LOGIT).argmax(1).numpy()


def load_agent(path: Path, engine: Engine, seed: int | None = None) -> GreedyActor:
    """The actor saved at `path` (a policy_<decisions>/actor.pt) as a bot for `engine`; a ValueError for other rules."""
    saved = torch.load(path, weights_only=True)
    if engine.rules != get_task(saved["task"]).rules:
        raise ValueError(f"{path} was trained on {saved['task']}; these are other rules")
    actor = mlp(engine.observation_size, saved["hidden_size"], engine.num_actions, out_std=0.01)
    actor.load_state_dict(saved["actor"])
    agent = GreedyActor(engine, actor, seed)
    agent.weights_sha256 = file_sha256(path)
    return agent


def export_policy(run_dir: Path, agent: ActorCritic, args: Args, decisions: int) -> str:
    """Write policy_<decisions>/ (the actor's weights and the bot file that plays them); the bot spec."""
    folder = run_dir / f"policy_{decisions}"
    folder.mkdir(parents=True, exist_ok=True)
    saved = {"actor": agent.actor.state_dict(), "hidden_size": args.hidden_size, "task": args.task, "decisions": decisions}
    write_atomic(folder / ACTOR, lambda f: torch.save(saved, f))
    return write_weights_bot(folder, __file__, load_agent.__name__, ACTOR)


# ---------------------------------------------------------------- training, stage by stage


def start_games(args: Args, envs: EuchreVectorEnv, agent: ActorCritic, optimizer: torch.optim.Optimizer,
                rng: np.random.Generator, checkpoint: dict[str, Any] | None) -> tuple[int, int, dict[str, Any]]:
    """(iteration, global_step, the decisions waiting): fresh games, or everything the checkpoint restores."""
    if checkpoint is None:
        next_obs, info = envs.reset(seed=args.seed)
        return 0, 0, {"obs": next_obs, "mask": info["action_mask"], "seat": info["to_play"], "done": np.zeros(args.num_envs, bool)}
    agent.load_state_dict(checkpoint["agent"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    envs.load(EuchreState(**checkpoint["games"]))
    rng.bit_generator.state = checkpoint["numpy_rng"]
    torch.set_rng_state(checkpoint["torch_rng"])
    seat = envs.to_play.astype(np.int64)
    now = {"obs": envs.observe(seat), "mask": envs.action_masks.copy(), "seat": seat, "done": checkpoint["next_done"]}
    return checkpoint["iteration"], checkpoint["global_step"], now


def collect(args: Args, envs: EuchreVectorEnv, agent: ActorCritic, buf: dict[str, torch.Tensor], now: dict[str, Any]) -> dict[str, Any]:
    """Step every game num_steps times, one decision each, whichever seat is to act; the decisions waiting next."""
    for step in range(args.num_steps):
        buf["obs"][step] = torch.as_tensor(now["obs"])
        buf["masks"][step] = torch.as_tensor(now["mask"])
        buf["seats"][step] = torch.as_tensor(now["seat"])
        buf["dones"][step] = torch.as_tensor(now["done"])
        with torch.no_grad():
            action, logprob, _, value = agent.get_action_and_value(buf["obs"][step], buf["masks"][step])
        buf["values"][step], buf["actions"][step], buf["logprobs"][step] = value, action, logprob
        next_obs, seat_rewards, terminated, truncated, info = envs.step(action.numpy())
        buf["rewards"][step] = torch.as_tensor(seat_rewards[np.arange(args.num_envs), now["seat"]])  # the acting seat's points
        now = {"obs": next_obs, "mask": info["action_mask"], "seat": info["to_play"], "done": terminated | truncated}
    return now


def signed_gae(rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, seats: torch.Tensor, next_value: torch.Tensor,
               next_done: torch.Tensor, next_seat: torch.Tensor, gamma: float, gae_lambda: float) -> torch.Tensor:
    """CleanRL's GAE along each game row (steps x games), the next decision's value counted with the sign of whose it
    is: + for the same partnership (partners share their points), - for the other (what one wins the other loses)."""
    advantages = torch.zeros_like(rewards)
    lastgaelam = 0
    for t in reversed(range(rewards.shape[0])):
        if t == rewards.shape[0] - 1:
            nextnonterminal, nextvalues, following = 1.0 - next_done.float(), next_value, next_seat
        else:
            nextnonterminal, nextvalues, following = 1.0 - dones[t + 1], values[t + 1], seats[t + 1]
        sign = torch.where(following % 2 == seats[t] % 2, 1.0, -1.0)
        delta = rewards[t] + gamma * sign * nextvalues * nextnonterminal - values[t]
        advantages[t] = lastgaelam = delta + gamma * gae_lambda * sign * nextnonterminal * lastgaelam
    return advantages


def ppo_update(args: Args, agent: ActorCritic, optimizer: torch.optim.Optimizer, b: dict[str, torch.Tensor],
               rng: np.random.Generator) -> dict[str, float]:
    """update_epochs passes of clipped PPO over the flattened batch `b`; the last minibatch's losses."""
    batch_size = b["actions"].shape[0]
    minibatch_size = batch_size // args.num_minibatches
    b_inds = np.arange(batch_size)
    clipfracs = []
    for epoch in range(args.update_epochs):
        rng.shuffle(b_inds)
        for start in range(0, batch_size, minibatch_size):
            mb_inds = b_inds[start : start + minibatch_size]
            _, newlogprob, entropy, newvalue = agent.get_action_and_value(b["obs"][mb_inds], b["masks"][mb_inds], b["actions"][mb_inds])
            logratio = newlogprob - b["logprobs"][mb_inds]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > args.clip_coef).float().mean().item()]

            mb_advantages = b["advantages"][mb_inds]
            if args.norm_adv:
                mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)

            # policy loss
            pg_loss1 = -mb_advantages * ratio
            pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()

            # value loss
            v_loss_unclipped = (newvalue - b["returns"][mb_inds]) ** 2
            if args.clip_vloss:
                v_clipped = b["values"][mb_inds] + torch.clamp(newvalue - b["values"][mb_inds], -args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max(v_loss_unclipped, (v_clipped - b["returns"][mb_inds]) ** 2).mean()
            else:
                v_loss = 0.5 * v_loss_unclipped.mean()

            entropy_loss = entropy.mean()
            loss = pg_loss - args.ent_coef * entropy_loss + v_loss * args.vf_coef
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
            optimizer.step()
    return {"value_loss": v_loss.item(), "policy_loss": pg_loss.item(), "entropy": entropy_loss.item(),
            "approx_kl": approx_kl.item(), "clipfrac": float(np.mean(clipfracs))}


def main(argv: Sequence[str] | None = None) -> int:
    """Train (or continue) a run; 0 when its budget is spent, 2 with one line for a bad option."""
    from torch.utils.tensorboard import SummaryWriter  # training only: the bot that plays a policy needs no TensorBoard

    try:
        args, checkpoint = parse_args(argv)
    except (OptionError, ValueError, OSError) as error:
        return fail(SCRIPT, error)
    batch_size = args.num_envs * args.num_steps
    num_iterations = args.total_decisions // batch_size
    run_dir = Path(args.runs_dir) / args.run_name
    writer = SummaryWriter(str(run_dir))
    writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items()))

    # seeding, the env, the agent, the storage
    torch.manual_seed(args.seed)
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    rng = np.random.default_rng(args.seed)
    envs = EuchreVectorEnv(args.num_envs, task=args.task, seed=args.seed)
    engine = envs.engine
    agent = ActorCritic(engine.observation_size, engine.num_actions, args.hidden_size)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    shape = (args.num_steps, args.num_envs)
    buf = {"obs": torch.zeros((*shape, engine.observation_size)), "masks": torch.zeros((*shape, engine.num_actions), dtype=torch.bool),
           "seats": torch.zeros(shape, dtype=torch.long), "actions": torch.zeros(shape, dtype=torch.long),
           **{name: torch.zeros(shape) for name in ("logprobs", "rewards", "dones", "values")}}
    iteration, global_step, now = start_games(args, envs, agent, optimizer, rng, checkpoint)
    start_time, start_step = time.time(), global_step
    print(f"{SCRIPT}: run {run_dir}: {num_iterations} iterations of {batch_size:,} decisions, from iteration {iteration}", flush=True)

    while iteration < num_iterations:
        iteration += 1
        global_step += batch_size
        if args.anneal_lr:
            optimizer.param_groups[0]["lr"] = (1.0 - (iteration - 1.0) / num_iterations) * args.learning_rate
        now = collect(args, envs, agent, buf, now)
        with torch.no_grad():
            next_value = agent.get_value(torch.as_tensor(now["obs"]))
            advantages = signed_gae(buf["rewards"], buf["values"], buf["dones"], buf["seats"], next_value,
                                    torch.as_tensor(now["done"]), torch.as_tensor(now["seat"]), args.gamma, args.gae_lambda)
        b = {name: buf[name].reshape(batch_size, *buf[name].shape[2:]) for name in ("obs", "masks", "actions", "logprobs", "values")}
        b["advantages"] = advantages.reshape(-1)
        b["returns"] = b["advantages"] + b["values"]
        losses = ppo_update(args, agent, optimizer, b, rng)

        # logging
        var_y = np.var(b["returns"].numpy())
        explained_var = np.nan if var_y == 0 else 1 - np.var((b["returns"] - b["values"]).numpy()) / var_y
        sps = int((global_step - start_step) / (time.time() - start_time))
        for name, value in losses.items():
            writer.add_scalar(f"losses/{name}", value, global_step)
        writer.add_scalar("losses/explained_variance", explained_var, global_step)
        writer.add_scalar("charts/learning_rate", optimizer.param_groups[0]["lr"], global_step)
        writer.add_scalar("charts/SPS", sps, global_step)
        print(f"iteration {iteration}/{num_iterations}: {global_step:,} decisions, {sps:,} decisions/s", flush=True)

        # checkpoint: everything the next iteration depends on
        if iteration % args.save_interval == 0 or iteration == num_iterations:
            saved = {"args": dataclasses.asdict(args), "agent": agent.state_dict(), "optimizer": optimizer.state_dict(),
                     "iteration": iteration, "global_step": global_step, "games": dataclasses.asdict(envs.snapshot()),
                     "next_done": now["done"], "numpy_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state()}
            write_atomic(run_dir / CHECKPOINT, lambda f: torch.save(saved, f))

    writer.close()
    spec = export_policy(run_dir, agent, args, global_step)
    print(f"{SCRIPT}: done: {global_step:,} decisions; checkpoint {run_dir / CHECKPOINT}; "
          f"score it with: python evaluate.py --task {args.task} {spec}", flush=True)
    return 0


if __name__ == "__main__":
    exit_from(main, SCRIPT, "checkpoint.pt, written every --save-interval iterations, is kept: the same command with --resume RUNS_DIR/RUN_NAME/checkpoint.pt continues from it")
