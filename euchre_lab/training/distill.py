"""Distillation (train.py's stage `distill`): supervised learning of the teacher's action values
(`euchre_agents.teacher_data`) into the actor-critic: a policy target softmax(values / T) over the
legal actions, a per-action value regression and a state value regression to the hand's outcome.

Teacher data of one or several folders is read as one data set; the last `holdout_fraction` of each
folder's shards are held out to measure the fit. A checkpoint records the shards it read, and an
epoch's order is a pure function of (seed, epoch), so a resumed run sees the same batches.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn as nn
from tqdm import tqdm

from euchre_agents.network import MASKED_LOGIT, ActorCritic
from euchre_env import Engine
from euchre_lab.training import checkpoints
from euchre_lab.cli import OptionError
from euchre_lab.training.runs import Run, StopRequest, anneal, due, evaluate_policy, log_evaluation, save_and_stop, start_run
from euchre_lab.training.train_checks import Inputs
from euchre_lab.training.train_options import Args, teacher_folders

HOLDOUT_ROWS = 1 << 16
"""At most this many held-out decisions are measured (spread evenly over the held-out shards)."""
EVAL_BATCH = 8192
LOG_INTERVAL = 50
"""Updates between the training losses written to TensorBoard."""


@dataclass
class TeacherSplit:
    """Teacher data (one or several folders, as one data set) split by shard into a training and a held-out part."""

    data: Any  # euchre_agents.teacher_data.TeacherData
    train_rows: np.ndarray
    holdout_rows: np.ndarray
    sources: list[dict[str, Any]]
    """per folder: its path, generator settings and the shards read (what a checkpoint records)"""


def checkpoint_shards(args: Args, teacher: dict[str, Any] | None) -> list[list[int] | None]:
    """The shards a resumed run reads from each folder (all the folders list, for a new run)."""
    folders = teacher_folders(args)
    if teacher is None:
        return [None] * len(folders)
    sources = teacher.get("sources") or [{"folder": folders[0], "shards": teacher["shards"]}]  # one-folder checkpoints
    if [s["folder"] for s in sources] != folders:
        raise OptionError(f"the checkpoint read teacher data from {[s['folder'] for s in sources]}; --teacher-data is {folders}")
    return [list(s["shards"]) for s in sources]


def load_teacher(args: Args, engine: Engine, teacher: dict[str, Any] | None) -> TeacherSplit:
    """The teacher data of every folder (exactly the checkpoint's shards when resuming), split by shard: the last
    holdout_fraction of each folder's shards are held out."""
    from euchre_agents.teacher_data import TeacherDataError, concatenate, load

    parts, held_parts, sources = [], [], []
    for folder, wanted in zip(teacher_folders(args), checkpoint_shards(args, teacher)):
        try:
            part = load(folder, engine, shards=wanted)
        except TeacherDataError as e:
            raise OptionError(str(e)) from None
        used = np.unique(part.arrays["shard"])
        if used.size < 2:
            raise OptionError(f"{folder} holds {used.size} shard(s); distillation needs at least 2 (one held out)")
        held = used[-max(1, int(round(used.size * args.holdout_fraction))) :]
        parts.append(part)
        held_parts.append(np.isin(part.arrays["shard"], held))
        sources.append({"folder": folder, "settings": part.manifest["settings"], "shards": used.tolist()})
    is_held = np.concatenate(held_parts)
    held_rows = np.flatnonzero(is_held)
    if held_rows.size > HOLDOUT_ROWS:
        held_rows = held_rows[np.linspace(0, held_rows.size - 1, HOLDOUT_ROWS).astype(np.int64)]
    return TeacherSplit(concatenate(parts), np.flatnonzero(~is_held), held_rows, sources)


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


def network_heads(net: ActorCritic, batch: dict[str, torch.Tensor], args: Args) -> tuple[torch.Tensor, ...]:
    """`net.heads` of a batch, in float32; its passes in bfloat16 with `distill_bf16`."""
    with torch.autocast(batch["obs"].device.type, torch.bfloat16, enabled=args.distill_bf16):
        heads = net.heads(batch["obs"], batch["mask"])
    return tuple(None if h is None else h.float() for h in heads)


def distill_losses(net: ActorCritic, batch: dict[str, torch.Tensor], args: Args) -> dict[str, torch.Tensor]:
    """Cross-entropy to softmax(teacher values / T) over legal actions, per-action value MSE, state value MSE."""
    logits, value, q = network_heads(net, batch, args)
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
    for start in range(0, rows.size, EVAL_BATCH):
        batch = teacher_batch(split, rows[start : start + EVAL_BATCH], device)
        size = batch["mask"].shape[0]
        for name, loss in distill_losses(net, batch, args).items():
            sums[f"holdout/{name}_loss"] = sums.get(f"holdout/{name}_loss", 0.0) + loss.item() * size
        logits, _, q = network_heads(net, batch, args)
        best = torch.where(batch["mask"], batch["values"], torch.full((), -1e9)).max(dim=1).values
        picks = {"policy": logits} | ({} if q is None else {"action_value": torch.where(batch["mask"], q, torch.full((), -1e9))})
        for name, scores in picks.items():
            chosen = batch["values"].gather(1, scores.argmax(dim=1, keepdim=True)).squeeze(1)
            sums[f"holdout/regret_{name}"] = sums.get(f"holdout/regret_{name}", 0.0) + (best - chosen).sum().item()
    return {k: v / max(rows.size, 1) for k, v in sums.items()}


def distill_checkpoint(run: Run, update: int, samples: int, split: TeacherSplit) -> dict[str, Any]:
    """Everything a distillation run needs to continue exactly (the data shards it reads included)."""
    return {
        **checkpoints.header("distill", run.net, run.model_kwargs, run.optimizer, dataclasses.asdict(run.args), run.engine,
                             update, samples),
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

    def batch(self, update: int, per_epoch: int, size: int) -> np.ndarray:
        """The (sorted) rows of update `update`, `per_epoch` updates of `size` rows to an epoch."""
        epoch, position = divmod(update, per_epoch)
        return np.sort(self.order(epoch)[position * size : (position + 1) * size])


def distill_update(
    net: ActorCritic, optimizer: torch.optim.Optimizer, batch: dict[str, torch.Tensor], args: Args
) -> dict[str, torch.Tensor]:
    """One supervised update of `net` on a teacher batch (gradient clipped to max_grad_norm); its losses."""
    losses = distill_losses(net, batch, args)
    optimizer.zero_grad()
    losses["total"].backward()
    nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
    optimizer.step()
    return losses


def distill_step(run: Run, split: TeacherSplit, rows: np.ndarray) -> dict[str, torch.Tensor]:
    """One supervised update on the given decisions; its losses."""
    return distill_update(run.net, run.optimizer, teacher_batch(split, rows, run.device), run.args)


def log_losses(run: Run, losses: dict[str, torch.Tensor], samples: int, sps: float) -> None:
    """The training losses, learning rate and samples per second, to TensorBoard."""
    for name, loss in losses.items():
        run.writer.add_scalar(f"losses/distill_{name}", loss.item(), samples)
    run.writer.add_scalar("charts/learning_rate", run.optimizer.param_groups[0]["lr"], samples)
    run.writer.add_scalar("charts/SPS", sps, samples)


def distill(args: Args, inputs: Inputs) -> None:
    """Supervised distillation of the teacher's action values into the actor-critic (stage `distill`)."""
    run = start_run(args, inputs)
    args, checkpoint = run.args, inputs.checkpoint
    split = load_teacher(args, run.engine, None if checkpoint is None else checkpoint["teacher"])
    per_epoch = -(-split.train_rows.size // args.distill_batch_size)
    num_updates = max(1, int(args.distill_epochs * per_epoch))
    update = 0 if checkpoint is None else checkpoint["update"]
    if checkpoint is not None:
        run.optimizer.load_state_dict(checkpoint["optimizer"])
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
            anneal(run, update, num_updates)
            losses = distill_step(run, split, orders.batch(update, per_epoch, args.distill_batch_size))
            update += 1
            samples = update * args.distill_batch_size
            if due(update, LOG_INTERVAL, update == num_updates):
                log_losses(run, losses, samples, (update - start_update) * args.distill_batch_size / (time.time() - start_time))
            if due(update, args.save_interval, update == num_updates):
                for name, value in holdout_metrics(run.net, split, args, run.device).items():
                    run.writer.add_scalar(name, value, samples)
                run.save(distill_checkpoint(run, update, samples, split), update)
            if run.play_match is not None and due(update, args.eval_interval, update == num_updates):
                log_evaluation(run, evaluate_policy(run), samples, f"update {update}/{num_updates}")
            run.writer.flush()
            bar.update(1)
            bar.set_postfix(policy_loss=f"{losses['policy'].item():.3f}", refresh=False)
            if stop.requested:
                bar.close()
                save_and_stop(run, distill_checkpoint(run, update, samples, split), update)
    bar.close()
    run.writer.close()
    print(f"done: {update} updates; checkpoints in {run.ckpt_dir}", flush=True)
