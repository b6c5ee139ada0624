"""PPO self-play, in CleanRL's order: the env, the network, then per update collect a rollout,
compute advantages along each seat's stream, update, and log / checkpoint / evaluate.

Multi-agent bookkeeping: a rollout stores only the learner's decisions, each with the (game, seat)
stream it belongs to. A stream is one seat's own decisions in one game, in order; its rewards arrive
when a hand ends and are credited to that seat's latest decision, and its episode ends with the
game's episode. GAE runs along each stream (a decision's successor is the same seat's next decision
in the same game). A stream still open when the rollout ends is bootstrapped with the value of that
seat's current information state, as CleanRL bootstraps with the value of `next_obs`.

With `value_warmup_updates`, the first updates train the value head alone, on rollouts of the starting
policy, with the shared trunk and the policy head frozen (`policy_frozen`): a fine-tune from distilled
weights then starts PPO with advantages from a value that fits its own games, not noise.

The rollout reads the legal masks and seats to act from the env's `info` and other seats' views from
`env.observe`, so the env stays on its records-only fast path; only an opponent that sees every hand
(the oracle) makes it read `env.state`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical
from tqdm import tqdm

from euchre_agents.checkpoint import build_network
from euchre_agents.network import ActorCritic, sharpen_policy
from euchre_env import Engine, EuchreVectorEnv
from euchre_env.cards import NUM_SEATS
from euchre_lab.training import checkpoints
from euchre_lab.training.league import League, sample_actions
from euchre_lab.training.runs import Run, StopRequest, anneal, due, evaluate_policy, log_evaluation, save_and_stop, start_run
from euchre_lab.training.train_checks import Inputs
from euchre_lab.training.train_options import POOL, Args, opponent_mix


@dataclass
class Decisions:
    """The decision every game waits on: the acting seat's observation, its legal mask and the seat."""

    obs: np.ndarray
    mask: np.ndarray
    to_play: np.ndarray


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
        """Room for `capacity` decisions."""
        z = lambda dtype, *shape: np.zeros((capacity, *shape), dtype)  # noqa: E731
        return cls(
            z(np.float32, engine.observation_size), z(bool, engine.num_actions), z(np.int64), z(np.float32),
            z(np.float32), z(np.float32), z(bool), z(np.int64), z(np.float32),
        )

    def clear(self) -> None:
        """Empty it for the next rollout."""
        self.count, self.step_starts, self.returns_by_kind = 0, [], {}
        self.rewards[:], self.dones[:], self.next[:], self.boot[:] = 0, False, -1, 0

    def digest(self) -> str:
        """sha256 of the rollout's decisions (a resumed run must collect the same batch)."""
        c = self.count
        return checkpoints.batch_digest(
            self.obs[:c], self.mask[:c], self.actions[:c], self.logprobs[:c], self.rewards[:c], self.dones[:c], self.next[:c]
        )


# ---------------------------------------------------------------- collect


def collect_rollout(run: Run, env: EuchreVectorEnv, league: League, buf: Rollout, now: Decisions,
                    episode_return: np.ndarray) -> Decisions:
    """Step every game num_steps times, storing the learner's decisions; returns the decisions waiting next."""
    n = run.args.num_envs
    games = np.arange(n)
    last = np.full((n, NUM_SEATS), -1, np.int64)  # latest decision index of each (game, seat) stream
    buf.clear()
    for _ in range(run.args.num_steps):
        learner = league.learner_rows(now.to_play)
        actions = learner_decisions(run, buf, now, np.flatnonzero(learner), last)
        league.act(actions, learner, now.obs, now.mask, env.state if league.needs_full_state else None)
        obs, rewards, terminated, _, info = env.step(actions)
        now = Decisions(obs, info["action_mask"], info["to_play"])
        # Hand-end rewards go to each learner seat's latest decision; episode ends close the streams.
        credited = (last >= 0) & (rewards != 0)
        buf.rewards[last[credited]] += rewards[credited]
        episode_return += rewards[games, league.team]
        ended = np.flatnonzero(terminated)
        if ended.size:
            close_streams(buf, league, last, ended, episode_return)
    bootstrap_open_streams(run, env, buf, last)
    return now


def learner_decisions(run: Run, buf: Rollout, now: Decisions, rows: np.ndarray, last: np.ndarray) -> np.ndarray:
    """(N,) actions with the learner's sampled in games `rows` (stored in `buf`, linked into their streams)."""
    buf.step_starts.append(buf.count)
    idx = np.arange(buf.count, buf.count + rows.size)
    i = slice(buf.count, buf.count + rows.size)
    buf.obs[i], buf.mask[i] = now.obs[rows], now.mask[rows]
    with torch.no_grad():
        a, logp, v = sample_actions(run.net, run.tensor(buf.obs[i]), run.tensor(buf.mask[i]))
    buf.actions[i], buf.logprobs[i], buf.values[i] = a.cpu().numpy(), logp.cpu().numpy(), v.cpu().numpy()
    actions = np.zeros(run.args.num_envs, np.int64)
    actions[rows] = buf.actions[i]
    seats = now.to_play[rows]
    previous = last[rows, seats]
    buf.next[previous[previous >= 0]] = idx[previous >= 0]
    last[rows, seats] = idx
    buf.count += rows.size
    return actions


