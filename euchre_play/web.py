"""The web front end of play.py: a FastAPI server that referees games played by clicking in a page.

The server holds every game (a `Table`) behind an unguessable id and deals its cards itself (a client
may choose the seed only on a server started to allow it, for replays and tests); the page sends
action names with the version of the game it saw, and gets back only its own seat's view. An illegal
action (400) or a stale one (409) changes nothing. Bots move one at a time when the page asks
(`/step`), so the page paces them; their moves run in a thread pool, so one game's search never holds
up another's requests, and every game that plays the same checkpoint shares one network.

Every move is written to the games file (`euchre_play.store`) as it is made, so a game in progress
survives a restart and its id answers as before. A timer sweeps games out of memory: finished ones a
few minutes after their last request, abandoned ones after half an hour (both stay on disk). Each
client may hold a few live games at once, so that no one client can fill the server.

    GET    /                          the page
    GET    /api/options               levels, bots, named tables and rules (in plain words) the page may choose
    POST   /api/levels                {rules} -> the levels, each playable at that table or why not
    POST   /api/games                 {partner, opponents, rules, seat[, seed][, replaces]} -> view of a new game
    GET    /api/games/{id}            view
    POST   /api/games/{id}/action     {action, version} -> view
    POST   /api/games/{id}/step       {version} -> view after one bot move
    DELETE /api/games/{id}            drop the game
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import copy
import dataclasses
import functools
import json
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from euchre_agents.base import Agent
from euchre_agents.registry import make_agent
from euchre_env.cards import NUM_SEATS
from euchre_env.engine import Engine
from euchre_env.named_tables import DESCRIPTIONS, NAMED_TABLES
from euchre_env.rules import FIRST_DEALER_CUT, FIRST_DEALER_RANDOM, LEAD_LEFT_OF_DEALER, LEAD_LEFT_OF_LONE_PLAYER, Rules, RulesError
from euchre_play.guard import Guard, allowed_hosts, install_error_handlers, is_loopback, short
from euchre_play.store import ABANDONED, DROPPED, LIVE, MEMORY, GameStore
from euchre_play.table import BOT_LABELS, LEVELS, PERSON, PlayError, Table, bot_label

STATIC = Path(__file__).resolve().parent / "static"
MAX_GAMES = 200
MAX_GAMES_PER_CLIENT = 10
IDLE_SECONDS = 30 * 60
FINISHED_SECONDS = 5 * 60
SWEEP_SECONDS = 30.0
HIDDEN_RULES = ("rubber_games", "rubber_bonus", "throw_in_ends_hand_episode")
"""Rules that do not change a game to the target (rubbers, one-hand episodes): not offered on the page."""
RULE_WORDS = {
    "deck": ("Cards", "how many cards: 9 to ace in each suit, or 7 to ace", {24: "24 (9 to ace)", 32: "32 (7 to ace)"}),
    "joker": ("Joker", "a joker joins the deck as the highest trump of all", {}),
    "stick_the_dealer": ("Stick the dealer", "if everyone passes twice, the dealer must name a suit", {}),
    "throw_in_same_dealer": ("Same dealer after a throw-in",
                             "when all pass twice, the same dealer deals again (off: the deal moves left)", {}),
    "alone_when_naming": ("Alone with the bid",
                          "a player says alone as trump is named (off: after the dealer's discard)", {}),
    "lone_defender": ("Lone defenders", "a defender may also play alone against the makers", {}),
    "lone_defender_euchre_points": ("Lone defender's euchre", "points a lone defender scores for 3 or 4 tricks",
                                    {2: "2 points", 4: "4 points"}),
    "lone_lead": ("Lead against a loner", "who leads when someone plays alone",
                  {LEAD_LEFT_OF_DEALER: "left of the dealer", LEAD_LEFT_OF_LONE_PLAYER: "left of the lone player"}),
    "dealer_may_bury_upcard": ("Dealer may bury the upcard", "the dealer may discard the very card just picked up", {}),
    "target_points": ("Points to win", "the first side to this many points wins the game", {}),
    "first_dealer": ("First dealer", "who deals the first hand",
                     {FIRST_DEALER_CUT: "cut for it", FIRST_DEALER_RANDOM: "a seat at random"}),
}
"""Each rule the page offers in plain words: (title, one line on what it does, a label per choice)."""
RULE_CHOICES = {name: list(labels) for name, (_, _, labels) in RULE_WORDS.items() if labels}
"""The rules offered as a choice among a few values (the others are on/off or a number)."""
MAX_REFUSALS = 4096
"""Tables whose answer `SharedBots.refusal` keeps before it starts again."""
SEED_REFUSED = "this server deals the cards itself: a client may not choose the seed (a server started with --allow-client-seeds accepts one, for replays and tests)"


class Strict(BaseModel):
    """A request body: exact JSON types (no "1" or true for a number), no unknown fields."""

    model_config = ConfigDict(strict=True, extra="forbid")


class NewGame(Strict):
    """A new game's request: a level id or a bot spec for the partner and the opponents; `replaces` is the
    unfinished game of this client that the new one takes the place of."""

    partner: str | None = Field(None, max_length=200)
    opponents: str | None = Field(None, max_length=200)
    rules: dict[str, Any] = Field(default_factory=dict, max_length=64)
    seat: int = 0
    seed: int | None = Field(None, ge=0, lt=2**63)
    replaces: str | None = Field(None, max_length=64)


class LevelsAt(Strict):
    """A table's rules, to ask which levels can play it."""

    rules: dict[str, Any] = Field(default_factory=dict, max_length=64)


