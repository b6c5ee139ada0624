"""The named tables (euchre_env/named_tables.py) and the learned bots at every table: the bare `ppo` and `search`
play the shipped agent of the table being played, the nearest named table's (saying which in one line) where the
rules are no named table, and refuse in one line where no shipped agent fits; a checkpoint named by its path keeps
refusing other rules."""

from __future__ import annotations

import numpy as np
import pytest

from euchre_agents.checkpoint import CheckpointMismatchError
from euchre_agents.ppo import shipped_for, shipped_path
from euchre_agents.registry import make_agent
from euchre_env import Engine, Rules
from euchre_env.named_tables import DESCRIPTIONS, NAMED_TABLES, differing_options, nearest_table, table_name
from euchre_env.play import play
from euchre_env.rules import LEAD_LEFT_OF_LONE_PLAYER


def test_the_five_tables_are_the_documents_tables():
    assert list(NAMED_TABLES) == ["standard", "no-stick", "openspiel", "joker32", "lone-defender"] == list(DESCRIPTIONS)
    assert NAMED_TABLES["standard"] == Rules() and NAMED_TABLES["openspiel"] == Rules.openspiel()
    assert differing_options(Rules(), NAMED_TABLES["no-stick"]) == ["stick_the_dealer", "throw_in_same_dealer"]
    joker = NAMED_TABLES["joker32"]
    assert (joker.deck, joker.joker, joker.target_points, joker.lone_lead) == (32, True, 5, LEAD_LEFT_OF_LONE_PLAYER)
    assert NAMED_TABLES["lone-defender"].lone_defender and not NAMED_TABLES["lone-defender"].stick_the_dealer


def test_a_table_is_named_only_when_every_option_matches():
    assert [table_name(t) for t in NAMED_TABLES.values()] == list(NAMED_TABLES)
    assert table_name(Rules(target_points=5)) is None


@pytest.mark.parametrize("rules, nearest", [
    (Rules(target_points=5), "standard"),
    (Rules(first_dealer="random"), "standard"),
    (Rules(stick_the_dealer=False, throw_in_same_dealer=False, target_points=7), "no-stick"),
    (Rules(stick_the_dealer=False), "no-stick"),  # who deals after a throw-in changes no hand's play
    (Rules(deck=32, joker=True), "joker32"),
    (Rules.openspiel(allow_lone_defender=True), "openspiel"),
    (Rules(deck=32), "standard"),   # no named table has this deck: the fewest options changed
    (Rules(joker=True), "standard"),
    (Rules(joker=True, stick_the_dealer=False, lone_lead="left_of_lone_player", target_points=5), "joker32"),
])
def test_the_nearest_named_table_has_the_same_spaces_and_fewest_options_that_change_a_hand(rules, nearest):
    assert nearest_table(rules) == nearest


def test_the_bare_ppo_plays_the_standard_agent_at_another_target_score_and_says_so(capsys):
    import euchre_agents.ppo as ppo

    ppo._SAID.clear()
    agent = make_agent("ppo", Engine(Rules(target_points=5)))
    assert agent.weights_sha256 == make_agent("ppo", Engine()).weights_sha256
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nearest, standard (other target_points)" in err
    make_agent("ppo", Engine(Rules(target_points=5)))
    assert capsys.readouterr().err == ""  # once per process


def test_search_plays_at_another_target_score_too():
    assert make_agent("search:worlds=2", Engine(Rules(target_points=7))).weights_sha256 is not None


@pytest.mark.parametrize("rules", [Rules(deck=32), Rules(joker=True)])
def test_a_deck_no_named_table_has_is_played_by_the_nearest_agent_carried_card_by_card(rules, capsys):
    import euchre_agents.ppo as ppo

    ppo._SAID.clear()
    engine = Engine(rules)
    agent = make_agent("ppo", engine)
    assert agent.weights_sha256 == make_agent("ppo", Engine()).weights_sha256
    assert agent.net.policy.out_features == engine.num_actions
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nearest, standard" in err and "carried to this deck card by card" in err
    points = play(engine, engine.init(np.arange(16, dtype=np.uint64)), [agent], np.zeros(4, np.int64))
    assert points.shape == (16, 2)


def test_a_named_table_without_its_agent_names_the_preset_that_makes_one(monkeypatch, tmp_path):
    import euchre_agents.ppo as ppo

    monkeypatch.setattr(ppo, "SHIPPED_FOLDER", tmp_path)
    with pytest.raises(ValueError, match=r"no learned agent is shipped for the no-stick table yet; make one with "
                                         r"`python train.py --config configs/recipe_no-stick.yaml`"):
        shipped_for(NAMED_TABLES["no-stick"])


def test_a_checkpoint_named_by_its_path_still_refuses_other_rules():
    with pytest.raises(CheckpointMismatchError, match="rules.target_points: checkpoint 10, here 5"):
        make_agent(f"ppo:{shipped_path('standard')}", Engine(Rules(target_points=5)))
