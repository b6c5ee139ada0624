"""Outside agents: `MODULE:ATTR` and `PATH.py:ATTR` specs load the user's code wherever a spec is taken."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import SUBPROCESS_TIMEOUT
from euchre_agents.base import Agent, file_sha256
from euchre_agents.registry import make_agent
from euchre_env import Engine
from euchre_env.play import BotError
from euchre_lab.evaluation.match import play_match

ROOT = Path(__file__).resolve().parents[1]
USER_CODE = '''
import numpy as np
from euchre_agents.base import Agent

def uniform(observation, rng=None):
    legal = np.flatnonzero(observation["action_mask"])
    return int(legal[rng.integers(legal.size)])

def lowest(observation):
    return int(np.flatnonzero(observation["action_mask"])[0])

def illegal(observation):
    return int(np.flatnonzero(observation["action_mask"] == 0)[0])

def broken(observation):
    raise RuntimeError("my policy broke")

def exits(observation):
    import os
    os._exit(3)   # as a crash in native code would: no exception, the process is gone

class Highest(Agent):
    name = "highest"
    def act(self, obs, mask, state=None, rows=None):
        return mask.shape[1] - 1 - np.argmax(np.asarray(mask, bool)[:, ::-1], axis=1)

class Crashing(Agent):
    def act(self, obs, mask, state=None, rows=None):
        raise KeyError("no such card")

def not_an_agent(engine, seed=None):
    return "a string"

LIMIT = 3
'''


@pytest.fixture
def user_folder(tmp_path, monkeypatch):
    """A folder holding the user's bots as `userbots.py`, made the current folder."""
    (tmp_path / "userbots.py").write_text(USER_CODE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "userbots", raising=False)
    return tmp_path


@pytest.mark.parametrize("spec", ["userbots:lowest", "userbots.py:lowest", "userbots:Highest", "userbots:uniform"])
def test_module_and_file_specs_build_a_bot_that_plays_legally(user_folder, spec):
    engine = Engine()
    agent = make_agent(spec, engine, seed=1)
    assert isinstance(agent, Agent) and agent.source_sha256 == file_sha256(user_folder / "userbots.py")
    result = play_match(engine, spec, "heuristic", hands=20, seed=3)
    assert result.num_hands == 20


def test_a_plain_function_gets_the_bots_seeded_generator_so_workers_do_not_change_a_match(user_folder):
    one, two = (play_match(None, "userbots.py:uniform", "random", hands=40, seed=2, chunk=5, workers=w) for w in (1, 2))
    assert np.array_equal(one.a_points, two.a_points) and np.array_equal(one.b_points, two.b_points)
    first = make_agent("userbots:uniform", Engine(), seed=5)
    obs, mask = np.zeros((3, first.engine.observation_size), np.float32), np.ones((3, first.engine.num_actions), bool)
    again = make_agent("userbots:uniform", Engine(), seed=5)
    assert np.array_equal(first.act(obs, mask), again.act(obs, mask))


def test_the_source_digest_is_of_the_file_that_defines_the_bot(user_folder):
    (user_folder / "mypackage").mkdir()
    (user_folder / "mypackage" / "__init__.py").write_text("from userbots import lowest as first\n")
    agent = make_agent("mypackage:first", Engine())
    assert agent.source_sha256 == file_sha256(user_folder / "userbots.py")


def test_registered_names_win_over_a_module_of_the_same_name(user_folder):
    (user_folder / "pimc.py").write_text("def worlds(observation):\n    raise AssertionError('never loaded')\n")
    with pytest.raises(ValueError, match="pimc option worlds takes a number"):
        make_agent("pimc:worlds", Engine())


@pytest.mark.parametrize("spec, says", [
    ("nomodule:policy", "cannot import module 'nomodule' for the bot spec"),
    ("userbots:missing", "'userbots' has no attribute 'missing'; give MODULE:ATTR or PATH.py:ATTR"),
    ("userbots:LIMIT", "'userbots:LIMIT': LIMIT is not callable"),
    ("userbots:not_an_agent", "the factory not_an_agent returned a str, not an Agent"),
    ("nofile.py:policy", "outside bot file 'nofile.py' not found"),
    ("heuristc", "unknown agent 'heuristc'; known agents: "),
])
def test_a_bad_outside_spec_is_one_value_error(user_folder, spec, says):
    with pytest.raises(ValueError, match=None) as caught:
        make_agent(spec, Engine())
    assert says in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("spec, says", [
    ("userbots:illegal", "bot 'userbots:illegal' chose the illegal action"),
    ("userbots:broken", "bot 'userbots:broken' raised RuntimeError: my policy broke"),
    ("userbots.py:Crashing", "bot 'userbots.py:Crashing' raised KeyError: 'no such card'"),
])
def test_a_function_that_fails_while_playing_is_a_bot_error(user_folder, spec, says):
    with pytest.raises(BotError, match=says):
        play_match(None, spec, "random", hands=4, seed=0)


def run_tool(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)


@pytest.mark.parametrize("argv, says", [
    (["evaluate.py", "userbots:broken", "random", "--hands", "4", "--out", "res"],
     "evaluate.py: error: bot 'userbots:broken' raised RuntimeError: my policy broke"),
    (["evaluate.py", "userbots.py:illegal", "random", "--hands", "4", "--workers", "2", "--out", "res"],
     "evaluate.py: error: bot 'userbots.py:illegal' chose the illegal action"),
    (["play.py", "--watch", "--partner", "userbots:lowest", "--opponents", "userbots:broken", "--delay", "0"],
     "play.py: error: bot 'userbots:broken' raised RuntimeError"),
])
def test_the_tools_answer_a_failing_bot_in_one_line_and_write_nothing(user_folder, argv, says):
    done = run_tool([str(ROOT / argv[0]), *argv[1:]], user_folder)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(says), done.stderr
    assert not (user_folder / "res").exists()


def test_a_bot_that_kills_its_worker_process_is_one_line_not_a_hang(user_folder):
    done = run_tool([str(ROOT / "evaluate.py"), "userbots:exits", "random", "--hands", "8", "--chunk", "2", "--workers", "2",
                     "--no-progress", "--out", "res"], user_folder)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("evaluate.py: error: a worker process died while playing"), done.stderr
    assert not (user_folder / "res" / "match.json").exists()


def test_evaluate_and_the_round_robin_play_outside_bots(user_folder):
    done = run_tool([str(ROOT / "evaluate.py"), "--round-robin", "userbots:lowest", "userbots.py:Highest", "random",
                     "--hands", "8", "--workers", "1", "--no-progress", "--no-plots", "--out", "rr"], user_folder)
    assert done.returncode == 0, done.stderr
    assert "userbots.py:Highest" in (user_folder / "rr" / "tournament.json").read_text()


def test_training_takes_outside_bots_as_opponents_and_as_the_exploit_target(user_folder):
    from euchre_lab.training import train_checks, train_options

    for flags in (["--opponent-mix", "self=1,userbots:lowest=1"], ["--config", "exploit.yaml", "--target", "userbots.py:uniform"]):
        args, checkpoint = train_options.parse_args(["--config", "ppo_tiny.yaml", *flags, "--runs-dir", str(user_folder / "runs")])
        train_checks.check_args(args, checkpoint)
    args, checkpoint = train_options.parse_args(["--config", "ppo_tiny.yaml", "--opponent-mix", "self=1,userbots:nothing=1"])
    with pytest.raises(ValueError, match="'userbots' has no attribute 'nothing'"):
        train_checks.check_args(args, checkpoint)
