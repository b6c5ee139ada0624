"""play.py --web: the server referees whole games through its API with nothing a seat could not know
in any message; bad or stale actions change nothing; games are separate, cleaned up, and one game's
bot does not hold up another's requests; and a real headless Chromium plays a hand by clicking."""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import defaultdict
from pathlib import Path

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient

from conftest import LiveServer, api_turn, headless_chromium
from euchre_agents.base import RandomAgent
from euchre_agents.registry import register
from euchre_play.web import Games, create_app

CARD = re.compile(r"(?<![A-Za-z0-9])(10|[2-9TJQKA])([CDHS♣♦♥♠])(?![A-Za-z])|JOKER|Joker")
SYMBOL = {"♣": "C", "♦": "D", "♥": "H", "♠": "S"}
VIEW_KEYS = {
    "id", "version", "you", "seats", "target", "phase", "to_play", "over", "winner", "hand_number", "dealer",
    "upcard", "upcard_turned_down", "calls", "trump", "maker", "alone", "sitting_out", "trick", "last_trick",
    "tricks_won", "score", "last_hand", "log", "hand", "discard", "legal", "card_names", "rules",
}
GAMES = [
    {"partner": "random", "opponents": "random", "seat": 0, "seed": 1},
    {"partner": "heuristic", "opponents": "heuristic", "seat": 1, "seed": 2,
     "rules": {"deck": 32, "joker": True, "lone_defender": True, "stick_the_dealer": False, "target_points": 5}},
    {"partner": "pimc", "opponents": "ppo", "seat": 3, "seed": 3},  # the checkpoint plays the rules it was trained on
    {"partner": "heuristic", "opponents": "oracle", "seat": 2, "seed": 4,
     "rules": {"alone_when_naming": False, "dealer_may_bury_upcard": False, "lone_lead": "left_of_lone_player",
               "throw_in_same_dealer": False, "target_points": 5}},
]


def cards_in(text: str) -> set[str]:
    """Every card named in a text, by its engine name ('10♥' and 'TH' are both 'TH')."""
    out = set()
    for m in CARD.finditer(text):
        if m.group(0) in ("JOKER", "Joker"):
            out.add("JOKER")
        else:
            rank, suit = m.group(1), m.group(2)
            out.add(("T" if rank == "10" else rank) + SYMBOL.get(suit, suit))
    return out


# ------------------------------------------------------------------ what a seat may know, from the server's truth


class Witness:
    """Follows one seat through a game on the server and checks every message sent to it."""

    def __init__(self, table, seat: int):
        self.table, self.seat = table, seat
        self.known: dict[int, set[str]] = defaultdict(set)
        """Per hand: the seat's dealt cards, the upcard, every card played, its own buried card."""
        self.learn()

    def before_request(self) -> None:
        self._phase = self.table.env.public_state()["phase"]
        self._hand = self.table.progress.hand.number
        self._actions = len(self.table.actions)

    def after_request(self) -> None:
        if self._phase == "play" and len(self.table.actions) > self._actions:  # the card just played, public now
            self.known[self._hand].add(self.table.engine.deck.names[self.table.actions[-1][1]])
        self.learn()

    def learn(self) -> None:
        s, names, seat = self.table.env.state_, self.table.engine.deck.names, self.seat
        known = self.known[self.table.progress.hand.number]
        known.update(names[c] for c in np.flatnonzero(s.dealt[0, seat]))
        known.update(names[c] for c in np.flatnonzero(s.card_player[0] >= 0))
        known.add(names[int(s.upcard[0])])
        if int(s.dealer[0]) == seat and s.discard[0] >= 0:
            known.add(names[int(s.discard[0])])

    def check(self, message: dict) -> None:
        """Nothing in `message` that this seat could not know."""
        s, names = self.table.env.state_, self.table.engine.deck.names
        number = self.table.progress.hand.number
        assert set(message) == VIEW_KEYS
        assert sorted(message["hand"]) == sorted(names[c] for c in np.flatnonzero(s.hand[0, self.seat]))
        assert message["discard"] is None or int(s.dealer[0]) == self.seat
        assert message["legal"] == [] or message["to_play"] == self.seat
        for line in message["log"]:
            assert cards_in(line["text"]) <= self.known[line["hand"]], line
        rest = {k: v for k, v in message.items() if k not in ("id", "log", "last_trick", "card_names")}
        assert cards_in(json.dumps(rest, ensure_ascii=False)) <= self.known[number]
        if message["last_trick"]:
            assert cards_in(json.dumps(message["last_trick"])) <= self.known[number] | self.known[number - 1]
        assert set(message["card_names"]) <= self.known[number] | self.known[number - 1]


