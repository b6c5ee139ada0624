"""The web table's games on disk: SQLite (the standard library's `sqlite3`) in write-ahead-log mode.

One row per game (who sits where, the rules, the deal's seed, which stays on the server, and its
status) and one row per decision, written as each move is made. A game in progress therefore
survives a crash or `kill -9` of the server: a restarted server rebuilds it by dealing from its seed
and replaying its decisions, and its id answers as before. Finished games are kept with every
decision; `euchre-play export` turns the people's decisions into teacher data.

Statuses: `live` (being played), `finished`, `abandoned` (left idle), `dropped` (the person left it).
`:memory:` keeps the games in memory only.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

DEFAULT_DB = Path("runs") / "play" / "games.sqlite3"
MEMORY = ":memory:"
LIVE, FINISHED, ABANDONED, DROPPED = "live", "finished", "abandoned", "dropped"
SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    seat INTEGER NOT NULL,
    players TEXT NOT NULL,
    rules TEXT NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS decisions (
    game TEXT NOT NULL REFERENCES games(id),
    number INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    action INTEGER NOT NULL,
    PRIMARY KEY (game, number)
);
CREATE INDEX IF NOT EXISTS games_by_status ON games(status, updated);
"""


class StoreError(ValueError):
    """A games file that cannot be opened or is not one of the web table's."""


@dataclass(frozen=True)
class SavedGame:
    """A game as stored: its seats' players (None for the person), rules, deal seed, status and decisions."""

    id: str
    seat: int
    players: list[str | None]
    rules: dict
    seed: int
    status: str
    created: float
    actions: list[tuple[int, int]]
    """(seat, action id) of every decision, in order."""


class GameStore:
    """The games file (one connection, used under a lock; commits are durable once they return)."""

    def __init__(self, path: str | Path = DEFAULT_DB):
        self.path = str(path)
        if self.path != MEMORY:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.db = sqlite3.connect(self.path, check_same_thread=False)
            if self.path != MEMORY:
                self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")  # with WAL: a process crash loses no committed move
            self.db.executescript(SCHEMA)
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{self.path} is not a games file the web table can use ({err})") from None
        self.lock = threading.Lock()

    def journal_mode(self) -> str:
        """SQLite's journal mode for this file (`wal`, or `memory` for :memory:)."""
        return self.db.execute("PRAGMA journal_mode").fetchone()[0]

    def add_game(self, game_id: str, seat: int, players: list[str | None], rules: dict, seed: int) -> None:
        """Keep a new game (live, no decisions yet)."""
        now = time.time()
        with self.lock, self.db:
            self.db.execute(
                "INSERT INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (game_id, now, now, seat, json.dumps(players), json.dumps(rules), seed, LIVE),
            )

    def add_decisions(self, game_id: str, first: int, actions: list[tuple[int, int]], finished: bool) -> None:
        """Record decisions number `first`, `first + 1`, ... of a game (and that it is over, if it is)."""
        rows = [(game_id, first + i, seat, action) for i, (seat, action) in enumerate(actions)]
        with self.lock, self.db:
            self.db.executemany("INSERT INTO decisions VALUES (?, ?, ?, ?)", rows)
            self.db.execute(
                "UPDATE games SET updated = ?, status = ? WHERE id = ?", (time.time(), FINISHED if finished else LIVE, game_id)
            )

    def set_status(self, game_id: str, status: str) -> None:
        """Mark a game abandoned or dropped (a finished game stays finished)."""
        with self.lock, self.db:
            self.db.execute("UPDATE games SET status = ? WHERE id = ? AND status = ?", (status, game_id, LIVE))

    def abandon_idle(self, idle_seconds: float, keep: set[str]) -> int:
        """Mark abandoned the live games, but those in `keep`, untouched for `idle_seconds`; how many."""
        cutoff = time.time() - idle_seconds
        with self.lock, self.db:
            ids = [r[0] for r in self.db.execute("SELECT id FROM games WHERE status = ? AND updated < ?", (LIVE, cutoff))]
            stale = [(ABANDONED, i) for i in ids if i not in keep]
            self.db.executemany("UPDATE games SET status = ? WHERE id = ?", stale)
        return len(stale)

    def game(self, game_id: str) -> SavedGame | None:
        """The stored game with this id, or None."""
        with self.lock:
            row = self.db.execute("SELECT * FROM games WHERE id = ?", (game_id,)).fetchone()
            return None if row is None else self._saved(row)

    def games(self) -> Iterator[SavedGame]:
        """Every stored game, oldest first."""
        with self.lock:
            rows = self.db.execute("SELECT * FROM games ORDER BY created, id").fetchall()
        for row in rows:
            with self.lock:
                yield self._saved(row)

    def _saved(self, row: tuple) -> SavedGame:
        game_id, created, _, seat, players, rules, seed, status = row
        actions = self.db.execute("SELECT seat, action FROM decisions WHERE game = ? ORDER BY number", (game_id,)).fetchall()
        return SavedGame(game_id, seat, json.loads(players), json.loads(rules), seed, status, created, [tuple(a) for a in actions])

    def close(self) -> None:
        """Close the file."""
        with self.lock:
            self.db.close()
