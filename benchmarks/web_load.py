"""Load figures of the web table: request latency (p50/p99) with 1 and with 200 live games, and the
server's memory (RSS) with 200 games of `ppo` bots. Starts real `play.py --web` processes on free ports.

    python benchmarks/web_load.py [--requests 2000]
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

from euchre_lab.cli import OptionError, at_least, check_ranges, fail, script_options

SCRIPT = "benchmarks/web_load.py"

ROOT = Path(__file__).resolve().parents[1]
GAMES = 200


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


@dataclass
class Options:
    """The command line's options (each field's docstring is its --help)."""

    requests: int = 2000
    """GETs of a game's view timed with 1 live game, and again with 200"""


def checked(args: Options) -> Options:
    """`args`, or an OptionError in one line naming the option that makes no sense."""
    check_ranges(args, {"requests": at_least(1)})
    return args


def main(argv: list[str] | None = None) -> int:
    """Print the figures; 0, or 2 on a bad option."""
    try:
        args = checked(script_options(Options, SCRIPT, __doc__.split("\n\n")[0], argv))
    except OptionError as e:
        return fail(SCRIPT, e)
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