def close_streams(buf: Rollout, league: League, last: np.ndarray, ended: np.ndarray, episode_return: np.ndarray) -> None:
    """Games whose episode ended: their streams are done, their returns recorded, new opponents drawn."""
    closing = last[ended]
    buf.dones[closing[closing >= 0]] = True
    last[ended] = -1
    for g in ended[league.kind[ended] != league.self_kind]:
        buf.returns_by_kind.setdefault(int(league.kind[g]), []).append(float(episode_return[g]))
    episode_return[ended] = 0
    league.draw(ended)


@torch.no_grad()
def bootstrap_open_streams(run: Run, env: EuchreVectorEnv, buf: Rollout, last: np.ndarray) -> None:
    """Streams still open at the rollout's end take the value of their seat's current information state."""
    for seat in range(NUM_SEATS):
        open_games = np.flatnonzero(last[:, seat] >= 0)
        if open_games.size:
            seat_obs = env.observe(seat)[open_games]
            buf.boot[last[open_games, seat]] = run.net.get_value(run.tensor(seat_obs)).cpu().numpy()


# ---------------------------------------------------------------- advantages


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


def rollout_advantages(buf: Rollout, args: Args) -> np.ndarray:
    """`stream_advantages` of the rollout's decisions."""
    c = buf.count
    return stream_advantages(
        buf.rewards[:c], buf.values[:c], buf.dones[:c], buf.next[:c], buf.boot[:c], buf.step_starts, args.gamma, args.gae_lambda
    )


# ---------------------------------------------------------------- update


def masked_kl(logits: torch.Tensor, reference_logits: torch.Tensor) -> torch.Tensor:
    """(n,) KL(policy || reference) of two masked categorical policies over the same legal actions."""
    log_p, log_q = torch.log_softmax(logits, dim=1), torch.log_softmax(reference_logits, dim=1)
    return (log_p.exp() * (log_p - log_q)).sum(dim=1)


def value_loss(new_value: torch.Tensor, old_value: torch.Tensor, returns: torch.Tensor, args: Args) -> torch.Tensor:
    """PPO's value loss, clipped around the rollout's values as the reference implementation does when clip_vloss."""
    unclipped = (new_value - returns) ** 2
    if not args.clip_vloss:
        return 0.5 * unclipped.mean()
    clipped = old_value + torch.clamp(new_value - old_value, -args.clip_coef, args.clip_coef)
    return 0.5 * torch.max(unclipped, (clipped - returns) ** 2).mean()


def minibatch_loss(run: Run, t: dict[str, torch.Tensor], mb: torch.Tensor, reference: ActorCritic | None,
                   stats: dict[str, Any], clipfracs: list[float], warmup: bool = False) -> torch.Tensor:
    """The clipped PPO loss of one minibatch (plus the KL toward the reference), or in a value warm-up the value
    loss alone; its statistics into `stats`."""
    args = run.args
    logits, new_value = run.net(t["obs"][mb], t["mask"][mb])
    dist = Categorical(logits=logits, validate_args=False)
    logratio = dist.log_prob(t["actions"][mb]) - t["logprobs"][mb]
    ratio = logratio.exp()
    with torch.no_grad():
        stats["old_approx_kl"] = (-logratio).mean()
        stats["approx_kl"] = ((ratio - 1) - logratio).mean()
        clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
    mb_adv = t["advantages"][mb]
    if args.norm_adv and mb_adv.numel() > 1:
        mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
    stats["policy_loss"] = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - args.clip_coef, 1 + args.clip_coef)).mean()
    stats["value_loss"] = value_loss(new_value, t["values"][mb], t["returns"][mb], args)
    stats["entropy"] = dist.entropy().mean()
    if warmup:
        return stats["value_loss"] * args.vf_coef
    loss = stats["policy_loss"] - args.ent_coef * stats["entropy"] + stats["value_loss"] * args.vf_coef
    if reference is not None:
        with torch.no_grad():
            reference_logits, _ = reference(t["obs"][mb], t["mask"][mb])
        stats["reference_kl"] = masked_kl(logits, reference_logits).mean()
        loss = loss + args.kl_coef * stats["reference_kl"]
    return loss


