"""Making agents (euchre_lab/making/, `train.py --stage make`) end to end on configs/recipe_smoke.yaml, in
subprocesses: every part finishes and the agent plays, agent.pt keeps its preset, a second run redoes nothing,
more iterations continue a finished run, another preset is refused, and a run killed outright resumes both in
place (to the very same weights) and on "another machine" that has only its agent file and journal."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SUBPROCESS_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
SMOKE = "configs/recipe_smoke.yaml"
ITERATION = ["label", "distil", "export", "curve_pimc", "curve_heuristic"]
FINETUNE = [f"finetune_002/{tail}" for tail in ("train", "export", "curve_pimc", "curve_heuristic")]
PARTS = [f"{head}/{tail}" for head in ("bootstrap", "iter_001", "iter_002")
         for tail in ["playout_net"] * (head == "iter_002") + ITERATION] + FINETUNE + [
    f"final_finetune_002/{tail}" for tail in ("agent", "vs_pimc", "vs_heuristic", "vs_shipped")]


def make(runs: Path, *extra: str, **kwargs) -> subprocess.CompletedProcess:
    """`python train.py --config configs/recipe_smoke.yaml --runs-dir RUNS ...`, waited for."""
    return subprocess.run([sys.executable, "train.py", "--config", SMOKE, "--runs-dir", str(runs), *extra], cwd=ROOT,
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT, **kwargs)


def journal(folder: Path) -> dict:
    return json.loads((folder / "journal.json").read_text())


def weights(path: Path) -> dict:
    import torch

    return torch.load(path, weights_only=False)["model"]


def same_weights(a: Path, b: Path) -> bool:
    import torch

    wa, wb = weights(a), weights(b)
    return wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> tuple[Path, float]:
    """One finished smoke run: its run folder and how long it took."""
    runs = tmp_path_factory.mktemp("making")
    start = time.perf_counter()
    done = make(runs)
    assert done.returncode == 0, done.stderr[-3000:]
    return runs / "recipe_smoke", time.perf_counter() - start


def test_every_part_finishes_and_the_agent_plays(smoke):
    from euchre_agents.registry import make_agent
    from euchre_env import Engine
    from euchre_env.play import play

    folder, _ = smoke
    parts = journal(folder)["parts"]
    assert list(parts) == PARTS and all(r["status"] == "finished" for r in parts.values())
    assert parts["bootstrap/label"]["facts"]["decisions"] > 0 and parts["iter_002/distil"]["facts"]["updates"] > 0
    assert parts["finetune_002/train"]["facts"]["steps"] >= 16384
    assert same_weights(folder / "agent.pt", folder / "agents" / "finetune_002.pt")   # the run's agent is the fine-tune's
    assert not same_weights(folder / "agent.pt", folder / "agents" / "iter_002.pt")
    assert parts["iter_002/distil"]["facts"]["data"] == ["data/iter_001", "data/iter_002"]  # the replay
    assert parts["iter_002/label"]["facts"]["hands"] == 128 == 2 * parts["iter_001/label"]["facts"]["hands"]   # rollout_hands
    assert parts["iter_002/playout_net"]["facts"]["data"] == ["data/iter_001"]   # learns from the iteration before
    assert journal(folder)["preset"]["rollout_network"] == {"hidden_size": 16, "num_layers": 1}
    kinds = [parts[f"{head}/label"]["kind"] for head in ("bootstrap", "iter_001", "iter_002")]
    assert kinds == ["label_true", "label_rollout", "label_playout_net"]   # rollout_all_from: 2, by the play-out network
    engine = Engine()
    agent = make_agent(f"ppo:{folder / 'agent.pt'}", engine, seed=0)
    assert play(engine, engine.init(list(range(8))), [agent], [0, 0, 0, 0]).shape == (8, 2)
    card = (folder / "MODEL_CARD.md").read_text()
    for needed in ("python train.py --config configs/recipe_smoke.yaml", "**standard**", "**Commit** (that made agent.pt):", "Machine:",
                   "| iter_002 |", "| 2 |", "| 2 + fine-tune |", "Then `finetune_002`", "| fine-tune (PPO self-play) |", "`pimc` | 20 |", "46201", "Wall time, end to end", "from the first part's start to the last", "## Where the time goes",
                   "| distillation |", "| distillation of the play-out networks |", "| play-out network |", "| labelling, play-outs by the play-out network for every decision (iterations) |", "## Exploitability", "--exploit-init target --total-timesteps 2000000"):
        assert needed in card, needed
    assert (folder / "curve.png").stat().st_size > 0


def test_the_state_between_iterations_is_one_agent_file_and_the_journal(smoke):
    folder, _ = smoke
    assert sorted(p.name for p in (folder / "agents").iterdir()) == ["finetune_002.pt", "iter_002.pt"]
    assert sorted(p.name for p in (folder / "data").iterdir()) == ["iter_002"]  # the next iteration's replay, no more
    assert not (folder / "training" / "iter_002" / "checkpoints").exists()


def test_the_agent_keeps_the_preset_that_made_it(smoke):
    import torch
    import yaml

    folder, _ = smoke
    made_by = torch.load(folder / "agent.pt", weights_only=False)["made_by"]
    assert made_by["preset_text"] == (ROOT / SMOKE).read_text() and made_by["commands"][0].startswith(f"python train.py --config {SMOKE}")
    assert made_by["preset"] == {k: v for k, v in yaml.safe_load(made_by["preset_text"]).items()
                                 if k not in ("stage", "workers", "torch_threads", "progress")} | {"labels": "rollout"}


def test_a_second_run_redoes_nothing(smoke):
    folder, first = smoke
    before = journal(folder)["parts"]
    start = time.perf_counter()
    again = make(folder.parent)
    assert again.returncode == 0, again.stderr[-3000:]
    assert time.perf_counter() - start < first
    assert journal(folder)["parts"] == before and "24 of 24 parts done" in again.stdout


def test_another_preset_is_refused_in_one_line_and_nothing_changes(smoke):
    folder, _ = smoke
    before = journal(folder)
    refused = make(folder.parent, "--hands", "96")
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "another preset (hands: 64 there, 96 here)" in refused.stderr and "--overwrite" in refused.stderr
    assert journal(folder) == before


def continued(smoke: tuple[Path, float], runs: Path, *flags: str) -> Path:
    """A copy of the finished smoke run in `runs`, continued by the smoke command with `flags`; the copy."""
    folder, _ = smoke
    shutil.copytree(folder, runs / folder.name)
    done = make(runs, *flags)
    assert done.returncode == 0, done.stderr[-3000:]
    return runs / folder.name


def test_more_iterations_continue_a_finished_run(smoke, tmp_path):
    folder, _ = smoke
    copy = continued(smoke, tmp_path, "--iterations", "3")
    parts = journal(copy)["parts"]
    assert all(parts[p] == journal(folder)["parts"][p] for p in PARTS[:15])  # the iterations done are kept
    assert parts["iter_003/distil"]["attempts"] == 1 and parts["final_finetune_003/vs_shipped"]["status"] == "finished"
    assert sorted(p.name for p in (copy / "agents").iterdir()) == ["finetune_003.pt", "iter_003.pt"]   # the new last iteration's
    earlier = [p for p in parts if p.split("/")[0] in ("finetune_002", "final_finetune_002")]   # the two-iteration preset's
    card = (copy / "MODEL_CARD.md").read_text()
    assert earlier and f"the journal keeps {len(earlier)} more part(s) of an earlier preset, not counted" in card
    assert f"over {len(parts) - len(earlier)} parts" in card


def test_another_final_pairs_plays_the_final_matches_again_at_that_size(smoke, tmp_path):
    """A pilot's small final matches, then full ones: only the final matches are played again."""
    folder, _ = smoke
    copy = continued(smoke, tmp_path, "--final-pairs", "30")
    before, parts = journal(folder)["parts"], journal(copy)["parts"]
    finals = [p for p in parts if p.startswith("final_") and "/vs_" in p]
    assert finals and all(parts[p]["facts"]["pairs"] == 30 != before[p]["facts"]["pairs"] for p in finals)
    assert all(parts[p] == before[p] for p in parts if p not in finals)
    card = (copy / "MODEL_CARD.md").read_text()
    assert "| 30 |" in card and '"final_pairs": 30' in card
    assert 'agent.pt was made with `{"bid_share": 0.5, "bootstrap_hands": 128, "curve_pairs": 20, "final_pairs": 20,' in card   # not redone


