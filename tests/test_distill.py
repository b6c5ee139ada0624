"""The strong-agent stages of train.py: distillation on teacher data (loss, exact resume, refusals),
PPO fine-tuning with a KL penalty toward the distilled policy, and the shipped agent behind `ppo`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import exit_status

from euchre_agents.registry import make_agent
from euchre_agents.network import ActorCritic
from euchre_agents.ppo import SHIPPED
from euchre_agents.teacher import generate
from euchre_agents.teacher_data import TeacherSettings
from euchre_env import Engine, Rules, game_keys
from euchre_lab.training import train
from euchre_lab.cli import OptionError
from euchre_lab.training.distill import distill, distill_losses, load_teacher, teacher_batch
from euchre_lab.training.ppo_trainer import masked_kl
from euchre_lab.training.train_checks import check_args
from euchre_lab.training.train_options import parse_args

ROOT = Path(__file__).resolve().parents[1]
SMALL_NET = ["--hidden-size", "32", "--num-layers", "1", "--action-values", "true"]


@pytest.fixture(scope="module")
def teacher_folder(tmp_path_factory) -> Path:
    """Four tiny shards of true-layout teacher data (about 400 decisions)."""
    folder = tmp_path_factory.mktemp("teacher") / "data"
    settings = TeacherSettings(behaviour="heuristic=1,random=1", games_per_shard=6, seed=9)
    generate(folder, 4, Rules(), settings, progress=False)
    return folder


def distill_args(folder: Path, runs: Path, *extra: str) -> list[str]:
    return [
        "--stage", "distill", "--teacher-data", str(folder), "--runs-dir", str(runs), "--progress", "false",
        "--eval-interval", "0", "--holdout-fraction", "0.25", "--distill-batch-size", "64", "--learning-rate", "3e-3",
        *SMALL_NET, *extra,
    ]


def test_distillation_lowers_the_loss_on_a_fixed_set(teacher_folder, tmp_path):
    args, _ = parse_args(distill_args(teacher_folder, tmp_path, "--run-name", "d", "--distill-epochs", "40", "--save-interval", "1000"))
    engine = Engine()
    split = load_teacher(args, engine, None)
    batch = teacher_batch(split, split.train_rows, torch.device("cpu"))
    torch.manual_seed(args.seed)
    fresh = ActorCritic(engine, hidden_size=32, num_layers=1, canonical_suits=True, action_values=True)
    before = {k: v.item() for k, v in distill_losses(fresh, batch, args).items()}
    distill(args, check_args(args, None))
    trained = make_agent(f"ppo:{tmp_path / 'd' / 'checkpoints' / 'latest.pt'}", engine).net
    after = {k: v.item() for k, v in distill_losses(trained, batch, args).items()}
    assert after["policy"] < before["policy"] - 0.02
    assert after["action_value"] < 0.5 * before["action_value"]
    assert after["total"] < before["total"]


def test_distillation_in_bfloat16_lowers_the_loss_and_keeps_float32_weights(teacher_folder, tmp_path, monkeypatch):
    from euchre_lab.training import train_checks

    monkeypatch.setattr(train_checks, "native_bfloat16", lambda: True)  # correct on any CPU, fast only with AMX
    args, _ = parse_args(distill_args(teacher_folder, tmp_path, "--run-name", "b", "--distill-epochs", "40",
                                      "--save-interval", "1000", "--distill-bf16", "true"))
    engine = Engine()
    split = load_teacher(args, engine, None)
    batch = teacher_batch(split, split.train_rows, torch.device("cpu"))
    torch.manual_seed(args.seed)
    fresh = ActorCritic(engine, hidden_size=32, num_layers=1, canonical_suits=True, action_values=True)
    before = distill_losses(fresh, batch, args)
    assert all(v.dtype == torch.float32 for v in before.values())
    distill(args, check_args(args, None))
    trained = make_agent(f"ppo:{tmp_path / 'b' / 'checkpoints' / 'latest.pt'}", engine).net
    assert all(p.dtype == torch.float32 for p in trained.parameters())
    assert distill_losses(trained, batch, args)["total"].item() < before["total"].item() - 0.1


def test_distillation_in_bfloat16_is_refused_in_one_line_where_the_cpu_would_emulate_it(teacher_folder, tmp_path, monkeypatch):
    from euchre_lab.training import train_checks

    monkeypatch.setattr(train_checks, "native_bfloat16", lambda: False)
    args, _ = parse_args(distill_args(teacher_folder, tmp_path, "--run-name", "e", "--distill-bf16", "true", "--device", "cpu"))
    with pytest.raises(OptionError, match="no AMX.*drop --distill-bf16"):
        check_args(args, None)
    assert not (tmp_path / "e").exists()


def test_distillation_resumes_exactly(teacher_folder, tmp_path):
    common = distill_args(teacher_folder, tmp_path, "--distill-epochs", "2", "--save-interval", "3", "--keep-checkpoints", "0")
    train.main([*common, "--run-name", "straight"])
    checkpoints = tmp_path / "straight" / "checkpoints"
    numbered = sorted(checkpoints.glob("update_*.pt"))
    assert len(numbered) >= 2
    train.main(["--resume", str(numbered[0]), "--runs-dir", str(tmp_path), "--run-name", "resumed"])
    last = numbered[-1].name
    straight = torch.load(checkpoints / last, weights_only=True)
    again = torch.load(tmp_path / "resumed" / "checkpoints" / last, weights_only=True)
    assert again["update"] == straight["update"] and again["teacher"] == straight["teacher"]
    for name, weights in straight["model"].items():
        assert torch.equal(weights, again["model"][name]), name


@pytest.fixture(scope="module")
def second_folder(tmp_path_factory) -> Path:
    """Three tiny shards played by other bots (another generator seed): a second source of teacher data."""
    folder = tmp_path_factory.mktemp("teacher2") / "data"
    generate(folder, 3, Rules(), TeacherSettings(behaviour="random=1", games_per_shard=5, seed=4), progress=False)
    return folder


def test_distillation_reads_several_folders_and_holds_out_the_last_shards_of_each(teacher_folder, second_folder, tmp_path):
    both = f"{teacher_folder},{second_folder}"
    args, _ = parse_args(distill_args(both, tmp_path, "--run-name", "two"))
    split = load_teacher(args, Engine(), None)
    source, shard = split.data.arrays["source"], split.data.arrays["shard"]
    assert [s["folder"] for s in split.sources] == [str(teacher_folder), str(second_folder)]
    assert [s["shards"] for s in split.sources] == [[0, 1, 2, 3], [0, 1, 2]]
    assert split.sources[1]["settings"]["behaviour"] == "random=1"
    held = set(zip(source[split.holdout_rows].tolist(), shard[split.holdout_rows].tolist()))
    assert held == {(0, 3), (1, 2)}  # holdout_fraction 0.25: the last shard of each folder
    assert split.train_rows.size + split.holdout_rows.size == source.size
    assert not set(split.train_rows.tolist()) & set(split.holdout_rows.tolist())
    train.main(distill_args(both, tmp_path, "--run-name", "two", "--distill-epochs", "1", "--save-interval", "2"))
    saved = torch.load(tmp_path / "two" / "checkpoints" / "latest.pt", weights_only=True)
    assert saved["teacher"]["sources"] == split.sources
    args_one, _ = parse_args(distill_args(teacher_folder, tmp_path, "--run-name", "one"))
    with pytest.raises(OptionError, match="read teacher data from"):
        load_teacher(args_one, Engine(), saved["teacher"])


def refusal(argv: list[str], capsys) -> str:
    """train.py's one-line error for `argv` (exit status 2, nothing written)."""
    assert exit_status(train.main, argv) == 2
    return capsys.readouterr().err


