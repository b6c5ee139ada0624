"""Play Euchre against the bots, at a terminal or in a web page.

    python play.py                                        # you (South) + heuristic partner vs two heuristic bots
    python play.py --partner pimc --opponents ppo --rules target_points=5 stick_the_dealer=false
    python play.py --watch --partner pimc --opponents heuristic --delay 1
    python play.py --web --port 8000                      # then open http://127.0.0.1:8000

Bots are any registered spec: random, heuristic, pimc[:worlds=N], ppo (the shipped checkpoint),
ppo:PATH, oracle (it cheats: it sees every hand).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Sequence

import yaml

from euchre_agents.registry import make_agent
from euchre_env.cards import NUM_SEATS
from euchre_env.engine import Engine
from euchre_env.rules import Rules, RulesError
from euchre_lab.invocation import tool_name
from euchre_play.table import PERSON, SEAT_NAMES, Table, resolve_spec


def parse_rules(items: Sequence[str]) -> dict[str, Any]:
    """`key=value` items, values read as YAML (`true`, `5`, `left_of_lone_player`)."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--rules takes key=value items such as target_points=5, got {item!r}")
        out[key.strip()] = yaml.safe_load(value)
    return out


def parse_seat(text: str) -> int:
    """A seat as 0-3, player_N or a compass name (south, west, north, east)."""
    key = text.strip().lower().removeprefix("player_")
    names = [n.lower() for n in SEAT_NAMES]
    if key in names:
        return names.index(key)
    if key.isdigit() and int(key) < NUM_SEATS:
        return int(key)
    raise argparse.ArgumentTypeError(f"no seat {text!r}; seats are 0-3, player_0-player_3 or {', '.join(SEAT_NAMES)}")


def build_parser() -> argparse.ArgumentParser:
    """The command line (documented by --help)."""
    p = argparse.ArgumentParser(description="Play Euchre against the bots.", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seat", type=parse_seat, default=0, help="your seat: 0-3, player_N or south/west/north/east (default south)")
    p.add_argument("--partner", default="heuristic", help="bot spec of your partner (default heuristic)")
    p.add_argument("--opponents", default="heuristic", help="bot spec of both opponents (default heuristic)")
    p.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="table rules, e.g. target_points=5 deck=32")
    p.add_argument("--seed", type=int, default=None, help="seed of the deals and the bots (default: fresh each game)")
    p.add_argument("--watch", action="store_true", help="four bots play (your seat too, with --partner's spec); you watch")
    p.add_argument("--delay", type=float, default=0.6, help="seconds between bot moves at the terminal (default 0.6)")
    p.add_argument("--web", action="store_true", help="serve the game as a web page instead")
    p.add_argument("--host", default="127.0.0.1", help="web: address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="web: port (default 8000)")
    return p


def seat_players(seat: int, partner: str, opponents: str, watch: bool) -> list[str | None]:
    """The player of each seat: the person (or, watching, the partner's spec), the partner, two opponents."""
    players: list[str | None] = [opponents] * NUM_SEATS
    players[seat] = partner if watch else PERSON
    players[(seat + 2) % NUM_SEATS] = partner
    return players


def main(argv: Sequence[str] | None = None) -> int:
    """Run play.py; the exit status."""
    args = build_parser().parse_args(argv)
    try:
        rules = Rules.from_dict(parse_rules(args.rules))
        if args.web:
            from euchre_play.web import serve

            for spec in (args.partner, args.opponents):
                make_agent(resolve_spec(spec), Engine(rules), seed=0)  # a bad spec fails here, not in the page
            return serve(args.host, args.port, rules, [args.partner, args.opponents])
        table = Table(seat_players(args.seat, args.partner, args.opponents, args.watch), rules, seed=args.seed)
    except (RulesError, ValueError, FileNotFoundError) as err:
        print(f"{tool_name('play.py')}: {err}", file=sys.stderr)
        return 2
    from rich.console import Console

    from euchre_play.terminal import TerminalGame

    return TerminalGame(table, None if args.watch else args.seat, Console(highlight=False), delay=args.delay).run()


if __name__ == "__main__":
    sys.exit(main())