def play_through_api(client: TestClient, app, request: dict, rng: np.random.Generator) -> tuple[str, int]:
    """Play a whole game as the person (random legal choices), checking every message; its id, the messages seen."""
    message = client.post("/api/games", json=request).json()
    witness = Witness(app.state.games.sessions[message["id"]].table, message["you"])
    witness.check(message)
    seen = 1
    while not message["over"]:
        witness.before_request()
        message = api_turn(client, message, rng)
        witness.after_request()
        witness.check(message)
        if seen % 7 == 0:
            witness.check(client.get(f"/api/games/{message['id']}").json())
        seen += 1
    return message["id"], seen


@pytest.fixture
def client():
    app = create_app(allow_client_seeds=True)  # these tests replay fixed deals
    with TestClient(app, base_url="http://localhost") as c:
        c.app_ref = app
        yield c


@pytest.mark.parametrize("request_body", GAMES, ids=lambda g: f"{g['partner']}-vs-{g['opponents']}-seat{g['seat']}")
def test_whole_games_through_the_api_never_tell_a_seat_what_it_could_not_know(client, request_body):
    _, seen = play_through_api(client, client.app_ref, request_body, np.random.default_rng(request_body["seed"]))
    assert seen > 40


def test_the_leak_check_catches_another_seats_card(client):
    message = client.post("/api/games", json={"partner": "random", "opponents": "random", "seed": 5}).json()
    table = client.app_ref.state.games.sessions[message["id"]].table
    witness = Witness(table, 0)
    witness.check(message)
    west = table.env.private_state("player_1")["hand"]
    hidden = sorted(set(west) - witness.known[table.progress.hand.number])[0]
    leaked = {**message, "log": message["log"] + [{"hand": message["hand_number"], "text": f"West holds {hidden}"}]}
    with pytest.raises(AssertionError):
        witness.check(leaked)


# ------------------------------------------------------------------ the referee's answers


def _waiting_for_person(client) -> dict:
    message = client.post("/api/games", json={"partner": "heuristic", "opponents": "heuristic", "seed": 6}).json()
    while message["to_play"] != message["you"]:
        message = client.post(f"/api/games/{message['id']}/step", json={"version": message["version"]}).json()
    return message


def test_an_illegal_a_stale_or_an_out_of_turn_request_gets_a_clear_error_and_changes_nothing(client):
    message = _waiting_for_person(client)
    game = f"/api/games/{message['id']}"
    legal = {c["action"] for c in message["legal"]}
    illegal = next(a for a in ("pass", "9C", "alone", "AS", "clubs") if a not in legal)
    first = message["legal"][0]["action"]
    answers = [
        (client.post(f"{game}/action", json={"action": illegal, "version": message["version"]}), 400, "is not legal now"),
        (client.post(f"{game}/action", json={"action": "plya", "version": message["version"]}), 400, "unknown action 'plya'"),
        (client.post(f"{game}/action", json={"action": first, "version": message["version"] - 1}), 409, "stale action"),
        (client.post(f"{game}/step", json={"version": message["version"]}), 409, "no bot is to play"),
        (client.get("/api/games/not-a-game"), 404, "no such game"),
    ]
    for response, status, detail in answers:
        assert response.status_code == status and detail in response.json()["detail"], response.text
    assert client.get(game).json() == message


