"""Teacher data on disk: the folder's format, its identity (`TeacherSettings`), writing it and loading it.

A teacher-data folder: `manifest.json` (format, rules, observation layout, generator settings, the shards
written and their sizes) and shards `shard_NNNNN.npz` of packed arrays: `obs_bits` (observation cells
are 0/1, packed 8 to a byte), `mask_bits`, `values` (float16, NaN for illegal actions), `phase`,
`action` (the move the behaviour policy made), `outcome` (the acting side's net points of the hand as
played). Shard k is a pure function of (settings, k): generation resumes by writing the missing shards,
and any number of worker processes gives the same files.

Playing and labelling the hands that fill it is `euchre_agents.teacher`'s; the command line that writes
it is `python -m euchre_lab.training.teacher`.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from euchre_agents.atomic import write_atomic
from euchre_agents.registry import parse_weighted
from euchre_env.engine import EPISODE_HAND, Engine
from euchre_env.rules import Rules

FORMAT = "euchre-teacher-v1"
LABELS = ("true", "pimc", "rollout", "search", "people")
PEOPLE_MARGIN = 8.0
"""Points below the person's choice at which `people` data values the other legal actions."""
MANIFEST = "manifest.json"
ARRAYS = ("obs_bits", "mask_bits", "values", "phase", "action", "outcome")


class TeacherDataError(ValueError):
    """Teacher data that is missing, malformed, or made for another game than the one asked for."""