@contextlib.contextmanager
def policy_frozen(net: ActorCritic) -> Iterator[None]:
    """The shared trunk and the policy head out of training while inside (no gradients, so Adam leaves them as they are):
    only the value head learns, and the policy's outputs stay exactly the same."""
    frozen = [*net.trunk.parameters(), *net.policy.parameters()]
    for p in frozen:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p in frozen:
            p.requires_grad_(True)


def ppo_update(
    run: Run, buf: Rollout, advantages: np.ndarray, rng: np.random.Generator, reference: ActorCritic | None,
    warmup: bool = False,
) -> dict[str, float]:
    """update_epochs passes of clipped PPO over the rollout's decisions (plus the KL toward the reference); in a value
    warm-up (`warmup`), the same passes train the value head alone, the policy frozen."""
    args, c = run.args, buf.count
    t = {name: run.tensor(getattr(buf, name)[:c]) for name in ("obs", "mask", "actions", "logprobs", "values")}
    t["advantages"] = run.tensor(advantages)
    t["returns"] = t["advantages"] + t["values"]
    minibatch_size = -(-c // args.num_minibatches)
    clipfracs: list[float] = []
    stats: dict[str, Any] = {}
    with policy_frozen(run.net) if warmup else contextlib.nullcontext():
        for _ in range(args.update_epochs):
            order = rng.permutation(c)
            for start in range(0, c, minibatch_size):
                mb = run.tensor(order[start : start + minibatch_size])
                loss = minibatch_loss(run, t, mb, reference, stats, clipfracs, warmup)
                run.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(run.net.parameters(), args.max_grad_norm)
                run.optimizer.step()
            if args.target_kl > 0 and not warmup and stats["approx_kl"] > args.target_kl:
                break
    out = {k: v.detach().item() for k, v in stats.items()}
    returns = advantages + buf.values[:c]
    var_y = np.var(returns)
    out["clipfrac"] = float(np.mean(clipfracs))
    out["explained_variance"] = np.nan if var_y == 0 else float(1 - np.var(returns - buf.values[:c]) / var_y)
    return out


# ---------------------------------------------------------------- log, checkpoint, evaluate


@dataclass
class Progress:
    """Where the run stands: updates and steps done, each game's running return, the decisions waiting, and the
    learner's own decisions so far."""

    update: int
    global_step: int
    episode_return: np.ndarray
    now: Decisions
    evaluation: dict[str, Any] = field(default_factory=dict)
    decisions: int = 0


@dataclass(frozen=True)
class Budget:
    """Where a PPO run ends: after `updates` updates (--total-timesteps), or, with `decisions` above 0
    (--total-decisions), after the update in which the learner's own decisions reach that many."""

    updates: int
    decisions: int = 0

    def spent(self, p: Progress) -> tuple[int, int]:
        """(spent, budget) in the budget's unit, updates or decisions: what anneal_lr decays over."""
        return (p.decisions, self.decisions) if self.decisions else (p.update, self.updates)

    def over(self, p: Progress) -> bool:
        """Whether the run has spent its budget."""
        spent, budget = self.spent(p)
        return spent >= budget

    def bar(self, p: Progress, batch_size: int, enabled: bool) -> tqdm:
        """A progress bar in the budget's unit: env steps, or the learner's decisions."""
        total, initial, unit = ((self.decisions, p.decisions, "decision") if self.decisions
                                else (self.updates * batch_size, p.global_step, "step"))
        return tqdm(total=total, initial=initial, unit=unit, unit_scale=True, disable=not enabled, dynamic_ncols=True)

    def where(self, p: Progress) -> str:
        """Where the run stands against its budget, for a log line."""
        return f"update {p.update}, {p.decisions:,}/{self.decisions:,} decisions" if self.decisions else f"update {p.update}/{self.updates}"

    def __str__(self) -> str:
        return f"updates until the learner has made {self.decisions:,} decisions" if self.decisions else f"{self.updates} updates"

    def describe(self, batch_size: int, args: Args) -> str:
        """The run's length and its rollouts, for the line that starts it."""
        return f"{self}, each of {batch_size} steps ({args.num_envs} games x {args.num_steps})"


def ppo_checkpoint(run: Run, env: EuchreVectorEnv, league: League, buf: Rollout, rng: np.random.Generator,
                   progress: Progress) -> dict[str, Any]:
    """Everything needed to continue bit for bit: model, optimizer, games in progress, pool, every random stream."""
    saved_league = league.state_dict()
    saved_league["games"]["episode_return"] = torch.from_numpy(progress.episode_return.copy())
    return {
        **checkpoints.header("ppo", run.net, run.model_kwargs, run.optimizer, dataclasses.asdict(run.args), run.engine,
                             progress.update, progress.global_step),
        **saved_league,
        "env_state": checkpoints.state_to_tensors(env.snapshot()),
        "rng": checkpoints.rng_states(rng, league.bots),
        "batch_digest": buf.digest(),
        checkpoints.LEARNER_DECISIONS: progress.decisions,
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


def show_progress(bar: tqdm, league: League, buf: Rollout, evaluation: dict[str, Any], steps: int) -> None:
    """Advance the progress bar, with the returns by opponent and the latest evaluation margins."""
    bar.update(steps)
    bar.set_postfix(
        {f"return_vs_{league.names[k]}": f"{np.mean(v):+.2f}" for k, v in buf.returns_by_kind.items()}
        | {f"eval_margin_vs_{spec}": f"{match.margin_per_hand.value:+.2f}" for spec, match in evaluation.items()},
        refresh=False,
    )


# ---------------------------------------------------------------- the driver


def start_games(run: Run, env: EuchreVectorEnv, league: League, rng: np.random.Generator,
                checkpoint: dict[str, Any] | None) -> Progress:
    """Deal the first games and draw their opponents, or restore everything from the resumed checkpoint."""
    episode_return = np.zeros(run.args.num_envs, np.float64)
    if checkpoint is None:
        league.snapshot()
        obs, info = env.reset(seed=run.args.seed)
        league.draw(np.arange(run.args.num_envs))
        return Progress(0, 0, episode_return, Decisions(obs, info["action_mask"], info["to_play"]))
    run.optimizer.load_state_dict(checkpoint["optimizer"])
    league.load_state_dict(checkpoint)
    state = checkpoints.state_from_tensors(checkpoint["env_state"])
    env.load(state)
    episode_return[:] = checkpoint["games"]["episode_return"].numpy()
    checkpoints.restore_rng_states(checkpoint["rng"], rng, league.bots)
    to_play = state.to_play.astype(np.int64)
    now = Decisions(env.observe(to_play), state.legal.copy(), to_play)
    return Progress(checkpoint["update"], checkpoint["global_step"], episode_return, now,
                    decisions=checkpoint.get(checkpoints.LEARNER_DECISIONS, 0))


def train(args: Args, inputs: Inputs) -> None:
    """Run PPO as configured (fine-tuning toward init_checkpoint's policy when kl_coef > 0); continue from
    `inputs.checkpoint` when resuming."""
    batch_size = args.num_envs * args.num_steps
    budget = Budget(args.total_timesteps // batch_size, args.total_decisions)
    env = EuchreVectorEnv(args.num_envs, inputs.engine.rules, episode=args.episode, reward=args.reward, seed=args.seed)
    run = start_run(args, inputs)
    args = run.args
    rng = np.random.default_rng(args.seed)
    league = League(run, rng)
    reference = None
    if args.kl_coef > 0:
        reference = sharpen_policy(build_network(inputs.init, run.engine), args.init_temperature).to(run.device).eval()
    p = start_games(run, env, league, rng, inputs.checkpoint)
    print(
        f"run {run.dir}: {budget.describe(batch_size, args)}, "
        f"opponents {dict(opponent_mix(args))}, device {run.device}, {run.engine.observation_size} inputs, "
        f"{run.engine.num_actions} actions",
        flush=True,
    )
    buf = Rollout.empty(batch_size, run.engine)
    start_time, start_step = time.time(), p.global_step
    bar = budget.bar(p, batch_size, args.progress)
    with StopRequest() as stop:
        while not budget.over(p):
            anneal(run, *budget.spent(p))
            p.now = collect_rollout(run, env, league, buf, p.now, p.episode_return)
            warmup = p.update < args.value_warmup_updates
            stats = ppo_update(run, buf, rollout_advantages(buf, args), rng, reference, warmup)
            p.update, p.global_step, p.decisions = p.update + 1, p.global_step + batch_size, p.decisions + buf.count
            last = budget.over(p)
            if POOL in league.names and p.update % args.pool_interval == 0:
                league.snapshot()
            log_update(run, league, buf, stats, p.global_step, (p.global_step - start_step) / (time.time() - start_time))
            if due(p.update, args.save_interval, last):
                run.save(ppo_checkpoint(run, env, league, buf, rng, p), p.update)
            if run.play_match is not None and due(p.update, args.eval_interval, last):
                with torch.random.fork_rng(devices=[]):
                    p.evaluation = evaluate_policy(run)
                log_evaluation(run, p.evaluation, p.global_step, budget.where(p))
            run.writer.flush()
            show_progress(bar, league, buf, p.evaluation, buf.count if budget.decisions else batch_size)
            if stop.requested:
                bar.close()
                save_and_stop(run, ppo_checkpoint(run, env, league, buf, rng, p), p.update)
    bar.close()
    run.writer.close()
    print(f"done: {p.global_step} steps, {p.decisions} of them the learner's decisions; checkpoints in {run.ckpt_dir}", flush=True)