def killed_while(runs: Path, running: str) -> Path:
    """Start the smoke run and kill -9 it (with its workers) once the journal says `running` is running."""
    process = subprocess.Popen([sys.executable, "train.py", "--config", SMOKE, "--runs-dir", str(runs)], cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    folder, deadline = runs / "recipe_smoke", time.time() + SUBPROCESS_TIMEOUT
    try:
        while time.time() < deadline and process.poll() is None:
            try:
                if journal(folder)["parts"].get(running, {}).get("status") == "running":
                    break
            except (FileNotFoundError, json.JSONDecodeError):
                pass
            time.sleep(0.02)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    assert journal(folder)["parts"][running]["status"] == "running"
    return folder


def test_a_run_killed_outright_resumes_in_place_to_the_same_agent(smoke, tmp_path):
    """Also where a training part was killed before its first checkpoint: its folder then holds only logs."""
    folder = killed_while(tmp_path, "iter_002/label")
    for part in ("iter_002", "finetune_002"):
        (folder / "training" / part).mkdir(parents=True)
        (folder / "training" / part / "events.out.tfevents.0.killed").write_bytes(b"")
    resumed = make(tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    parts = journal(folder)["parts"]
    assert list(parts) == PARTS and parts["iter_002/label"]["attempts"] == 2
    assert same_weights(folder / "agent.pt", smoke[0] / "agent.pt")


def test_an_attempt_killed_outright_counts_in_the_wall_time_to_its_last_heartbeat(monkeypatch, tmp_path):
    """The card's end-to-end time: a part killed mid-way keeps its work (shards, checkpoints), so its time counts."""
    from euchre_lab.making import journal as journal_module
    from euchre_lab.making.options import Args, preset_of

    monkeypatch.setattr(journal_module, "HEARTBEAT_S", 0.02)
    path, name = tmp_path / "journal.json", "iter_001/label"
    killed = journal_module.Journal(path, preset_of(Args()))
    killed.start(name, "label_rollout")
    with killed.heartbeat(name):
        deadline = time.monotonic() + 30
        while "running_s" not in journal(tmp_path)["parts"][name] and time.monotonic() < deadline:
            time.sleep(0.01)
    lost = journal(tmp_path)["parts"][name]["running_s"]   # the process dies here: finish() never runs
    assert lost > 0 and journal(tmp_path)["parts"][name]["status"] == "running"
    resumed = journal_module.Journal(path, preset_of(Args()))
    resumed.start(name, "label_rollout")
    resumed.finish(name, 2.0, {"hands": 1}, None)
    record = journal(tmp_path)["parts"][name]
    assert record["attempts"] == 2 and record["wall_s"] == pytest.approx(lost + 2.0) and "running_s" not in record


def test_a_run_moved_with_only_its_agent_and_journal_finishes(smoke, tmp_path):
    """Killed while labelling iteration 2: the copy lacks iteration 1's data (refilled by the current agent), the
    network that plays iteration 2's play-outs (distilled again from the refill) and iteration 2's shards (labelled
    again)."""
    folder = killed_while(tmp_path / "here", "iter_002/label")
    moved = tmp_path / "there" / "recipe_smoke"
    (moved / "agents").mkdir(parents=True)
    shutil.copy(folder / "journal.json", moved)
    shutil.copy(folder / journal(folder)["agent"]["path"], moved / "agents")
    resumed = make(tmp_path / "there")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    parts = journal(moved)["parts"]
    assert list(parts) == PARTS and all(r["status"] == "finished" for r in parts.values())
    assert parts["iter_002/distil"]["facts"]["data"] == ["data/refill_001", "data/iter_002"]
    assert parts["iter_002/playout_net"]["facts"]["data"] == ["data/refill_001"] and parts["iter_002/playout_net"]["attempts"] == 2
    assert (moved / "MODEL_CARD.md").is_file()


@pytest.mark.xdist_group("ray")
def test_ray_and_two_workers_make_the_same_agent(smoke, tmp_path):
    done = make(tmp_path, "--ray", "--workers", "2")
    assert done.returncode == 0, done.stderr[-3000:]
    assert same_weights(tmp_path / "recipe_smoke" / "agent.pt", smoke[0] / "agent.pt")


def test_a_run_without_its_agent_file_is_refused_in_one_line(smoke, tmp_path):
    copy = tmp_path / "recipe_smoke"
    copy.mkdir()
    shutil.copy(smoke[0] / "journal.json", copy)
    refused = make(tmp_path)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "the run's agent file" in refused.stderr and "is missing" in refused.stderr


def test_the_speed_benchmark_prints_labels_beside_pimc_and_the_networks(capsys):
    from conftest import load_script
    from euchre_agents.network import native_bfloat16

    assert load_script("benchmarks/making_speed.py").main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = ["true ", "rollout ", "rollout_all ", "pimc ", "true labels: ", "3 x 512 (the method's)", "2 x 256 (PPO's default)"]
    bf16 = native_bfloat16()
    for row in rows + (["rollout, bf16 ", "rollout_all, bf16 ", "3 x 512, --distill-bf16"] if bf16 else []):
        assert row in out, row
    assert out.count("decisions/s") == (6 if bf16 else 4) and out.count("samples/s") == (3 if bf16 else 2)


def test_the_default_preset_is_the_options_defaults():
    import dataclasses

    import yaml

    from euchre_lab.making.options import PRESET_KEYS, Args

    preset = yaml.safe_load((ROOT / "configs" / "recipe.yaml").read_text())
    assert {k: preset[k] for k in PRESET_KEYS} == {k: v for k, v in dataclasses.asdict(Args()).items() if k in PRESET_KEYS}


@pytest.mark.parametrize("flags, says", [
    (["--labels", "pimc"], "labels='pimc' is not one of rollout, true"),
    (["--hands", "8"], "--hands must be 16 or more, got 8"),
    (["--rollout-all-from", "-1"], "--rollout-all-from must be 0 or more, got -1"),
    (["--rollout-all-from", "1"], "shape the iterations from rollout_all_from on, which is 1; set rollout_all_from to 2 or more"),
    (["--rollout-hands", "8"], "--rollout-hands must be 0 (as `hands`) or 16 or more, got 8"),
    (["--rollout-network", "{hidden_size: 16}"], "rollout_network must set hidden_size and num_layers to whole numbers"),
    (["--bid-share", "1.5"], "--bid-share must be between 0 and 1, got 1.5"),
    (["--network", "{hidden_size: 0, num_layers: 1}"], "network must set hidden_size and num_layers to whole numbers of 1 or more"),
    (["--rules", "deck=28"], "Rules.deck=28 is not allowed: expected 24 or 32"),
    (["--run-name", "../elsewhere"], "--run-name '../elsewhere' must be a plain folder name"),
    (["--start", "casino"], "start='casino' must be bootstrap or another named table: no-stick, openspiel"),
    (["--start", "standard"], "start='standard' must be bootstrap or another named table"),
    (["--start", "joker32"], "start=joker32: its agent's network is {'hidden_size': 512, 'num_layers': 3}, the preset's"),
    (["--start", "standard", "--rules", "stick_the_dealer=false"],
     "start=standard: its agent's network is {'hidden_size': 512, 'num_layers': 3}, the preset's {'hidden_size': 32"),
])
def test_a_bad_option_is_one_line_and_writes_nothing(flags, says, tmp_path):
    refused = make(tmp_path, *flags)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr, refused.stderr
    assert refused.stderr.startswith("train.py: error: ") and says in refused.stderr, refused.stderr
    assert not any(tmp_path.iterdir())


def test_a_start_from_a_table_with_no_agent_yet_points_to_the_bootstrap(monkeypatch, tmp_path):
    import euchre_agents.ppo as ppo
    from euchre_lab.making.driver import check_start
    from euchre_lab.making.options import Args, MakeError

    monkeypatch.setattr(ppo, "SHIPPED_FOLDER", tmp_path)   # a checkout without the shipped agents
    with pytest.raises(MakeError, match="start=joker32: no agent is shipped for the joker32 table yet; start from bootstrap"):
        check_start(Args(start="joker32"))


def test_train_py_dispatches_the_method_by_stage_or_preset():
    from euchre_lab.making.options import wants_make

    assert wants_make(["--config", SMOKE]) and wants_make(["--stage", "make"]) and wants_make(["--config=configs/recipe.yaml"])
    assert not wants_make(["--config", "configs/ppo.yaml"]) and not wants_make([])


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "configs").glob("recipe*.yaml")))
def test_every_preset_of_the_method_passes_its_checks(name, tmp_path):
    from euchre_env import Rules
    from euchre_lab.making.card import shipped_spec
    from euchre_lab.making.driver import plan, prepare
    from euchre_lab.making.method import uses_playout_net
    from euchre_lab.making.options import parse_args

    args = parse_args(["--config", f"configs/{name}", "--runs-dir", str(tmp_path)])
    run = prepare(args)
    first = 5 if args.start == "bootstrap" else 3   # a carried-over first agent is not labelled, distilled or exported
    carried_and_iterated = args.start != "bootstrap" and args.iterations > 0
    finals = 3 + (shipped_spec(Rules.from_dict(args.rules)) is not None) + carried_and_iterated   # vs shipped, vs start
    finetune = 4 if args.finetune_steps else 0   # train, export, two curve matches
    playout_nets = sum(uses_playout_net(args, k) for k in range(1, args.iterations + 1))
    assert len(plan(run)) == 5 * args.iterations + first + finetune + finals + playout_nets
    assert set(args.network) == {"hidden_size", "num_layers"}


