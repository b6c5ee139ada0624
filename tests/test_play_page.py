"""The web table's page as a card player uses it, in a real headless Chromium: a game to one point played by the
keyboard alone, its summary and Play again, a game that outlives its tab and can be left; cards played on a
phone's touch screen by tap-lift-tap and by a drag, with nothing cut off or covered and a hand that stays
readable; and the help and the levels in plain words."""

from __future__ import annotations

import os
import time

import httpx
import pytest

from conftest import LiveServer, headless_chromium, without_shipped_agent
from euchre_play.web import create_app

STATE = """return view && {
  id: view.id, version: view.version, phase: view.phase, hand: view.hand_number, over: view.over,
  last: view.last_hand && view.last_hand.number, result: !document.getElementById('result').hidden,
  mine: view.to_play === view.you && !pumping, cards: view.legal.filter(c => c.kind === 'card').map(c => c.action),
  calls: view.legal.filter(c => c.kind === 'call').map(c => c.action), held: view.hand.length}"""
CARD_COLOURS = """return [...document.querySelectorAll('#hand .card')].map(card => [
  card.dataset.card, getComputedStyle(card.querySelector('.corner')).color, getComputedStyle(card).backgroundColor,
  getComputedStyle(card).opacity, getComputedStyle(card).filter])"""
UNCOVERED = """const el = arguments[0], r = el.getBoundingClientRect();
const x = r.left + r.width / 2, y = r.top + Math.min(r.height / 2, 20);
const top = document.elementFromPoint(x, y);
return r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.bottom <= innerHeight && (top === el || el.contains(top));"""


@pytest.fixture
def page(tmp_path, request):
    """A live server with Medium bots and a Chromium on its page at the fast bot speed (a phone if parametrized)."""
    width, height, touch = getattr(request, "param", (1280, 900, False))
    app = create_app(bots=("heuristic", "heuristic"))
    with LiveServer(app) as server:
        browser = headless_chromium(tmp_path, width, height, touch)
        try:
            browser.get(server.url)
            browser.execute_script("localStorage.setItem('euchre-lab-speed', '300')")
            browser.get(server.url)
            wait_for(browser, lambda: browser.execute_script("return document.getElementById('new-game').open"))
            yield browser
            errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and "409" not in e["message"]]
            assert errors == []
        finally:
            browser.quit()


def wait_for(browser, condition, seconds: float = 30):
    """Poll `condition()` until it is truthy; its value."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"waited {seconds} s in vain; the page shows {browser.execute_script(STATE)}")


def state(browser) -> dict:
    return browser.execute_script(STATE)


def press(browser, key: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(key).perform()


def tap(browser, element) -> None:
    """A finger's tap on `element`."""
    finger = _finger(browser)
    finger.pointer_action.move_to(element).pointer_down().pointer_up()
    finger.perform()


def drag_to(browser, element, target) -> None:
    """A finger that drags `element` onto `target`."""
    finger = _finger(browser)
    finger.pointer_action.move_to(element).pointer_down().move_to(element, 0, -30).move_to(target).pointer_up()
    finger.perform()


def _finger(browser):
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput

    return ActionBuilder(browser, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"))


def contrast(a: str, b: str) -> float:
    """The WCAG contrast ratio of two CSS `rgb(...)` colours."""
    def luminance(colour: str) -> float:
        channels = [int(v) / 255 for v in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3]]
        r, g, b = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def assert_readable(browser) -> None:
    """Every card of the hand: undimmed, its text at least 4.5:1 against its face, red suits red and black black."""
    colours = browser.execute_script(CARD_COLOURS)
    for card, text, face, opacity, css_filter in colours:
        assert float(opacity) == 1 and css_filter == "none" and contrast(text, face) >= 4.5, (card, text, face)
    red = {text for card, text, *_ in colours if card[-1] in "DH"}
    black = {text for card, text, *_ in colours if card[-1] in "CS"}
    assert not red & black


def moved_on(browser, before: dict) -> dict:
    """The page's state once it has changed from `before` (a move was made or a result shown)."""
    seen = (before["version"], before["result"])
    return wait_for(browser, lambda: (s := state(browser)) and (s["version"], s["result"]) != seen and s)