def test_distillation_refuses_data_of_another_game_and_a_checkpoint_of_another_stage(teacher_folder, tmp_path, capsys):
    assert "rules.deck: data 24, here 32" in refusal(distill_args(teacher_folder, tmp_path, "--rules", "{deck: 32}"), capsys)
    assert "no teacher data" in refusal(distill_args(tmp_path / "none", tmp_path), capsys)
    without = distill_args(teacher_folder, tmp_path)
    del without[2:4]  # no --teacher-data: the default preset names none
    assert "--stage distill needs --teacher-data" in refusal(without, capsys)
    assert not any(tmp_path.iterdir())
    train.main(distill_args(teacher_folder, tmp_path, "--run-name", "d", "--distill-epochs", "0.1"))
    latest = str(tmp_path / "d" / "checkpoints" / "latest.pt")
    message = refusal(["--resume", latest, "--stage", "ppo", "--runs-dir", str(tmp_path)], capsys)
    assert "is a distill checkpoint, not a ppo one" in message


def test_kl_toward_the_reference_is_zero_against_itself_and_positive_otherwise():
    engine = Engine()
    state = engine.init(game_keys(2, 128))
    obs, mask = torch.from_numpy(engine.observe(state)), torch.from_numpy(state.legal)
    torch.manual_seed(0)
    net, other = ActorCritic(engine, 32, 1), ActorCritic(engine, 32, 1)
    for layer in (net.policy, other.policy):
        torch.nn.init.normal_(layer.weight, std=1.0)
    logits, _ = net(obs, mask)
    assert torch.allclose(masked_kl(logits, logits), torch.zeros(128), atol=1e-6)
    kl = masked_kl(logits, other(obs, mask)[0])
    assert (kl[mask.sum(dim=1) > 1] > 0).all() and (kl[mask.sum(dim=1) == 1].abs() < 1e-6).all()