class Move(Strict):
    """An action (`JH`, `pass`, `hearts`, `alone`, ...) and the version of the game it was chosen in."""

    action: str = Field("", max_length=32)
    version: int


class Step(Strict):
    """A request for one bot move, with the version of the game the page shows."""

    version: int


@dataclass
class Session:
    """One game in memory: its table, the person's seat, who started it, a lock, when it was last used,
    and how many of its decisions are on disk."""

    table: Table
    seat: int
    client: str = ""
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    touched: float = field(default_factory=time.monotonic)
    saved: int = 0


class Games:
    """The games in memory, by id, over the games file; `sweep` puts finished and abandoned ones away."""

    def __init__(
        self,
        store: GameStore | None = None,
        max_games: int = MAX_GAMES,
        per_client: int = MAX_GAMES_PER_CLIENT,
        idle_seconds: float = IDLE_SECONDS,
        finished_seconds: float = FINISHED_SECONDS,
    ):
        self.sessions: dict[str, Session] = {}
        self.store = store or GameStore(MEMORY)
        self.max_games, self.per_client = max_games, per_client
        self.idle_seconds, self.finished_seconds = idle_seconds, finished_seconds

    def admit(self, client: str, leaving: str | None = None) -> None:
        """503 if the server is full, 429 if `client` already plays its share of live games (not counting
        `leaving`, its game that the new one replaces)."""
        if len(self.sessions) - (leaving in self.sessions) >= self.max_games:
            raise HTTPException(503, f"the server is full ({self.max_games} games); try again in a few minutes")
        mine = sum(1 for i, s in self.sessions.items() if s.client == client and not s.table.over and i != leaving)
        if mine >= self.per_client:
            raise HTTPException(429, f"you have {mine} games in progress, the most one client may; finish or leave one first")

    def add(self, session: Session, players: list[str | None]) -> str:
        """Keep a new game in memory and on disk; its id (unguessable)."""
        game_id = secrets.token_urlsafe(18)
        table = session.table
        self.store.add_game(game_id, session.seat, players, table.rules.to_dict(), table.seed)
        self.sessions[game_id] = session
        self.save(game_id, session)
        return game_id

    def replaceable(self, game_id: str | None, client: str) -> str | None:
        """`game_id` if it is an unfinished game of `client` in memory (one it may replace), else None."""
        session = self.sessions.get(game_id) if game_id else None
        return game_id if session is not None and session.client == client and not session.table.over else None

    def get(self, game_id: str) -> Session | None:
        """The game with this id if it is in memory (touched: it is in use)."""
        session = self.sessions.get(game_id)
        if session is not None:
            session.touched = time.monotonic()
        return session

    def save(self, game_id: str, session: Session) -> None:
        """Write the game's decisions made since the last save (and whether it is over)."""
        actions = session.table.actions
        if len(actions) > session.saved or session.table.over:
            self.store.add_decisions(game_id, session.saved, actions[session.saved :], session.table.over)
            session.saved = len(actions)

    def drop(self, game_id: str, status: str = DROPPED) -> None:
        """Take a game out of memory, marking it `status` on disk unless it is finished."""
        self.sessions.pop(game_id, None)
        self.store.set_status(game_id, status)

    def sweep(self) -> None:
        """Put away games finished more than `finished_seconds` ago or untouched for `idle_seconds`."""
        now = time.monotonic()
        for game_id, s in list(self.sessions.items()):
            limit = self.finished_seconds if s.table.over else self.idle_seconds
            if now - s.touched > limit and not s.lock.locked():
                self.drop(game_id, ABANDONED)
        self.store.abandon_idle(self.idle_seconds, keep=set(self.sessions))


