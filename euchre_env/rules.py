"""The table rules of Euchre as one validated, frozen config.

Defaults follow the primary specification (`shared/rules/000_*`). Every point where the
rules documents differ is an option here; `Rules.openspiel()` reproduces OpenSpiel's
`euchre` exactly, for cross-checking.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

LEAD_LEFT_OF_DEALER = "left_of_dealer"
LEAD_LEFT_OF_LONE_PLAYER = "left_of_lone_player"
FIRST_DEALER_CUT = "cut"
FIRST_DEALER_RANDOM = "random"


class RulesError(ValueError):
    """A `Rules` field holds a value the game does not allow."""


@dataclass(frozen=True)
class Rules:
    """Every table option of the game. Construct with keywords; bad values raise `RulesError`."""

    deck: int = 24
    """24 cards (9 to ace, 000_*) or 32 cards (7 to ace, 004_*)."""
    joker: bool = False
    """Add the joker: the highest trump whatever the suit; a turned-up joker counts as a spade (004_*)."""
    stick_the_dealer: bool = True
    """The dealer may not pass in round two, so trump is always made (000_*, 003_*)."""
    throw_in_same_dealer: bool = True
    """After a throw-in (stick the dealer off, all pass twice) the same dealer deals again (000_*);
    False: the deal moves one seat left (001_*, 002_*, 004_*)."""
    alone_when_naming: bool = True
    """The maker declares going alone at the moment of naming trump (000_*, 002_*): if the dealer's
    partner orders up alone, the dealer sits out, the upcard stays in the kitty and nobody buries
    (000_*, 003_*). False: the decision comes after the dealer's discard, so a dealer who then sits
    out has already picked up (OpenSpiel)."""
    lone_defender: bool = False
    """After the maker's decision, each defender (first the one left of the dealer) may go alone (001_*)."""
    lone_defender_euchre_points: int = 2
    """Points for a lone defender who takes three or four tricks: 2 (001_*) or 4 (001_*'s variant,
    OpenSpiel). All five tricks by a lone defender always score 4."""
    lone_lead: str = LEAD_LEFT_OF_DEALER
    """Who leads when someone goes alone: "left_of_dealer" (skipping a seat that sits out, 000_*, 002_*)
    or "left_of_lone_player" (001_*, 004_*; when both a maker and a defender go alone, the defender leads)."""
    dealer_may_bury_upcard: bool = True
    """The dealer may discard the card just picked up (000_*). False: OpenSpiel's rule."""
    target_points: int = 10
    """Points that win a game: 10 by default; 5 and 7 are played too (004_*)."""
    rubber_games: int = 2
    """Games a side must win to take a rubber (004_*), used by rubber episodes."""
    rubber_bonus: int = 2
    """Premium for winning a rubber, added to the winners' point difference (004_*)."""
    first_dealer: str = FIRST_DEALER_CUT
    """"cut": each seat cuts, the high card deals, ties cut again (000_*); "random" (001_*)."""
    throw_in_ends_hand_episode: bool = True
    """In one-hand episodes, a thrown-in hand ends the episode with no score (as OpenSpiel does);
    False: the hand is redealt until trump is made."""

    def __post_init__(self) -> None:
        def check(ok: bool, field: str, allowed: str) -> None:
            if not ok:
                raise RulesError(f"Rules.{field}={getattr(self, field)!r} is not allowed: {allowed}")

        for name in (
            "joker",
            "stick_the_dealer",
            "throw_in_same_dealer",
            "alone_when_naming",
            "lone_defender",
            "dealer_may_bury_upcard",
            "throw_in_ends_hand_episode",
        ):
            check(isinstance(getattr(self, name), bool), name, "expected True or False")
        check(_is_int(self.deck) and self.deck in (24, 32), "deck", "expected 24 or 32")
        check(
            _is_int(self.lone_defender_euchre_points) and self.lone_defender_euchre_points in (2, 4),
            "lone_defender_euchre_points",
            "expected 2 or 4",
        )
        check(
            self.lone_lead in (LEAD_LEFT_OF_DEALER, LEAD_LEFT_OF_LONE_PLAYER),
            "lone_lead",
            f"expected {LEAD_LEFT_OF_DEALER!r} or {LEAD_LEFT_OF_LONE_PLAYER!r}",
        )
        check(
            self.first_dealer in (FIRST_DEALER_CUT, FIRST_DEALER_RANDOM),
            "first_dealer",
            f"expected {FIRST_DEALER_CUT!r} or {FIRST_DEALER_RANDOM!r}",
        )
        check(
            _is_int(self.target_points) and 1 <= self.target_points <= 100,
            "target_points",
            "expected a whole number from 1 to 100 (5, 7 and 10 are usual)",
        )
        check(
            _is_int(self.rubber_games) and 1 <= self.rubber_games <= 10,
            "rubber_games",
            "expected a whole number from 1 to 10",
        )
        check(
            _is_int(self.rubber_bonus) and 0 <= self.rubber_bonus <= 100,
            "rubber_bonus",
            "expected a whole number from 0 to 100",
        )

    @property
    def num_cards(self) -> int:
        """Cards in the deck: 24, 25, 32 or 33."""
        return self.deck + int(self.joker)

    @classmethod
    def openspiel(cls, allow_lone_defender: bool = False, stick_the_dealer: bool = True) -> "Rules":
        """The rules OpenSpiel's `euchre` plays, with its two game parameters."""
        return cls(
            stick_the_dealer=stick_the_dealer,
            alone_when_naming=False,
            lone_defender=allow_lone_defender,
            lone_defender_euchre_points=4,
            lone_lead=LEAD_LEFT_OF_DEALER,
            dealer_may_bury_upcard=False,
            throw_in_ends_hand_episode=True,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of every field, for configs and checkpoints."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "Rules":
        """Build from a dict (a config file's `rules:` section); unknown keys raise `RulesError`."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise RulesError(f"unknown Rules option(s) {unknown}; known options: {sorted(known)}")
        return cls(**values)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
