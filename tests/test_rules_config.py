"""The `Rules` config: defaults from the primary rules document, validation, dict round trips, OpenSpiel."""

from __future__ import annotations

import dataclasses

import pytest

from euchre_env.engine import Engine
from euchre_env.rules import Rules, RulesError


def test_defaults_follow_the_primary_rules_document():
    rules = Rules()
    assert rules.deck == 24 and not rules.joker and rules.num_cards == 24
    assert rules.stick_the_dealer and rules.throw_in_same_dealer
    assert rules.alone_when_naming and not rules.lone_defender
    assert rules.lone_lead == "left_of_dealer"
    assert rules.dealer_may_bury_upcard
    assert rules.target_points == 10
    assert rules.first_dealer == "cut"


@pytest.mark.parametrize("deck, joker, cards", [(24, False, 24), (24, True, 25), (32, False, 32), (32, True, 33)])
def test_num_cards_counts_the_joker(deck, joker, cards):
    assert Rules(deck=deck, joker=joker).num_cards == cards


BAD_VALUES = [
    ("deck", 20),
    ("deck", 52),
    ("deck", "24"),
    ("deck", 24.0),
    ("deck", True),
    ("joker", 1),
    ("joker", "yes"),
    ("joker", None),
    ("stick_the_dealer", 0),
    ("throw_in_same_dealer", "no"),
    ("alone_when_naming", None),
    ("lone_defender", 1),
    ("lone_defender_euchre_points", 3),
    ("lone_defender_euchre_points", True),
    ("lone_defender_euchre_points", 2.0),
    ("lone_lead", "left"),
    ("lone_lead", None),
    ("dealer_may_bury_upcard", 1),
    ("target_points", 0),
    ("target_points", 101),
    ("target_points", 7.5),
    ("target_points", "10"),
    ("target_points", True),
    ("rubber_games", 0),
    ("rubber_games", 11),
    ("rubber_games", False),
    ("rubber_bonus", -1),
    ("rubber_bonus", 101),
    ("rubber_bonus", 2.0),
    ("first_dealer", "high"),
    ("first_dealer", 0),
    ("throw_in_ends_hand_episode", 0),
]


@pytest.mark.parametrize("field, value", BAD_VALUES, ids=[f"{f}={v!r}" for f, v in BAD_VALUES])
def test_bad_value_raises_rules_error_naming_the_field(field, value):
    with pytest.raises(RulesError) as err:
        Rules(**{field: value})
    assert f"Rules.{field}={value!r}" in str(err.value)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    "field, value",
    [("deck", 32), ("target_points", 5), ("target_points", 7), ("target_points", 1), ("target_points", 100),
     ("rubber_games", 1), ("rubber_games", 10), ("rubber_bonus", 0), ("lone_defender_euchre_points", 4),
     ("lone_lead", "left_of_lone_player"), ("first_dealer", "random")],
)
def test_allowed_values_are_accepted(field, value):
    assert getattr(Rules(**{field: value}), field) == value


def test_rules_are_frozen_and_compare_by_value():
    rules = Rules(target_points=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.target_points = 7
    assert rules == Rules(target_points=5) and rules != Rules()
    assert hash(rules) == hash(Rules(target_points=5))


def test_dict_round_trip():
    rules = Rules(deck=32, joker=True, stick_the_dealer=False, lone_defender=True, target_points=7, rubber_games=3)
    values = rules.to_dict()
    assert values["deck"] == 32 and values["rubber_games"] == 3
    assert set(values) == {f.name for f in dataclasses.fields(Rules)}
    assert Rules.from_dict(values) == rules
    assert Rules.from_dict({}) == Rules()


def test_from_dict_rejects_unknown_keys_naming_them():
    with pytest.raises(RulesError) as err:
        Rules.from_dict({"deck": 24, "stick_dealer": True, "jokers": 1})
    message = str(err.value)
    assert "'jokers'" in message and "'stick_dealer'" in message
    assert "stick_the_dealer" in message  # the known options are listed


def test_from_dict_validates_values():
    with pytest.raises(RulesError, match=r"Rules\.target_points=0"):
        Rules.from_dict({"target_points": 0})


def test_openspiel_rules():
    rules = Rules.openspiel()
    assert rules.stick_the_dealer and not rules.lone_defender
    assert not rules.alone_when_naming
    assert not rules.dealer_may_bury_upcard
    assert rules.lone_defender_euchre_points == 4
    assert rules.lone_lead == "left_of_dealer"
    assert rules.throw_in_ends_hand_episode
    assert rules.deck == 24 and not rules.joker and rules.target_points == 10
    variant = Rules.openspiel(allow_lone_defender=True, stick_the_dealer=False)
    assert variant.lone_defender and not variant.stick_the_dealer
    assert dataclasses.replace(variant, lone_defender=False, stick_the_dealer=True) == rules


def test_engine_rejects_a_non_rules_config_and_unknown_modes():
    with pytest.raises(TypeError):
        Engine({"deck": 24})
    with pytest.raises(ValueError, match="episode"):
        Engine(Rules(), episode="match")
    with pytest.raises(ValueError, match="reward"):
        Engine(Rules(), reward="score")
    assert Engine().rules == Rules()
