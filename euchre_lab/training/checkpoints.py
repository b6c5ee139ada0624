"""train.py's checkpoints: what one holds, how it is written (atomically) and the pieces of a run's
state that it saves and restores for an exact resume.

Every checkpoint holds `format`, `stage`, the model and its `model_kwargs`, the optimizer, the config,
the rules and the observation layout (`header`), then what its stage needs to continue bit for bit: PPO
the games in progress, the opponent pool and every random stream; distillation the teacher shards it
reads; and `sha256`, the checksum of all its other entries (`euchre_agents.checkpoint.with_checksum`), which
reading verifies. Reading and the compatibility checks are `euchre_agents.checkpoint`'s (`read_checkpoint`,
`check_compatible`), as the `ppo` bot reads the same files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from euchre_agents.atomic import write_atomic
from euchre_agents.base import Agent
from euchre_agents.checkpoint import CHECKPOINT_FORMAT, NUMBERED, observation_signature, with_checksum
from euchre_env import Engine, EuchreState
from euchre_lab.training.paths import LATEST

LEARNER_DECISIONS = "learner_decisions"
"""The key of a PPO checkpoint's count of the learner's own decisions so far (an opponent's are not counted)."""


def header(stage: str, net: torch.nn.Module, model_kwargs: dict[str, Any], optimizer: torch.optim.Optimizer,
           config: dict[str, Any], engine: Engine, update: int, global_step: int) -> dict[str, Any]:
    """The part every checkpoint holds: what it is, the network, the optimizer, the config and the game."""
    return {
        "format": CHECKPOINT_FORMAT,
        "stage": stage,
        "model": net.state_dict(),
        "model_kwargs": model_kwargs,
        "optimizer": optimizer.state_dict(),
        "config": config,
        "rules": engine.rules.to_dict(),
        "observation": observation_signature(engine),
        "update": update,
        "global_step": global_step,
    }


def save_checkpoint(path: Path, checkpoint: dict[str, Any]) -> None:
    """Write a checkpoint with its checksum, atomically (a reader never sees it half written)."""
    _write(path, with_checksum(checkpoint))


def _write(path: Path, checked: dict[str, Any]) -> None:
    write_atomic(path, lambda f: torch.save(checked, f))


def save_numbered(folder: Path, checkpoint: dict[str, Any], update: int, keep: int) -> None:
    """update_NNNNNN.pt and latest.pt, with their checksum, atomically; only the newest `keep` numbered ones stay (0: all)."""
    checked = with_checksum(checkpoint)
    _write(folder / f"update_{update:06d}.pt", checked)
    _write(folder / LATEST, checked)
    if keep > 0:
        for old in sorted(folder.glob(NUMBERED))[:-keep]:
            old.unlink()


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
