"""The web front end of play.py: a FastAPI server that referees games played by clicking in a page.

The server holds every game (a `Table`) behind an unguessable id; the page sends action names with
the version of the game it saw, and gets back only its own seat's view. An illegal action (400) or a
stale one (409) changes nothing. Bots move one at a time when the page asks (`/step`), so the page
paces them; their moves run in a thread pool, so one game's search never holds up another's
requests. Finished games are dropped a few minutes after their last request, abandoned ones after
half an hour.

    GET    /                          the page
    GET    /api/options               bots and rules the page may choose
    POST   /api/games                 {partner, opponents, rules, seat, seed} -> view of a new game
    GET    /api/games/{id}            view
    POST   /api/games/{id}/action     {action, version} -> view
    POST   /api/games/{id}/step       {version} -> view after one bot move
    DELETE /api/games/{id}            drop the game
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from euchre_env.cards import NUM_SEATS
from euchre_env.rules import FIRST_DEALER_CUT, FIRST_DEALER_RANDOM, LEAD_LEFT_OF_DEALER, LEAD_LEFT_OF_LONE_PLAYER, Rules, RulesError
from euchre_play.table import BOT_LABELS, PERSON, PlayError, Table, bot_label, resolve_spec

STATIC = Path(__file__).resolve().parent / "static"
MAX_GAMES = 200
IDLE_SECONDS = 30 * 60
FINISHED_SECONDS = 5 * 60
HIDDEN_RULES = ("rubber_games", "rubber_bonus", "throw_in_ends_hand_episode")
"""Rules that do not change a game to the target (rubbers, one-hand episodes): not offered on the page."""
RULE_CHOICES = {
    "deck": [24, 32],
    "lone_defender_euchre_points": [2, 4],
    "lone_lead": [LEAD_LEFT_OF_DEALER, LEAD_LEFT_OF_LONE_PLAYER],
    "first_dealer": [FIRST_DEALER_CUT, FIRST_DEALER_RANDOM],
}


class NewGame(BaseModel):
    """A new game's request."""

    partner: str | None = None
    opponents: str | None = None
    rules: dict[str, Any] = Field(default_factory=dict)
    seat: int = 0
    seed: int | None = None


class Move(BaseModel):
    """An action (`JH`, `pass`, `hearts`, `alone`, ...) and the version of the game it was chosen in."""

    action: str = ""
    version: int


class Step(BaseModel):
    """A request for one bot move, with the version of the game the page shows."""

    version: int


@dataclass
class Session:
    """One game on the server: its table, the person's seat, a lock, and when it was last used."""

    table: Table
    seat: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    touched: float = field(default_factory=time.monotonic)


class Games:
    """The games being played, by id; sweeps out finished and abandoned ones."""

    def __init__(self, max_games: int = MAX_GAMES, idle_seconds: float = IDLE_SECONDS, finished_seconds: float = FINISHED_SECONDS):
        self.sessions: dict[str, Session] = {}
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self.finished_seconds = finished_seconds

    def add(self, session: Session) -> str:
        """Keep a new game; its id (unguessable)."""
        self.sweep()
        if len(self.sessions) >= self.max_games:
            raise HTTPException(503, f"the server is full ({self.max_games} games); try again in a few minutes")
        game_id = secrets.token_urlsafe(18)
        self.sessions[game_id] = session
        return game_id

    def get(self, game_id: str) -> Session:
        """The game with this id; 404 if there is none (never was, finished, or abandoned)."""
        self.sweep()
        session = self.sessions.get(game_id)
        if session is None:
            raise HTTPException(404, "no such game (it may have been cleaned up after it ended or was left); start a new game")
        session.touched = time.monotonic()
        return session

    def sweep(self) -> None:
        """Drop games finished more than `finished_seconds` ago or untouched for `idle_seconds`."""
        now = time.monotonic()
        for game_id, s in list(self.sessions.items()):
            limit = self.finished_seconds if s.table.over else self.idle_seconds
            if now - s.touched > limit and not s.lock.locked():
                del self.sessions[game_id]


def rule_options() -> list[dict[str, Any]]:
    """The rules the page offers: name, default, kind (bool, int, choice) and choices."""
    out = []
    for f in dataclasses.fields(Rules):
        if f.name in HIDDEN_RULES:
            continue
        kind = "bool" if isinstance(f.default, bool) else "choice" if f.name in RULE_CHOICES else "int"
        out.append({"name": f.name, "default": f.default, "kind": kind, "choices": RULE_CHOICES.get(f.name, [])})
    return out


