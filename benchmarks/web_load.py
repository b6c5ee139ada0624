"""Load figures of the web table: request latency (p50/p99) with 1 and with 200 live games, and the
server's memory (RSS) with 200 games of `ppo` bots; or, with `--capacity BOT`, how many tables of that bot
one server holds with the p99 of a bot move under 1 s. Starts real `play.py --web` processes on free ports.

    python benchmarks/web_load.py [--requests 2000]
    python benchmarks/web_load.py --capacity pimc [--seconds 20] [--pause 0.8]

A capacity run plays 1, 2, 4, ..., 32, 48, 64, ... tables at once, each paced like the page at normal speed: `--pause`
seconds before every move, the person's (the first legal action) and each bot's (`/step`, timed), for
`--seconds` each; it stops at the first count whose p99 is 1 s or more.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

from euchre_lab.cli import OptionError, above, at_least, check_ranges, fail, script_options

SCRIPT = "benchmarks/web_load.py"

ROOT = Path(__file__).resolve().parents[1]
GAMES = 200
TABLE_COUNTS = (1, 2, 4, 8, 16, 32, 48, 64, 80, 96, 112, 128)
"""The numbers of tables a capacity run plays at once, in turn (the server holds 200 games)."""


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(bots: str) -> tuple[subprocess.Popen, str]:
    """A server whose partner and opponents are `bots`, games in memory; it and its address once it answers."""
    port = free_port()
    command = [sys.executable, "-m", "euchre_lab.play", "--web", "--port", str(port), "--db", ":memory:",
               "--partner", bots, "--opponents", bots, "--games-per-client", str(GAMES)]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(3000):
        try:
            httpx.get(f"{url}/api/options", timeout=2).raise_for_status()
            return server, url
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("the server did not start")


def rss_mb(pid: int) -> float:
    """Resident memory of a process, MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def latencies(http: httpx.Client, ids: list[str], requests: int) -> np.ndarray:
    """Seconds per GET of a game's view, round robin over `ids`."""
    out = np.empty(requests)
    for i in range(requests):
        started = time.perf_counter()
        http.get(f"/api/games/{ids[i % len(ids)]}").raise_for_status()
        out[i] = time.perf_counter() - started
    return out


def play_table(url: str, pause: float, stop: threading.Event, moves: list[float]) -> None:
    """Play games at one table until `stop`, paced like the page: `pause` s before each move; each bot move's seconds
    go to `moves`."""
    with httpx.Client(base_url=url, timeout=120) as http:
        view = http.post("/api/games", json={}).raise_for_status().json()
        while not stop.wait(pause):
            game = f"/api/games/{view['id']}"
            if view["over"]:  # put away at once, so that finished games do not fill the server
                http.delete(game).raise_for_status()
                view = http.post("/api/games", json={}).raise_for_status().json()
            elif view["to_play"] == view["you"]:
                move = {"action": view["legal"][0]["action"], "version": view["version"]}
                view = http.post(f"{game}/action", json=move).raise_for_status().json()
            else:
                started = time.perf_counter()
                view = http.post(f"{game}/step", json={"version": view["version"]}).raise_for_status().json()
                moves.append(time.perf_counter() - started)
        http.delete(f"/api/games/{view['id']}").raise_for_status()  # the next table count starts on an empty server


def bot_moves(url: str, tables: int, seconds: float, pause: float) -> np.ndarray:
    """Seconds per bot move with `tables` tables playing at once for `seconds` (their starts spread over one pause);
    SystemExit if a table's request fails, since the load would then be less than claimed."""
    stop, moves, failures = threading.Event(), [], []

    def table() -> None:
        try:
            play_table(url, pause, stop, moves)
        except httpx.HTTPError as err:
            failures.append(err)

    players = [threading.Thread(target=table) for _ in range(tables)]
    for player in players:
        player.start()
        time.sleep(pause / tables)
    time.sleep(seconds)
    stop.set()
    for player in players:
        player.join()
    if failures:
        raise SystemExit(f"{len(failures)} of {tables} tables failed: {failures[0]}")
    return np.array(moves)


def capacity(bot: str, seconds: float, pause: float) -> None:
    """Print the bot-move latency at each of TABLE_COUNTS tables of `bot` until its p99 reaches 1 s."""
    server, url = start(bot)
    try:
        for tables in TABLE_COUNTS:
            moves = bot_moves(url, tables, seconds, pause)
            p99 = np.percentile(moves, 99)
            print(f"{bot}: {tables:>3} tables, {len(moves) / seconds:.1f} bot moves/s, p50 {1e3 * np.median(moves):.0f} ms, "
                  f"p99 {1e3 * p99:.0f} ms", flush=True)
            if p99 >= 1.0:
                break
    finally:
        server.kill()


@dataclass
class Options:
    """The command line's options (each field's docstring is its --help)."""

    requests: int = 2000
    """GETs of a game's view timed with 1 live game, and again with 200"""
    capacity: str = ""
    """a bot spec: count the tables of it one server holds with a bot move's p99 under 1 s (instead of the other figures)"""
    seconds: float = 20.0
    """capacity: seconds played at each table count"""
    pause: float = 0.8
    """capacity: seconds each table waits before a move (the page's normal bot speed)"""


def checked(args: Options) -> Options:
    """`args`, or an OptionError in one line naming the option that makes no sense."""
    check_ranges(args, {"requests": at_least(1), "seconds": above(0), "pause": at_least(0)})
    return args


def main(argv: list[str] | None = None) -> int:
    """Print the figures; 0, or 2 on a bad option."""
    try:
        args = checked(script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv))
    except OptionError as e:
        return fail(SCRIPT, e)
    if args.capacity:
        capacity(args.capacity, args.seconds, args.pause)
        return 0
    server, url = start("random")
    try:
        with httpx.Client(base_url=url, timeout=30) as http:
            ids = [http.post("/api/games", json={}).json()["id"]]
            one = latencies(http, ids, args.requests)
            ids += [http.post("/api/games", json={}).json()["id"] for _ in range(GAMES - 1)]
            many = latencies(http, ids, args.requests)
        for n, t in ((1, one), (GAMES, many)):
            print(f"{n:>4} live games: p50 {1e3 * np.percentile(t, 50):.2f} ms, p99 {1e3 * np.percentile(t, 99):.2f} ms")
    finally:
        server.kill()
    server, url = start("ppo")
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            before = rss_mb(server.pid)
            started = time.perf_counter()
            for _ in range(GAMES):
                http.post("/api/games", json={}).raise_for_status()
            took = time.perf_counter() - started
            print(f"ppo: RSS {before:.0f} MB with no game, {rss_mb(server.pid):.0f} MB with {GAMES} games "
                  f"({1e3 * took / GAMES:.0f} ms per new game)")
    finally:
        server.kill()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
