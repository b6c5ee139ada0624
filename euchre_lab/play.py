"""Play Euchre against the bots, at a terminal or in a web page; export the web table's games as data.

    python play.py                                        # you (South) + heuristic partner vs two heuristic bots
    python play.py --partner pimc --opponents ppo --rules target_points=5 stick_the_dealer=false
    python play.py --watch --partner pimc --opponents heuristic --delay 1
    python play.py --web --port 8000                      # then open http://localhost:8000
    python play.py export data/people                     # people's decisions as teacher data (docs/play.md)

Bots are any registered spec: random, easy, heuristic, pimc[:worlds=N], ppo (the shipped checkpoint),
ppo:PATH, oracle (it cheats: it sees every hand). The web table keeps its games in --db (SQLite).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Sequence

from euchre_env.cards import NUM_SEATS
from euchre_env.extras import require
from euchre_env.play import BotError
from euchre_env.rules import Rules, RulesError
from euchre_lab.cli import OptionError, at_least, between, check_ranges, fail, given_options, layered, option_parser
from euchre_play.table import PERSON, SEAT_NAMES

SCRIPT = "play.py"
DEFAULT_DB = "runs/play/games.sqlite3"


@dataclasses.dataclass
class PlayOptions:
    """The options of a game at the terminal or of the web table."""

    seat: int = 0
    """your seat: 0-3, player_N or south/west/north/east"""
    partner: str = "heuristic"
    """bot spec of your partner"""
    opponents: str = "heuristic"
    """bot spec of both opponents"""
    rules: dict = dataclasses.field(default_factory=dict)
    """table rules, e.g. target_points=5 deck=32"""
    seed: int | None = None
    """terminal: seed of the deals and the bots (fresh each game when not given)"""
    watch: bool = False
    """terminal: four bots play (your seat too, with --partner's spec); you watch"""
    delay: float = 0.6
    """terminal: seconds between bot moves"""
    web: bool = False
    """serve the game as a web page instead"""
    host: str = "127.0.0.1"
    """web: address to listen on (anything but loopback lets other machines in: a warning says so)"""
    port: int = 8000
    """web: port"""
    allow_host: list = dataclasses.field(default_factory=list)
    """web: more Host names to answer to besides localhost, 127.0.0.1 and --host (the name people type)"""
    db: str = DEFAULT_DB
    """web: the games file (SQLite; created if missing), or :memory: to keep games in memory only"""
    games_per_client: int = 10
    """web: live games one client (address) may hold at once"""
    allow_client_seeds: bool = False
    """web: let a client choose the deal's seed (replays and tests only: whoever knows the seed knows every hand)"""
    api_docs: bool = False
    """web: serve the API's docs at /docs and /openapi.json"""


@dataclasses.dataclass
class ExportOptions:
    """The options of `export`."""

    out: str = ""
    """new folder to write the teacher data into"""
    db: str = DEFAULT_DB
    """the web table's games file"""
    rules: dict = dataclasses.field(default_factory=dict)
    """export the games of these rules (teacher data holds one game's rules), e.g. target_points=5"""
    games_per_shard: int = 64
    """games per shard (distillation holds out the last shards, so export at least two)"""


def parse_seat(text: str) -> int:
    """A seat as 0-3, player_N or a compass name (south, west, north, east)."""
    key = text.strip().lower().removeprefix("player_")
    names = [n.lower() for n in SEAT_NAMES]
    if key in names:
        return names.index(key)
    if key.isdigit() and int(key) < NUM_SEATS:
        return int(key)
    raise argparse.ArgumentTypeError(f"no seat {text!r}; seats are 0-3, player_N or {', '.join(SEAT_NAMES)}")


def build_parser() -> argparse.ArgumentParser:
    """The command line of a game (documented by --help)."""
    return option_parser(PlayOptions, SCRIPT, __doc__, special={"seat": dict(type=parse_seat, metavar="SEAT")})


def read_options(argv: Sequence[str] | None) -> PlayOptions:
    """The command line as checked options; OptionError (one line) for a value out of range."""
    options = PlayOptions(**layered(dataclasses.asdict(PlayOptions()), given_options(build_parser(), PlayOptions, argv)))
    check_ranges(options, {"port": between(1, 65535), "delay": at_least(0), "games_per_client": at_least(1)})
    return options


def seat_players(seat: int, partner: str, opponents: str, watch: bool) -> list[str | None]:
    """The player of each seat: the person (or, watching, the partner's spec), the partner, two opponents."""
    players: list[str | None] = [opponents] * NUM_SEATS
    players[seat] = partner if watch else PERSON
    players[(seat + 2) % NUM_SEATS] = partner
    return players


def main(argv: Sequence[str] | None = None) -> int:
    """Run play.py; the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["export"]:
        return export_main(argv[1:])
    try:
        options = read_options(argv)
        rules = Rules.from_dict(options.rules)
        if options.web:
            return web_main(options, rules)
        require("play", "rich", what="the terminal table")
        from euchre_play.table import Table

        table = Table(seat_players(options.seat, options.partner, options.opponents, options.watch), rules, seed=options.seed)
    except (OptionError, RulesError, ValueError, FileNotFoundError, OSError) as err:
        return fail(SCRIPT, err)
    from rich.console import Console

    from euchre_play.terminal import TerminalGame

    seat = None if options.watch else options.seat
    try:
        return TerminalGame(table, seat, Console(highlight=False), delay=options.delay).run()
    except BotError as err:  # a bot of the user's code that raised or chose an illegal action
        return fail(SCRIPT, err)


def web_main(options: PlayOptions, rules: Rules) -> int:
    """Serve the web table with `options`; the exit status."""
    require("play", "fastapi", "uvicorn", what="the web table")
    from euchre_agents.registry import make_agent
    from euchre_env.engine import Engine
    from euchre_play.guard import allowed_hosts
    from euchre_play.store import GameStore
    from euchre_play.web import Games, create_app, listening_socket, serve

    for spec in (options.partner, options.opponents):
        make_agent(spec, Engine(rules), seed=0)  # a bad spec fails here, not in the page
    listening_socket(options.host, options.port).close()  # a port in use fails before the store is opened
    games = Games(GameStore(options.db), per_client=options.games_per_client)
    app = create_app(
        rules,
        (options.partner, options.opponents),
        games,
        allow_client_seeds=options.allow_client_seeds,
        hosts=allowed_hosts(options.host, options.allow_host),
        api_docs=options.api_docs,
    )
    return serve(app, options.host, options.port)


def export_main(argv: Sequence[str]) -> int:
    """`play.py export OUT`: the web table's people's decisions as teacher data; the exit status."""
    from euchre_play.export import ExportError, export
    from euchre_play.store import GameStore, StoreError

    parser = option_parser(ExportOptions, SCRIPT, "Write the people's decisions of the web table's games as teacher data.",
                           positional={"out": dict(metavar="OUT")})
    try:
        options = ExportOptions(**layered(dataclasses.asdict(ExportOptions()), given_options(parser, ExportOptions, argv)))
        if options.db != ":memory:" and not Path(options.db).is_file():
            raise OptionError(f"no games file at {options.db} (the web table writes it; --db names another)")
        summary = export(GameStore(options.db), options.out, Rules.from_dict(options.rules), options.games_per_shard)
    except (OptionError, RulesError, ExportError, StoreError, ValueError) as err:
        return fail(SCRIPT, err)
    print(
        f"{options.out}: {summary.decisions} decisions of people from {summary.games} games in {summary.shards} shards"
        + (f" ({summary.other_rules} games of other rules left out)" if summary.other_rules else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
