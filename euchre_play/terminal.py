"""The terminal front end of play.py: a whole game against the bots at a terminal, drawn with rich.

You answer each decision with a number from the list of legal actions or an action's name
(`JH`, `10h`, `j♥`, `pass`, `order up`, `hearts`, `alone`); `u` takes back your last decision,
`last` shows the last trick, `help` lists the commands, `quit` leaves.
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from euchre_env.cards import SUIT_NAMES, SUIT_SYMBOLS
from euchre_play.table import SEAT_NAMES, TEAM_NAMES, PlayError, Table, card_text

HELP = """Answer with the number of a legal action, or its name:
  a card: JH, 10h, j♥, joker       a call: pass, order up / pick up, clubs … spades, alone, partner
Commands: u (undo your last decision), last (the last trick), log (this hand so far),
          help (this text), quit (leave the game)"""
QUIT = ("q", "quit", "exit")
HELP_WORDS = ("h", "help", "?")
UNDO = ("u", "undo")
ORDER_UP_WORDS = {"order", "order up", "order it up", "pick up", "pick it up", "take it", "up"}
SYMBOL_LETTERS = {s: "CDHS"[i] for i, s in enumerate(SUIT_SYMBOLS)}
RED_SUITS = "♦♥"
PHASE_TEXT = {
    "bid_round_1": "bid (order up the upcard or pass)",
    "bid_round_2": "bid (name a suit or pass)",
    "maker_alone": "choose: alone or with your partner",
    "defender_alone": "choose: defend alone or with your partner",
    "discard": "discard (bury) a card",
    "play": "play a card",
}


def card_markup(name: str) -> Text:
    """A card in its suit's colour."""
    text = card_text(name)
    return Text(text, style="bold red" if text[-1] in RED_SUITS else "bold")


def cards_markup(names: list[str]) -> Text:
    """Cards separated by spaces, each in its colour."""
    out = Text()
    for i, name in enumerate(names):
        if i:
            out.append(" ")
        out.append_text(card_markup(name))
    return out


