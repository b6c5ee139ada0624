"""runs/NAME/journal.json: the run's small state besides the agent file. It keeps the preset (a run continues only
with the same one, `iterations` aside), the current agent, and per part its status, wall time, facts and rate."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from pathlib import Path
from typing import Any

from euchre_agents.atomic import write_atomic
from euchre_lab.making.options import Args, MakeError, preset_of

FORMAT = "euchre-making-v1"
GROWS = ("iterations", "final_pairs")
"""Preset keys a run may change when it continues: more iterations continue a finished run, and another
`final_pairs` plays the final matches again at that size (a pilot's small final matches, then full ones)."""
BEFORE_KEY = {"rollout_all_from": 0, "finetune_steps": 0, "rollout_hands": 0, "bid_share": 1.0}
"""What a run made before a preset key existed did, where that is not the key's default today: a journal that lacks
`rollout_all_from` comes from a run whose labels never switched, one that lacks `finetune_steps` from a run
without a fine-tune, `rollout_hands` from one whose every iteration labelled `hands` hands, `bid_share` from one
that labelled every hand's bids."""
HEARTBEAT_S = 30.0
"""How often a running part's time so far is journaled: an attempt killed outright (kill -9, a machine taken away)
still counts, up to its last heartbeat, since the work it kept (shards, checkpoints) is not done again."""


def first_difference(old: Any, new: Any, path: str = "") -> str | None:
    """Where two settings first differ, as `key.sub: old there, new here`; None when equal."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            found = first_difference(old.get(key), new.get(key), f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    return None if old == new else f"{path or 'preset'}: {old!r} there, {new!r} here"


class Journal:
    """The journal of one run, written atomically after every change."""

    def __init__(self, path: Path, preset: dict[str, Any]):
        self.path, self.lock = path, threading.Lock()
        if path.exists():
            try:
                self.data = json.loads(path.read_text())
            except json.JSONDecodeError as e:
                raise MakeError(f"{path} is not valid JSON ({e}); choose another --run-name or pass --overwrite") from None
            if not isinstance(self.data, dict) or self.data.get("format") != FORMAT:
                raise MakeError(f"{path} is not the journal of a train.py --stage make run; choose another --run-name")
            # a key the journal lacks came after it was written: its run did what that key's default (or BEFORE_KEY) does
            old = {**preset_of(Args()), **BEFORE_KEY, **self.data["preset"]}
            fixed = {k: v for k, v in old.items() if k not in GROWS}
            change = first_difference(fixed, {k: v for k, v in preset.items() if k not in GROWS})
            if change:
                raise MakeError(f"{path.parent} was made with another preset ({change}); use a new --run-name, or --overwrite to start over")
        else:
            self.data = {"format": FORMAT, "created": _now(), "agent": None, "parts": {}}
        self.data["preset"] = preset

    def part(self, name: str) -> dict[str, Any] | None:
        """The part's record, None if it never started."""
        return self.data["parts"].get(name)

    def finished(self, name: str) -> bool:
        """Whether the journal records the part as finished."""
        return (self.part(name) or {}).get("status") == "finished"

    def start(self, name: str, kind: str) -> None:
        """Record that the part is running (a later run continues it); `started` stays its first attempt's start, and
        the time of an attempt that was killed outright, as its last heartbeat left it, joins the part's wall time."""
        with self.lock:
            record = self.data["parts"].setdefault(name, {"kind": kind, "attempts": 0, "wall_s": 0.0, "started": _now()})
            record.update(status="running", attempts=record["attempts"] + 1,
                          wall_s=record["wall_s"] + record.pop("running_s", 0.0))
            self._write()

    @contextlib.contextmanager
    def heartbeat(self, name: str):
        """While the block runs, journal the running part's time so far every `HEARTBEAT_S` seconds."""
        stop, began = threading.Event(), time.perf_counter()

        def beat() -> None:
            while not stop.wait(HEARTBEAT_S):
                with self.lock:
                    self.data["parts"][name]["running_s"] = time.perf_counter() - began
                    self._write()

        thread = threading.Thread(target=beat, name=f"heartbeat {name}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def finish(self, name: str, seconds: float, facts: dict[str, Any], rate: float | None) -> None:
        """Record the part finished: its wall time (summed over its attempts), facts and measured rate."""
        with self.lock:
            record = self.data["parts"][name]
            record.pop("running_s", None)
            record.update(status="finished", finished=_now(), wall_s=record["wall_s"] + seconds, facts=facts, rate=rate)
            self._write()

    def forget(self, name: str) -> None:
        """Drop a part's record (its work is to be done again, for a newer agent)."""
        with self.lock:
            self.data["parts"].pop(name, None)
            self._write()

    def set_agent(self, k: int, path: Path) -> None:
        """Record iteration k's agent as the current one (its path within the run folder, which may move)."""
        with self.lock:
            self.data["agent"] = {"iteration": k, "path": str(path.relative_to(self.path.parent))}
            self._write()

    def rate(self, kind: str) -> float | None:
        """The latest rate this run measured for parts of this kind."""
        rates = [r["rate"] for r in self.data["parts"].values() if r.get("kind") == kind and r.get("rate")]
        return rates[-1] if rates else None

    def save(self) -> None:
        """Write the journal atomically."""
        with self.lock:
            self._write()

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, lambda f: f.write(json.dumps(self.data, indent=1).encode()))


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
