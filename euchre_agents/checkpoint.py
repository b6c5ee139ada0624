"""A checkpoint file: its format and checksum, reading and checking it, its network, and play-only exports.

train.py writes checkpoints (`euchre_lab.training.checkpoints`); everything that reads one comes here. A checkpoint
only plays the rules it was trained on, and observations with the same blocks: any difference is refused
with `CheckpointMismatchError`, which names every field that differs. A checkpoint whose blocks merely sit
at other positions (an older layout of the same features) plays unchanged: its first layer's columns are
moved to the new positions, which computes exactly the same function. A checkpoint that carries a
checksum (`CHECKSUM`: the sha256 of all its other entries, which train.py and `export_policy` write) is
read only if its contents still match it.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch

from euchre_agents.atomic import write_atomic
from euchre_agents.network import ActorCritic, carry_network, widen_network
from euchre_env.engine import Engine
from euchre_env.rules import Rules

CHECKPOINT_FORMAT = 1
"""The `format` train.py writes into every checkpoint (and `export_policy` keeps)."""
CHECKSUM = "sha256"
"""The checkpoint entry holding the sha256 of all its other entries (`contents_sha256`); older files have none."""
NUMBERED = "update_*.pt"
"""The numbered checkpoints train.py keeps beside latest.pt (update_NNNNNN.pt)."""


class CheckpointError(ValueError):
    """A file that is not a usable train.py checkpoint: missing, unreadable, truncated or incomplete."""


class CheckpointMismatchError(CheckpointError):
    """A checkpoint made for other rules or another observation layout than the engine's."""


def observation_signature(engine: Engine) -> dict[str, Any]:
    """What a network's input and output depend on: observation size, each block's cells, number of actions."""
    return {
        "observation_size": int(engine.observation_size),
        "observation_layout": [[name, cells.tolist()] for name, cells in engine.observation_layout.items()],
        "num_actions": int(engine.num_actions),
    }


def layout_cells(signature: dict[str, Any]) -> dict[str, np.ndarray]:
    """Each block's cells from a saved signature (`[name, cells]`, or `[name, start, stop]` before cells were kept)."""
    out = {}
    for name, *where in signature["observation_layout"]:
        out[name] = np.arange(where[0], where[1]) if len(where) == 2 else np.asarray(where[0], dtype=np.int64)
    return out


def check_compatible(
    checkpoint: dict[str, Any], engine: Engine, source: str, same_positions: bool = False
) -> None:
    """Raise `CheckpointMismatchError` naming each difference between the checkpoint's rules/observations and the engine's.

    Blocks at other positions are accepted (`build_network` moves them) unless `same_positions`, as
    when training resumes: its optimizer state is laid out like the old network. (A bare learned bot at other
    rules plays `network_for` them, which checks a checkpoint against the rules it was made for.)
    """
    problems = []
    saved_rules, rules = checkpoint["rules"], engine.rules.to_dict()
    for key in sorted(set(saved_rules) | set(rules)):
        if saved_rules.get(key) != rules.get(key):
            problems.append(f"rules.{key}: checkpoint {saved_rules.get(key)!r}, here {rules.get(key)!r}")
    saved_obs, obs = checkpoint["observation"], observation_signature(engine)
    for key in ("observation_size", "num_actions"):
        if saved_obs[key] != obs[key]:
            problems.append(f"{key}: checkpoint {saved_obs[key]}, here {obs[key]}")
    saved_cells, cells = layout_cells(saved_obs), layout_cells(obs)
    saved_widths = {name: len(c) for name, c in saved_cells.items()}
    widths = {name: len(c) for name, c in cells.items()}
    changed = [n for n in dict.fromkeys([*saved_widths, *widths]) if saved_widths.get(n) != widths.get(n)]
    if changed:
        problems.append(
            "observation blocks of another width: "
            + ", ".join(f"{n} (checkpoint {saved_widths.get(n)}, here {widths.get(n)})" for n in changed)
        )
    elif same_positions and any(not np.array_equal(saved_cells[n], cells[n]) for n in cells):
        problems.append("observation blocks at other positions (play it, or export it again, but training cannot resume)")
    if problems:
        raise CheckpointMismatchError(
            f"{source} was made for a different game than this one: " + "; ".join(problems)
        )