def until_a_card_to_play(browser, bid) -> dict:
    """Let the game go on, answering each bid and result with `bid(state)`, until a card is to be played or the
    game is over."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        s = state(browser)
        if (s["mine"] and s["cards"] and not s["result"]) or s["over"]:
            return s
        if s["result"] or (s["mine"] and s["calls"]):
            bid(s)
            moved_on(browser, s)
        time.sleep(0.1)
    raise AssertionError(f"no card to play within 90 s; the page shows {state(browser)}")


def test_a_whole_game_to_one_point_is_played_with_the_keyboard_alone_outlives_its_tab_and_can_be_left(page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    Select(page.find_element(By.ID, "partner")).select_by_value("easy")  # a partner who never leaves you out
    page.execute_script("const points = document.querySelector('#rules [name=target_points]'); points.value = '1';"
                        "points.dispatchEvent(new Event('change')); points.focus()")  # a game to 1 point
    press(page, Keys.ENTER)  # Enter in the new-game window deals
    game = wait_for(page, lambda: state(page))["id"]
    page.get(page.current_url)  # the tab closed and opened again: the same game goes on
    assert wait_for(page, lambda: state(page))["id"] == game

    def bid(s):
        if s["result"]:
            return press(page, Keys.ENTER)
        if "pass" in s["calls"] or "partner" in s["calls"]:
            return press(page, "p")
        press(page, s["calls"][0][0])  # stuck with the deal: C, D, H or S names the first suit offered

    played_in, said_why, heard = set(), "", set()
    while not state(page)["over"]:
        s = until_a_card_to_play(page, bid)
        heard.add(page.find_element(By.ID, "announce").get_attribute("textContent"))
        if s["over"]:
            break
        if not said_why:
            press(page, "o")
            said_why = page.find_element(By.ID, "status").text
            assert state(page)["version"] == s["version"]  # a key that is not legal now changes nothing
        press(page, Keys.ARROW_RIGHT)
        focused = page.switch_to.active_element
        assert "highlight" in focused.get_attribute("class") and focused.get_attribute("data-card") in s["cards"]
        press(page, Keys.ENTER)
        after = moved_on(page, s)
        assert after["version"] > s["version"] and after["id"] == game
        played_in.add(s["hand"])
        if not after["result"] and not after["over"]:
            wait_for(page, lambda: state(page)["held"] < s["held"] or state(page)["hand"] > s["hand"])
    assert said_why.startswith("O does nothing now:") and played_in == {1}
    assert any(" of " in line for line in heard) and not any(set(line) & set("♣♦♥♠") for line in heard)  # cards in words

    result = page.find_element(By.ID, "result")
    summary = wait_for(page, lambda: result.is_displayed() and result.text)
    assert "Game over" in summary and "after 1 hands" in summary
    press(page, Keys.ENTER)  # on "Play again", which has the focus
    again = wait_for(page, lambda: (s := state(page)) and s["id"] != game and s)
    assert page.execute_script("return [view.rules.target_points, view.seats[2].player]") == [1, "Easy"]
    assert not again["over"]

    page.find_element(By.ID, "leave-button").click()  # leaving frees the game's place on the server at once
    wait_for(page, lambda: page.find_element(By.ID, "new-game").get_attribute("open") is not None)
    assert httpx.get(page.current_url.rstrip("/") + f"/api/games/{again['id']}").status_code == 404


PHONE = (390, 844, True)


@pytest.mark.parametrize("page", [PHONE], indirect=True, ids=["phone-390x844"])
def test_on_a_phone_a_tap_lifts_a_card_a_second_tap_plays_it_and_a_drag_plays_one_with_nothing_covered(page):
    from selenium.webdriver.common.by import By

    dialog = page.find_element(By.ID, "new-game")
    assert page.execute_script("const r = arguments[0].getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth "
                               "&& r.top >= 0 && r.bottom <= innerHeight", dialog)
    tap(page, page.find_element(By.ID, "start-game"))
    wait_for(page, lambda: state(page))
    checked_bid_buttons = []

    def bid(s):
        if s["result"]:
            return tap(page, page.find_element(By.ID, "continue-button"))
        assert_readable(page)  # nothing dimmed while you bid
        buttons = page.find_elements(By.CSS_SELECTOR, "#actions button")
        checked_bid_buttons.append(all(page.execute_script(UNCOVERED, b) for b in buttons))
        choice = next((b for b in buttons if b.get_attribute("data-action") in ("pass", "partner")), buttons[0])
        tap(page, choice)

    s = until_a_card_to_play(page, bid)
    assert page.execute_script("return document.documentElement.scrollWidth <= innerWidth")
    cards = page.find_elements(By.CSS_SELECTOR, "#hand button.card")
    assert len(cards) == s["held"] and all(page.execute_script(UNCOVERED, c) for c in cards)
    assert page.execute_script(UNCOVERED, page.find_element(By.ID, "status"))
    assert_readable(page)
    screenshot = os.environ.get("EUCHRE_PLAY_PHONE_SCREENSHOT")
    if screenshot and page.execute_script("return view.trick.length > 0"):
        page.save_screenshot(screenshot)
        screenshot = None

    card = f'#hand button[data-card="{s["cards"][0]}"]'  # found again after each tap: the hand is drawn anew
    tap(page, page.find_element(By.CSS_SELECTOR, card))
    time.sleep(0.5)
    assert "lifted" in page.find_element(By.CSS_SELECTOR, card).get_attribute("class")
    assert state(page)["version"] == s["version"]  # lifted, not played
    tap(page, page.find_element(By.CSS_SELECTOR, card))
    assert moved_on(page, s)["version"] == s["version"] + 1

    s = until_a_card_to_play(page, bid)
    if screenshot:  # the first card led the trick: show the table at this one instead
        page.save_screenshot(screenshot)
    name = s["cards"][-1]
    drag_to(page, page.find_element(By.CSS_SELECTOR, f'#hand button[data-card="{name}"]'), page.find_element(By.ID, "trick"))
    after = moved_on(page, s)
    assert after["version"] == s["version"] + 1 and page.execute_script("return !view.hand.includes(arguments[0])", name)
    deadline = time.monotonic() + 120
    while not checked_bid_buttons and time.monotonic() < deadline:  # bots bid before us so far: play on till we bid
        s = until_a_card_to_play(page, bid)
        if not s["over"] and not checked_bid_buttons:
            card = f'#hand button[data-card="{s["cards"][0]}"]'
            tap(page, page.find_element(By.CSS_SELECTOR, card))
            tap(page, page.find_element(By.CSS_SELECTOR, card))
            moved_on(page, s)
    assert checked_bid_buttons and all(checked_bid_buttons)

    tap(page, page.find_element(By.ID, "log-button"))
    log = page.find_element(By.ID, "side")
    assert wait_for(page, log.is_displayed) and page.execute_script(UNCOVERED, page.find_element(By.ID, "close-side"))


def test_the_help_explains_the_table_and_the_new_game_window_offers_levels_in_plain_words(page, monkeypatch, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    (tmp_path / "shipped").mkdir()
    without_shipped_agent(monkeypatch, tmp_path / "shipped", "joker32")

    levels = [o.text for o in Select(page.find_element(By.ID, "opponents")).options]
    assert levels[:4] == ["Easy", "Medium", "Hard", "Expert"] and levels[4].startswith("Advanced")
    Select(page.find_element(By.ID, "table-name")).select_by_value("joker32")
    wait_for(page, lambda: "Expert can't play this table" in page.find_element(By.ID, "levels-note").text)
    expert = [o for o in Select(page.find_element(By.ID, "opponents")).options if o.text.startswith("Expert")]
    assert not expert[0].is_enabled()
    Select(page.find_element(By.ID, "opponents")).select_by_value("advanced")
    specs = [o.text for o in Select(page.find_element(By.ID, "opponents-spec")).options]
    assert any(text.startswith("oracle") and "CHEATS" in text for text in specs)
    page.find_element(By.ID, "cancel-new-game").click()
    page.find_element(By.ID, "help-button").click()
    help_text = wait_for(page, lambda: page.find_element(By.ID, "help").get_attribute("open") is not None
                         and page.find_element(By.ID, "help").text)
    for words in ("left bower", "Stick the dealer: off", "Joker: on", "Do the computer players cheat?", "CHEATS", "← →",
                  "tap a card to lift it"):
        assert words in help_text, words