def test_a_run_can_start_from_another_tables_shipped_agent(tmp_path):
    """`start: standard` at the no-stick table: the first agent is the shipped agent's weights at this table's rules,
    the iterations go on from it, and the final matches play it."""
    import torch

    from euchre_agents.ppo import shipped_path
    from euchre_env.named_tables import NAMED_TABLES

    done = make(tmp_path, "--start", "standard", "--rules", "stick_the_dealer=false", "throw_in_same_dealer=false",
                "--network", "{hidden_size: 512, num_layers: 3}", "--iterations", "1", "--finetune-steps", "0", "--run-name", "carried")
    assert done.returncode == 0, done.stderr[-3000:]
    folder = tmp_path / "carried"
    start = torch.load(folder / "start.pt", weights_only=False)
    assert start["rules"] == NAMED_TABLES["no-stick"].to_dict()
    parts = journal(folder)["parts"]
    shipped, carried, temperature = weights(shipped_path("standard")), weights(folder / "start.pt"), parts["bootstrap/carry_over"]["facts"]["temperature"]
    assert temperature > 2   # the shipped agent was fine-tuned toward its policy sharpened 20 times
    for key, value in shipped.items():
        expected = value / temperature if key.startswith("policy.") else value
        assert torch.allclose(carried[key], expected), key
    assert "bootstrap/label" not in parts and parts["bootstrap/carry_over"]["facts"]["table"] == "standard"
    assert parts["final_iter_001/vs_start"]["facts"]["seed"] == 46_204
    assert not same_weights(folder / "agent.pt", folder / "start.pt")
    assert "the standard table's shipped agent" in (folder / "MODEL_CARD.md").read_text()