@pytest.mark.parametrize(
    "body, detail",
    [
        ({"rules": {"deck": 31}}, "Rules.deck=31 is not allowed: expected 24 or 32"),
        ({"rules": {"decks": 32}}, "unknown Rules option(s) ['decks']"),
        ({"partner": "ppo:/etc/passwd"}, "bot 'ppo:/etc/passwd' is not offered here"),
        ({"seat": 7}, "seat must be 0-3"),
    ],
)
def test_a_bad_new_game_request_is_refused_with_the_reason(client, body, detail):
    response = client.post("/api/games", json=body)
    assert response.status_code == 400 and detail in response.json()["detail"]
    assert "/checkpoints/" not in response.json()["detail"]  # a checkpoint by its file name, never the server's folders
    assert client.app_ref.state.games.sessions == {}


def test_each_game_has_its_own_unguessable_id_and_state(client):
    a = client.post("/api/games", json={"partner": "random", "opponents": "random", "seed": 9}).json()
    b = client.post("/api/games", json={"partner": "random", "opponents": "random", "seed": 9}).json()
    assert a["id"] != b["id"] and len(a["id"]) >= 24
    assert {**a, "id": None} == {**b, "id": None}
    client.post(f"/api/games/{a['id']}/step", json={"version": a["version"]}).raise_for_status()
    assert client.get(f"/api/games/{b['id']}").json() == b


def test_finished_and_abandoned_games_are_cleaned_up():
    games = Games(max_games=2, idle_seconds=60, finished_seconds=0)
    app = create_app(bots=("random", "random"), games=games, allow_client_seeds=True)
    with TestClient(app, base_url="http://localhost") as client:
        done, _ = play_through_api(client, app, {"seed": 10}, np.random.default_rng(0))
        alive = client.post("/api/games", json={"seed": 11}).json()["id"]
        games.sweep()
        assert client.get(f"/api/games/{done}").status_code == 404  # finished: put away at the sweep
        assert client.get(f"/api/games/{alive}").status_code == 200
        client.post("/api/games", json={"seed": 12}).raise_for_status()
        full = client.post("/api/games", json={"seed": 13})
        assert full.status_code == 503 and "the server is full" in full.json()["detail"]
        assert client.delete(f"/api/games/{alive}").status_code == 204
        assert client.get(f"/api/games/{alive}").status_code == 404
        games.idle_seconds = 0
        games.sweep()
        assert games.sessions == {}


# ------------------------------------------------------------------ a real server: bots in threads, a real browser


RELEASE = threading.Event()
THINKING = threading.Event()


class _SlowBot(RandomAgent):
    """A bot that thinks until the test lets it move."""

    name = "slow"

    def act(self, obs, mask, state=None, rows=None):
        THINKING.set()
        RELEASE.wait(20)
        return super().act(obs, mask)


register("slow_test_bot", lambda engine, arg, seed: _SlowBot(engine, seed))


def test_a_thinking_bot_does_not_hold_up_other_games():
    RELEASE.clear()
    THINKING.clear()
    app = create_app(bots=("slow_test_bot", "random"), allow_client_seeds=True)
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as http:
        slow = http.post("/api/games", json={"seed": 1}).json()
        game = f"/api/games/{slow['id']}"
        while slow["to_play"] != 2:  # the slow partner
            if slow["to_play"] == slow["you"]:
                slow = http.post(f"{game}/action", json={"action": slow["legal"][0]["action"], "version": slow["version"]}).json()
            else:
                slow = http.post(f"{game}/step", json={"version": slow["version"]}).json()
        answer = {}
        thinking = threading.Thread(target=lambda: answer.update(r=http.post(f"{game}/step", json={"version": slow["version"]})))
        thinking.start()
        assert THINKING.wait(20), "the slow bot never started thinking"
        started = time.monotonic()
        other = http.post("/api/games", json={"partner": "random", "seed": 2})
        http.get(f"/api/games/{other.json()['id']}").raise_for_status()
        took = time.monotonic() - started
        still_thinking = thinking.is_alive()
        RELEASE.set()
        thinking.join(20)
    assert other.status_code == 200 and still_thinking and took < 10
    assert answer["r"].status_code == 200 and answer["r"].json()["version"] == slow["version"] + 1