class SharedBots:
    """Builds a game's bots, with one network per checkpoint and rules shared by every game that plays it
    (each game's bot has its own dice); other bots are built for each game."""

    def __init__(self) -> None:
        self.networks: dict[tuple[str, str], Agent] = {}
        self.refusals: dict[tuple[str, str], str | None] = {}
        self.lock = threading.Lock()

    def refusal(self, spec: str, rules: Rules) -> str | None:
        """Why the registry cannot build `spec` for a table of `rules`, in a card player's words, or None when it can."""
        key = (spec, json.dumps(rules.to_dict(), sort_keys=True))
        if key not in self.refusals:
            if len(self.refusals) >= MAX_REFUSALS:
                self.refusals.clear()
            try:
                self(spec, Engine(rules), 0)
                self.refusals[key] = None
            except ValueError as err:  # such as a checkpoint made for other rules
                self.refusals[key] = plain_refusal(str(err))
        return self.refusals[key]

    def __call__(self, spec: str, engine: Engine, seed: int | None) -> Agent:
        """A bot of `spec` for `engine`, seeded with `seed` (fresh dice if None)."""
        if spec.partition(":")[0] != "ppo":
            return make_agent(spec, engine, seed)
        key = (spec, json.dumps(engine.rules.to_dict(), sort_keys=True))
        with self.lock:
            if key not in self.networks:
                self.networks[key] = make_agent(spec, engine, 0)
            bot = copy.copy(self.networks[key])
        bot.reseed(seed)
        return bot


@functools.lru_cache(maxsize=16)
def checkpoint_rules(spec: str) -> dict[str, Any] | None:
    """The rules a `ppo` spec's checkpoint plays (the only ones it can), or None if it cannot be read."""
    from euchre_agents.checkpoint import CheckpointError, load_checkpoint

    path = spec.partition(":")[2].split(",")[0]
    if not path:  # the bare ppo: the shipped agent of whichever table is played
        return None
    try:
        return Rules.from_dict(load_checkpoint(path)["rules"]).to_dict()
    except (CheckpointError, OSError, ValueError, KeyError, TypeError):
        return None


def offered_bots(defaults: tuple[str, str]) -> dict[str, dict[str, Any]]:
    """The bots a page may choose, strongest first: label, fairness and, for a checkpoint, the rules it plays."""
    out = {}
    for spec in [*BOT_LABELS, *defaults]:
        if spec in out:
            continue
        rules = checkpoint_rules(spec) if spec.partition(":")[0] == "ppo" else None
        if spec.partition(":")[0] == "ppo" and spec != "ppo" and rules is None and spec not in defaults:
            continue  # no checkpoint there: not offered (the bare ppo plays each table's own: see `refusal`)
        out[spec] = {"spec": spec, "label": bot_label(spec), "fair": not spec.startswith("oracle"), "rules": rules}
    return out


