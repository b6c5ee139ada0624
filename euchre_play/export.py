"""`euchre-play export OUT`: the decisions people made at the web table, as teacher data that `train.py
--stage distill --teacher-data OUT` learns from.

Each stored game of the chosen rules is dealt again from its seed and its decisions replayed; every
decision a person made with more than one legal action, in a hand that was played to its end (or
thrown in), becomes a row of the teacher-data format (`euchre_agents.teacher_data`): the observation the
person saw, the legal mask, the action taken, the phase and the hand's outcome for the person's side.
Its `values` follow the `people` label: 0 for the action taken, `-PEOPLE_MARGIN` for the other legal
actions. Games go `games_per_shard` to a shard, oldest first; the folder is written whole or not at all.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from euchre_agents.teacher_data import PEOPLE_MARGIN, TeacherSettings, empty_arrays, write_data
from euchre_env import euchre_v0
from euchre_env.rules import Rules
from euchre_play.store import GameStore, SavedGame


@dataclass
class ExportSummary:
    """What an export wrote: games read, people's decisions written, shards, games skipped for other rules."""

    games: int
    decisions: int
    shards: int
    other_rules: int


class ExportError(ValueError):
    """An export that cannot be made (the folder exists, or there is nothing to export)."""


def people_decisions(saved: SavedGame) -> dict[str, np.ndarray]:
    """The rows of one stored game's people's decisions in finished hands (teacher-data arrays)."""
    env = euchre_v0.raw_env(rules=Rules.from_dict(saved.rules), episode="game")
    env.reset(seed=saved.seed)
    people = {seat for seat, player in enumerate(saved.players) if player is None}
    rows: list[tuple] = []
    pending: list[tuple] = []
    before = env.public_state()
    for seat, action in saved.actions:
        if seat in people:
            seen = env.observe(euchre_v0.AGENTS[seat])
            mask = seen["action_mask"].astype(bool)
            if mask.sum() > 1:
                pending.append((seen["observation"], mask, int(env.state_.phase[0]), action, seat))
        env.step(action)
        after = env.public_state()
        thrown_in = before["phase"] == "bid_round_2" and after["phase"] == "bid_round_1"
        if after["hand_number"] != before["hand_number"] or after["phase"] == "game_over" or thrown_in:
            points = [after["score"][t] - before["score"][t] for t in range(2)]
            rows += [(*row, points[row[-1] % 2] - points[1 - row[-1] % 2]) for row in pending]
            pending = []
        before = after
    return _arrays(rows, env.engine)


def _arrays(rows: list[tuple], engine) -> dict[str, np.ndarray]:
    if not rows:
        return empty_arrays(engine)
    obs = np.stack([r[0] for r in rows]).astype(bool)
    mask = np.stack([r[1] for r in rows])
    action = np.array([r[3] for r in rows], np.int64)
    values = np.where(mask, -PEOPLE_MARGIN, np.nan)
    values[np.arange(action.size), action] = 0.0
    return {
        "obs_bits": np.packbits(obs, axis=1),
        "mask_bits": np.packbits(mask, axis=1),
        "values": values.astype(np.float16),
        "phase": np.array([r[2] for r in rows], np.int8),
        "action": action.astype(np.int16),
        "outcome": np.array([r[5] for r in rows], np.int8),
    }


def export(store: GameStore, out: str | Path, rules: Rules, games_per_shard: int = 64) -> ExportSummary:
    """Write the people's decisions of every stored game played with `rules` into the new folder `out`."""
    out = Path(out)
    if out.exists():
        raise ExportError(f"{out} already exists; export into a new folder")
    if games_per_shard < 1:
        raise ExportError(f"games_per_shard must be >= 1, got {games_per_shard}")
    wanted = rules.to_dict()
    games, other, shards = 0, 0, []
    for saved in store.games():
        if Rules.from_dict(saved.rules).to_dict() != wanted:
            other += 1
            continue
        data = people_decisions(saved)
        if data["phase"].size:
            if games % games_per_shard == 0:
                shards.append([])
            shards[-1].append(data)
            games += 1
    if not shards:
        raise ExportError(f"{store.path} holds no decisions of people in finished hands of these rules ({other} games of other rules)")
    merged = [{k: np.concatenate([d[k] for d in shard]) for k in shard[0]} for shard in shards]
    partial = out.with_name(f".{out.name}.partial{os.getpid()}")
    settings = TeacherSettings(label="people", behaviour="people=1", epsilon=0.0, games_per_shard=games_per_shard)
    try:
        manifest = write_data(partial, rules, settings, merged)
        os.replace(partial, out)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return ExportSummary(games, sum(manifest["shards"].values()), len(merged), other)