def test_finetuning_starts_from_the_reference_and_resumes_exactly(teacher_folder, tmp_path, capsys):
    train.main(distill_args(teacher_folder, tmp_path, "--run-name", "d", "--distill-epochs", "0.5"))
    reference = tmp_path / "d" / "checkpoints" / "latest.pt"
    tiny = ["--config", "configs/ppo_tiny.yaml", "--total-timesteps", "1536", "--runs-dir", str(tmp_path)]
    tuning = [*tiny, "--init-checkpoint", str(reference), "--kl-coef", "0.5", "--opponent-mix", "self=1,heuristic=1"]
    train.main([*tuning, "--run-name", "ft"])
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(tmp_path / "ft")).Reload()
    kl = [e.value for e in events.Scalars("losses/reference_kl")]
    assert len(kl) == 3 and kl[0] < 0.05  # the learner starts as the reference
    first = torch.load(tmp_path / "ft" / "checkpoints" / "update_000001.pt", weights_only=True)
    assert first["model_kwargs"]["action_values"] and first["model_kwargs"]["hidden_size"] == 32
    train.main(["--resume", str(tmp_path / "ft" / "checkpoints" / "update_000002.pt"), "--runs-dir", str(tmp_path), "--run-name", "ft2"])
    straight = torch.load(tmp_path / "ft" / "checkpoints" / "update_000003.pt", weights_only=True)
    again = torch.load(tmp_path / "ft2" / "checkpoints" / "update_000003.pt", weights_only=True)
    assert again["batch_digest"] == straight["batch_digest"]
    for name, weights in straight["model"].items():
        assert torch.equal(weights, again["model"][name]), name
    assert "--kl-coef > 0 needs --init-checkpoint" in refusal([*tiny, "--kl-coef", "0.1", "--run-name", "bad"], capsys)


def test_bare_ppo_spec_plays_the_shipped_agent():
    engine = Engine()
    state = engine.init(game_keys(6, 256))
    obs = engine.observe(state)
    bare = make_agent("ppo", engine).act(obs, state.legal)
    named = make_agent(f"ppo:{SHIPPED}", engine).act(obs, state.legal)
    np.testing.assert_array_equal(bare, named)
    assert state.legal[np.arange(256), bare].all()
    assert SHIPPED.stat().st_size < 20 * 2**20


def test_a_bfloat16_trunk_plays_nearly_as_the_float32_network():
    from euchre_env.engine import EPISODE_HAND
    from euchre_env.play import play

    engine = Engine(Rules(), EPISODE_HAND)
    exact, rounded = make_agent(f"ppo:{SHIPPED}", engine), make_agent(f"ppo:{SHIPPED},bf16", engine)
    seen = []
    play(engine, engine.init(game_keys(7, 256)), [exact], np.zeros(4, np.int64),
         on_decision=lambda _b, _r, obs, mask, _a: seen.append((obs.copy(), mask.copy())))
    obs, mask = (np.concatenate(part) for part in zip(*seen))
    same = exact.act(obs, mask) == rounded.act(obs, mask)
    assert same.mean() > 0.98 and mask[np.arange(len(mask)), rounded.act(obs, mask)].all()
    with pytest.raises(ValueError, match="unknown ppo option"):
        make_agent(f"ppo:{SHIPPED},bf32", engine)


def test_a_widened_network_plays_the_same_and_a_distillation_run_starts_from_it(teacher_folder, tmp_path):
    from euchre_agents.checkpoint import export_policy, load_checkpoint

    train.main(distill_args(teacher_folder, tmp_path, "--run-name", "narrow", "--distill-epochs", "2"))
    narrow = tmp_path / "narrow" / "checkpoints" / "latest.pt"
    export_policy(str(narrow), str(tmp_path / "wide.pt"), hidden_size=80, seed=4)
    assert load_checkpoint(str(tmp_path / "wide.pt"))["model_kwargs"]["hidden_size"] == 80
    engine = Engine()
    state = engine.init(game_keys(2, 512))
    obs_t, mask_t = torch.as_tensor(engine.observe(state)), torch.as_tensor(state.legal)
    small, wide = (make_agent(f"ppo:{p}", engine).net for p in (narrow, tmp_path / "wide.pt"))
    assert wide.trunk[0].out_features == 80 and small.trunk[0].out_features == 32
    with torch.no_grad():
        for before, after in zip(small.heads(obs_t, mask_t), wide.heads(obs_t, mask_t)):
            torch.testing.assert_close(after, before, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match="32 wide already; widen it to more than that, not 32"):
        export_policy(str(narrow), str(tmp_path / "same.pt"), hidden_size=32)
    train.main(distill_args(teacher_folder, tmp_path, "--run-name", "widened", "--distill-epochs", "1", "--init-checkpoint", str(tmp_path / "wide.pt")))
    trained = make_agent(f"ppo:{tmp_path / 'widened' / 'checkpoints' / 'latest.pt'}", engine).net
    assert trained.trunk[0].out_features == 80
    # Each new unit starts as a copy of an old one; with their different outgoing shares they learn apart.
    def distance_to_nearest_old_unit(weight: torch.Tensor) -> torch.Tensor:
        weight = weight.detach()
        return (weight[32:, None] - weight[None, :32]).abs().amax(dim=2).min(dim=1).values

    assert distance_to_nearest_old_unit(wide.trunk[0].weight).max() == 0
    assert distance_to_nearest_old_unit(trained.trunk[0].weight).min() > 0