def rule_options() -> list[dict[str, Any]]:
    """The rules the page offers: name, plain title, what it does, default, kind (bool, int, choice) and choices."""
    out = []
    for f in dataclasses.fields(Rules):
        if f.name in HIDDEN_RULES:
            continue
        kind = "bool" if isinstance(f.default, bool) else "choice" if f.name in RULE_CHOICES else "int"
        title, about, labels = RULE_WORDS[f.name]
        choices = [{"value": c, "label": labels[c]} for c in RULE_CHOICES.get(f.name, [])]
        out.append({"name": f.name, "title": title, "about": about, "default": f.default, "kind": kind, "choices": choices})
    return out


def plain_refusal(error: str) -> str:
    """A bot's refusal of a table, for a card player: the rules it was made without, never a path or a layout."""
    titles = [RULE_WORDS[name][0].lower() for name in re.findall(r"rules\.(\w+)", error) if name in RULE_WORDS]
    if titles:
        return f"it learned a table with other rules ({', '.join(dict.fromkeys(titles))})"
    if error.startswith("no learned agent is shipped"):
        return "no computer player has learned this table yet"
    return "its bot cannot be built for these rules"


def without_paths(text: str) -> str:
    """`text` with each quoted absolute path cut to its file name: a client never learns the server's folders."""
    return re.sub(r"(['\"])/(?:[^'\"/]+/)*([^'\"/]+)\1", r"\1\2\1", text)


def named_tables() -> list[dict[str, Any]]:
    """The named tables a page may pick whole: name, one line, and their rules."""
    return [{"name": name, "about": DESCRIPTIONS[name], "rules": rules.to_dict()} for name, rules in NAMED_TABLES.items()]


def client_of(http: Request) -> str:
    """Who is asking, for the per-client limit: the peer's address."""
    return http.client.host if http.client else "unknown"