class Referee:
    """What the routes do: build games from requests, apply moves, move bots in a thread pool.

    Every route is a coroutine, so the game store is only touched from the event loop's thread."""

    def __init__(self, rules: Rules, bots: tuple[str, str], games: Games, workers: int):
        self.rules, self.bots, self.games = rules, bots, games
        self.offered = dict(BOT_LABELS)
        for spec in bots:
            self.offered.setdefault(spec, bot_label(spec))
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="euchre-bot")

    async def in_pool(self, fn, *args):
        """Run `fn(*args)` in a bot thread, so the server answers other requests meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def options(self) -> dict[str, Any]:
        """The bots and rules a page may choose, with the server's defaults."""
        return {
            "bots": [{"spec": s, "label": label, "fair": not s.startswith("oracle")} for s, label in self.offered.items()],
            "defaults": {"partner": self.bots[0], "opponents": self.bots[1], "rules": self.rules.to_dict()},
            "rules": rule_options(),
        }

    async def new_game(self, request: NewGame) -> dict[str, Any]:
        """A new game from the page's choices; 400 naming the problem if a choice is not allowed."""
        partner, opponents = request.partner or self.bots[0], request.opponents or self.bots[1]
        for spec in (partner, opponents):
            if spec not in self.offered:
                raise HTTPException(400, f"bot {spec!r} is not offered here; choose one of {', '.join(self.offered)}")
        if request.seat not in range(NUM_SEATS):
            raise HTTPException(400, f"seat must be 0-3, got {request.seat}")
        players = [resolve_spec(opponents)] * NUM_SEATS
        players[request.seat], players[(request.seat + 2) % NUM_SEATS] = PERSON, resolve_spec(partner)
        try:
            rules = Rules.from_dict({**self.rules.to_dict(), **request.rules})
            table = await self.in_pool(Table, players, rules, request.seed)
        except (RulesError, TypeError, ValueError) as err:  # ValueError: such as a checkpoint trained for other rules
            raise HTTPException(400, str(err)) from None
        session = Session(table, request.seat)
        return view_of(self.games.add(session), session)

    async def view(self, game_id: str) -> dict[str, Any]:
        """The person's view of a game (never while one of its bots is moving)."""
        session = self.games.get(game_id)
        async with session.lock:
            return view_of(game_id, session)

    async def act(self, game_id: str, move: Move) -> dict[str, Any]:
        """The person's action: 409 if stale, 400 if not allowed now, else the new view."""
        session = self.games.get(game_id)
        async with session.lock:
            check_version(session, move.version)
            try:
                session.table.act(session.seat, move.action)
            except PlayError as err:
                raise HTTPException(400, str(err)) from None
            return view_of(game_id, session)

    async def step(self, game_id: str, request: Step) -> dict[str, Any]:
        """One bot move, in the pool: 409 if stale or if no bot is to play."""
        session = self.games.get(game_id)
        async with session.lock:
            check_version(session, request.version)
            if not session.table.bot_to_play():
                raise HTTPException(409, "no bot is to play: it is your turn, or the game is over")
            await self.in_pool(session.table.step_bot)
            return view_of(game_id, session)

    async def drop(self, game_id: str) -> None:
        """Forget a game (404 if there is none)."""
        self.games.get(game_id)
        self.games.sessions.pop(game_id, None)


def view_of(game_id: str, session: Session) -> dict[str, Any]:
    """What the server sends about a game: its id and the person's view."""
    return {"id": game_id, **session.table.view(session.seat)}


def create_app(
    rules: Rules | None = None,
    bots: tuple[str, str] = ("heuristic", "heuristic"),
    games: Games | None = None,
    workers: int = 4,
) -> FastAPI:
    """The web app: default rules, default (partner, opponents) specs, the game store, bot threads."""
    referee = Referee(rules or Rules(), bots, games or Games(), workers)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        referee.pool.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(title="Euchre Lab: play against the bots", lifespan=lifespan)
    app.state.games = referee.games
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.get("/", include_in_schema=False)(page)
    app.get("/api/options")(referee.options)
    app.post("/api/games")(referee.new_game)
    app.get("/api/games/{game_id}")(referee.view)
    app.post("/api/games/{game_id}/action")(referee.act)
    app.post("/api/games/{game_id}/step")(referee.step)
    app.delete("/api/games/{game_id}", status_code=204)(referee.drop)
    return app


def check_version(session: Session, version: int) -> None:
    """409 unless the page acted on the game as it is now."""
    if version != session.table.version:
        raise HTTPException(
            409, f"stale action: the game is at move {session.table.version}, your page showed move {version}; reload it"
        )


def serve(host: str, port: int, rules: Rules, bots: list[str]) -> int:
    """Run the server until interrupted; the exit status."""
    import uvicorn

    print(f"Euchre Lab: open http://{host}:{port} in a browser (Ctrl-C stops the server)")
    uvicorn.run(create_app(rules, (bots[0], bots[1])), host=host, port=port, log_level="warning")
    return 0