def relayout_first_layer(state_dict: dict[str, torch.Tensor], saved: dict[str, Any], engine: Engine) -> None:
    """Move the first layer's input columns from the checkpoint's block positions to the engine's."""
    saved_cells, cells = layout_cells(saved), layout_cells(observation_signature(engine))
    source = np.arange(engine.observation_size)
    for name, where in cells.items():
        source[where] = saved_cells[name]
    if not np.array_equal(source, np.arange(engine.observation_size)):
        state_dict["trunk.0.weight"] = state_dict["trunk.0.weight"][:, torch.from_numpy(source)]


POLICY_KEYS = ("format", "model", "model_kwargs", "config", "rules", "observation", "update", "global_step")
"""What a shipped policy keeps of a training checkpoint: enough to play and to check compatibility."""
TRAINING_KEYS = {
    "ppo": POLICY_KEYS + ("optimizer", "pool", "pool_count", "env_state", "games", "rng"),
    "distill": POLICY_KEYS + ("optimizer", "teacher", "rng"),
}
"""What `train.py --resume` needs, by training stage: the policy and everything else the run was in the middle of."""
PLAY = "play"
RESUME = "resume"
_EXPECTED_TYPES = {"model": dict, "model_kwargs": dict, "config": dict, "rules": dict, "observation": dict}
_TRAINING_TYPES = {
    "ppo": {"optimizer": dict, "pool": list, "pool_count": int, "env_state": dict, "games": dict, "rng": dict},
    "distill": {"optimizer": dict, "teacher": dict, "rng": dict},
}
_FIX = "pass a checkpoint that train.py wrote, such as runs/NAME/checkpoints/latest.pt"


def contents_sha256(checkpoint: dict[str, Any]) -> str:
    """The sha256 of every entry of a checkpoint but `CHECKSUM`, walked in a fixed order: tensors by dtype,
    shape and bytes, containers item by item (dict keys sorted), other values by their repr."""
    digest = hashlib.sha256()
    _feed(digest, {k: v for k, v in checkpoint.items() if k != CHECKSUM})
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    """Add one value of a checkpoint to `digest`, tagged with its type and size so that no two values collide."""
    if isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        digest.update(f"tensor {flat.dtype} {tuple(value.shape)}\n".encode())
        digest.update(flat.view(torch.uint8).numpy())
    elif isinstance(value, dict):
        digest.update(f"dict {len(value)}\n".encode())
        for key, item in sorted(value.items(), key=lambda kv: (type(kv[0]).__name__, repr(kv[0]))):
            _feed(digest, key)
            _feed(digest, item)
    elif isinstance(value, (list, tuple)):
        digest.update(f"{type(value).__name__} {len(value)}\n".encode())
        for item in value:
            _feed(digest, item)
    else:
        text = repr(value).encode()
        digest.update(f"{type(value).__name__} {len(text)}\n".encode() + text)