def test_an_agent_carried_to_another_deck_moves_each_cards_weights_and_plays_there(tmp_path):
    """The standard agent at the 32-card joker table: the 7s and 8s take the 9's weights, the joker the right bower's
    (jack of the canonical suit 0); carried back, it is the same network; at its new table it plays legally."""
    import numpy as np

    from euchre_agents.checkpoint import carry_policy
    from euchre_agents.network import card_stand_ins
    from euchre_agents.ppo import PPOAgent, shipped_path
    from euchre_env import Engine
    from euchre_env.named_tables import NAMED_TABLES
    from euchre_env.play import play

    standard, joker = Engine(NAMED_TABLES["standard"]), Engine(NAMED_TABLES["joker32"])
    stand_in = {joker.deck.names[c]: standard.deck.names[s] for c, s in enumerate(card_stand_ins(standard, joker))}
    assert stand_in["AS"] == "AS" and stand_in["7H"] == stand_in["8H"] == "9H" and stand_in["JOKER"] == "JC"
    assert card_stand_ins(joker, standard).tolist() == list(range(standard.num_cards))
    carry_policy(str(shipped_path("standard")), str(tmp_path / "joker32.pt"), NAMED_TABLES["joker32"])
    carry_policy(str(tmp_path / "joker32.pt"), str(tmp_path / "back.pt"), NAMED_TABLES["standard"])
    assert same_weights(shipped_path("standard"), tmp_path / "back.pt")
    agent = PPOAgent.from_checkpoint(joker, str(tmp_path / "joker32.pt"), seed=0)
    state = joker.init(np.arange(64, dtype=np.uint64))
    points = play(joker, state, [agent], np.zeros(4, np.int64))   # the play loop refuses an illegal action
    assert points.shape == (64, 2) and points.min() >= 0 and points.sum() > 0


