"""Shared helpers: scripted deals played step by step with the legal mask checked after every step,
vectorized random play over the engine, one turn of a game through the web API, a live web server and a
headless Chromium for the page's tests, the hypothesis profile and the subprocess timeout."""

from __future__ import annotations

import importlib.util
import os
import pathlib
import shutil
import socket
import threading
import time
import sys
from types import ModuleType
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from hypothesis import settings

from euchre_env import euchre_v0
from euchre_env.engine import Engine, EuchreState
from euchre_env.rules import Rules

# Hypothesis draws the same examples on every run, so a CI failure reproduces; for fresh examples run
# `HYPOTHESIS_PROFILE=randomized pytest ...`, which prints a blob to replay any failure it finds.
settings.register_profile("derandomized", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("randomized", derandomize=False, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))

SUBPROCESS_TIMEOUT = 600
"""Seconds a test waits on a tool run in a subprocess: room for a cold numba compile on a loaded machine."""

Step = tuple[int, str, str]
"""One scripted decision: (seat to act, its legal action names separated by spaces, action to take)."""


MARCH = (3, ["JH JD AH KH QH", "AC KC QC JC TC", "AD KD QD TD 9D", "AS KS QS JS TS"], "9H")
"""(dealer, hands, upcard): seat 0 holds the five best hearts; nobody else holds a heart but the upcard."""

MARCH_SCRIPT: list[Step] = [
    (0, "pass hearts", "hearts"),
    (0, "alone partner", "partner"),
    (3, "AS KS QS JS TS 9H", "9H"),
    (0, "JH JD AH KH QH", "JH"),
    (1, "AC KC QC JC TC", "TC"),
    (2, "AD KD QD TD 9D", "9D"),
    (3, "AS KS QS JS TS", "TS"),
    (0, "JD AH KH QH", "JD"),
    (1, "AC KC QC JC", "JC"),
    (2, "AD KD QD TD", "TD"),
    (3, "AS KS QS JS", "JS"),
    (0, "AH KH QH", "AH"),
    (1, "AC KC QC", "QC"),
    (2, "AD KD QD", "QD"),
    (3, "AS KS QS", "QS"),
    (0, "KH QH", "KH"),
    (1, "AC KC", "KC"),
    (2, "AD KD", "KD"),
    (3, "AS KS", "KS"),
    (0, "QH", "QH"),
    (1, "AC", "AC"),
    (2, "AD", "AD"),
    (3, "AS", "AS"),
]
"""Seat 0 orders hearts, plays with its partner and takes all five tricks (a march: 2 points)."""


def load_script(path: str | os.PathLike) -> ModuleType:
    """A script outside the packages (benchmarks/, examples/, a test fixture) as a module, by its path from the
    repository root (or an absolute path); registered in sys.modules under its file name, as dataclasses need."""
    path = pathlib.Path(__file__).parent.parent / path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def exit_status(main: Callable[[Sequence[str]], int], argv: Sequence[str]) -> int:
    """A tool's exit status for `argv`: what its `main` returns, or the code of the SystemExit that argparse raises."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def deal(dealer: int, hands: Sequence[str], upcard: str) -> dict:
    """Reset options for an exact deal; `hands` holds four strings of five card names each."""
    return {"deal": {"dealer": dealer, "hands": [h.split() for h in hands], "upcard": upcard}}


def make_env(rules: Rules | None = None, episode: str = "hand", reward: str = "points", **kwargs) -> euchre_v0.raw_env:
    """A raw AEC env (no wrappers), so tests can reach the engine state."""
    return euchre_v0.raw_env(rules=rules, episode=episode, reward=reward, **kwargs)


def start(
    dealer: int,
    hands: Sequence[str],
    upcard: str,
    rules: Rules | None = None,
    episode: str = "hand",
    reward: str = "points",
) -> euchre_v0.raw_env:
    """A raw env reset to an exact deal."""
    env = make_env(rules, episode, reward)
    env.reset(seed=0, options=deal(dealer, hands, upcard))
    return env


def legal_names(env: euchre_v0.raw_env, agent: str | None = None) -> set[str]:
    """Names of the actions the agent's mask allows (default: the agent to act)."""
    mask = env.observe(agent or env.agent_selection)["action_mask"]
    return {env.action_name(int(a)) for a in np.flatnonzero(mask)}