def with_checksum(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint with its `CHECKSUM` entry (re)computed, as train.py and `export_policy` write it."""
    return {**checkpoint, CHECKSUM: contents_sha256(checkpoint)}


def _verifies(checkpoint: Any) -> bool:
    """Whether a loaded checkpoint holds a checksum that matches its contents."""
    return isinstance(checkpoint, dict) and checkpoint.get(CHECKSUM) == contents_sha256(checkpoint)


def newest_good_numbered(path: str | Path) -> Path | None:
    """The newest update_NNNNNN.pt beside `path` (other than it) whose checksum verifies; None if none does."""
    file = Path(path)
    numbered = sorted(file.parent.glob(NUMBERED), key=lambda p: (len(p.name), p.name), reverse=True)
    for other in numbered:
        if other.resolve() == file.resolve():
            continue
        try:
            if _verifies(_torch_load(str(other), "cpu")[0]):
                return other
        except CheckpointError:
            continue
    return None


def _damaged_fix(path: str, purpose: str) -> str:
    """What to do about a checkpoint whose checksum fails: use the newest numbered one beside it that verifies."""
    good = newest_good_numbered(path)
    if purpose == RESUME:
        if good is None:
            return "no numbered checkpoint beside it verifies either: start the run again (--overwrite)"
        return f"resume from the newest numbered checkpoint beside it that verifies: --resume {good}"
    if good is None:
        return "copy or export it again"
    return f"copy it again, or play {good}, the newest numbered checkpoint beside it that verifies"


ZIP_MAGIC = b"PK\x03\x04"
"""How every torch checkpoint (a zip archive) begins."""


def _torch_load(path: str, map_location: str | torch.device) -> tuple[Any, str]:
    """torch.load of plain tensors and values, and the sha256 of the bytes it read; every way a file can
    fail to load is one CheckpointError."""
    file = Path(path)
    if file.is_dir():
        raise CheckpointError(f"checkpoint {path!r} is a folder, not a file; {_FIX}")
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path!r} (no such file); {_FIX}") from None
    except OSError as e:
        raise CheckpointError(f"cannot read checkpoint {path!r}: {e.strerror or e}") from None
    if not data:
        raise CheckpointError(f"checkpoint {path!r} is empty (0 bytes: an interrupted copy?); {_FIX}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's advice about files it then refuses anyway
            loaded = torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)
    except Exception as e:  # torch reports a bad file as UnpicklingError, EOFError, RuntimeError, ...
        zipped = data.startswith(ZIP_MAGIC)
        if zipped and "Unsupported global" in str(e):
            what = "is not a torch checkpoint (it holds more than the tensors and plain values train.py writes)"
        elif zipped or isinstance(e, EOFError):  # damage anywhere in a zip: in its index, its pickle or its records
            what = "is truncated or damaged (a torch file that no longer loads)"
        else:
            what = "is not a torch checkpoint"
        raise CheckpointError(f"checkpoint {path!r} {what}; {_FIX}") from None
    return loaded, hashlib.sha256(data).hexdigest()


def read_checkpoint(path: str, purpose: str = PLAY, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """A train.py checkpoint, checked to hold what `purpose` needs: PLAY (a policy, as the ppo bot plays)
    or RESUME (everything `train.py --resume` continues), and to match its checksum where it has one.
    Anything else is a CheckpointError naming the problem and the fix."""
    return read_checkpoint_and_sha256(path, purpose, map_location)[0]


def read_checkpoint_and_sha256(path: str, purpose: str, map_location: str | torch.device) -> tuple[dict[str, Any], str]:
    """`read_checkpoint`, and the sha256 of the file's bytes."""
    checkpoint, file_digest = _torch_load(path, map_location)
    if not isinstance(checkpoint, dict):
        raise CheckpointError(f"checkpoint {path!r} holds a {type(checkpoint).__name__}, not a train.py checkpoint; {_FIX}")
    if CHECKSUM in checkpoint and not _verifies(checkpoint):
        raise CheckpointError(f"checkpoint {path!r} is damaged: its contents do not match the sha256 it was written with; "
                              + _damaged_fix(path, purpose))
    stage = checkpoint.get("stage", "ppo")
    if purpose == RESUME and stage not in TRAINING_KEYS:
        raise CheckpointError(f"checkpoint {path!r} comes from an unknown training stage {stage!r}; {_FIX}")
    missing = [k for k in (TRAINING_KEYS[stage] if purpose == RESUME else POLICY_KEYS) if k not in checkpoint]
    if purpose == RESUME and missing and all(k in checkpoint for k in POLICY_KEYS):
        raise CheckpointError(
            f"checkpoint {path!r} is a play-only export (python -m euchre_lab.training.export_policy writes those): it has no {', '.join(missing)}, "
            "so training cannot continue from it; resume from the run's checkpoints/latest.pt or update_NNNNNN.pt, "
            "or play it with evaluate.py ppo:PATH"
        )
    if missing:
        raise CheckpointError(f"checkpoint {path!r} is not a train.py checkpoint: it lacks {', '.join(missing)}; {_FIX}")
    if checkpoint["format"] != CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"checkpoint {path!r} has format {checkpoint['format']!r}; this version reads format {CHECKPOINT_FORMAT}"
        )
    expected = {**_EXPECTED_TYPES, **(_TRAINING_TYPES[stage] if purpose == RESUME else {})}
    wrong = [k for k, kind in expected.items() if not isinstance(checkpoint[k], kind)]
    if purpose == RESUME and stage == "ppo" and not wrong and "phase" not in checkpoint["env_state"]:
        wrong = ["env_state"]
    observation = checkpoint["observation"]
    if not wrong and not {"observation_size", "observation_layout", "num_actions"} <= set(observation):
        wrong = ["observation"]
    if wrong:
        raise CheckpointError(f"checkpoint {path!r} is damaged: {', '.join(wrong)} is not what train.py writes; {_FIX}")
    return checkpoint, file_digest