def test_a_run_continued_after_its_agent_was_shipped_does_not_play_it_against_itself(smoke, tmp_path, monkeypatch):
    from euchre_lab.making import card
    from euchre_lab.making.driver import final_parts, prepare
    from euchre_lab.making.options import parse_args

    folder, _ = smoke
    shutil.copytree(folder, tmp_path / folder.name)
    run = prepare(parse_args(["--config", SMOKE, "--runs-dir", str(tmp_path)]))
    monkeypatch.setattr(card, "shipped_spec", lambda rules: f"ppo:{tmp_path / folder.name / 'agent.pt'}")
    assert not any(p.name.endswith("/vs_shipped") for p in final_parts(run))
    monkeypatch.setattr(card, "shipped_spec", lambda rules: f"ppo:{ROOT / 'checkpoints' / 'euchre_ppo.pt'}")
    assert any(p.name.endswith("/vs_shipped") for p in final_parts(run))


@pytest.mark.parametrize("key, answer", [
    ("start", (0, "24 of 24 parts done")),   # its run did what the default does
    ("rollout_all_from", (2, "another preset (rollout_all_from: 0 there, 2 here)")),   # its labels never switched
    ("finetune_steps", (2, "another preset (finetune_steps: 0 there, 16384 here)")),   # its run made no fine-tune
    ("rollout_network", (2, "another preset (rollout_network.hidden_size: None there, 16 here)")),   # the agent played them
    ("bid_share", (2, "another preset (bid_share: 1.0 there, 0.5 here)")),   # every hand's bids were labelled
    ("rollout_hands", (2, "another preset (rollout_hands: 0 there, 128 here)")),   # every iteration labelled `hands`
])
def test_a_journal_written_before_a_preset_key_existed_reads_what_its_run_did(smoke, tmp_path, key, answer):
    """A key the journal lacks is taken as what its run did: the default, or what runs did before the key existed."""
    folder, _ = smoke
    runs = tmp_path / "runs"
    shutil.copytree(folder, runs / folder.name)
    record = journal(runs / folder.name)
    del record["preset"][key]
    (runs / folder.name / "journal.json").write_text(json.dumps(record))
    again = make(runs)
    assert again.returncode == answer[0] and answer[1] in again.stdout + again.stderr, again.stderr[-2000:]