def play(env: euchre_v0.raw_env, steps: Sequence[Step]) -> dict[str, float]:
    """Play `steps` through the AEC env, asserting who acts and the legal names before each step
    (and that every other agent's mask is all zeros). Returns each agent's summed rewards."""
    total = {a: 0.0 for a in env.possible_agents}
    for i, (seat, legal, action) in enumerate(steps):
        agent = f"player_{seat}"
        assert env.agent_selection == agent, f"step {i} ({action}): {env.agent_selection} acts, expected {agent}"
        assert not env.terminations[agent], f"step {i}: the episode is already over"
        got = legal_names(env)
        assert got == set(legal.split()), f"step {i}: {agent} may {sorted(got)}, expected {sorted(legal.split())}"
        for other in env.possible_agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any(), f"step {i}: {other} has a mask off turn"
        env.step(env.action_id(action))
        for a in env.possible_agents:
            total[a] += env.rewards[a]
    return total


def play_engine(engine: Engine, state: EuchreState, steps: Sequence[Step]) -> np.ndarray:
    """Play `steps` through the engine (one game, N=1), asserting the seat and legal names before
    each step. Returns the summed (4,) rewards."""
    total = np.zeros(4)
    names = engine.action_names
    for i, (seat, legal, action) in enumerate(steps):
        assert not state.done[0], f"step {i} ({action}): the episode is already over"
        assert int(state.to_play[0]) == seat, f"step {i} ({action}): seat {state.to_play[0]} acts, expected {seat}"
        got = {names[a] for a in engine.legal_actions(state)}
        assert got == set(legal.split()), f"step {i}: seat {seat} may {sorted(got)}, expected {sorted(legal.split())}"
        total += engine.step(state, np.array([names.index(action)]))[0]
    return total


def random_actions(state: EuchreState, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per game (0 for finished games, which the engine ignores)."""
    noise = rng.random(state.legal.shape)
    return np.argmax(np.where(state.legal, noise, -1.0), axis=1)


def random_play(
    engine: Engine, state: EuchreState, rng: np.random.Generator, max_steps: int = 20_000
) -> Iterator[tuple[EuchreState, np.ndarray, np.ndarray]]:
    """Step every game with random legal actions until all are done, yielding
    (state before the step as a copy, actions, rewards) for each step."""
    for _ in range(max_steps):
        if state.done.all():
            return
        before = state.copy()
        actions = random_actions(state, rng)
        rewards = engine.step(state, actions)
        yield before, actions, rewards
    raise AssertionError(f"games still running after {max_steps} steps")


def api_turn(client: Any, message: dict, rng: np.random.Generator) -> dict:
    """One request of a game through the web API, from its last `message`: the person's random legal
    choice on its turn, else a bot's step. Returns the reply, asserting it is a 200."""
    game = f"/api/games/{message['id']}"
    if message["to_play"] == message["you"]:
        choice = message["legal"][rng.integers(len(message["legal"]))]["action"]
        response = client.post(f"{game}/action", json={"action": choice, "version": message["version"]})
    else:
        response = client.post(f"{game}/step", json={"version": message["version"]})
    assert response.status_code == 200, response.text
    return response.json()


def without_shipped_agent(monkeypatch: Any, folder: pathlib.Path, table: str) -> None:
    """Play as a checkout that ships every named table's agent but `table`'s (the bare `ppo` there refuses)."""
    import euchre_agents.ppo as ppo
    from euchre_env.named_tables import NAMED_TABLES

    for other in NAMED_TABLES:
        if other != table:
            (folder / ppo.shipped_path(other).name).symlink_to(ppo.shipped_path(other))
    monkeypatch.setattr(ppo, "SHIPPED_FOLDER", folder)


SMALL_VARIANTS = {
    "default": Rules(),
    "deck32_joker": Rules(deck=32, joker=True),
    "lone_defenders": Rules(lone_defender=True, lone_defender_euchre_points=4, lone_lead="left_of_lone_player"),
    "stick_off_left": Rules(stick_the_dealer=False, throw_in_same_dealer=False, target_points=5),
    "openspiel": Rules.openspiel(allow_lone_defender=True, stick_the_dealer=False),
}
"""Rule configs the property tests sweep."""



# ------------------------------------------------------------------ the web table in a real browser


class LiveServer:
    """A uvicorn server for `app` on a free loopback port, in a thread, for as long as the `with` block."""

    def __init__(self, app):
        import uvicorn

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the test server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


def headless_chromium(tmp_path: pathlib.Path, width: int = 1400, height: int = 900, touch: bool = False):
    """Debian's Chromium, headless, at `width` x `height` (a phone with a touch screen if `touch`); skips (fails
    under CI=true) when chromium or chromium-driver is missing."""
    import pytest

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs Debian's chromium and chromium-driver; .ci/run installs them")
        pytest.skip("needs Debian's chromium and chromium-driver: apt-get install -y chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--window-size={width},{height}", f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    if touch:
        options.add_experimental_option(
            "mobileEmulation", {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2, "touch": True}})
    browser = webdriver.Chrome(service=Service(driver), options=options)
    if not touch:  # the page's viewport itself is width x height (a window's frame would take some of it)
        metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    return browser