def load_checkpoint(path: str, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by train.py to play it (`read_checkpoint(path, PLAY)`)."""
    return read_checkpoint(path, PLAY, map_location)


def build_network(checkpoint: dict[str, Any], engine: Engine) -> ActorCritic:
    """The network described by a checkpoint, with its trained weights, for a compatible engine."""
    try:
        net = ActorCritic(engine, **checkpoint["model_kwargs"])
        state_dict = dict(checkpoint["model"])
        relayout_first_layer(state_dict, checkpoint["observation"], engine)
        net.load_state_dict(state_dict)
    except (TypeError, KeyError, IndexError, RuntimeError) as e:
        reason = str(e).strip().splitlines()[0][:200]
        raise CheckpointError(f"the checkpoint's weights do not fit the network it describes ({reason})") from None
    return net


def play_policy(src: str) -> dict[str, Any]:
    """The play-only contents of a train.py checkpoint (no optimizer, pool, games or RNG states), in this
    version's observation layout."""
    checkpoint = read_checkpoint(src, PLAY)
    policy = {k: checkpoint[k] for k in POLICY_KEYS}
    engine = Engine(Rules.from_dict(checkpoint["rules"]))
    check_compatible(checkpoint, engine, f"checkpoint {src!r}")
    policy["model"] = dict(checkpoint["model"])
    relayout_first_layer(policy["model"], checkpoint["observation"], engine)
    policy["observation"] = observation_signature(engine)
    return policy


def save_policy(policy: dict[str, Any], dst: str | IO[bytes]) -> None:
    """Write `play_policy`'s contents with their checksum to a path (atomically) or a binary file: the same
    bytes for either and whatever the file is named, so one policy always has one sha256."""
    if isinstance(dst, (str, Path)):   # through a file object: saved to a path, the archive's folder is named after the file
        write_atomic(Path(dst), lambda f: torch.save(with_checksum(policy), f))
    else:
        torch.save(with_checksum(policy), dst)


def export_policy(src: str, dst: str | IO[bytes], hidden_size: int | None = None, seed: int = 0) -> None:
    """Write a play-only copy of a train.py checkpoint (`play_policy`, with its own checksum); with
    `hidden_size`, the same function in a wider network (`widen_network`), for train.py's --init-checkpoint."""
    policy = play_policy(src)
    if hidden_size is not None:
        engine = Engine(Rules.from_dict(policy["rules"]))
        policy["model"] = widen_network(build_network(policy, engine), engine, hidden_size, seed).state_dict()
        policy["model_kwargs"] = dict(policy["model_kwargs"], hidden_size=hidden_size)
    save_policy(policy, dst)


def network_for(checkpoint: dict[str, Any], engine: Engine, source: str) -> ActorCritic:
    """The checkpoint's network playing `engine`'s rules, whatever rules it was made for: checked against those (a
    `CheckpointMismatchError` naming `source`), its weights as they are where the deck is the same, else moved card
    by card to `engine`'s deck (`carry_network`)."""
    made_for = Engine(Rules.from_dict(checkpoint["rules"]))
    check_compatible(checkpoint, made_for, source)
    net = build_network(checkpoint, made_for)
    return net if made_for.deck.names == engine.deck.names else carry_network(net, made_for, engine)


def carry_policy(src: str, dst: str | IO[bytes], rules: Rules) -> None:
    """Write a play-only copy of a checkpoint for other rules (the first agent of a table, made from another
    table's): `network_for` those rules."""
    policy = play_policy(src)
    engine = Engine(rules)
    policy["model"] = network_for(policy, engine, f"checkpoint {src!r}").state_dict()
    save_policy(dict(policy, rules=rules.to_dict(), observation=observation_signature(engine)), dst)


def average_policies(srcs: list[str], dst: str | IO[bytes]) -> None:
    """Write the play-only policy whose every weight is the mean of the checkpoints' (a "model soup"): meaningful
    for networks fine-tuned from one start, which stay close in weight space. The checkpoints must share their
    rules, observations and network shape (model_kwargs, from which `build_network` makes every layer; a ValueError
    names the first that does not); the rest is the first's."""
    policies = [play_policy(src) for src in srcs]
    first = policies[0]
    for src, policy in zip(srcs[1:], policies[1:]):
        for key in ("rules", "observation", "model_kwargs"):
            if policy[key] != first[key]:
                raise ValueError(f"checkpoint {src!r} has other {key} than {srcs[0]!r}; average only fine-tunes of one network")
    model = {k: torch.stack([p["model"][k].float() for p in policies]).mean(0).to(v.dtype) for k, v in first["model"].items()}
    save_policy(dict(first, model=model), dst)