@dataclasses.dataclass(frozen=True)
class TeacherSettings:
    """How the hands are played and labelled; part of the data's identity (stored in the manifest)."""

    label: str = "true"
    """`true` (double-dummy value of the true layout), `pimc` (pimc's own action values), `rollout` (bids,
    alone calls and discards valued by `rollout_agent` playing the hand out on the true layout) or `search`
    (`search_agent`'s own action values: its network's play-outs over the layouts it infers)."""
    behaviour: str = "heuristic=1"
    """Bots in the seats: comma-separated SPEC=WEIGHT; each seat of each game draws one."""
    epsilon: float = 0.15
    """Share of moves replaced by a uniformly random legal action (coverage of every action)."""
    pimc_worlds: int = 30
    """Layouts per decision for `label=pimc`."""
    rollout_agent: str = "ppo"
    """The bot (a spec) that plays every seat after a bid, alone call or discard for `label=rollout`."""
    rollout_cards: bool = False
    """With `label=rollout`, value card decisions by `rollout_agent`'s play-outs too (else double-dummy)."""
    search_agent: str = "search"
    """The `search` bot (a spec: `search[:PATH][,worlds=N,...]`) whose action values label every decision for `label=search`."""
    bid_share: float = 1.0
    """Share of the hands whose bids, alone calls and discards are labelled; the other hands record their card
    decisions only. With `label=rollout` a bid's play-outs (the whole hand, for each legal bid) are most of a hand's
    labelling cost. The hands drawn come from a stream of their own, so every share plays the same hands."""
    games_per_shard: int = 256
    """Hands played per shard."""
    seed: int = 0
    """Base seed: shard k's deals, seat draws and random moves come from (seed, k)."""

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise TeacherDataError(f"label={self.label!r} is not one of {LABELS}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise TeacherDataError(f"epsilon={self.epsilon} must be in [0, 1]")
        if not 0.0 <= self.bid_share <= 1.0:
            raise TeacherDataError(f"bid_share={self.bid_share} must be in [0, 1]")
        if self.pimc_worlds < 1 or self.games_per_shard < 1:
            raise TeacherDataError("pimc_worlds and games_per_shard must be >= 1")
        if self.seed < 0:
            raise TeacherDataError(f"seed={self.seed} must be 0 or more")
        mix = parse_weighted(self.behaviour, "behaviour")
        if sum(w for _, w in mix) <= 0:
            raise TeacherDataError(f"behaviour={self.behaviour!r} needs a positive total weight")


def empty_arrays(engine: Engine) -> dict[str, np.ndarray]:
    """A shard with no decisions, with the right dtypes and widths."""
    d, a = engine.observation_size, engine.num_actions
    return {
        "obs_bits": np.zeros((0, (d + 7) // 8), np.uint8),
        "mask_bits": np.zeros((0, (a + 7) // 8), np.uint8),
        "values": np.zeros((0, a), np.float16),
        "phase": np.zeros(0, np.int8),
        "action": np.zeros(0, np.int16),
        "outcome": np.zeros(0, np.int8),
    }


def manifest_identity(rules: Rules, settings: TeacherSettings, engine: Engine) -> dict[str, Any]:
    """What data of these rules and settings, for this engine's observations, holds in its manifest (all
    but the shards): two folders of the same identity hold interchangeable data."""
    from euchre_agents.checkpoint import observation_signature  # torch only where teacher data is written or read

    return {
        "format": FORMAT,
        "rules": rules.to_dict(),
        "observation": observation_signature(engine),
        "settings": dataclasses.asdict(settings),
    }


def shard_path(folder: Path, shard: int) -> Path:
    """Where shard `shard` lives."""
    return Path(folder) / f"shard_{shard:05d}.npz"


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """The manifest of a teacher-data folder; a clear error if there is none or it is malformed."""
    path = Path(folder) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise TeacherDataError(f"{folder} holds no teacher data ({MANIFEST} is missing)") from None
    except json.JSONDecodeError as e:
        raise TeacherDataError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise TeacherDataError(f"{path} is not a {FORMAT} manifest")
    return manifest


def differences(saved: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """Each way a saved manifest's identity differs from the wanted one, in words (`rules.deck: data 24, here 32`)."""
    problems = []
    older = {"settings": dataclasses.asdict(TeacherSettings())}  # a setting added after the data was written
    for part in ("rules", "settings"):
        kept = {**older.get(part, {}), **saved[part]}
        for key in sorted(set(saved[part]) | set(wanted[part])):
            if kept.get(key) != wanted[part].get(key):
                problems.append(f"{part}.{key}: data {kept.get(key)!r}, here {wanted[part].get(key)!r}")
    if saved["observation"] != wanted["observation"]:
        problems.append("observation layout differs (the data was written by another encoder or rules)")
    return problems


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """Write the folder's manifest (atomically)."""
    write_atomic(folder / MANIFEST, lambda f: f.write(json.dumps(manifest, indent=1).encode()))


def write_shard(folder: Path, shard: int, data: dict[str, np.ndarray]) -> None:
    """Write shard `shard`'s arrays (atomically, compressed)."""
    write_atomic(shard_path(folder, shard), lambda f: np.savez_compressed(f, **data))


def write_data(out: str | Path, rules: Rules, settings: TeacherSettings, shards: list[dict[str, np.ndarray]]) -> dict[str, Any]:
    """Decisions recorded elsewhere (each item of `shards` one shard's ARRAYS) as teacher data in the new folder
    `out`, with its manifest written last; the manifest."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=False)
    manifest = {**manifest_identity(rules, settings, Engine(rules, EPISODE_HAND)), "shards": {}}
    for k, data in enumerate(shards):
        write_shard(folder, k, {name: data[name] for name in ARRAYS})
        manifest["shards"][str(k)] = int(data["phase"].size)
    write_manifest(folder, manifest)
    return manifest


@dataclasses.dataclass
class TeacherData:
    """Teacher data loaded in memory (packed as stored); `observations()` unpacks rows."""

    manifest: dict[str, Any]
    arrays: dict[str, np.ndarray]
    observation_size: int
    num_actions: int

    def __len__(self) -> int:
        return int(self.arrays["phase"].size)

    def observations(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), D) float32 observations."""
        bits = np.unpackbits(self.arrays["obs_bits"][rows], axis=1, count=self.observation_size)
        return bits.astype(np.float32)

    def masks(self, rows: np.ndarray) -> np.ndarray:
        """(len(rows), A) bool legal masks."""
        return np.unpackbits(self.arrays["mask_bits"][rows], axis=1, count=self.num_actions).astype(bool)


def check_data(folder: str | Path, engine: Engine, settings: TeacherSettings | None = None) -> dict[str, Any]:
    """`folder`'s manifest, if its data was made for this engine's rules and observation layout (and, when
    `settings` is given, with these generator settings); else a TeacherDataError naming each difference."""
    manifest = read_manifest(folder)
    wanted = manifest_identity(engine.rules, settings or TeacherSettings(**manifest["settings"]), engine)
    problems = [p for p in differences(manifest, wanted) if settings is not None or not p.startswith("settings.")]
    if problems:
        raise TeacherDataError(f"{folder} holds teacher data for another game: " + "; ".join(problems))
    return manifest


def load(
    folder: str | Path, engine: Engine, settings: TeacherSettings | None = None, shards: list[int] | None = None
) -> TeacherData:
    """The shards listed in `folder`'s manifest (or just `shards`), refusing data of other rules or another
    observation layout (and, when `settings` is given, other generator settings)."""
    manifest = check_data(folder, engine, settings)
    listed = sorted(int(k) for k in manifest["shards"])
    missing = sorted(set(shards or []) - set(listed))
    if missing:
        raise TeacherDataError(f"{folder} lacks shard(s) {missing[:10]} (it lists {len(listed)})")
    used = listed if shards is None else sorted(shards)
    parts = []
    for shard in used:
        with np.load(shard_path(Path(folder), shard)) as f:
            parts.append({k: f[k] for k in ARRAYS})
    arrays = {k: np.concatenate([p[k] for p in parts]) for k in ARRAYS} if parts else empty_arrays(engine)
    arrays["shard"] = np.repeat(np.array(used, np.int32), [p["phase"].size for p in parts])
    return TeacherData(manifest, arrays, engine.observation_size, engine.num_actions)


def concatenate(parts: list[TeacherData]) -> TeacherData:
    """Data loaded from several folders (of the same game) as one set; `arrays["source"]` is each decision's
    folder (its index in `parts`) and `manifest` the first folder's."""
    if not parts:
        raise TeacherDataError("no teacher data to concatenate")
    names = [*ARRAYS, "shard"]
    arrays = {k: parts[0].arrays[k] if len(parts) == 1 else np.concatenate([p.arrays[k] for p in parts]) for k in names}
    arrays["source"] = np.repeat(np.arange(len(parts), dtype=np.int16), [len(p) for p in parts])
    return TeacherData(parts[0].manifest, arrays, parts[0].observation_size, parts[0].num_actions)