def test_rollout_all_labels_value_the_cards_by_play_outs_too():
    from euchre_lab.making.method import teacher_settings

    every = teacher_settings(3, "agents/iter_002.pt", 0, 64_000, "rollout_all")
    bids = teacher_settings(3, "agents/iter_002.pt", 0, 64_000, "rollout")
    assert (every.label, every.rollout_cards) == ("rollout", True) and (bids.label, bids.rollout_cards) == ("rollout", False)
    assert every.behaviour == bids.behaviour == "ppo:agents/iter_002.pt=0.7,heuristic=0.3"
    assert every.rollout_agent == bids.rollout_agent
    assert teacher_settings(0, None, 0, 64_000, "rollout_all").label == "true"   # the bootstrap stays open-hand


@pytest.mark.parametrize("native", [True, False])
def test_play_outs_and_distillation_run_in_bfloat16_only_where_the_cpu_has_it(native, monkeypatch, tmp_path):
    from euchre_agents import network
    from euchre_lab.making.driver import MakeRun
    from euchre_lab.making.method import teacher_settings, training_args
    from euchre_lab.making.options import Args

    monkeypatch.setattr(network, "native_bfloat16", lambda: native)
    settings = teacher_settings(3, "agents/iter_002.pt", 0, 64_000, "rollout_all")
    assert settings.rollout_agent == "ppo:agents/iter_002.pt" + (",bf16" if native else "")
    assert settings.behaviour.startswith("ppo:agents/iter_002.pt=")   # the agent itself plays the hands as it plays anywhere
    run = MakeRun(Args(), tmp_path, journal=None)
    assert training_args(run, 3, [tmp_path], "", "").distill_bf16 is native


