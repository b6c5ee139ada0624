"""play.py: the referee table both front ends share, the engine queries it reads, and the terminal
front end driven as a person would, through a pseudo-terminal."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pexpect
import pytest

from conftest import SUBPROCESS_TIMEOUT
from euchre_env import Rules, euchre_v0
from euchre_env.cards import SUIT_NAMES
from euchre_play.table import PERSON, PlayError, Table, card_text, spoken_card

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = r"Your move(?:\x1b\[[0-9;]*m)*> "
VARIANTS = [
    {},
    {"deck": 32, "joker": True, "target_points": 5},
    {"lone_defender": True, "stick_the_dealer": False, "throw_in_same_dealer": False, "target_points": 7},
    {"alone_when_naming": False, "dealer_may_bury_upcard": False, "lone_lead": "left_of_lone_player", "target_points": 5},
]


# ------------------------------------------------------------------ engine queries the table reads


def test_private_state_is_the_seats_own_hand_and_only_the_dealer_sees_the_buried_card():
    env = euchre_v0.raw_env()
    hands = [
        ["9C", "TC", "JC", "QC", "KC"], ["9D", "TD", "JD", "QD", "KD"], ["9H", "TH", "QH", "KH", "AH"], ["9S", "TS", "JS", "QS", "KS"]
    ]
    env.reset(options={"deal": {"dealer": 3, "hands": hands, "upcard": "AS"}})
    assert env.private_state("player_0") == {"hand": hands[0], "discard": None}
    env.step(env.action_id("spades"))  # player_0 orders up
    env.step(env.action_id("partner"))
    env.step(env.action_id("9S"))  # the dealer buries
    assert env.private_state("player_3")["discard"] == "9S"
    assert all(env.private_state(a)["discard"] is None for a in ("player_0", "player_1", "player_2"))
    with pytest.raises(ValueError, match="no agent"):
        env.private_state("player_9")


# ------------------------------------------------------------------ the table


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "default")
def test_bots_play_whole_games_and_the_record_follows_the_engine(rules):
    table = Table(["random", "heuristic", "random", "heuristic"], Rules(**rules), seed=3)
    leaders = []
    while not table.over:
        table.step_bot()
        hand = table.progress.hand
        leaders.append([t.leader for t in hand.tricks])
    view = table.view(0)
    assert max(view["score"]) >= table.rules.target_points
    assert view["winner"] == int(np.argmax(view["score"]))
    assert view["log"][-1]["text"].startswith("Game over")
    last = table.progress.hand
    for a, b in zip(last.tricks, last.tricks[1:]):
        assert a.winner == b.leader  # the engine's next leader is the winner the table worked out
    assert sum(table.view(0)["last_hand"]["tricks"]) == len(last.tricks) == 5


def winner_by_the_rules(deck, trump: int, cards: list[tuple[int, int]]) -> int:
    """The seat taking a trick of (seat, card id) in play order: the highest trump, else the highest card led."""
    led = int(deck.effective_suit[trump, cards[0][1]])

    def strength(card: int) -> tuple[int, int]:
        suit = int(deck.effective_suit[trump, card])
        if suit == trump:
            return 2, int(deck.trump_strength[trump, card])
        return (1, int(deck.rank[card])) if suit == led else (0, 0)

    return max(cards, key=lambda played: strength(played[1]))[0]


@pytest.mark.parametrize("rules", VARIANTS, ids=lambda r: ",".join(f"{k}={v}" for k, v in r.items()) or "default")
def test_every_trick_the_table_records_goes_to_the_seat_the_rules_name(rules):
    table = Table(["random", "heuristic", "oracle", "random"], Rules(**rules), seed=5)
    deck, tricks, trumps = table.engine.deck, {}, {}
    while not table.over:
        table.step_bot()
        pub = table.env.public_state()
        if pub["phase"] == "play":
            trumps[table.progress.hand.number] = SUIT_NAMES.index(pub["trump"])
        for hand in (table.progress.hand, table.progress.previous):
            for i, trick in enumerate(hand.tricks if hand else []):
                if trick.winner is not None:
                    tricks[id(trick)] = (hand.number, i == 4, trick)
    fifth = 0
    for number, last, trick in tricks.values():
        cards = [(seat, deck.card_id(name)) for seat, name in trick.cards]
        assert trick.winner == winner_by_the_rules(deck, trumps[number], cards)
        fifth += last
    assert len(tricks) > 15 and fifth >= 3  # a hand's last trick is recorded too (the next deal clears it)


def test_cards_left_are_the_cards_a_seat_holds_but_the_dealers_upcard_while_it_discards():
    table = Table(["heuristic", "random", "heuristic", "random"], seed=2)
    seen_discard = False
    while not table.over:
        view = table.view(None)
        for seat in range(4):
            held = len(view["hands"][seat])
            if seat in view["sitting_out"]:
                held = 0
            elif view["phase"] == "discard" and seat == view["dealer"]:
                held, seen_discard = held - 1, True
            assert view["seats"][seat]["cards_left"] == held
        table.step_bot()
    assert [s["cards_left"] for s in table.view(None)["seats"]] == [0, 0, 0, 0] and seen_discard


def test_a_thrown_in_hand_is_logged_and_the_redeal_is_the_next_hand():
    table = Table([PERSON] * 4, Rules(stick_the_dealer=False, throw_in_same_dealer=False), seed=0)
    dealer = table.view(0)["dealer"]
    for _ in range(8):
        table.act(table.to_play, "pass")
    assert table.view(0)["dealer"] == (dealer + 1) % 4 and table.view(0)["calls"] == []
    texts = [e.text for e in table.progress.log]
    i = next(k for k, t in enumerate(texts) if "thrown in" in t)
    thrown = table.progress.log[i].hand
    assert texts[i + 1].startswith(f"Hand {thrown + 1}: ") and table.progress.hand.number == thrown + 1
    assert table.progress.previous.points is None  # nobody scored the thrown-in hand
    assert table.view(0)["score"] == table.env.public_state()["score"]
    for _ in range(8):  # a second throw-in in a row is logged once too
        table.act(table.to_play, "pass")
    assert sum("thrown in" in e.text for e in table.progress.log) == 2 and table.progress.hand.number == thrown + 2


def test_a_hand_is_sorted_by_suit_with_trump_first_and_the_bowers_in_trump():
    table = Table(["random"] * 4, seed=1)
    cards = ["AS", "9C", "JD", "KH", "JH"]
    assert table.sorted_hand(cards, "hearts") == ["JH", "JD", "KH", "9C", "AS"]
    assert table.sorted_hand(cards, None) == ["AS", "KH", "JH", "9C", "JD"]
    assert table.sorted_hand(["9D", "JC", "AC", "JS"], "spades") == ["JS", "JC", "AC", "9D"]


def _table_waiting_for_the_person(seed: int = 5) -> Table:
    table = Table([PERSON, "heuristic", "heuristic", "heuristic"], seed=seed)
    while table.bot_to_play():
        table.step_bot()
    return table


def test_an_unknown_illegal_or_out_of_turn_action_is_refused_and_changes_nothing():
    table = _table_waiting_for_the_person()
    before = table.view(0)
    legal = table.legal_text(table.legal())
    illegal = table.env.action_name(min(set(range(table.engine.num_actions)) - set(table.legal())))
    with pytest.raises(PlayError, match=re.escape(f"unknown action 'plya'; legal now: {legal}")):
        table.act(0, "plya")
    with pytest.raises(PlayError, match=re.escape(f"{illegal} is not legal now; legal now: {legal}")):
        table.act(0, illegal.lower())
    with pytest.raises(PlayError, match="South \\(you\\)'s turn, not West's"):
        table.act(1, "pass")
    with pytest.raises(PlayError, match="no bot is to act"):
        table.step_bot()
    assert table.view(0) == before


def test_undo_deals_the_same_game_again_up_to_the_moment_saved():
    table = _table_waiting_for_the_person(seed=8)
    saved, before = table.snapshot(), table.view(0)
    for _ in range(3):
        if table.over:
            break
        if table.bot_to_play():
            table.step_bot()
        else:
            table.act(0, table.view(0)["legal"][-1]["action"])
    assert table.view(0) != before
    table.restore(saved)
    assert table.view(0) == before
    table.act(0, before["legal"][0]["action"])  # and the game goes on from there


def test_a_person_sees_only_their_own_hand_and_a_spectator_is_refused():
    table = _table_waiting_for_the_person()
    view = table.view(0)
    assert sorted(view["hand"]) == sorted(table.env.private_state("player_0")["hand"])
    assert "hands" not in view and all(v["legal"] == [] for v in map(table.view, (1, 2, 3)))
    with pytest.raises(PlayError, match="spectator"):
        table.view(None)


def test_the_oracle_is_labelled_as_cheating():
    table = Table([PERSON, "oracle", "heuristic", "oracle"], seed=1)
    labels = [s["player"] for s in table.view(0)["seats"]]
    assert labels[1] == labels[3] and "CHEATS" in labels[1]


# ------------------------------------------------------------------ the terminal, as a person uses it


def _spawn(*args: str, timeout: int = SUBPROCESS_TIMEOUT) -> pexpect.spawn:
    env = {**os.environ, "COLUMNS": "160", "LINES": "50", "NO_COLOR": "1"}
    return pexpect.spawn(
        sys.executable, ["play.py", *args], cwd=str(ROOT), env=env, encoding="utf-8", timeout=timeout, dimensions=(50, 160)
    )


def _screen(child: pexpect.spawn) -> str:
    return ANSI.sub("", child.before)


def _last(pattern: str, text: str) -> list[str]:
    found = re.findall(pattern, text)
    return found[-1].split() if found else []


def test_a_person_plays_a_whole_hand_at_the_terminal_with_a_typo_an_illegal_card_and_undo():
    child = _spawn("--seed", "4", "--delay", "0", "--partner", "heuristic", "--opponents", "heuristic")
    typed: list[str] = []
    hand: list[str] = []
    legal: list[str] = []
    seen = ""
    while "Hand 2:" not in seen:
        child.expect(PROMPT)
        screen = _screen(child)
        seen += screen
        hand = _last(r"Your hand: (.*)", screen) or hand
        legal = [c for _, c in re.findall(r"\[(\d+)\] (\S+)", re.findall(r"Legal:(.*)", screen)[-1])] if "Legal:" in screen else legal
        playing = "to play a card" in screen
        if "typo" not in typed:
            typed.append("typo")
            child.sendline("plya")
            child.expect("unknown action 'plya'")
        elif "help" not in typed:
            typed.append("help")
            child.sendline("help")
            child.expect("Commands:")
        elif "undo" not in typed and len(typed) > 2:
            typed.append("undo")
            child.sendline("u")
            child.expect("Took back your last decision")
        elif playing and "illegal" not in typed and set(hand) - set(legal):
            typed.append("illegal")
            card = sorted(set(hand) - set(legal))[0]
            child.sendline(card)
            child.expect("is not legal now")
        else:
            typed.append("1")
            child.sendline("1")
    assert {"typo", "help", "undo", "illegal"} <= set(typed), typed
    assert re.search(r"(N-S|E-W) (make it|euchre the makers): \+\d", seen)
    child.sendline("quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_watch_mode_plays_a_whole_game_of_four_bots():
    child = _spawn(
        "--watch", "--seed", "2", "--delay", "0", "--partner", "random", "--opponents", "heuristic", "--rules", "target_points=5"
    )
    child.expect(pexpect.EOF)
    out = ANSI.sub("", child.before)
    child.close()
    assert child.exitstatus == 0
    assert re.search(r"Game over: (N-S|E-W) win \d+-\d+", out)
    for seat in ("South", "West", "North", "East"):  # the spectator sees every hand
        assert re.search(seat + r": ((10|[9JQKA])[♣♦♥♠] ){4}", out), seat


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rules", "deck=31"], "play.py: error: Rules.deck=31 is not allowed: expected 24 or 32"),
        (["--rules", "decks=32"], "play.py: error: unknown Rules option(s) ['decks']"),
        (["--rules", "deck"], "play.py: error: --rules takes key=value items"),
        (["--partner", "wizard"], "play.py: error: unknown agent 'wizard'"),
        (["--seat", "up"], "no seat 'up'"),
    ],
)
def test_bad_command_lines_get_one_clear_line(args, message):
    child = _spawn(*args)
    child.expect(pexpect.EOF)
    child.close()
    assert message in child.before
    assert child.exitstatus == 2


def test_card_text_names_cards_as_people_read_them():
    assert [card_text(c) for c in ("TH", "JS", "9D", "JOKER")] == ["10♥", "J♠", "9♦", "Joker"]


def test_a_screen_reader_hears_each_card_by_name_with_the_bowers_once_trump_is_made():
    deck = Table(["random"] * 4, Rules(deck=32, joker=True), seed=1).engine.deck
    assert spoken_card(deck, "JD", None) == "jack of diamonds"
    assert [spoken_card(deck, c, "hearts") for c in ("JD", "JH", "TH", "AS")] == [
        "jack of diamonds, left bower", "jack of hearts, right bower", "ten of hearts, trump", "ace of spades"]
    assert spoken_card(deck, "JOKER", "clubs") == "joker, the highest trump" and spoken_card(deck, "7C", None) == "seven of clubs"