class Referee:
    """What the routes do: build games from requests, apply moves, move bots in a thread pool.

    Every route is a coroutine, so the games (and the games file) are only touched from the event loop's thread."""

    def __init__(self, rules: Rules, bots: tuple[str, str], games: Games, workers: int, allow_client_seeds: bool):
        self.rules, self.bots, self.games = rules, bots, games
        self.allow_client_seeds = allow_client_seeds
        self.offered = offered_bots(bots)
        self.make_bot = SharedBots()
        self.workers = workers
        self.pool = self.new_pool()

    def new_pool(self) -> ThreadPoolExecutor:
        """Threads for the bots (a new set each time the app starts: stopping it shuts them down)."""
        return ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="euchre-bot")

    async def in_pool(self, fn, *args):
        """Run `fn(*args)` in a bot thread, so the server answers other requests meanwhile."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, fn, *args)

    async def options(self) -> dict[str, Any]:
        """The levels (playable at the default table or why not), bots, named tables and rules a page may choose,
        with the server's defaults (a level's id where a default bot plays one)."""
        defaults = {"partner": choice_of(self.bots[0]), "opponents": choice_of(self.bots[1]), "rules": self.rules.to_dict()}
        return {
            "levels": await self.in_pool(self.levels_at, self.rules),
            "bots": list(self.offered.values()),
            "tables": named_tables(),
            "defaults": defaults,
            "rules": rule_options(),
        }

    async def levels(self, request: LevelsAt) -> dict[str, Any]:
        """The levels, each playable at the table of `request.rules` or with one line on why not."""
        return {"levels": await self.in_pool(self.levels_at, self.rules_of(request.rules))}

    def levels_at(self, rules: Rules) -> list[dict[str, Any]]:
        """Each level (weakest first): id, name, what it plays like, its bot, and whether it can play `rules`."""
        out = []
        for level_id, level in LEVELS.items():
            why = self.make_bot.refusal(level.spec, rules) if level.spec in self.offered else "not installed on this server"
            out.append({"id": level_id, "name": level.name, "about": level.about, "spec": level.spec,
                        "available": why is None, "why": None if why is None else f"{level.name} can't play this table: {why}"})
        return out

    def rules_of(self, changes: dict[str, Any]) -> Rules:
        """The server's default rules with `changes`; 400 naming the bad option."""
        try:
            return Rules.from_dict({**self.rules.to_dict(), **changes})
        except (RulesError, TypeError, ValueError) as err:
            raise HTTPException(400, str(err)) from None

    def spec_of(self, choice: str) -> str:
        """The bot spec of a level id or of an offered spec; 400 naming the choices otherwise."""
        spec = LEVELS[choice].spec if choice in LEVELS else choice
        if spec not in self.offered:
            raise HTTPException(400, f"bot {short(choice, 60)!r} is not offered here; choose a level ({', '.join(LEVELS)}) "
                                     f"or one of {', '.join(self.offered)}")
        return spec

    async def new_game(self, request: NewGame, http: Request) -> dict[str, Any]:
        """A new game from the page's choices, in place of the client's unfinished game `replaces` if it names one;
        4xx naming the problem if a choice is not allowed (and then the old game plays on)."""
        if request.seed is not None and not self.allow_client_seeds:
            raise HTTPException(403, SEED_REFUSED)
        partner, opponents = self.spec_of(request.partner or self.bots[0]), self.spec_of(request.opponents or self.bots[1])
        if request.seat not in range(NUM_SEATS):
            raise HTTPException(400, f"seat must be 0-3, got {short(request.seat, 20)}")
        client = client_of(http)
        leaving = self.games.replaceable(request.replaces, client)
        self.games.admit(client, leaving)
        players: list[str | None] = [opponents] * NUM_SEATS
        players[request.seat], players[(request.seat + 2) % NUM_SEATS] = PERSON, partner
        rules = self.rules_of(request.rules)
        await self.check_levels({request.partner, request.opponents}, rules)
        try:
            table = await self.in_pool(Table, players, rules, request.seed, self.make_bot)
        except (RulesError, TypeError, ValueError) as err:  # ValueError: such as a checkpoint trained for other rules
            raise HTTPException(400, without_paths(str(err))) from None
        leaving = self.games.replaceable(leaving, client)  # again: it may have ended or been left while this one was dealt
        self.games.admit(client, leaving)
        if leaving:
            self.games.drop(leaving)
        session = Session(table, request.seat, client)
        return view_of(self.games.add(session, players), session)

    async def check_levels(self, choices: set[str | None], rules: Rules) -> None:
        """400 with the level's own line if a level among `choices` cannot play `rules`."""
        if not choices & set(LEVELS):
            return
        levels = await self.in_pool(self.levels_at, rules)
        refused = [level["why"] for level in levels if level["id"] in choices and level["why"]]
        if refused:
            raise HTTPException(400, refused[0])

    async def session(self, game_id: str) -> Session:
        """The game with this id, rebuilt from the games file if it is live there but not in memory (after a
        restart); 404 if there is none (never was, finished and put away, abandoned, or dropped)."""
        session = self.games.get(game_id)
        if session is not None:
            return session
        saved = self.games.store.game(game_id) if len(game_id) < 64 else None
        if saved is None or saved.status != LIVE:
            raise HTTPException(404, "no such game (it may have been put away after it ended or was left); start a new game")
        try:
            rules = Rules.from_dict(saved.rules)
            table = await self.in_pool(Table.replayed, saved.players, rules, saved.seed, saved.actions, self.make_bot)
        except (RulesError, TypeError, ValueError) as err:
            why = without_paths(str(err))
            raise HTTPException(409, f"this saved game can no longer be rebuilt here ({why}); start a new game") from None
        session = self.games.get(game_id)  # another request may have rebuilt it meanwhile
        if session is None:
            session = self.games.sessions[game_id] = Session(table, saved.seat, saved=len(saved.actions))
        return session

    async def view(self, game_id: str) -> dict[str, Any]:
        """The person's view of a game (never while one of its bots is moving)."""
        session = await self.session(game_id)
        async with session.lock:
            return view_of(game_id, session)

    async def act(self, game_id: str, move: Move) -> dict[str, Any]:
        """The person's action: 409 if stale, 400 if not allowed now, else the new view."""
        session = await self.session(game_id)
        async with session.lock:
            check_version(session, move.version)
            try:
                session.table.act(session.seat, move.action)
            except PlayError as err:
                raise HTTPException(400, str(err)) from None
            self.games.save(game_id, session)
            return view_of(game_id, session)

    async def step(self, game_id: str, request: Step) -> dict[str, Any]:
        """One bot move, in the pool: 409 if stale or if no bot is to play."""
        session = await self.session(game_id)
        async with session.lock:
            check_version(session, request.version)
            if not session.table.bot_to_play():
                raise HTTPException(409, "no bot is to play: it is your turn, or the game is over")
            await self.in_pool(session.table.step_bot)
            self.games.save(game_id, session)
            return view_of(game_id, session)

    async def drop(self, game_id: str) -> None:
        """Forget a game (404 if there is none)."""
        await self.session(game_id)
        self.games.drop(game_id)


