"""The baselines' example trainers: examples/cleanrl_masked_ppo.py (a bit-for-bit resume) and
examples/sb3_maskable_ppo.py (a resume of weights and step count), each at a tiny budget, the policies they export
playing as outside bots in evaluate.py, and one line with exit status 2 for a bad option."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import load_script
from euchre_agents.base import file_sha256
from euchre_agents.registry import make_agent
from euchre_env import Engine, Rules, get_task
from euchre_lab.evaluation import evaluate

CLEANRL_TINY = ["--num-envs", "50", "--num-steps", "20", "--num-minibatches", "2", "--update-epochs", "2",
                "--hidden-size", "16", "--save-interval", "1", "--torch-threads", "0"]
"""Iterations of 1,000 decisions with a small network: well under a second each."""
SB3_TINY = ["--n-steps", "64", "--batch-size", "32", "--n-epochs", "1", "--save-interval", "1", "--torch-threads", "0"]
"""Rollouts of 64 decisions, one pass each."""


@pytest.fixture(scope="module")
def cleanrl():
    return load_script("examples/cleanrl_masked_ppo.py")


@pytest.fixture(scope="module")
def sb3():
    return load_script("examples/sb3_maskable_ppo.py")


def standard_engine() -> Engine:
    return Engine(get_task("standard-v1").rules)


def plays_legally(spec: str, engine: Engine) -> None:
    """The bot a spec builds answers a legal action for a batch of real decisions."""
    from euchre_env import EuchreVectorEnv

    venv = EuchreVectorEnv(16, task="standard-v1", seed=0)
    obs, info = venv.reset()
    actions = make_agent(spec, engine, seed=0).act(obs, info["action_mask"])
    assert info["action_mask"][np.arange(16), actions].all()


def test_cleanrl_resumes_bit_for_bit_and_its_policy_plays_in_evaluate(cleanrl, tmp_path):
    straight = ["--runs-dir", str(tmp_path), *CLEANRL_TINY]
    assert cleanrl.main([*straight, "--run-name", "straight", "--total-decisions", "3000"]) == 0
    assert cleanrl.main([*straight, "--run-name", "stopped", "--total-decisions", "2000"]) == 0
    assert cleanrl.main(["--resume", str(tmp_path / "stopped" / "checkpoint.pt"), "--num-envs", "60"]) == 2  # its games stay
    assert cleanrl.main(["--resume", str(tmp_path / "stopped" / "checkpoint.pt"), "--total-decisions", "3000"]) == 0
    a, b = (torch.load(tmp_path / run / "checkpoint.pt", weights_only=False) for run in ("straight", "stopped"))
    assert a["global_step"] == b["global_step"] == 3000 and a["iteration"] == b["iteration"] == 3
    assert all(torch.equal(a["agent"][k], b["agent"][k]) for k in a["agent"])
    assert sorted(p.name for p in (tmp_path / "stopped").glob("policy_*")) == ["policy_2000", "policy_3000"]

    spec = f"{tmp_path / 'stopped' / 'policy_3000' / 'agent.py'}:agent"
    plays_legally(spec, standard_engine())
    out = tmp_path / "match"
    assert evaluate.main([spec, "random", "--hands", "20", "--chunk", "10", "--workers", "1", "--no-plots", "--no-progress",
                          "--out", str(out)]) == 0
    played = json.loads((out / "match.json").read_text())["match"]["weights_sha256"][spec]
    assert played == file_sha256(tmp_path / "stopped" / "policy_3000" / "actor.pt")
    with pytest.raises(ValueError, match="trained on standard-v1"):
        make_agent(spec, Engine(Rules(stick_the_dealer=False)))


def test_cleanrls_advantages_with_lambda_one_give_each_seat_its_partnerships_points(cleanrl):
    seats = torch.tensor([[0, 0], [1, 1], [2, 3], [3, 0], [0, 1]])  # two game rows, steps down
    rewards = torch.zeros(5, 2)
    rewards[4, 0] = 2.0  # row 0: seat 0's play ends the hand, 2 points to seats 0 and 2
    values = torch.randn(5, 2)
    dones = torch.zeros(5, 2)
    next_value, next_seat = torch.tensor([0.0, 0.7]), torch.tensor([1, 2])  # row 1 goes on: seat 2 acts next, valued 0.7
    advantages = cleanrl.signed_gae(rewards, values, dones, seats, next_value, torch.tensor([True, False]), next_seat, 1.0, 1.0)
    returns = advantages + values
    assert torch.allclose(returns[:, 0], torch.tensor([2.0, -2.0, 2.0, -2.0, 2.0]))
    assert torch.allclose(returns[:, 1], torch.tensor([0.7, -0.7, -0.7, 0.7, -0.7]))


def test_sb3_trains_resumes_from_its_step_count_and_its_policy_plays(sb3, tmp_path):
    assert sb3.main(["--runs-dir", str(tmp_path), "--run-name", "sb3", "--total-decisions", "100", *SB3_TINY]) == 0
    assert sb3.main(["--resume", str(tmp_path / "sb3" / "checkpoint.zip"), "--n-steps", "32"]) == 2  # the model keeps it
    assert sb3.main(["--resume", str(tmp_path / "sb3" / "checkpoint.zip"), "--total-decisions", "200"]) == 0
    assert sorted(p.name for p in (tmp_path / "sb3").glob("policy_*")) == ["policy_128", "policy_256"]
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(tmp_path / "sb3" / "checkpoint.zip", device="cpu")
    assert model.num_timesteps == 256 and getattr(model, sb3.OPTIONS)["n_steps"] == 64
    spec = f"{tmp_path / 'sb3' / 'policy_256' / 'agent.py'}:agent"
    plays_legally(spec, standard_engine())
    assert make_agent(spec, standard_engine()).weights_sha256 == file_sha256(tmp_path / "sb3" / "policy_256" / "model.zip")


@pytest.mark.parametrize("script, argv, says", [
    ("cleanrl", ["--num-envs", "0"], "--num-envs must be greater than 0"),
    ("cleanrl", ["--task", "standard-v9"], "unknown task 'standard-v9'"),
    ("cleanrl", ["--resume", "missing.pt"], "--resume missing.pt: no such file"),
    ("cleanrl", ["--num-minibatches", "3"], "does not divide a rollout"),
    ("sb3", ["--gamma", "1.5"], "--gamma must be between 0 and 1"),
    ("sb3", ["--resume", "missing.zip"], "--resume missing.zip: no such file"),
])
def test_a_bad_option_is_one_line_and_exit_status_2(script, argv, says, request, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert request.getfixturevalue(script).main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("examples/") and says in err[0], err


def test_a_file_that_is_no_checkpoint_and_a_taken_run_folder_are_refused_in_one_line(cleanrl, sb3, tmp_path, capsys):
    (tmp_path / "notes.pt").write_text("not a checkpoint")
    (tmp_path / "notes.zip").write_text("not a model")
    assert cleanrl.main(["--resume", str(tmp_path / "notes.pt")]) == 2
    assert sb3.main(["--resume", str(tmp_path / "notes.zip")]) == 2
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "checkpoint.pt").write_text("")
    assert cleanrl.main(["--runs-dir", str(tmp_path), "--run-name", "run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert [line.split(": ")[2] for line in err] == [f"--resume {tmp_path / 'notes.pt'}", f"--resume {tmp_path / 'notes.zip'}",
                                                     f"{tmp_path / 'run'} already holds a run; continue it with --resume "
                                                     f"{tmp_path / 'run' / 'checkpoint.pt'}, or choose another --run-name"]
