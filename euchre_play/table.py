"""One game of Euchre between people and bots: the referee both front ends of play.py share.

The AEC env (`euchre_env.euchre_v0`) holds the game and applies every rule; a `Table` adds who sits
where (a person or a bot spec per seat), a record of the hand for people to read (the calls, each
trick and who took it, the hand's points, a log) and `view(seat)`: everything that seat may see and
nothing it may not (no other hand, no kitty card but the upcard, the buried card only to the dealer).
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from euchre_agents.base import Agent
from euchre_agents.registry import make_agent
from euchre_env import euchre_v0
from euchre_env.engine import EuchreState
from euchre_env.play import act
from euchre_env.cards import (
    CLUBS, DIAMONDS, HEARTS, LEFT_BOWER_STRENGTH, NUM_SEATS, RIGHT_BOWER_STRENGTH, SPADES, SUIT_NAMES,
    SUIT_SYMBOLS,
)
from euchre_env.rules import Rules

SEAT_NAMES = euchre_v0.SEAT_NAMES
TEAM_NAMES = ("N-S", "E-W")
PERSON = None
"""The player spec of a seat a person holds."""
BOT_LABELS = {
    "ppo": "ppo: the trained network (strongest fair bot)",
    "pimc": "pimc: searches sampled deals (second strongest)",
    "heuristic": "heuristic: a club player's rules",
    "easy": "easy: the heuristic's bids, never alone, a careless card now and then",
    "random": "random: any legal card (weakest)",
    "oracle": "oracle: CHEATS, sees every hand (not a fair opponent)",
}
"""The bots offered to people, by spec, strongest fair bot first as measured; any other registered spec works from
the command line."""


@dataclass(frozen=True)
class Level:
    """A level of play as a card site names it, and the bot of this project that plays it."""

    name: str
    spec: str
    about: str


LEVELS = {
    "easy": Level("Easy", "easy", "bids like a club player but never goes alone, and often plays a careless card"),
    "medium": Level("Medium", "heuristic", "plays like a club player: sound bids, counts the cards, alone with a sure march"),
    "hard": Level("Hard", "pimc", "looks ahead: tries each choice over many layouts of the cards it cannot see"),
    "expert": Level("Expert", "ppo", "a network that learned by playing millions of hands; only at the tables it learned"),
}
"""The levels people choose from, weakest first, by id."""
RANK_WORDS = {"7": "seven", "8": "eight", "9": "nine", "T": "ten", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}
SUIT_ORDER = (SPADES, HEARTS, CLUBS, DIAMONDS)
"""Suits in the order a hand is shown: colours alternate (rotated so that trump comes first)."""
BIDDING = ("bid_round_1", "bid_round_2")
LOG_LINES = 80


class PlayError(ValueError):
    """An action the game cannot take now (not your turn, unknown, illegal, game over); nothing changed."""


def bot_label(spec: str) -> str:
    """What to call a bot for people; the oracle is always labelled as cheating."""
    name, _, arg = spec.partition(":")
    if name == "oracle":
        return BOT_LABELS["oracle"]
    if name == "ppo" and arg:  # a checkpoint by its file name only: never a path of the server's disk
        return f"ppo: the trained network {Path(arg.split(',')[0]).name}"
    return BOT_LABELS.get(spec, spec)


def player_label(spec: str) -> str:
    """What a seat's player is called at the table: its level's name ('Hard') if it plays one, else its bot label."""
    level = next((level for level in LEVELS.values() if level.spec == spec), None)
    return level.name if level else bot_label(spec)


def card_text(name: str) -> str:
    """A card for people: 'TH' -> '10♥', 'JOKER' -> 'Joker'."""
    if name == "JOKER":
        return "Joker"
    rank = "10" if name[0] == "T" else name[0]
    return rank + SUIT_SYMBOLS["CDHS".index(name[1])]


def spoken_card(deck: Any, name: str, trump: str | None) -> str:
    """A card as a screen reader says it: 'jack of diamonds, left bower' (once trump is named), 'ace of hearts, trump'."""
    if name == "JOKER":
        return "joker, the highest trump" if trump else "joker"
    text = f"{RANK_WORDS[name[0]]} of {SUIT_NAMES['CDHS'.index(name[1])]}"
    if trump is None:
        return text
    strength = int(deck.trump_strength[SUIT_NAMES.index(trump), deck.card_id(name)])
    bower = {RIGHT_BOWER_STRENGTH: ", right bower", LEFT_BOWER_STRENGTH: ", left bower"}.get(strength, ", trump")
    return text + (bower if strength >= 0 else "")


@dataclass
class Trick:
    """One trick: who led, the cards in play order, and who took it once it is complete."""

    leader: int
    cards: list[tuple[int, str]] = field(default_factory=list)
    winner: int | None = None
    version: int = 0
    """The table's version when the trick was completed."""