class TerminalGame:
    """One game at the terminal: a person at `seat` (None: four bots play and you watch)."""

    def __init__(self, table: Table, seat: int | None, console: Console, delay: float = 0.6):
        self.table = table
        self.seat = seat
        self.console = console
        self.delay = delay
        self.undo: list[Any] = []
        self.shown = 0
        """Log lines printed so far."""

    def run(self) -> int:
        """Play to the end of the game (or until the person quits); the exit status."""
        self.console.print(Panel(self._title_text(), title="Euchre Lab", expand=False))
        try:
            while not self.table.over:
                if self.table.bot_to_play():
                    self._bot_move()
                elif not self._person_move():
                    self.console.print("Left the game.")
                    return 0
        except (KeyboardInterrupt, EOFError):
            self.console.print("\nLeft the game.")
            return 0
        self._print_log()
        self._draw()
        return 0

    def _title_text(self) -> Text:
        seats = [f"{SEAT_NAMES[s]}: {p['player']}" for s, p in enumerate(self.table.view(self.seat)["seats"])]
        return Text(f"Game to {self.table.rules.target_points}.  " + " | ".join(seats) + "\nType help for commands.")

    # ------------------------------------------------------------------ turns

    def _bot_move(self) -> None:
        if self.seat is None and self._trick_starts():
            self._draw()
        self.table.step_bot()
        self._print_log()
        if self.delay:
            time.sleep(self.delay)

    def _trick_starts(self) -> bool:
        view = self.table.view(None)
        return view["phase"] == "play" and not view["trick"]

    def _person_move(self) -> bool:
        """Read commands until the person acts; False if they quit."""
        self._print_log()
        self._draw()
        while True:
            answer = self.console.input("[bold]Your move[/]> ").strip()
            word = answer.lower()
            if word in QUIT:
                return False
            if word in HELP_WORDS:
                self.console.print(HELP)
            elif word in UNDO:
                self._undo()
                return True
            elif word in ("l", "last"):
                self._show_last_trick()
            elif word == "log":
                self._show_log()
            elif self._try_action(answer):
                return True

    def _try_action(self, answer: str) -> bool:
        view = self.table.view(self.seat)
        action = self._parse(answer, view["legal"])
        if action is None:
            return False
        snapshot = self.table.snapshot()
        try:
            self.table.act(self.seat, action)
        except PlayError as err:
            self.console.print(f"[red]{err}[/]  (type a number from the list, a name such as JH, or help)")
            return False
        self.undo.append(snapshot)
        return True

    def _parse(self, answer: str, legal: list[dict[str, str]]) -> str | None:
        """The action name meant by `answer` (a number, a label, a name); None after printing why not."""
        if not answer:
            return None
        if answer.isdigit():
            n = int(answer)
            if 1 <= n <= len(legal):
                return legal[n - 1]["action"]
            self.console.print(f"[red]no choice {n}: choose 1-{len(legal)}[/]")
            return None
        word = " ".join(answer.lower().split())
        for choice in legal:
            if word in self._aliases(choice):
                return choice["action"]
        return "".join(SYMBOL_LETTERS.get(ch, ch) for ch in answer)

    def _aliases(self, choice: dict[str, str]) -> set[str]:
        """What a person may type for a choice beside its action name: its label, with or without the suit."""
        label = choice["label"].lower()
        words = {label, label.rstrip(" ♣♦♥♠")}
        if label.startswith(("order up", "pick it up")):
            words |= ORDER_UP_WORDS
        return words

    def _undo(self) -> None:
        if not self.undo:
            self.console.print("[yellow]nothing to undo yet[/]")
            return
        self.table.restore(self.undo.pop())
        self.shown = min(self.shown, self.table.progress.logged)
        self.console.print("[yellow]Took back your last decision.[/]")

    # ------------------------------------------------------------------ drawing

    def _print_log(self) -> None:
        lines, self.shown = self.table.log_since(self.shown, self.seat)
        for line in lines:
            self.console.print(f"  {line}", highlight=False)

    def _draw(self) -> None:
        view = self.table.view(self.seat)
        self.console.print(Panel(self._table_text(view), title=self._heading(view), expand=False))

    def _heading(self, view: dict) -> str:
        score = view["score"]
        return (
            f"Hand {view['hand_number']} · {SEAT_NAMES[view['dealer']]} deals · "
            f"{TEAM_NAMES[0]} {score[0]}  {TEAM_NAMES[1]} {score[1]} (game to {view['target']})"
        )

    def _table_text(self, view: dict) -> Text:
        out = Text()
        out.append_text(self._contract_line(view))
        if view["calls"]:
            calls = [f"{self.table.name(c['seat'])} {c['label']}" for c in view["calls"]]
            out.append("\nBidding: " + ", ".join(calls))
        if view["trump"] is not None:
            out.append(f"\nTricks: {TEAM_NAMES[0]} {view['tricks_won'][0]}  {TEAM_NAMES[1]} {view['tricks_won'][1]}")
        if view["phase"] == "play" or view["trick"]:
            out.append("\nTrick: ")
            out.append_text(self._trick_text(view["trick"]) if view["trick"] else Text("(nothing played yet)"))
        if view["over"]:
            out.append(f"\nGame over: {TEAM_NAMES[view['winner']]} win.")
        out.append_text(self._hands_text(view))
        return out

    def _contract_line(self, view: dict) -> Text:
        line = Text("Upcard ")
        line.append_text(card_markup(view["upcard"]))
        if view["trump"] is None:
            line.append(" (turned down)" if view["upcard_turned_down"] else " (offered)")
            return line
        symbol = SUIT_SYMBOLS[SUIT_NAMES.index(view["trump"])]
        alone = " alone" if view["maker"] in view["alone"] else ""
        line.append(f" · Trump {symbol} {view['trump']}, called by {self.table.name(view['maker'])}{alone}")
        if view["sitting_out"]:
            line.append(" · sitting out: " + ", ".join(SEAT_NAMES[s] for s in view["sitting_out"]))
        return line

    def _trick_text(self, cards: list[dict]) -> Text:
        out = Text()
        for i, c in enumerate(cards):
            out.append(("  " if i else "") + f"{SEAT_NAMES[c['seat']]} ")
            out.append_text(card_markup(c["card"]))
        return out

    def _hands_text(self, view: dict) -> Text:
        out = Text()
        if view["you"] is None:
            for seat, hand in enumerate(view.get("hands", [])):
                out.append(f"\n{SEAT_NAMES[seat]:>5}: ")
                out.append_text(cards_markup(hand))
            return out
        out.append("\nYour hand: ")
        out.append_text(cards_markup(view["hand"]))
        if view["discard"]:
            out.append("  (you buried ")
            out.append_text(card_markup(view["discard"]))
            out.append(")")
        if view["legal"]:
            out.append(f"\nYou to {PHASE_TEXT[view['phase']]}. Legal:")
            for i, choice in enumerate(view["legal"], 1):
                out.append(f" [{i}] ")
                plain_card = choice["kind"] == "card" and choice["label"] == card_text(choice["action"])
                out.append_text(card_markup(choice["action"]) if plain_card else Text(choice["label"]))
        return out

    def _show_last_trick(self) -> None:
        last = self.table.view(self.seat)["last_trick"]
        if last is None:
            self.console.print("No trick has been played yet.")
            return
        line = Text("Last trick: ")
        line.append_text(self._trick_text(last["cards"]))
        line.append(f"  — {SEAT_NAMES[last['winner']]} took it")
        self.console.print(line)

    def _show_log(self) -> None:
        view = self.table.view(self.seat)
        for line in view["log"]:
            if line["hand"] == view["hand_number"]:
                self.console.print(f"  {line['text']}", highlight=False)
