"""The tables people play, by name: each a `Rules` taken whole from one of the rules documents.

A named table is what a learned agent is made for and what a benchmark task plays. A table that is not
named (another target score, a random first dealer, rubbers, another deck) is played by the agents of its
*nearest* named table: one with the same deck and joker (so the same observation and action spaces) where
there is one, then the one that differs from it in the fewest options.
"""

from __future__ import annotations

import dataclasses

from euchre_env.rules import FIRST_DEALER_RANDOM, LEAD_LEFT_OF_LONE_PLAYER, Rules

NAMED_TABLES: dict[str, Rules] = {
    "standard": Rules(),
    "no-stick": Rules(stick_the_dealer=False, throw_in_same_dealer=False),
    "openspiel": Rules.openspiel(),
    "joker32": Rules(deck=32, joker=True, stick_the_dealer=False, throw_in_same_dealer=False,
                     lone_lead=LEAD_LEFT_OF_LONE_PLAYER, target_points=5),
    "lone-defender": Rules(stick_the_dealer=False, throw_in_same_dealer=False, lone_defender=True,
                           lone_lead=LEAD_LEFT_OF_LONE_PLAYER, first_dealer=FIRST_DEALER_RANDOM),
}
"""standard: the primary document (000_*). no-stick: stick the dealer off, a throw-in passes the deal left
(002_* switched off). openspiel: `Rules.openspiel()`. joker32: 004_*'s 32 cards and the joker, games to 5.
lone-defender: 001_*'s table, where a defender may go alone."""

DESCRIPTIONS: dict[str, str] = {
    "standard": "the primary rules: 24 cards, stick the dealer, alone declared with trump",
    "no-stick": "stick the dealer off: all pass twice and the deal passes left",
    "openspiel": "OpenSpiel's euchre: alone after the discard, the dealer keeps the upcard",
    "joker32": "32 cards and the joker, no stick the dealer, games to 5",
    "lone-defender": "no stick the dealer, a defender may go alone, a random first dealer",
}
"""One line per table, for listings."""


def table_name(rules: Rules) -> str | None:
    """The name of the table these rules are, None when they are no named table."""
    return next((name for name, table in NAMED_TABLES.items() if table == rules), None)


def differing_options(a: Rules, b: Rules) -> list[str]:
    """The `Rules` fields on which two tables differ, in field order."""
    return [f.name for f in dataclasses.fields(Rules) if getattr(a, f.name) != getattr(b, f.name)]


HAND_OPTIONS = ("stick_the_dealer", "alone_when_naming", "lone_defender", "lone_defender_euchre_points", "lone_lead",
                "dealer_may_bury_upcard")
"""The options besides the deck and the joker that change how a hand is played; the others (the target, rubbers, the
first dealer, who deals after a throw-in) change only what happens between hands."""


def nearest_table(rules: Rules) -> str:
    """The named table whose agents play `rules`: one with the same deck and joker (the same spaces) first, then the
    fewest options changed that change a hand's play, then the fewest others (the first listed on a tie)."""

    def distance(name: str) -> tuple[int, int, int]:
        table = NAMED_TABLES[name]
        changed = differing_options(table, rules)
        in_hand = sum(option in HAND_OPTIONS for option in changed)
        return int((table.deck, table.joker) != (rules.deck, rules.joker)), in_hand, len(changed) - in_hand

    return min(NAMED_TABLES, key=distance)