@dataclass
class HandRecord:
    """What happened in one hand, in the order it happened (public facts only, but the dealer's discard)."""

    number: int
    dealer: int
    upcard: str
    calls: list[tuple[int, str, str, str]] = field(default_factory=list)
    """(seat, phase, action name, what it meant: 'order up ♥') for every bid and alone decision."""
    tricks: list[Trick] = field(default_factory=list)
    discard: str | None = None
    """The dealer's buried card: shown to the dealer only."""
    points: list[int] | None = None
    """Points each team scored, once the hand is over."""


@dataclass
class LogEntry:
    """A line of the game's log: the hand it belongs to, its text, and a text only `seat` sees instead."""

    hand: int
    text: str
    seat: int | None = None
    private: str = ""

    def seen_by(self, seat: int | None) -> dict[str, Any]:
        """The line as `seat` sees it."""
        text = self.private if self.seat is not None and self.seat == seat else self.text
        return {"hand": self.hand, "text": text}


@dataclass
class Progress:
    """Everything a Table records beside the env's game: rebuilt by replaying the actions on undo."""

    version: int = 0
    hand: HandRecord | None = None
    previous: HandRecord | None = None
    log: list[LogEntry] = field(default_factory=list)
    """The latest LOG_LINES lines of the log."""
    logged: int = 0
    """Log lines written since the game began."""