def view_of(game_id: str, session: Session) -> dict[str, Any]:
    """What the server sends about a game: its id, the person's view and the table's rules."""
    return {"id": game_id, **session.table.view(session.seat), "rules": session.table.rules.to_dict()}


def choice_of(spec: str) -> str:
    """The id of the level `spec` plays, or `spec` itself when it plays none."""
    return next((level_id for level_id, level in LEVELS.items() if level.spec == spec), spec)


def create_app(
    rules: Rules | None = None,
    bots: tuple[str, str] = ("heuristic", "heuristic"),
    games: Games | None = None,
    workers: int = 4,
    *,
    allow_client_seeds: bool = False,
    hosts: set[str] | None = None,
    api_docs: bool = False,
    sweep_seconds: float = SWEEP_SECONDS,
) -> FastAPI:
    """The web app, behind its guard: default rules, default (partner, opponents) specs, the games, bot threads;
    whether a client may choose the seed, the Host names served (loopback's by default), API docs on or off,
    and how often the timer sweeps games out of memory."""
    referee = Referee(rules or Rules(), bots, games or Games(), workers, allow_client_seeds)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        async def sweep_now_and_then() -> None:
            while True:
                await asyncio.sleep(sweep_seconds)
                referee.games.sweep()

        referee.pool = referee.new_pool()  # an app may start again after a stop (as tests do)
        sweeper = asyncio.create_task(sweep_now_and_then())
        yield
        sweeper.cancel()
        referee.pool.shutdown(wait=False, cancel_futures=True)

    docs = {"docs_url": "/docs", "redoc_url": None, "openapi_url": "/openapi.json"} if api_docs else {
        "docs_url": None, "redoc_url": None, "openapi_url": None}
    app = FastAPI(title="Euchre Lab: play against the bots", lifespan=lifespan, **docs)
    install_error_handlers(app)
    app.add_middleware(Guard, hosts=hosts or allowed_hosts("127.0.0.1"))
    app.state.games = referee.games
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.get("/", include_in_schema=False)(page)
    app.get("/api/options")(referee.options)
    app.post("/api/levels")(referee.levels)
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
            409, f"stale action: the game is at move {session.table.version}, your page showed move {short(version, 24)}; reload it"
        )


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port), so that a port in use is known before the server says where to go."""
    # IPPROTO_TCP named, so that asyncio sets TCP_NODELAY on its connections (else replies wait ~40 ms for an ACK)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port} ({err.strerror or err}); choose another --port or --host") from None
    return sock


def serve(app: FastAPI, host: str, port: int) -> int:
    """Run the server until interrupted; the exit status. OSError (one line) if it cannot listen there."""
    import uvicorn

    sock = listening_socket(host, port)
    if not is_loopback(host):
        print(f"warning: listening on {host}, beyond this machine: anyone who can reach it may play (and fill it)")
    print(f"Euchre Lab: open http://{'localhost' if host in ('0.0.0.0', '::') else host}:{port} in a browser (Ctrl-C stops the server)")
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    return 0