def test_rollout_all_from_switches_the_labels_of_that_iteration_and_the_later_ones(tmp_path):
    from euchre_lab.making.driver import MakeRun, learning_parts
    from euchre_lab.making.method import iteration_labels
    from euchre_lab.making.options import Args

    assert [iteration_labels("rollout", 3, k) for k in (1, 2, 3, 4)] == ["rollout", "rollout", "rollout_all", "rollout_all"]
    assert [iteration_labels("true", 0, k) for k in (1, 9)] == ["true", "true"]   # 0: never
    run = MakeRun(Args(rollout_all_from=3), tmp_path, journal=None)
    kinds = {k: learning_parts(run, k)[0].kind for k in (0, 2, 3)}
    assert kinds == {0: "label_true", 2: "label_rollout", 3: "label_rollout_all"}   # each its own rate for the ETAs


def test_the_replay_sets_the_folders_an_iteration_distils_and_not_its_samples(tmp_path):
    from euchre_lab.making.driver import MakeRun, learning_parts, replay_folders
    from euchre_lab.making.options import Args

    run = MakeRun(Args(replay=3), tmp_path, journal=None)
    for j in range(1, 6):
        run.data_path(j).mkdir(parents=True)
    assert [f.name for f in replay_folders(run, 5)] == ["iter_003", "iter_004", "iter_005"]
    assert [f.name for f in replay_folders(run, 1)] == ["iter_001"]
    samples = [learning_parts(MakeRun(Args(replay=r), tmp_path, journal=None), 5)[1].size for r in (1, 2, 3, 6)]
    assert samples == pytest.approx([samples[0]] * 4)   # one pass over two iterations' data, whatever the replay holds
    assert learning_parts(run, 1)[1].size == pytest.approx(samples[0] / 2)   # the first iteration has one iteration's data


def test_bid_share_shapes_the_double_dummy_iterations_labels_only(tmp_path):
    from euchre_lab.making.driver import MakeRun, labelling, learning_parts
    from euchre_lab.making.method import decisions_per_hand
    from euchre_lab.making.options import Args

    run = MakeRun(Args(bid_share=0.25, rollout_all_from=13), tmp_path, journal=None)
    assert labelling(run, 0)[0].bid_share == 1.0   # open-hand labels of bids cost no play-out
    assert [labelling(run, k)[0].bid_share for k in (1, 12, 13, 16)] == [0.25, 0.25, 1.0, 1.0]   # play-outs: every bid
    assert labelling(run, 1, refill=True)[0].bid_share == 0.25
    every_bid = MakeRun(Args(bid_share=1.0), tmp_path, journal=None)
    size, size_every_bid = (learning_parts(r, 1)[1].size for r in (run, every_bid))   # its ETA: fewer decisions a hand
    assert size / size_every_bid == pytest.approx(decisions_per_hand(0.25) / decisions_per_hand(1.0))
    assert decisions_per_hand(0.25) / decisions_per_hand(1.0) == pytest.approx(0.76, abs=0.01)
    assert learning_parts(run, 0)[1].size == learning_parts(every_bid, 0)[1].size   # the bootstrap labels every bid


