"""train.py end to end in a subprocess (TensorBoard logs, checkpoints, exact resume), its masked sampling,
its per-stream GAE, its configuration, and the checks that refuse a checkpoint made for other rules."""

from __future__ import annotations

import dataclasses
import io
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from conftest import SUBPROCESS_TIMEOUT, exit_status
from test_checkpoint_integrity import flip_tensor_bytes
from euchre_agents.base import file_sha256
from euchre_agents.registry import make_agent
from euchre_agents.checkpoint import CHECKSUM, CheckpointMismatchError, read_checkpoint
from euchre_agents.network import ActorCritic
from euchre_agents.ppo import PPOAgent
from euchre_env import Engine, EuchreVectorEnv, Rules, game_keys
from euchre_lab.training import train, train_checks, train_options
from euchre_lab.cli import OptionError, field_docs
from euchre_lab.training.league import sample_actions
from euchre_lab.training.ppo_trainer import stream_advantages
from euchre_lab.training.checkpoints import save_checkpoint
from euchre_lab.training.runs import python_command

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--config", "configs/ppo_tiny.yaml", "--total-timesteps", "1536"]
"""Three updates of 32 games x 16 steps, a checkpoint after each."""


def run_train(*flags: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "train.py", *flags], cwd=ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT
    )


def scalar_events(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """TensorBoard scalar tag -> (step, value) of each time it was logged."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(run_dir)).Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def scalars(run_dir: Path) -> dict[str, list[int]]:
    """TensorBoard scalar tag -> the steps it was logged at."""
    return {tag: [step for step, _ in logged] for tag, logged in scalar_events(run_dir).items()}


@pytest.fixture(scope="session")
def tiny_run(request, tmp_path_factory) -> Path:
    """A finished tiny run (with periodic evaluation against `random`); its run folder. Under
    pytest-xdist the workers share one run (the first to take the lock trains, the others wait)."""
    from filelock import FileLock  # a dependency of torch

    shared = hasattr(request.config, "workerinput")
    root = tmp_path_factory.getbasetemp().parent if shared else tmp_path_factory.mktemp("shared")
    run_dir = root / "train_runs" / "tiny"
    with FileLock(str(root / "tiny_run.lock")):
        if not (run_dir / "checkpoints" / "update_000003.pt").exists():
            done = run_train(
                *TINY, "--runs-dir", str(run_dir.parent), "--run-name", "tiny", "--eval-interval", "2", "--eval-opponents", "random=40"
            )
            assert done.returncode == 0, done.stderr
    return run_dir


def test_tiny_run_writes_tensorboard_logs_and_checkpoints(tiny_run):
    tags = scalars(tiny_run)
    for tag in (
        "losses/policy_loss",
        "losses/value_loss",
        "losses/entropy",
        "losses/approx_kl",
        "losses/clipfrac",
        "losses/explained_variance",
        "charts/SPS",
        "charts/learning_rate",
    ):
        assert tags[tag] == [512, 1024, 1536], tag
    assert tags["eval/margin_per_hand_vs_random"] == [1024, 1536]
    assert tags["eval/margin_per_hand_vs_random_low"] == [1024, 1536]
    checkpoints = tiny_run / "checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == [
        "latest.pt",
        "update_000001.pt",
        "update_000002.pt",
        "update_000003.pt",
    ]
    latest = torch.load(checkpoints / "latest.pt", weights_only=True)
    assert latest["update"] == 3 and latest["global_step"] == 1536
    assert latest["rules"] == Rules().to_dict()
    assert latest["observation"]["observation_size"] == Engine().observation_size
    assert {"model", "optimizer", "rng", "config", "env_state", "pool"} <= set(latest)


def test_resume_continues_with_the_same_next_batch(tiny_run, tmp_path):
    resumed = run_train(
        "--resume", str(tiny_run / "checkpoints" / "update_000002.pt"), "--runs-dir", str(tmp_path), "--run-name", "resumed"
    )
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(p.name for p in (tmp_path / "resumed" / "checkpoints").iterdir()) == ["latest.pt", "update_000003.pt"]
    assert scalars(tmp_path / "resumed")["losses/policy_loss"] == [1536]
    straight = torch.load(tiny_run / "checkpoints" / "update_000003.pt", weights_only=True)
    again = torch.load(tmp_path / "resumed" / "checkpoints" / "update_000003.pt", weights_only=True)
    assert again["global_step"] == straight["global_step"] == 1536
    assert again["batch_digest"] == straight["batch_digest"]
    for name, weights in straight["model"].items():
        assert torch.equal(weights, again["model"][name]), name


def test_a_finished_run_resumed_with_a_larger_budget_trains_on_with_the_rate_annealed_to_the_new_end(tiny_run, tmp_path):
    longer = run_train(
        "--resume", str(tiny_run / "checkpoints" / "latest.pt"), "--total-timesteps", "2560", "--runs-dir", str(tmp_path),
        "--run-name", "longer",
    )
    assert longer.returncode == 0, longer.stderr
    checkpoints = tmp_path / "longer" / "checkpoints"
    assert sorted(p.name for p in checkpoints.iterdir()) == ["latest.pt", "update_000004.pt", "update_000005.pt"]
    assert torch.load(checkpoints / "latest.pt", weights_only=True)["global_step"] == 2560
    rates = scalar_events(tmp_path / "longer")["charts/learning_rate"]
    assert [step for step, _ in rates] == [2048, 2560]
    start = train_options.Args().learning_rate
    assert [rate for _, rate in rates] == pytest.approx([start * (1 - 3 / 5), start * (1 - 4 / 5)])


def test_a_budget_of_the_learners_own_decisions_ends_the_run_once_spent_and_anneals_over_them(tmp_path):
    done = run_train("--config", "configs/ppo_tiny.yaml", "--total-decisions", "1000", "--runs-dir", str(tmp_path), "--run-name", "d")
    assert done.returncode == 0, done.stderr
    saved = [torch.load(p, weights_only=True) for p in sorted((tmp_path / "d" / "checkpoints").glob("update_*.pt"))]
    made = [checkpoint["learner_decisions"] for checkpoint in saved]
    assert made[-2] < 1000 <= made[-1] < saved[-1]["global_step"]  # the opponents' decisions are not the learner's
    assert [checkpoint["global_step"] for checkpoint in saved] == [512 * (i + 1) for i in range(len(saved))]
    rates = [rate for _, rate in scalar_events(tmp_path / "d")["charts/learning_rate"]]
    start = train_options.Args().learning_rate
    assert rates == pytest.approx([start * (1 - before / 1000) for before in [0, *made[:-1]]])


def test_a_budget_of_decisions_is_the_ppo_stages_and_resumes_only_a_checkpoint_that_counts_them(tiny_run, tmp_path):
    args, _ = train_options.parse_args(["--config", "configs/exploit.yaml", "--target", "random", "--total-decisions", "1000"])
    with pytest.raises(OptionError, match="--total-decisions is a budget of the ppo stage"):
        train_checks.check_numbers(args)
    older = torch.load(tiny_run / "checkpoints" / "latest.pt", weights_only=True)
    del older["learner_decisions"]
    save_checkpoint(tmp_path / "older.pt", older)
    args, checkpoint = train_options.parse_args(["--resume", str(tmp_path / "older.pt"), "--total-decisions", "5000",
                                                 "--runs-dir", str(tmp_path)])
    with pytest.raises(OptionError, match="predates the count of the learner's decisions"):
        train_checks.check_args(args, checkpoint)


def test_resume_refuses_flipped_weights_naming_the_newest_good_checkpoint_and_clears_stale_temp_files(tiny_run, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(tiny_run, runs / "tiny")
    checkpoints = runs / "tiny" / "checkpoints"
    for name in ("latest.pt", "update_000003.pt"):
        intact = torch.load(checkpoints / name, weights_only=True)
        flip_tensor_bytes(checkpoints / name)
        damaged = torch.load(checkpoints / name, weights_only=True)  # torch loads it without noticing ...
        assert any(not torch.equal(w, damaged["model"][k]) for k, w in intact["model"].items())  # ... changed weights
    stale = checkpoints / ".latest.pt.k9x2ab.tmp"
    stale.write_bytes(b"half a checkpoint")
    refused = run_train("--resume", str(checkpoints / "latest.pt"), "--runs-dir", str(runs))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith(f"train.py: error: checkpoint {str(checkpoints / 'latest.pt')!r} is damaged: ")
    assert refused.stderr.endswith(f"that verifies: --resume {checkpoints / 'update_000002.pt'}\n")
    assert stale.exists()  # refused before anything was touched
    resumed = run_train("--resume", str(checkpoints / "update_000002.pt"), "--runs-dir", str(runs))
    assert resumed.returncode == 0, resumed.stderr
    assert f"train.py: removed 1 stale .tmp file that an interrupted write left in {checkpoints}\n" in resumed.stderr
    assert not stale.exists()
    straight = torch.load(tiny_run / "checkpoints" / "update_000003.pt", weights_only=True)
    for name in ("latest.pt", "update_000003.pt"):  # both rewritten, as the run that never broke wrote them
        again = read_checkpoint(str(checkpoints / name), "resume")
        assert again["batch_digest"] == straight["batch_digest"]
        assert all(torch.equal(w, again["model"][k]) for k, w in straight["model"].items())


def test_resume_refuses_a_checkpoint_for_other_rules(tiny_run, tmp_path, capsys):
    code = exit_status(train.main, ["--resume", str(tiny_run / "checkpoints" / "latest.pt"), "--rules", "{deck: 32}", "--runs-dir", str(tmp_path)])
    message = capsys.readouterr().err
    assert code == 2 and message.count("\n") == 1
    assert "rules.deck: checkpoint 24, here 32" in message and "observation_size: checkpoint 487" in message
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_ppo_temp_samples_the_logits_divided_by_it(tiny_run):
    path = tiny_run / "checkpoints" / "latest.pt"
    obs, info = EuchreVectorEnv(32, seed=6).reset()
    plain, sharp = (make_agent(spec, Engine(), seed=0) for spec in (f"ppo:{path},sample", f"ppo:{path},sample,temp=0.25"))
    with torch.no_grad():
        logits, _ = plain.net(torch.from_numpy(obs), torch.from_numpy(info["action_mask"]))
    expected = torch.softmax(logits.double() / 0.25, dim=1).numpy()
    np.testing.assert_allclose(sharp.action_probabilities(obs, info["action_mask"]), expected, atol=1e-9)
    assert sharp.weights_sha256 == plain.weights_sha256


@pytest.mark.parametrize("options", ["", ",sample", ",q"])
def test_ppo_plays_a_forced_move_without_the_network_and_otherwise_as_one_full_pass(options):
    engine = Engine()
    state = engine.init(game_keys(9, 512))
    for _ in range(14):  # into the card play, where many moves are forced
        engine.step(state, np.argmax(state.legal, axis=1))
    obs, mask = engine.observe(state), state.legal
    forced = mask.sum(axis=1) == 1
    assert 0 < forced.sum() < forced.size
    agent, reference = (make_agent(f"ppo{options and ':' + options}", engine, seed=4) for _ in range(2))
    passes = []
    agent.net.trunk.register_forward_hook(lambda trunk, inputs, output: passes.append(inputs[0].shape[0]))
    actions = agent.act(obs, mask)
    assert passes == [(~forced).sum()]  # one pass, over the decisions with a choice only
    with torch.no_grad():
        logits, _, q = reference.net.heads(torch.from_numpy(obs), torch.from_numpy(mask))
    scores = torch.where(torch.from_numpy(mask), q, torch.full((), -1e9)) if options == ",q" else logits
    if options == ",sample":  # the same draws from the bot's stream, one per decision, forced or not
        cumulative = torch.softmax(scores, dim=1).cumsum(dim=1).numpy()
        expected = np.argmax(cumulative > reference.rng.random((mask.shape[0], 1)) * cumulative[:, -1:], axis=1)
    else:
        expected = scores.argmax(dim=1).numpy()
    np.testing.assert_array_equal(actions, expected)
    assert mask[np.arange(mask.shape[0]), actions].all()


@pytest.mark.parametrize("options, says", [
    (",temp=0.5", "goes once, with sample"), (",sample,temp=0", "takes a number above 0, got '0'"),
    (",sample,temp=hot", "takes a number above 0, got 'hot'"), (",sample,temp=1,temp=2", "goes once"),
])
def test_a_bad_ppo_temp_is_refused_naming_the_usage(options, says):
    with pytest.raises(ValueError, match=says) as refused:
        make_agent(f"ppo:checkpoints/euchre_ppo.pt{options}", Engine())
    assert "usage: ppo[:PATH][,sample[,temp=T]|,q]" in str(refused.value)


def test_ppo_agent_plays_a_checkpoint_and_refuses_other_rules(tiny_run):
    path = tiny_run / "checkpoints" / "latest.pt"
    engine = Engine()
    env = EuchreVectorEnv(64, seed=5)
    obs, info = env.reset()
    for spec in (f"ppo:{path}", f"ppo:{path},sample"):
        agent = make_agent(spec, engine, seed=0)
        for _ in range(40):
            obs, _, _, _, info = env.step(agent.act(obs, info["action_mask"]))
    with pytest.raises(CheckpointMismatchError, match=r"rules.target_points: checkpoint 10, here 5"):
        make_agent(f"ppo:{path}", Engine(Rules(target_points=5)))
    with pytest.raises(CheckpointMismatchError, match=r"rules.joker: checkpoint False, here True.*num_actions"):
        make_agent(f"ppo:{path}", Engine(Rules(joker=True)))


def test_exported_policy_plays_like_its_checkpoint_and_keeps_the_compatibility_check(tiny_run, tmp_path):
    from euchre_agents.checkpoint import export_policy

    path = tiny_run / "checkpoints" / "latest.pt"
    exported = tmp_path / "policy.pt"
    export_policy(str(path), str(exported))
    assert exported.stat().st_size < path.stat().st_size
    engine = Engine()
    state = engine.init(game_keys(3, 256))
    obs = engine.observe(state)
    full = make_agent(f"ppo:{path}", engine).act(obs, state.legal)
    small = make_agent(f"ppo:{exported}", engine).act(obs, state.legal)
    np.testing.assert_array_equal(full, small)
    with pytest.raises(CheckpointMismatchError, match=r"rules.deck: checkpoint 24, here 32"):
        make_agent(f"ppo:{exported}", Engine(Rules(deck=32)))


def test_a_checkpoint_exports_to_the_same_bytes_whatever_the_file_is_called(tiny_run, tmp_path):
    from euchre_agents.checkpoint import export_policy

    path = tiny_run / "checkpoints" / "latest.pt"
    export_policy(str(path), str(tmp_path / "policy.pt"))
    export_policy(str(path), str(tmp_path / "elsewhere" / "agent.pt"))
    in_memory = io.BytesIO()
    export_policy(str(path), in_memory)
    assert file_sha256(tmp_path / "policy.pt") == file_sha256(tmp_path / "elsewhere" / "agent.pt")
    assert (tmp_path / "policy.pt").read_bytes() == in_memory.getvalue()


def test_the_export_tool_writes_what_export_policy_and_average_policies_write(tiny_run, tmp_path, capsys):
    from euchre_agents.checkpoint import average_policies, export_policy
    from euchre_lab.training import export_policy as export_tool

    path, first = tiny_run / "checkpoints" / "latest.pt", tiny_run / "checkpoints" / "update_000001.pt"
    export_policy(str(path), str(tmp_path / "policy.pt"))
    assert export_tool.main([str(path), str(tmp_path / "tool" / "policy.pt")]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'tool' / 'policy.pt'}\n"
    average_policies([str(first), str(path)], str(tmp_path / "soup.pt"))
    assert export_tool.main([str(first), str(path), str(tmp_path / "tool" / "soup.pt")]) == 0
    export_policy(str(path), str(tmp_path / "wide.pt"), hidden_size=40, seed=3)
    assert export_tool.main([str(path), str(tmp_path / "tool" / "wide.pt"), "--hidden-size", "40", "--seed", "3"]) == 0
    for name in ("policy.pt", "soup.pt", "wide.pt"):
        assert file_sha256(tmp_path / name) == file_sha256(tmp_path / "tool" / name), name


def test_an_average_of_checkpoints_holds_the_mean_of_their_weights_and_plays(tiny_run, tmp_path):
    from euchre_agents.checkpoint import average_policies, export_policy, load_checkpoint

    path = tiny_run / "checkpoints" / "latest.pt"
    first = load_checkpoint(str(tiny_run / "checkpoints" / "update_000001.pt"))["model"]
    latest = load_checkpoint(str(path))["model"]
    average_policies([str(tiny_run / "checkpoints" / "update_000001.pt"), str(path)], str(tmp_path / "soup.pt"))
    soup = read_checkpoint(str(tmp_path / "soup.pt"))["model"]
    for name, weights in soup.items():
        torch.testing.assert_close(weights, (first[name] + latest[name]) / 2)
    average_policies([str(path), str(path)], str(tmp_path / "same.pt"))
    export_policy(str(path), str(tmp_path / "exported.pt"))
    assert file_sha256(tmp_path / "same.pt") == file_sha256(tmp_path / "exported.pt")
    engine = Engine()
    state = engine.init(game_keys(3, 64))
    assert make_agent(f"ppo:{tmp_path / 'soup.pt'}", engine).act(engine.observe(state), state.legal).shape == (64,)


def test_a_checkpoint_saved_with_blocks_elsewhere_plays_the_same_and_cannot_resume(tiny_run, tmp_path):
    from euchre_agents.checkpoint import check_compatible, export_policy, load_checkpoint

    checkpoint = load_checkpoint(str(tiny_run / "checkpoints" / "latest.pt"))
    engine = Engine()
    # The same network saved for the blocks laid out one after another in another order (as the
    # first observation layout did): its first layer's columns follow the old positions.
    old_layout, old_columns, start = [], [], 0
    for name, cells in reversed(list(engine.observation_layout.items())):
        old_layout.append([name, start, start + len(cells)])
        old_columns.extend(cells)
        start += len(cells)
    moved = dict(checkpoint, model=dict(checkpoint["model"]), observation=dict(checkpoint["observation"]))
    del moved[CHECKSUM]  # a hand-made checkpoint: the checksum of the one it was made from would refuse it
    moved["model"]["trunk.0.weight"] = checkpoint["model"]["trunk.0.weight"][:, torch.tensor(old_columns)]
    moved["observation"]["observation_layout"] = old_layout
    torch.save(moved, tmp_path / "moved.pt")
    state = engine.init(game_keys(4, 256))
    obs = engine.observe(state)
    for spec in ("ppo:{}", "ppo:{},sample"):
        played = make_agent(spec.format(tmp_path / "moved.pt"), engine, seed=1).act(obs, state.legal)
        expected = make_agent(spec.format(tiny_run / "checkpoints" / "latest.pt"), engine, seed=1).act(obs, state.legal)
        np.testing.assert_array_equal(played, expected)
    check_compatible(moved, engine, "moved")
    with pytest.raises(CheckpointMismatchError, match="observation blocks at other positions"):
        check_compatible(moved, engine, "moved", same_positions=True)
    export_policy(str(tmp_path / "moved.pt"), str(tmp_path / "exported.pt"))  # rewritten in this layout
    exported = load_checkpoint(str(tmp_path / "exported.pt"))
    check_compatible(exported, engine, "exported", same_positions=True)
    played = make_agent(f"ppo:{tmp_path / 'exported.pt'}", engine).act(obs, state.legal)
    np.testing.assert_array_equal(played, make_agent(f"ppo:{tiny_run / 'checkpoints' / 'latest.pt'}", engine).act(obs, state.legal))
    moved["observation"]["observation_layout"] = old_layout[1:] + [["extra", start, start + 3]]
    with pytest.raises(CheckpointMismatchError, match=r"observation blocks of another width: .*extra \(checkpoint 3, here None\)"):
        check_compatible(moved, engine, "moved")


def test_masked_policy_never_samples_an_illegal_action():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    engine = Engine()
    net = ActorCritic(engine, hidden_size=16, num_layers=1, canonical_suits=True)
    with torch.no_grad():  # a policy that strongly prefers actions at random, legal or not
        net.policy.weight.mul_(1000.0)
        net.policy.bias.copy_(torch.linspace(-30, 30, engine.num_actions))
    mask = rng.random((20_000, engine.num_actions)) < 0.15
    mask[np.arange(mask.shape[0]), rng.integers(0, engine.num_actions, mask.shape[0])] = True
    obs = torch.from_numpy(rng.random((mask.shape[0], engine.observation_size), dtype=np.float32))
    with torch.no_grad():
        actions, logprobs, _ = sample_actions(net, obs, torch.from_numpy(mask))
    assert mask[np.arange(mask.shape[0]), actions.numpy()].all()
    assert torch.isfinite(logprobs).all()
    for sample in (False, True):
        chosen = PPOAgent(engine, net, sample=sample, seed=1).act(obs.numpy(), mask)
        assert mask[np.arange(mask.shape[0]), chosen].all()
    env = EuchreVectorEnv(256, seed=1)  # the engine raises IllegalActionError on any illegal action
    obs_np, info = env.reset()
    for _ in range(60):
        with torch.no_grad():
            actions, _, _ = sample_actions(net, torch.from_numpy(obs_np), torch.from_numpy(info["action_mask"]))
        obs_np, _, _, _, info = env.step(actions.numpy())


def test_stream_advantages_equal_gae_run_on_each_stream_alone():
    # Two streams interleaved over five steps: A = decisions 0, 2, 4 (ends the episode), B = 1, 3 (open).
    rewards = np.array([0.0, 0.5, 1.0, 0.0, 2.0], np.float32)
    values = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
    dones = np.array([False, False, False, False, True])
    successors = np.array([2, 3, 4, -1, -1])
    bootstrap = np.array([0.0, 0.0, 0.0, 0.7, 0.0], np.float32)
    gamma, lam = 0.9, 0.8
    got = stream_advantages(rewards, values, dones, successors, bootstrap, [0, 1, 2, 3, 4], gamma, lam)

    def gae(r, v, after_last):  # plain GAE over one stream; after_last: the value after its last decision
        adv, running = np.zeros(len(r)), 0.0
        for t in reversed(range(len(r))):
            next_value = v[t + 1] if t + 1 < len(r) else after_last
            running = r[t] + gamma * next_value - v[t] + gamma * lam * running
            adv[t] = running
        return adv

    np.testing.assert_allclose(got[[0, 2, 4]], gae(rewards[[0, 2, 4]], values[[0, 2, 4]], 0.0), rtol=1e-6)
    np.testing.assert_allclose(got[[1, 3]], gae(rewards[[1, 3]], values[[1, 3]], 0.7), rtol=1e-6)


def test_plot_training_draws_a_run_and_overlays_several_runs_returns(tiny_run, tmp_path):
    for runs, out in (([tiny_run], tmp_path / "one.png"), ([tiny_run, tiny_run], tmp_path / "two.png")):
        done = subprocess.run(
            [sys.executable, "benchmarks/plot_training.py", *map(str, runs), "--out", str(out)],
            cwd=ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT,
        )
        assert done.returncode == 0, done.stderr
        assert out.read_bytes().startswith(b"\x89PNG")


def test_default_preset_holds_the_args_defaults():
    defaults = dataclasses.asdict(train_options.Args())
    preset = train_options.read_config("configs/ppo.yaml")
    assert preset == {k: v for k, v in defaults.items() if k not in ("config", "resume", *train_options.COMMAND_LINE_ONLY)}


def test_every_option_is_documented_and_overridable():
    docs = field_docs(train_options.Args)
    assert set(docs) == {f.name for f in dataclasses.fields(train_options.Args)} and all(docs.values())
    args, checkpoint = train_options.parse_args(
        ["--config", "configs/ppo_tiny.yaml", "--num-envs", "8", "--learning_rate", "1e-3", "--rules", "{deck: 32}", "--anneal-lr", "false"]
    )
    assert checkpoint is None
    assert (args.num_envs, args.learning_rate, args.rules, args.anneal_lr) == (8, 1e-3, {"deck": 32}, False)
    assert args.num_steps == 16  # from the preset
    with pytest.raises(ValueError, match="num_envs: expected int"):
        train_options.parse_args(["--num-envs", "many"])


def test_opponent_mix_parsing():
    assert train_options.parse_mix("self=3,pool=1,pimc:worlds=20=1") == [("self", 0.6), ("pool", 0.2), ("pimc:worlds=20", 0.2)]
    with pytest.raises(ValueError, match="NAME=NUMBER"):
        train_options.parse_mix("self")


def test_missing_evaluate_fails_only_when_evaluation_is_on(monkeypatch):
    monkeypatch.setitem(sys.modules, "euchre_lab.evaluation.match", None)  # makes `from euchre_lab.evaluation.match import ...` raise ImportError
    assert train_checks.evaluation_function(train_options.Args(eval_interval=0)) is None
    with pytest.raises(OptionError, match="--eval-interval 0"):
        train_checks.evaluation_function(train_options.Args(eval_interval=5))


@pytest.mark.parametrize("rules", [Rules(), Rules(deck=32, joker=True, lone_defender=True)], ids=["default", "deck32_joker"])
def test_canonical_suits_see_a_suit_relabelled_deal_the_same(rules):
    # Deal B is deal A with clubs<->diamonds and hearts<->spades swapped; played with the same relabelled
    # actions, both must look identical to the network at every decision (same input, same mask).
    engine = Engine(rules, episode="game")
    deck = engine.deck
    swap = np.array([1, 0, 3, 2])
    card_swap = np.array(
        [c if deck.suit[c] < 0 else next(d for d in range(deck.num_cards) if deck.rank[d] == deck.rank[c] and deck.suit[d] == swap[deck.suit[c]]) for c in range(deck.num_cards)]
    )
    action_swap = np.arange(engine.num_actions)
    action_swap[: deck.num_cards] = card_swap
    action_swap[engine.first_suit_action : engine.first_suit_action + 4] = engine.first_suit_action + swap
    net = ActorCritic(engine, hidden_size=8, num_layers=1, canonical_suits=True)

    def canonical(state):
        obs = torch.from_numpy(engine.observe(state))
        ref = net.reference_suit(obs)
        return obs.gather(1, net.obs_src[ref]), torch.from_numpy(state.legal).gather(1, net.action_src[ref])

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(20):
        cards = rng.permutation(deck.num_cards)[:21]
        if cards[20] == deck.joker:  # a turned-up joker offers spades whatever the relabelling
            continue
        hands, upcard, dealer = cards[:20].reshape(4, 5), int(cards[20]), int(rng.integers(4))
        a = engine.init_from_deal(dealer, hands, upcard)
        b = engine.init_from_deal(dealer, card_swap[hands], int(card_swap[upcard]))
        while not a.done[0] and a.hand_number[0] == 0:
            (obs_a, mask_a), (obs_b, mask_b) = canonical(a), canonical(b)
            assert torch.equal(obs_a, obs_b) and torch.equal(mask_a, mask_b)
            action = int(rng.choice(np.flatnonzero(a.legal[0])))
            engine.step(a, np.array([action]))
            engine.step(b, np.array([action_swap[action]]))
            checked += 1
    assert checked > 200


def test_a_run_folder_is_reused_only_to_resume_it_or_with_overwrite(tiny_run, tmp_path):
    latest = tiny_run / "checkpoints" / "latest.pt"
    own = train_options.Args(run_name="tiny", runs_dir=str(tiny_run.parent), resume=str(latest))
    train_checks.check_run_folder(own)  # resuming a run into its own folder
    with pytest.raises(OptionError, match="--overwrite would delete .*latest.pt, the checkpoint being resumed"):
        train_checks.check_run_folder(dataclasses.replace(own, overwrite=True))
    with pytest.raises(OptionError, match=f"continue it with --resume {latest}, replace it with --overwrite"):
        train_checks.check_run_folder(dataclasses.replace(own, resume=""))
    train_checks.check_run_folder(train_options.Args(run_name="tiny", runs_dir=str(tmp_path)))  # a new folder


def test_overwrite_replaces_an_earlier_run_and_the_start_says_where_everything_goes(tmp_path):
    earlier = tmp_path / "again"
    earlier.mkdir()
    (earlier / "events.out.tfevents.old").write_text("an earlier run")
    done = run_train(*TINY[:2], "--total-timesteps", "512", "--runs-dir", str(tmp_path), "--run-name", "again", "--overwrite")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in earlier.iterdir() if p.is_file() and "old" in p.name) == []
    assert sorted(p.name for p in (earlier / "checkpoints").iterdir()) == ["latest.pt", "update_000001.pt"]
    first, second = done.stdout.splitlines()[:2]
    assert first == (
        f"train.py: run again: TensorBoard logs in {earlier}, checkpoints in {earlier / 'checkpoints'} "
        "(every 1 update and at the end)"
    )
    assert second.startswith("train.py: watch it with: ") and second.endswith(f"tensorboard --logdir {tmp_path}")
    saved = torch.load(earlier / "checkpoints" / "latest.pt", weights_only=True)
    assert saved["config"]["overwrite"] is False  # a resumed run never inherits it


def test_ctrl_c_prints_the_exact_resume_command(tmp_path):
    import signal
    import time

    run = subprocess.Popen(
        [sys.executable, "train.py", *TINY[:2], "--total-timesteps", "1000000", "--runs-dir", str(tmp_path), "--run-name", "stopped"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background shell may ignore SIGINT
    )
    latest = tmp_path / "stopped" / "checkpoints" / "latest.pt"
    deadline = time.monotonic() + SUBPROCESS_TIMEOUT
    while not latest.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=SUBPROCESS_TIMEOUT)
    assert run.returncode == 130 and "Traceback" not in err, err
    last_line = err.splitlines()[-1]
    assert last_line.startswith("train.py: interrupted; update ") and "'s checkpoint is written" in last_line
    assert last_line.endswith(f"; continue the run with: {python_command()} train.py --resume {latest}")
    stopped_at = int(last_line.split("interrupted; update ")[1].split("'")[0])
    assert torch.load(latest, weights_only=True)["update"] == stopped_at  # the update that finished is saved


TRAIN_PRESETS = sorted(
    p.name
    for p in (ROOT / "configs").glob("*.yaml")
    if not {"bots", "round_robin", "policies"} & set(preset := yaml.safe_load(p.read_text())) and preset.get("stage") != "make"
)
"""The presets of train.py's single stages: all but evaluate.py's (bots, round_robin), the RLlib example's (policies)
and the method's (tests/test_making.py checks those)."""


def test_the_configs_folder_has_the_training_presets_the_readme_names():
    assert {"ppo.yaml", "ppo_tiny.yaml", "finetune.yaml"} <= set(TRAIN_PRESETS)


@pytest.mark.parametrize("name", TRAIN_PRESETS)
def test_every_training_preset_in_configs_passes_train_py_s_option_checks(name):
    """A preset with a typo, a bad number or an unknown bot fails here, not an hour into someone's run (its teacher data
    and checkpoints are not part of the checkout, so check_stage is left out)."""
    probe = ["--target", "heuristic"] if yaml.safe_load((ROOT / "configs" / name).read_text()).get("stage") == "exploit" else []
    args, _ = train_options.parse_args(["--config", f"configs/{name}", *probe])
    train_checks.check_numbers(args)
    train_checks.check_opponents(args, train_checks.check_game(args))
    assert args.stage in ("ppo", "distill", "exploit")


def test_training_never_reads_the_env_state_unless_an_opponent_sees_every_hand(tmp_path, monkeypatch):
    """The rollout takes masks and seats from the step's info and other seats' views from `env.observe`,
    so the vector env stays on its records-only path; only the oracle (a full-state bot) reads `state`."""
    reads = []
    original = EuchreVectorEnv.state

    def counted(env):
        reads.append(1)
        return original.fget(env)

    monkeypatch.setattr(EuchreVectorEnv, "state", property(counted, original.fset))
    tiny = [*TINY[:2], "--total-timesteps", "1024", "--runs-dir", str(tmp_path), "--opponent-mix", "self=1,pool=1,random=1"]
    train.main([*tiny, "--run-name", "fair"])
    assert reads == []
    train.main(["--resume", str(tmp_path / "fair" / "checkpoints" / "update_000001.pt"), "--runs-dir", str(tmp_path), "--run-name", "again"])
    assert reads == []
    straight = torch.load(tmp_path / "fair" / "checkpoints" / "update_000002.pt", weights_only=True)
    again = torch.load(tmp_path / "again" / "checkpoints" / "update_000002.pt", weights_only=True)
    assert again["batch_digest"] == straight["batch_digest"]
    train.main([*tiny, "--opponent-mix", "self=1,oracle=1", "--run-name", "cheat"])
    assert reads  # the oracle is handed the engine state