class Table:
    """A game to the target between the players of four seats (a bot spec each, or PERSON)."""

    def __init__(
        self,
        players: list[str | None],
        rules: Rules | None = None,
        seed: int | None = None,
        make_bot: Callable[[str, Any, int | None], Agent] = make_agent,
    ):
        """`make_bot(spec, engine, seed)` builds each bot (the registry's `make_agent` unless a server shares networks)."""
        if len(players) != NUM_SEATS:
            raise ValueError(f"a table has 4 seats; got {len(players)} players")
        self.env = euchre_v0.raw_env(rules=rules, episode="game")
        self.engine = self.env.engine
        self.rules = self.engine.rules
        self.players = list(players)
        self.bots: dict[int, Agent] = {}
        for seat, spec in enumerate(players):
            if spec is not PERSON:
                self.bots[seat] = make_bot(spec, self.engine, None if seed is None else seed * 4 + seat)
        self.seed = secrets.randbits(63) if seed is None else seed
        """The deals' seed (a fresh one unless given): `restore` deals the same game again from it."""
        self._start()

    @classmethod
    def replayed(
        cls, players: list[str | None], rules: Rules, seed: int, actions: list[tuple[int, int]], make_bot=make_agent
    ) -> "Table":
        """The table of the game dealt from `seed` after `actions` ((seat, action id) each): a saved game rebuilt.
        ValueError if an action was not that seat's legal move then."""
        table = cls(players, rules, seed, make_bot)
        for seat, action in actions:
            if seat != table.to_play or action not in table.legal():
                raise ValueError(f"the saved game's move {table.version + 1} ({seat}, {action}) is not legal")
            table._apply(seat, action)
        return table

    def _start(self) -> None:
        self.env.reset(seed=self.seed)
        self.progress = Progress()
        self.actions: list[tuple[int, int]] = []
        """(seat, action id) of every action so far."""
        self._new_hand(self.env.public_state())

    # ------------------------------------------------------------------ state

    @property
    def version(self) -> int:
        """Number of actions taken so far: a client sends it back to show which state it acted on."""
        return self.progress.version

    @property
    def over(self) -> bool:
        """The game has been won."""
        return self.env.public_state()["phase"] == "game_over"

    @property
    def to_play(self) -> int | None:
        """Seat to act, or None once the game is over."""
        return None if self.over else self.env.public_state()["to_play"]

    def bot_to_play(self) -> bool:
        """A bot is to act."""
        seat = self.to_play
        return seat is not None and seat in self.bots

    def winner(self) -> int | None:
        """The winning team (0 = N-S, 1 = E-W) once the game is over."""
        if not self.over:
            return None
        return int(self.engine.game_winner(self.env.state_)[0])

    def name(self, seat: int) -> str:
        """A seat as people call it: 'West', or 'South (you)' for a person."""
        return SEAT_NAMES[seat] + (" (you)" if self.players[seat] is PERSON else "")

    # ------------------------------------------------------------------ acting

    def legal(self) -> list[int]:
        """Legal action ids of the seat to act (none once the game is over)."""
        return [] if self.over else self.env.legal_actions()

    def act(self, seat: int, name: str) -> None:
        """Seat `seat` takes the action called `name` ('JH', 'pass', 'hearts', 'alone', ...); PlayError if it can't."""
        if self.over:
            raise PlayError("the game is over; start a new game")
        if seat != self.to_play:
            raise PlayError(f"it is {self.name(self.to_play)}'s turn, not {self.name(seat)}'s")
        legal = self.legal()
        try:
            action = self.env.action_id(str(name))
        except ValueError:
            raise PlayError(f"unknown action {name!r}; legal now: {self.legal_text(legal)}") from None
        if action not in legal:
            raise PlayError(f"{self.env.action_name(action)} is not legal now; legal now: {self.legal_text(legal)}")
        self._apply(seat, action)

    def step_bot(self) -> None:
        """The bot on turn takes its action (PlayError if a person is to act or the game is over)."""
        seat = self.to_play
        if seat is None or seat not in self.bots:
            raise PlayError("no bot is to act")
        seen = self.env.observe(euchre_v0.AGENTS[seat])
        obs, mask = seen["observation"][None], seen["action_mask"].astype(bool)[None]
        action = act(self.bots[seat], obs, mask, self.env.state_, np.array([0]), label=self.players[seat], engine=self.engine)
        self._apply(seat, int(action[0]))

    def legal_text(self, legal: list[int]) -> str:
        """Legal action names, for an error message."""
        return ", ".join(self.env.action_name(a) for a in legal)

    def snapshot(self) -> Any:
        """This moment, to come back to with `restore`: the number of actions so far and the bots' dice."""
        return self.version, {s: copy.deepcopy(b.rng.bit_generator.state) for s, b in self.bots.items()}

    def restore(self, snapshot: Any) -> None:
        """Go back to a moment saved by `snapshot`: deal the game again and replay its actions up to then."""
        version, dice = snapshot
        actions = self.actions[:version]
        self._start()
        for seat, action in actions:
            self._apply(seat, action)
        for seat, state in dice.items():
            self.bots[seat].rng.bit_generator.state = copy.deepcopy(state)

    # ------------------------------------------------------------------ the record

    def _apply(self, seat: int, action: int) -> None:
        before = self.env.public_state()
        before_state = self.env.state_.copy()
        self.env.step(action)
        self.actions.append((seat, action))
        after = self.env.public_state()
        self.progress.version += 1
        name = self.env.action_name(action)
        if before["phase"] == "play":
            self._record_card(seat, name, before, before_state)
        elif before["phase"] == "discard":
            self.progress.hand.discard = name
            self._log(f"{self.name(seat)} discards a card", seat, f"{self.name(seat)} discards {card_text(name)}")
        else:
            label = self.call_label(before, seat, action)
            self.progress.hand.calls.append((seat, before["phase"], name, label))
            self._log(f"{self.name(seat)}: {label}")
        if after["hand_number"] != before["hand_number"] or after["phase"] == "game_over":
            self._end_hand(before, after)
        elif self._thrown_in(before_state):
            self._log("Everyone passed twice: the hand is thrown in and dealt again")
            self._new_hand(after)

    def _record_card(self, seat: int, name: str, before: dict, before_state: EuchreState) -> None:
        hand = self.progress.hand
        if not before["current_trick"]:
            hand.tricks.append(Trick(leader=seat))
        trick = hand.tricks[-1]
        trick.cards.append((seat, name))
        self._log(f"{self.name(seat)}: {card_text(name)}")
        winner = self._trick_taker(before_state)
        if winner is not None:
            trick.winner = winner
            trick.version = self.progress.version
            self._log(f"{self.name(trick.winner)} takes the trick")

    def _trick_taker(self, before_state: EuchreState) -> int | None:
        """The seat that took the trick the last card completed, as the engine records it, or None if the trick goes on.

        A finished trick moves the trick index on (or, after the fifth, the next deal resets it), and
        `last_trick_winner` outlives that deal."""
        state = self.env.state_
        if int(state.trick_index[0]) == int(before_state.trick_index[0]):
            return None
        return int(state.last_trick_winner[0])

    def _thrown_in(self, before_state: EuchreState) -> bool:
        """The last step threw the hand in (and dealt again), as the state records it."""
        state = self.env.state_
        return bool(state.thrown_in[0]) and int(state.deal_count[0]) != int(before_state.deal_count[0])

    def _end_hand(self, before: dict, after: dict) -> None:
        hand = self.progress.hand
        hand.points = self.env.state_.hand_points[0].tolist()
        team = 0 if hand.points[0] else 1
        maker_team = before["maker"] % 2
        how = "make it" if team == maker_team else "euchre the makers"
        self._log(f"{TEAM_NAMES[team]} {how}: +{hand.points[team]} (score {after['score'][0]}-{after['score'][1]})")
        if after["phase"] == "game_over":
            winner = self.winner()
            self._log(f"Game over: {TEAM_NAMES[winner]} win {after['score'][winner]}-{after['score'][1 - winner]}")
        else:
            self._new_hand(after)

    def _new_hand(self, pub: dict) -> None:
        """A new deal (hands are numbered by deal: a thrown-in hand's redeal is the next number)."""
        previous = self.progress.previous = self.progress.hand
        number = previous.number + 1 if previous else 1
        self.progress.hand = HandRecord(number=number, dealer=pub["dealer"], upcard=pub["upcard"])
        self._log(f"Hand {number}: {SEAT_NAMES[pub['dealer']]} deals, {card_text(pub['upcard'])} turned up")

    def _log(self, text: str, seat: int | None = None, private: str = "") -> None:
        self.progress.log.append(LogEntry(self.progress.hand.number, text, seat, private))
        self.progress.logged += 1
        del self.progress.log[:-LOG_LINES]

    def log_since(self, count: int, seat: int | None) -> tuple[list[str], int]:
        """Log lines (as `seat` sees them) written after the first `count`, and the count now."""
        log, logged = self.progress.log, self.progress.logged
        new = log[max(0, len(log) - (logged - count)) :] if count < logged else []
        return [entry.seen_by(seat)["text"] for entry in new], logged

    def call_label(self, pub: dict, seat: int, action: int) -> str:
        """What a bid or alone decision means at this point: 'order up ♥', 'pick it up ♥', 'name ♠', 'go alone'."""
        name = self.env.action_name(action)
        phase = pub["phase"]
        if name in SUIT_NAMES:
            symbol = SUIT_SYMBOLS[SUIT_NAMES.index(name)]
            if phase == "bid_round_1":
                return f"pick it up {symbol}" if seat == pub["dealer"] else f"order up {symbol}"
            return f"name {symbol} {name}"
        if phase == "defender_alone":
            return "defend alone" if name == "alone" else "defend with partner"
        return {"alone": "go alone", "partner": "play with partner"}.get(name, name)

    # ------------------------------------------------------------------ what a seat sees

    def sorted_hand(self, cards: list[str], trump: str | None) -> list[str]:
        """Cards by suit (trump first once named, the bowers and joker as trump), high to low in each suit."""
        deck = self.engine.deck
        t = SUIT_NAMES.index(trump) if trump else None
        order = list(SUIT_ORDER)
        if t is not None:
            i = order.index(t)
            order = order[i:] + order[:i]

        def key(name: str) -> tuple[int, int]:
            c = deck.card_id(name)
            if t is None:
                suit = int(deck.suit[c])
                return (-1 if suit < 0 else order.index(suit), -int(deck.rank[c]))
            suit = int(deck.effective_suit[t, c])
            strength = int(deck.trump_strength[t, c]) if suit == t else int(deck.rank[c])
            return order.index(suit), -strength

        return sorted(cards, key=key)

    def view(self, seat: int | None) -> dict[str, Any]:
        """What `seat` may see, as plain JSON-ready values; seat None is a spectator of a bots-only game
        (every hand shown), refused while a person plays."""
        if seat is None and PERSON in self.players:
            raise PlayError("a spectator's view (every hand) is only for games of four bots")
        pub = self.env.public_state()
        hand = self.progress.hand
        view = {
            "version": self.version,
            "you": seat,
            "seats": [self._seat_view(s) for s in range(NUM_SEATS)],
            "target": self.rules.target_points,
            "phase": pub["phase"],
            "to_play": self.to_play,
            "over": self.over,
            "winner": self.winner(),
            "hand_number": hand.number,
            "dealer": pub["dealer"],
            "upcard": pub["upcard"],
            "upcard_turned_down": pub["upcard_turned_down"],
            "calls": [{"seat": s, "phase": p, "action": a, "label": label} for s, p, a, label in hand.calls],
            "trump": pub["trump"],
            "maker": pub["maker"],
            "alone": pub["alone"],
            "sitting_out": pub["sitting_out"],
            "trick": [{"seat": s, "card": c} for s, c in pub["current_trick"]],
            "last_trick": self._last_trick(),
            "tricks_won": pub["tricks_won"],
            "score": pub["score"],
            "last_hand": self._hand_summary(hand if hand.points is not None else self.progress.previous),
            "log": [entry.seen_by(seat) for entry in self.progress.log],
        }
        view.update(self._private_view(seat, pub))
        view["card_names"] = self._card_names(view)
        return view

    def _card_names(self, view: dict[str, Any]) -> dict[str, str]:
        """Every card the view shows, as a screen reader says it (bowers and trump named once trump is made)."""
        shown = [*view["hand"], *(c for hand in view.get("hands", []) for c in hand), view["upcard"]]
        shown += [t["card"] for t in view["trick"]] + [t["card"] for t in (view["last_trick"] or {}).get("cards", [])]
        shown += [view["discard"]] if view["discard"] else []
        return {name: spoken_card(self.engine.deck, name, view["trump"]) for name in shown}

    def _private_view(self, seat: int | None, pub: dict) -> dict[str, Any]:
        if seat is None:
            hands = [self.sorted_hand(self.env.private_state(a)["hand"], pub["trump"]) for a in euchre_v0.AGENTS]
            return {"hand": [], "hands": hands, "discard": self.progress.hand.discard, "legal": self._legal_view(pub)}
        mine = self.env.private_state(euchre_v0.AGENTS[seat])
        legal = self._legal_view(pub) if seat == self.to_play else []
        return {"hand": self.sorted_hand(mine["hand"], pub["trump"]), "discard": mine["discard"], "legal": legal}

    def _legal_view(self, pub: dict) -> list[dict[str, str]]:
        """The legal actions with labels for people, cards in the order the hand is shown."""
        out = []
        shown = {name: i for i, name in enumerate(self.sorted_hand(list(self.engine.deck.names), pub["trump"]))}
        for a in sorted(self.legal(), key=lambda a: shown.get(self.env.action_name(a), len(shown) + a)):
            name = self.env.action_name(a)
            if a < self.engine.num_cards:
                label = ("bury " if pub["phase"] == "discard" else "") + card_text(name)
                out.append({"action": name, "label": label, "kind": "card"})
            else:
                out.append({"action": name, "label": self.call_label(pub, pub["to_play"], a), "kind": "call"})
        return out

    def _seat_view(self, seat: int) -> dict[str, Any]:
        spec = self.players[seat]
        return {
            "seat": seat,
            "name": SEAT_NAMES[seat],
            "team": seat % 2,
            "player": "you" if spec is PERSON else player_label(spec),
            "cards_left": self._cards_left(seat),
        }

    def _cards_left(self, seat: int) -> int:
        """Cards the seat has yet to play this hand (the state's cards dealt to it less those it played)."""
        s = self.env.state_
        if not s.active[0, seat]:
            return 0
        return int(s.dealt[0, seat].sum()) - int((s.card_player[0] == seat).sum())

    def _last_trick(self) -> dict[str, Any] | None:
        for hand in (self.progress.hand, self.progress.previous):
            done = [t for t in (hand.tricks if hand else []) if t.winner is not None]
            if done:
                t = done[-1]
                return {"cards": [{"seat": s, "card": c} for s, c in t.cards], "winner": t.winner, "version": t.version}
        return None

    def _hand_summary(self, hand: HandRecord | None) -> dict[str, Any] | None:
        if hand is None or hand.points is None:
            return None
        taken = [sum(1 for t in hand.tricks if t.winner is not None and t.winner % 2 == team) for team in range(2)]
        return {"number": hand.number, "points": hand.points, "tricks": taken}
