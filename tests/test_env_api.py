"""The PettingZoo AEC environment: the ecosystem's checkers, illegal actions, malformed deals,
masks, rendering, action names, the public state and rewards."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from conftest import MARCH, MARCH_SCRIPT, deal, make_env, play, start
from euchre_env import euchre_v0
from euchre_env.engine import DealError, EuchreState, IllegalActionError
from euchre_env.rules import Rules

API_CONFIGS = {
    "default": {},
    "deck32": {"rules": Rules(deck=32)},
    "joker": {"rules": Rules(joker=True)},
    "lone_defenders": {"rules": Rules(lone_defender=True, lone_defender_euchre_points=4)},
    "stick_off": {"rules": Rules(stick_the_dealer=False, throw_in_same_dealer=False)},
    "left_of_lone_player": {"rules": Rules(lone_lead="left_of_lone_player", lone_defender=True)},
    "openspiel": {"rules": Rules.openspiel(allow_lone_defender=True)},
    "hand": {"episode": "hand"},
    "hand_stick_off": {"episode": "hand", "rules": Rules(stick_the_dealer=False)},
    "game_to_5_win": {"episode": "game", "reward": "win", "rules": Rules(target_points=5)},
    "rubber": {"episode": "rubber", "rules": Rules(target_points=3, rubber_games=2)},
    "rubber_win": {"episode": "rubber", "reward": "win", "rules": Rules(target_points=2, rubber_games=3)},
}
SEED_CONFIGS = ["default", "joker", "stick_off", "hand", "rubber"]


def config_of(name: str, episode: str = "game") -> dict:
    """The env arguments of API_CONFIGS[name], with `episode` where the config names none."""
    return {"episode": episode, **API_CONFIGS[name]}


@pytest.fixture(autouse=True)
def _quiet_pettingzoo_advice():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Observation space for each agent probably should be")
        warnings.filterwarnings("ignore", message="Observation is not a NumPy array")
        yield


@pytest.mark.parametrize("name", sorted(API_CONFIGS))
def test_pettingzoo_api_test(name):
    api_test(euchre_v0.env(**config_of(name)), num_cycles=200)


@pytest.mark.parametrize("name", SEED_CONFIGS)
def test_pettingzoo_seed_test(name):
    seed_test(lambda: euchre_v0.env(**config_of(name)), num_cycles=100)


def test_metadata_and_cached_spaces():
    env = make_env()
    assert env.metadata["name"] == "euchre_v0" and env.metadata["is_parallelizable"] is False
    assert set(env.metadata["render_modes"]) == {"ansi", "human"}
    assert env.observation_space("player_0") is env.observation_space("player_0")
    assert env.action_space("player_1").n == env.engine.num_actions == 31
    assert env.observation_space("player_2")["action_mask"].shape == (31,)
    assert make_env(Rules(deck=32, joker=True)).action_space("player_0").n == 33 + 7


def snapshot(env: euchre_v0.raw_env) -> dict:
    """Everything an agent can read from the env, copied."""
    return {
        "obs": {a: copy.deepcopy(env.observe(a)) for a in env.possible_agents},
        "public": env.public_state(),
        "selected": env.agent_selection,
        "rewards": dict(env.rewards),
        "cumulative": dict(env._cumulative_rewards),
        "terminations": dict(env.terminations),
        "legal": env.legal_actions(),
    }


def assert_same(a: dict, b: dict) -> None:
    for agent in a["obs"]:
        for key in ("observation", "action_mask"):
            assert np.array_equal(a["obs"][agent][key], b["obs"][agent][key]), f"{agent} {key} changed"
    assert {k: v for k, v in a.items() if k != "obs"} == {k: v for k, v in b.items() if k != "obs"}


KEEP_9H = [
    (0, "pass hearts", "hearts"),
    (0, "alone partner", "partner"),
    (3, "AS KS QS JS TS 9H", "TS"),
    (0, "JH JD AH KH QH", "JH"),
    (1, "AC KC QC JC TC", "TC"),
    (2, "AD KD QD TD 9D", "9D"),
]
"""The dealer keeps the upcard and so must follow the trump lead with it."""


@pytest.mark.parametrize(
    "prefix, action, legal",
    [
        ([], "spades", ["pass", "hearts"]),
        ([], "JH", ["pass", "hearts"]),
        ([(0, "pass hearts", "hearts")], "pass", ["alone", "partner"]),
        (MARCH_SCRIPT[:2], "JH", ["AS", "KS", "QS", "JS", "TS", "9H"]),
        (MARCH_SCRIPT[:4], "AD", ["AC", "KC", "QC", "JC", "TC"]),
        (MARCH_SCRIPT[:6], "pass", ["AS", "KS", "QS", "JS", "TS"]),
        (KEEP_9H[:6], "AS", ["9H"]),
    ],
)
def test_illegal_action_raises_naming_it_and_leaves_the_state_unchanged(prefix, action, legal):
    env = start(*MARCH)
    play(env, prefix)
    before = snapshot(env)
    state_before = env.state_.copy()
    with pytest.raises(IllegalActionError) as err:
        env.step(env.action_id(action))
    message = str(err.value)
    assert f"illegal action {action} " in message
    listed = [label.split(" (")[0] for label in message.split("legal actions: ")[1].split(", ")]
    assert sorted(listed) == sorted(legal)
    assert_same(before, snapshot(env))
    for field, value in vars(state_before).items():
        assert np.array_equal(value, getattr(env.state_, field)), field


def test_out_of_range_action_raises_illegal_action_error():
    env = start(*MARCH)
    before = snapshot(env)
    with pytest.raises(IllegalActionError, match="no such action"):
        env.step(999)
    with pytest.raises(IllegalActionError):
        env.step(-1)
    assert_same(before, snapshot(env))


def test_wrapped_env_names_an_out_of_range_action_and_the_legal_ones():
    env = euchre_v0.env(episode="hand")
    env.reset(options=deal(*MARCH))
    for bad, shown in ((31, "31 (int)"), (2.5, "2.5 (float)"), (None, "None (NoneType)")):
        with pytest.raises(IllegalActionError) as err:
            env.step(bad)
        assert isinstance(err.value, AssertionError)  # what PettingZoo's own check raises
        assert str(err.value) == (
            f"action is not in action space: player_0 was given {shown}; "
            "give an action id 0..30; legal now: pass (24), hearts (27)"
        )
    assert env.agent_selection == "player_0"


def test_wrapped_env_raises_illegal_action_error_for_an_illegal_in_range_action():
    env = euchre_v0.env(episode="hand")
    env.reset(options=deal(*MARCH))
    with pytest.raises(IllegalActionError, match="legal actions: pass"):
        env.step(env.unwrapped.action_id("clubs"))
    env.step(env.unwrapped.action_id("pass"))
    assert env.agent_selection == "player_1"


GOOD = deal(*MARCH)["deal"]
BAD_DEALS = {
    "four cards in a hand": {**GOOD, "hands": [GOOD["hands"][0][:4]] + GOOD["hands"][1:]},
    "six cards in a hand": {**GOOD, "hands": [GOOD["hands"][0] + ["9C"]] + GOOD["hands"][1:]},
    "three hands": {**GOOD, "hands": GOOD["hands"][:3]},
    "five hands": {**GOOD, "hands": GOOD["hands"] + [["9C", "TH", "9S", "9H", "QD"]]},
    "duplicate card in two hands": {**GOOD, "hands": [["JH", "JD", "AH", "KH", "AC"]] + GOOD["hands"][1:]},
    "duplicate card in one hand": {**GOOD, "hands": [["JH", "JH", "AH", "KH", "QH"]] + GOOD["hands"][1:]},
    "upcard also dealt": {**GOOD, "upcard": "JH"},
    "unknown card name": {**GOOD, "upcard": "ZZ"},
    "seven in a 24-card deck": {**GOOD, "upcard": "7C"},
    "joker without the joker": {**GOOD, "upcard": "JOKER"},
    "card given as an id": {**GOOD, "upcard": 3},
    "dealer 4": {**GOOD, "dealer": 4},
    "dealer -1": {**GOOD, "dealer": -1},
    "dealer as text": {**GOOD, "dealer": "0"},
    "dealer as bool": {**GOOD, "dealer": True},
    "dealer as float": {**GOOD, "dealer": 1.0},
    "missing upcard": {"dealer": 3, "hands": GOOD["hands"]},
    "extra key": {**GOOD, "kitty": ["9H"]},
    "not a dict": [3, GOOD["hands"], "9H"],
    "hand as a string": {**GOOD, "hands": ["JH JD AH KH QH"] + GOOD["hands"][1:]},
}


@pytest.mark.parametrize("name", sorted(BAD_DEALS))
def test_malformed_deal_raises_deal_error_and_leaves_the_env_unchanged(name):
    env = make_env(episode="game")
    twin = make_env(episode="game")
    env.reset(seed=5)
    twin.reset(seed=5)
    for e in (env, twin):
        for _ in range(3):
            e.step(e.legal_actions()[0])
    before = snapshot(env)
    with pytest.raises(DealError):
        env.reset(options={"deal": BAD_DEALS[name]})
    assert_same(before, snapshot(env))
    env.step(env.legal_actions()[-1])
    twin.step(twin.legal_actions()[-1])
    assert_same(snapshot(twin), snapshot(env))
    env.reset()
    twin.reset()  # the failed reset consumed no randomness
    assert_same(snapshot(twin), snapshot(env))


def test_a_good_deal_is_dealt_exactly():
    env = start(*MARCH)
    names = env.engine.deck.names
    for seat, hand in enumerate(GOOD["hands"]):
        assert sorted(names[c] for c in np.flatnonzero(env.state_.hand[0, seat])) == sorted(hand)
    assert env.public_state()["upcard"] == "9H" and env.public_state()["dealer"] == 3
    lower = make_env()
    lower.reset(options=deal(3, [h.lower() for h in MARCH[1]], "9h"))
    assert np.array_equal(lower.state_.hand, env.state_.hand)
    ten = make_env()
    ten.reset(options=deal(3, ["JH JD AH KH QH", "AC KC QC JC 10C", "AD KD QD 10D 9D", "AS KS QS JS 10S"], "9H"))
    assert np.array_equal(ten.state_.hand, env.state_.hand)


def test_reset_with_a_seed_is_reproducible_and_seeds_differ():
    deals = []
    for seed in (0, 0, 1, 2):
        env = make_env(episode="game")
        env.reset(seed=seed)
        deals.append((env.state_.dealer[0], env.state_.hand[0].tobytes(), env.state_.upcard[0]))
    assert deals[0] == deals[1]
    assert len(set(deals)) == 3


@pytest.mark.parametrize("name", ["default", "lone_defenders", "left_of_lone_player", "openspiel", "rubber"])
def test_only_the_selected_agent_has_a_mask_and_sitting_out_seats_are_never_selected(name):
    config = config_of(name, "hand")
    env = euchre_v0.raw_env(**config)
    rng = np.random.default_rng(3)
    sat_out = 0
    for episode in range(1 if name == "rubber" else 8):
        env.reset(seed=episode)
        while not all(env.terminations.values()):
            agent = env.agent_selection
            seat = env.possible_agents.index(agent)
            assert env.state_.active[0, seat]
            sat_out += (~env.state_.active[0]).any()
            obs = env.observe(agent)
            assert env.observation_space(agent).contains(obs)
            assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].any()
            assert np.array_equal(np.flatnonzero(obs["action_mask"]), env.legal_actions())
            for other in env.possible_agents:
                if other != agent:
                    assert not env.observe(other)["action_mask"].any()
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        for agent in env.possible_agents:
            assert not env.observe(agent)["action_mask"].any()
    if name != "rubber":
        assert sat_out > 0


def test_render_ansi_is_readable():
    env = make_env(render_mode="ansi")
    env.reset(options=deal(*MARCH))
    text = env.render()
    assert "Upcard 9H (offered)" in text
    assert "player_0 (South) to bid_round_1" in text
    assert "hand:  9H" not in text and "JH" in text and "legal: pass hearts" in text
    play(env, MARCH_SCRIPT[:5])
    text = env.render()
    assert "Trump ♥ hearts, made by player_0" in text
    assert "Trick: player_0:JH  player_1:TC" in text
    assert "player_2 (North) to play" in text and "legal: 9D TD QD KD AD" in text
    play(env, MARCH_SCRIPT[5:])
    text = env.render()
    assert "Over. last hand: NS +2, EW +0" in text
    assert text.startswith("Hand 1 |")  # the hand just finished, not the next one
    assert all(line.isprintable() for line in text.splitlines())


def test_render_human_prints_and_no_mode_returns_none(capsys):
    env = make_env(render_mode="human")
    env.reset(options=deal(*MARCH))
    assert env.render() is None
    assert "Upcard 9H" in capsys.readouterr().out
    env.step(env.action_id("pass"))
    assert "player_1 (West)" in capsys.readouterr().out
    quiet = make_env()
    quiet.reset(seed=0)
    with pytest.warns(UserWarning):
        assert quiet.render() is None
    with pytest.raises(ValueError):
        make_env(render_mode="rgb_array")


@pytest.mark.parametrize("rules", [Rules(), Rules(deck=32), Rules(joker=True), Rules(deck=32, joker=True)])
def test_action_name_and_action_id_round_trip(rules):
    env = make_env(rules)
    n = env.engine.num_actions
    names = [env.action_name(a) for a in range(n)]
    assert len(set(names)) == n
    assert [env.action_id(name) for name in names] == list(range(n))
    assert [env.action_id(name.lower()) for name in names] == list(range(n))
    assert names[-7:] == ["pass", "clubs", "diamonds", "hearts", "spades", "alone", "partner"]
    assert names[:4] == ["9C", "9D", "9H", "9S"] and names[23] == "AS"
    assert env.action_id("10h") == env.action_id("TH") == 6
    with pytest.raises(ValueError):
        env.action_name(n)
    with pytest.raises(ValueError):
        env.action_name(-1)
    with pytest.raises(ValueError):
        env.action_id("no such card")


def test_public_state_follows_the_hand():
    env = start(*MARCH, episode="game")
    pub = env.public_state()
    assert pub == {
        "phase": "bid_round_1",
        "to_play": 0,
        "dealer": 3,
        "upcard": "9H",
        "upcard_turned_down": False,
        "bids": [],
        "trump": None,
        "maker": None,
        "alone": [],
        "sitting_out": [],
        "current_trick": [],
        "tricks_won": [0, 0],
        "score": [0, 0],
        "games_won": [0, 0],
        "hand_number": 0,
    }
    play(env, [(0, "pass hearts", "hearts"), (0, "alone partner", "alone")])
    pub = env.public_state()
    assert pub["phase"] == "discard" and pub["to_play"] == 3
    assert pub["trump"] == "hearts" and pub["maker"] == 0 and pub["bids"] == ["hearts"]
    assert pub["alone"] == [0] and pub["sitting_out"] == [2]
    play(env, [(3, "AS KS QS JS TS 9H", "TS"), (0, "JH JD AH KH QH", "JH"), (1, "AC KC QC JC TC", "AC")])
    pub = env.public_state()
    assert pub["phase"] == "play" and pub["to_play"] == 3
    assert pub["current_trick"] == [(0, "JH"), (1, "AC")]
    play(env, [(3, "9H", "9H")])
    pub = env.public_state()
    assert pub["current_trick"] == [] and pub["tricks_won"] == [1, 0] and pub["to_play"] == 0
    assert "JD" not in str(pub) and "KS" not in str(pub)


def test_public_state_after_round_one_passes():
    env = start(*MARCH)
    play(env, [(s, "pass hearts", "pass") for s in range(4)])
    pub = env.public_state()
    assert pub["phase"] == "bid_round_2" and pub["upcard_turned_down"] and pub["bids"] == ["pass"] * 4


def test_points_reward_is_paid_at_the_end_of_each_hand():
    env = start(*MARCH, episode="game")
    totals = play(env, MARCH_SCRIPT[:-1])
    assert totals == {a: 0.0 for a in env.possible_agents}
    env.step(env.action_id("AS"))
    assert env.rewards == {"player_0": 2.0, "player_1": -2.0, "player_2": 2.0, "player_3": -2.0}
    assert not any(env.terminations.values())
    assert env.public_state()["score"] == [2, 0] and env.public_state()["hand_number"] == 1
    assert env.public_state()["dealer"] == 0 and env.agent_selection == "player_1"
    _, reward, _, _, _ = env.last()
    assert reward == -2.0  # player_1 acts next and has not yet collected its share
    env.step(env.legal_actions()[0])
    assert env.rewards == {a: 0.0 for a in env.possible_agents}


def test_win_reward_is_plus_or_minus_one_at_the_end():
    env = start(*MARCH, episode="hand", reward="win")
    totals = play(env, MARCH_SCRIPT)
    assert totals == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}
    assert all(env.terminations.values()) and not any(env.truncations.values())
    assert env.infos["player_0"]["score"] == [2, 0]
    env = start(*MARCH, episode="game", reward="win")
    totals = play(env, MARCH_SCRIPT)
    assert totals == {a: 0.0 for a in env.possible_agents} and not any(env.terminations.values())


def test_terminated_agents_step_out_with_none():
    env = euchre_v0.env(episode="hand")
    env.reset(options=deal(*MARCH))
    for seat, _, action in MARCH_SCRIPT:
        env.step(env.unwrapped.action_id(action))
    assert all(env.terminations.values())
    seen = []
    for agent in env.agent_iter():
        _, reward, terminated, _, _ = env.last()
        seen.append((agent, reward, terminated))
        env.step(None)
    assert sorted(a for a, _, _ in seen) == sorted(env.possible_agents)
    assert {a: r for a, r, _ in seen} == {"player_0": 2.0, "player_1": -2.0, "player_2": 2.0, "player_3": -2.0}
    assert env.agents == []


def test_random_game_rewards_add_up_to_the_final_score_margin():
    env = make_env(episode="game")
    rng = np.random.default_rng(1)
    for seed in range(3):
        env.reset(seed=seed)
        totals = {a: 0.0 for a in env.possible_agents}
        while not all(env.terminations.values()):
            env.step(int(rng.choice(env.legal_actions())))
            for a in env.possible_agents:
                totals[a] += env.rewards[a]
        score = env.public_state()["score"]
        assert max(score) >= 10
        assert totals["player_0"] == totals["player_2"] == score[0] - score[1] == -totals["player_1"]



@pytest.mark.parametrize(
    "name",
    ["default", "joker", "lone_defenders", "left_of_lone_player", "stick_off", "openspiel", "rubber", "hand",
     "hand_stick_off"],
)
@pytest.mark.parametrize("watch", ["every seat", "the seat to act"])
def test_aec_observations_and_masks_equal_the_batched_engines(name, watch):
    env = euchre_v0.raw_env(**config_of(name))
    engine = env.engine
    rng = np.random.default_rng(11)
    for episode in range(12 if name.startswith("hand") else 3):
        env.reset(seed=episode)
        key = int(env.state_.key[0])
        assert all(np.array_equal(v, getattr(engine.init(np.array([key, key])), f)[:1])
                   for f, v in vars(env.state_).items()), "the env deals as the batched engine does"
        held = []
        for _ in range(60):
            pair = EuchreState.concat([env.state_, env.state_])
            for seat, agent in enumerate(env.possible_agents):
                if watch != "every seat" and agent != env.agent_selection:
                    continue
                obs = env.observe(agent)
                batched = engine.observe(pair, np.array([seat, (seat + 1) % 4]))[0]  # N = 2: the batched encoder
                assert np.array_equal(obs["observation"], batched), f"{agent} observation"
                mask = pair.legal[0] if agent == env.agent_selection else np.zeros_like(pair.legal[0])
                assert np.array_equal(obs["action_mask"], mask.astype(np.int8)), f"{agent} mask"
                held.append((obs, {k: v.copy() for k, v in obs.items()}))
            if all(env.terminations.values()):
                break
            env.step(int(rng.choice(np.flatnonzero(env.state_.legal[0]))))
        for obs, copy_then in held:  # what was returned never changes under its holder
            assert all(np.array_equal(obs[k], copy_then[k]) for k in obs)


def test_env_keeps_pettingzoos_wrapper_classes_and_their_checks():
    from pettingzoo.utils import wrappers
    from pettingzoo.utils.env_logger import EnvLogger

    env = euchre_v0.env(episode="hand")
    assert isinstance(env, wrappers.OrderEnforcingWrapper) and isinstance(env.env, wrappers.AssertOutOfBoundsWrapper)
    assert str(env) == str(env.unwrapped)
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        env.last()
    with pytest.raises(AssertionError, match="reset"):
        env.step(0)
    env.reset(options=deal(*MARCH))
    hearts, pass_ = env.unwrapped.action_id("hearts"), env.unwrapped.action_id("pass")
    for bad in (31, -1, 2.0, "24", np.uint64(pass_), None):
        with pytest.raises(AssertionError, match="action is not in action space"):
            env.step(bad)
    env.step(np.int64(pass_))  # numpy integers the space holds are accepted
    env.step(np.int8(pass_))
    assert env.agent_selection == "player_2"
    env.reset(options=deal(*MARCH))
    env.step(hearts)
    obs, reward, terminated, truncated, info = env.last()
    assert env.agent_selection == "player_0" and not terminated and reward == 0.0 and info == {}
    assert np.array_equal(obs["action_mask"], env.observe("player_0")["action_mask"])
    for _, _, action in MARCH_SCRIPT[1:]:
        env.step(env.unwrapped.action_id(action))
    for agent in env.agent_iter():
        assert env.last()[2]
        env.step(None)
    assert not env.agents
    EnvLogger.flush()
    env.step(None)  # every agent is done: the standard warning, and nothing else happens
    assert any("step() called after all agents are terminated" in m for m in EnvLogger.mqueue)


def test_every_env_takes_the_shared_defaults_that_docs_environment_states():
    import ast
    import dataclasses
    import inspect
    import re
    from pathlib import Path

    from euchre_env import EuchreVectorEnv
    from euchre_env.defaults import ENV_DEFAULTS
    from euchre_env.single_agent import EuchreSingleEnv

    expected = dataclasses.asdict(ENV_DEFAULTS)
    for env_class in (euchre_v0.raw_env, EuchreVectorEnv, EuchreSingleEnv):
        params = inspect.signature(env_class).parameters
        assert {name: params[name].default for name in expected} == expected, env_class.__name__
    for env in (euchre_v0.env().unwrapped, EuchreVectorEnv(2), EuchreSingleEnv()):
        built = {"episode": env.engine.episode, "reward": env.engine.reward, "max_hands": env.max_hands}
        assert built == expected, type(env).__name__
    doc = (Path(__file__).resolve().parents[1] / "docs" / "environment.md").read_text()
    table = doc.split("## Defaults", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `(\w+)` \| `([^`]+)` \|", table, re.M))
    assert {name: ast.literal_eval(rows[name]) for name in expected} == expected


def test_docs_environment_lists_the_observation_features_in_the_layouts_order():
    import re
    from pathlib import Path

    from euchre_env.observation import BLOCK_AXES

    doc = (Path(__file__).resolve().parents[1] / "docs" / "environment.md").read_text()
    section = doc.split("## Observation layout", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `(\w+)` \|", section, re.M) == list(BLOCK_AXES)