def test_double_dummy_iterations_distil_at_twice_the_play_out_iterations_rate(tmp_path):
    from euchre_lab.making.driver import MakeRun
    from euchre_lab.making.method import training_args
    from euchre_lab.making.options import Args

    run = MakeRun(Args(rollout_all_from=7), tmp_path, journal=None)
    rates = [training_args(run, k, [tmp_path], "", "").learning_rate for k in (0, 1, 6, 7, 10)]
    assert rates == [1e-3, 5e-4, 5e-4, 2.5e-4, 2.5e-4]   # the bootstrap from scratch; then double-dummy, play-outs
    assert training_args(MakeRun(Args(rollout_all_from=0), tmp_path, journal=None), 20, [tmp_path], "", "").learning_rate == 5e-4


def test_rollout_hands_and_rollout_network_shape_only_the_play_out_iterations(tmp_path):
    from euchre_lab.making.driver import MakeRun, labelling, learning_parts
    from euchre_lab.making.method import PLAYOUT_NET_TRAINING, decisions_per_hand, iteration_hands
    from euchre_lab.making.options import Args

    small = {"hidden_size": 256, "num_layers": 2}
    run = MakeRun(Args(hands=64_000, rollout_all_from=3, rollout_hands=256_000, rollout_network=small), tmp_path, journal=None)
    assert [iteration_hands(run.args, k) for k in (1, 2, 3, 4)] == [64_000, 64_000, 256_000, 256_000]
    parts = {k: learning_parts(run, k) for k in (2, 3, 4)}
    assert [p.name for p in parts[2]] == ["iter_002/label", "iter_002/distil", "iter_002/export"]
    assert [p.name for p in parts[3]] == ["iter_003/playout_net", "iter_003/label", "iter_003/distil", "iter_003/export"]
    assert (parts[2][0].kind, parts[3][1].kind) == ("label_rollout", "label_playout_net")   # each its own rate
    every_bid = decisions_per_hand(1.0)
    assert parts[3][0].size == PLAYOUT_NET_TRAINING["passes"] * 256_000 * every_bid   # over the labels it serves
    # one pass over the replay it holds: a double-dummy iteration's hands (a third with their bids), a play-out one's
    assert parts[3][2].size == pytest.approx(64_000 * decisions_per_hand(1 / 3) + 256_000 * every_bid)
    assert parts[4][2].size == pytest.approx(2 * 256_000 * every_bid)
    settings, hands = labelling(run, 3)
    assert hands == 256_000 and settings.rollout_agent.split(",")[0] == f"ppo:{run.playout_net_path(3)}"
    assert settings.behaviour.startswith(f"ppo:{run.agent_path(2)}=")   # the agent still plays the hands
    refill, _ = labelling(run, 3, refill=True)   # refills the data the play-out network learns from: the agent plays out
    assert refill.rollout_agent.split(",")[0] == f"ppo:{run.agent_path(2)}"


def test_ctrl_c_names_the_command_that_continues_this_run(monkeypatch, capsys, tmp_path):
    from euchre_lab.making import driver

    def interrupted(run):
        raise KeyboardInterrupt

    monkeypatch.setattr(driver, "drive", interrupted)
    argv = ["--config", SMOKE, "--runs-dir", str(tmp_path), "--run-name", "mine", "--labels", "true", "--overwrite"]
    assert driver.main(argv) == 130
    said = capsys.readouterr().err.strip()
    assert said.endswith(f"run `python train.py --config {SMOKE} --runs-dir {tmp_path} --run-name mine --labels true` "
                         "again to continue the whole run")   # without --overwrite, which would start it over


def test_a_finished_run_moved_without_agent_pt_writes_it_again_as_it_was_made(smoke, tmp_path):
    from euchre_agents.checkpoint import PLAY, read_checkpoint

    folder, _ = smoke
    moved = tmp_path / "recipe_smoke"
    shutil.copytree(folder / "agents", moved / "agents")
    shutil.copy(folder / "journal.json", moved)
    again = make(tmp_path)
    assert again.returncode == 0 and "23 of 24 parts done" in again.stdout, again.stderr[-2000:]
    assert same_weights(moved / "agent.pt", folder / "agent.pt")
    made = [read_checkpoint(str(f / "agent.pt"), PLAY)["made_by"] for f in (folder, moved)]
    assert made[0] == made[1]   # the command and commit that made it, not the one that moved it