def test_a_person_plays_a_full_hand_in_headless_chromium_by_clicking(tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    app = create_app(bots=("heuristic", "heuristic"))
    with LiveServer(app) as server:
        browser = headless_chromium(tmp_path, 1280, 900)
        try:
            browser.get(server.url)
            WebDriverWait(browser, 20).until(lambda b: b.find_element(By.ID, "new-game").get_attribute("open") is not None)
            Select(browser.find_element(By.ID, "speed")).select_by_value("300")
            browser.find_element(By.ID, "start-game").click()
            clicked = _click_through_hands(browser, tmp_path)
            browser.save_screenshot(str(tmp_path / "after_hand.png"))
            # A click that races a bot's move is answered 409 (stale) by design; the page shows it and goes on.
            errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and "409" not in e["message"]]
        finally:
            browser.quit()
    assert clicked["card"] >= 1 and clicked["call"] >= 1, clicked
    assert (tmp_path / "mid_hand.png").stat().st_size > 10_000
    assert errors == []


def _click_through_hands(browser, tmp_path: Path) -> dict[str, int]:
    """Click legal choices until the person has made a call, has been shown a trick with two cards already in it
    (the mid-hand screenshot), and a hand they played cards in has been scored.

    A bot ahead of the person can order up before the person's turn to bid, and the person may lead or play second
    to every trick of a hand, so one hand need not offer all of these; the game deals on until they have happened.
    """
    from selenium.common.exceptions import StaleElementReferenceException

    clicked = {"card": 0, "call": 0}
    played_in: set[int] = set()
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        try:
            finished = re.match(r"Hand (\d+):", _text(browser, "last-hand"))
            if finished and int(finished.group(1)) in played_in and clicked["call"] >= 1 and (tmp_path / "mid_hand.png").exists():
                return clicked
            kind = _click_one(browser, tmp_path, clicked)
            if kind == "card":
                played_in.add(int(re.match(r"Hand (\d+)", _text(browser, "contract")).group(1)))
        except StaleElementReferenceException:
            pass  # the page redrew as we looked: look again
        time.sleep(0.25)
    raise AssertionError(f"no hand finished in time; clicked {clicked}")


def _text(browser, element_id: str) -> str:
    from selenium.webdriver.common.by import By

    return browser.find_element(By.ID, element_id).text


def _click_one(browser, tmp_path: Path, clicked: dict[str, int]) -> str | None:
    """Click one legal card or call button, if there is one; which kind was clicked."""
    from selenium.webdriver.common.by import By

    cards = browser.find_elements(By.CSS_SELECTOR, "#hand button.card")
    legal = [c for c in cards if "legal" in c.get_attribute("class")]
    assert all(c.get_attribute("disabled") for c in cards if c not in legal)  # only legal cards can be clicked
    if legal and len(browser.find_elements(By.CSS_SELECTOR, "#trick .slot")) >= 2 and not (tmp_path / "mid_hand.png").exists():
        browser.save_screenshot(str(tmp_path / "mid_hand.png"))
        if os.environ.get("EUCHRE_PLAY_SCREENSHOT"):
            browser.save_screenshot(os.environ["EUCHRE_PLAY_SCREENSHOT"])
    calls = browser.find_elements(By.CSS_SELECTOR, "#actions button")
    if legal:
        legal[0].click()
        clicked["card"] += 1
        return "card"
    if calls:
        calls[-1].click()  # order up, name a suit, play with partner
        clicked["call"] += 1
        return "call"
    return None
