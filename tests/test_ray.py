"""Ray and RLlib: `evaluate.py --ray` plays the same chunks as `--workers`, the teacher tool's `--ray` writes the same
shards, and multi-agent PPO trains on the env.

One local Ray (2 CPUs, a 200 MB object store, no dashboard) serves the whole file; it is started once
per test session, with the job runtime_env that evaluate.py gives it, and every test here runs in
the same pytest-xdist worker (`xdist_group`).
"""

from __future__ import annotations

import csv
import functools
import json
import os
import socket
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
torch = pytest.importorskip("torch")

import evaluate  # noqa: E402
from conftest import SUBPROCESS_TIMEOUT, load_script  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402

from euchre_agents import rllib  # noqa: E402
from euchre_agents.registry import make_agent  # noqa: E402
from euchre_agents.teacher_data import shard_path  # noqa: E402
from euchre_agents.checkpoint import CheckpointError, CheckpointMismatchError  # noqa: E402
from euchre_env.engine import Engine  # noqa: E402
from euchre_env.rules import Rules  # noqa: E402
from euchre_lab.evaluation import backends  # noqa: E402
from euchre_lab.evaluation.match import ChunkTask, play_match, run_chunk  # noqa: E402
from euchre_lab.training.teacher import main as teacher_main  # noqa: E402

pytestmark = pytest.mark.xdist_group("ray")
ROOT = Path(__file__).resolve().parents[1]
TIMING = {"process_seconds", "hands_per_process_second"}
"""What differs between any two runs of the same match: how long it took."""
RUN_OPTIONS = {"workers", "ray", "out"}
"""The options that choose where the chunks run and where the files go (kept in every result file's config)."""


@pytest.fixture(scope="session")
def local_ray():
    """One local Ray for the session, shipping the code as evaluate.py does."""
    ray.init(
        num_cpus=2,
        object_store_memory=backends.RAY_OBJECT_STORE,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env=backends.ray_runtime_env(),
    )
    yield
    ray.shutdown()


def without(data, drop: set[str]):
    """`data` (JSON values) with the keys in `drop` removed at every depth."""
    if isinstance(data, dict):
        return {k: without(v, drop) for k, v in data.items() if k not in drop}
    if isinstance(data, list):
        return [without(v, drop) for v in data]
    return data


def csv_rows(path: Path) -> list[dict[str, str]]:
    """A CSV file's rows without the timing columns."""
    with path.open() as f:
        return [{k: v for k, v in row.items() if not k.startswith(tuple(TIMING))} for row in csv.DictReader(f)]


def run_both(tmp_path: Path, *args: str) -> tuple[Path, Path]:
    """Run evaluate.py's CLI with `--workers 2` and with `--ray`; the two results folders."""
    outs = tmp_path / "workers", tmp_path / "ray"
    common = ["--no-plots", "--no-progress", *args]
    assert evaluate.main([*common, "--workers", "2", "--out", str(outs[0])]) == 0
    assert evaluate.main([*common, "--ray", "--out", str(outs[1])]) == 0
    return outs


# ---------------------------------------------------------------------------------------- evaluate.py --ray


def test_ray_match_writes_the_same_files_as_workers(local_ray, tmp_path):
    by_workers, by_ray = run_both(tmp_path, "heuristic", "random", "--hands", "80", "--chunk", "10", "--seed", "5")
    assert (by_ray / "pairs.csv").read_bytes() == (by_workers / "pairs.csv").read_bytes()
    assert csv_rows(by_ray / "match.csv") == csv_rows(by_workers / "match.csv")
    a, b = (json.loads((out / "match.json").read_text()) for out in (by_workers, by_ray))
    assert without(a, TIMING | RUN_OPTIONS) == without(b, TIMING | RUN_OPTIONS)
    assert b["config"]["ray"] == backends.RAY_LOCAL and b["match"]["hands"] == 80


def test_ray_round_robin_writes_the_same_files_as_workers(local_ray, tmp_path):
    args = ["--round-robin", "random", "heuristic", "random:b", "--hands", "40", "--chunk", "8", "--bootstrap", "50"]
    by_workers, by_ray = run_both(tmp_path, *args)
    for name in ("pairs.csv", "ratings.csv"):
        assert (by_ray / name).read_bytes() == (by_workers / name).read_bytes(), name
    assert csv_rows(by_ray / "matches.csv") == csv_rows(by_workers / "matches.csv")
    a, b = (json.loads((out / "tournament.json").read_text()) for out in (by_workers, by_ray))
    assert without(a, TIMING | RUN_OPTIONS) == without(b, TIMING | RUN_OPTIONS)
    assert len(b["matches"]) == 3


def test_ray_shows_the_progress_bar(local_ray, tmp_path, capsys):
    play_match(None, "random", "heuristic", hands=40, chunk=10, progress=True, ray=backends.RAY_LOCAL)
    assert "40/40" in capsys.readouterr().err


def test_ray_teacher_data_is_the_data_local_workers_write(local_ray, tmp_path):
    common = ["--shards", "3", "--games-per-shard", "4", "--behaviour", "heuristic=0.5,random=0.5", "--seed", "3"]
    assert teacher_main([str(tmp_path / "workers"), *common, "--workers", "2"]) == 0
    assert teacher_main([str(tmp_path / "ray"), *common, "--ray"]) == 0
    by_workers, by_ray = (json.loads((tmp_path / side / "manifest.json").read_text()) for side in ("workers", "ray"))
    assert by_ray == by_workers and sorted(by_ray["shards"]) == ["0", "1", "2"]
    for k in range(3):
        with np.load(shard_path(tmp_path / "workers", k)) as a, np.load(shard_path(tmp_path / "ray", k)) as b:
            assert a.files == b.files
            for key in a.files:
                np.testing.assert_array_equal(a[key], b[key], err_msg=f"shard {k} {key}")


def crash_first_time(task, marker: str):
    """Kill this worker process the first time chunk 0 runs (as a lost node would); play normally after."""
    if task.index == 0 and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return run_chunk(task), shipped_files()


def shipped_files() -> set[str]:
    """The files on this worker's PYTHONPATH that Ray's runtime_env unpacked (py_modules), relative to their package."""
    roots = [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if "runtime_resources" in p]
    return {str(f.relative_to(root)) for root in roots for f in root.rglob("*") if f.is_file()}


def test_a_chunk_whose_worker_died_runs_again_on_workers_given_the_code_by_runtime_env(local_ray, tmp_path):
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # this test's module is not shipped
    rules, keys = Rules(), np.arange(1, 13, dtype=np.uint64)
    tasks = [ChunkTask(0, c, rules, "hands", ("random", "heuristic"), (7 + c, 9 + c), keys[4 * c : 4 * c + 4]) for c in range(3)]
    marker = tmp_path / "crashed"
    run = functools.partial(crash_first_time, marker=str(marker))
    got = {(m, c): (out, where) for (m, c, out), where in backends.ray_results(tasks, backends.RAY_LOCAL, run=run)}
    assert marker.exists() and sorted(got) == [(0, 0), (0, 1), (0, 2)]
    for task in tasks:
        expected = run_chunk(task)[2]
        out, shipped = got[0, task.index]
        for key in ("a_points", "b_points", "hands"):
            np.testing.assert_array_equal(out[key], expected[key])
        assert {"euchre_lab/evaluation/match.py", "euchre_agents/pimc.py", "euchre_env/engine.py"} <= shipped
        assert any(name.startswith("euchre_agents/_dds") and name.endswith(".so") for name in shipped), "the solver is not shipped"


def test_ray_refuses_agent_instances(local_ray):
    bot = make_agent("random", Engine())
    with pytest.raises(ValueError, match="bot specs to play on Ray"):
        play_match(None, bot, "random", hands=4, ray=backends.RAY_LOCAL)


def cli(*args: str, timeout: float = SUBPROCESS_TIMEOUT) -> subprocess.CompletedProcess:
    """evaluate.py in a fresh process (this one is connected to the session's Ray)."""
    return subprocess.run([sys.executable, str(ROOT / "evaluate.py"), *args], capture_output=True, text=True, timeout=timeout)


def closed_port() -> int:
    """A local TCP port that nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_ray_address_fails_with_one_line():
    port = closed_port()
    done = cli("random", "random", "--hands", "4", "--ray", f"127.0.0.1:{port}")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"evaluate.py: error: cannot reach a Ray cluster at 127.0.0.1:{port}: Connection refused; {backends.RAY_HINT}"
    ]


def test_malformed_ray_address_is_a_usage_error():
    done = cli("random", "random", "--hands", "4", "--ray", "nowhere")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "'nowhere' is not an address" in done.stderr


def test_a_port_that_never_answers_gives_up_after_the_timeout():
    with socket.socket() as server:  # accepts connections (the kernel does) but never speaks Ray
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        code = f"from euchre_lab.evaluation.backends import connect_ray\ntry:\n    connect_ray('127.0.0.1:{port}', timeout=2)\nexcept ConnectionError as e:\n    print(e)"
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert f"cannot reach a Ray cluster at 127.0.0.1:{port}: no answer in 2 s" in done.stdout


# ---------------------------------------------------------------------------------------- RLlib


def load_trainer():
    """examples/rllib_train.py as a module (examples/ is not a package)."""
    return load_script("examples/rllib_train.py")


TINY = ["--iterations", "2", "--train-batch-size", "256", "--minibatch-size", "64", "--num-epochs", "1",
        "--hidden-size", "32", "--num-layers", "1", "--seed", "3"]
"""Two iterations of 256 env steps with a small network: seconds."""


@pytest.fixture(scope="session")
def team_checkpoint(local_ray, tmp_path_factory):
    """A checkpoint of two RLlib iterations with one policy per team, trained on the session's Ray."""
    run_dir = tmp_path_factory.mktemp("rllib")
    assert load_trainer().main([*TINY, "--policies", "team", "--run-dir", str(run_dir)]) == 0
    return run_dir / "checkpoint"


def test_policy_mappings_share_one_policy_or_split_the_partnerships():
    seats = [f"player_{i}" for i in range(4)]
    assert [rllib.policy_mapping("shared")(a, None) for a in seats] == ["shared"] * 4
    assert [rllib.policy_mapping("team")(a, None) for a in seats] == ["team_0", "team_1", "team_0", "team_1"]
    with pytest.raises(ValueError, match="one policy for all seats"):
        rllib.policy_ids("seat")


def test_rllib_env_plays_a_hand_through_the_aec_env():
    env, rng = rllib.make_env({"rules": {"deck": 32}}), np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    total, steps = dict.fromkeys(env.possible_agents, 0.0), 0
    while True:
        (agent, seen), = obs.items()  # only the agent to act is observed
        action = int(rng.choice(np.flatnonzero(seen["action_mask"])))
        obs, rewards, terminated, _, _ = env.step({agent: action})
        steps += 1
        for a, r in rewards.items():
            total[a] += r
        if terminated["__all__"]:
            break
    assert steps >= 6 and set(obs) == set(env.possible_agents)
    assert total["player_0"] == total["player_2"] == -total["player_1"] == -total["player_3"]


def test_masked_module_never_samples_an_illegal_action():
    env = rllib.make_env({})
    space_obs, space_act = env.observation_spaces["player_0"], env.action_spaces["player_0"]
    model = rllib.module_config({}, hidden_size=32, num_layers=1)
    module = RLModuleSpec(
        module_class=rllib.EuchreRLModule, observation_space=space_obs, action_space=space_act, model_config=model
    ).build()
    engine, rng = Engine(), np.random.default_rng(0)
    state, obs, masks = engine.init(np.arange(1, 257, dtype=np.uint64)), [], []
    while not state.done.all():  # every decision of 256 random hands
        live = np.flatnonzero(~state.done)
        obs.append(engine.observe(state)[live])
        masks.append(state.legal[live])
        noise = rng.random(state.legal.shape)
        engine.step(state, np.argmax(np.where(state.legal, noise, -1.0), axis=1))
    batch_obs = {"observation": torch.from_numpy(np.concatenate(obs)), "action_mask": torch.from_numpy(np.concatenate(masks).astype(np.int8))}
    legal = batch_obs["action_mask"].bool()
    dist_cls = module.get_exploration_action_dist_cls()
    with torch.no_grad():
        logits = module.forward_exploration({"obs": batch_obs})["action_dist_inputs"]
        raw = module.net.policy(module.net.trunk(batch_obs["observation"]))
    for _ in range(20):
        sampled = dist_cls.from_logits(logits).sample()
        assert legal.gather(1, sampled[:, None]).all()
    unmasked = dist_cls.from_logits(raw).sample()
    assert not legal.gather(1, unmasked[:, None]).all(), "the unmasked policy should pick illegal actions: the test would not catch a missing mask"
    assert legal.shape[0] > 5000


def test_rllib_trains_and_its_checkpoint_plays_in_evaluate(team_checkpoint, tmp_path):
    policies = sorted(p.name for p in (team_checkpoint / rllib.MODULE_PATH).iterdir() if p.is_dir())
    assert policies == ["team_0", "team_1"]
    out = tmp_path / "match"
    spec = f"rllib:{team_checkpoint},policy=team_1"
    args = [spec, "heuristic", "--hands", "20", "--chunk", "10", "--workers", "1", "--no-plots", "--no-progress", "--out", str(out)]
    assert evaluate.main(args) == 0
    summary = json.loads((out / "match.json").read_text())["match"]
    assert (summary["a"], summary["hands"]) == (spec, 20)
    assert summary["weights_sha256"] == {spec: rllib.folder_sha256(team_checkpoint / rllib.MODULE_PATH / "team_1")}


def test_a_run_resumes_from_its_checkpoint_to_a_budget_of_env_steps_keeping_each_sessions_policies(team_checkpoint, tmp_path, capsys):
    run_dir = tmp_path / "rllib"
    shutil.copytree(team_checkpoint.parent, run_dir)
    trainer = load_trainer()
    resumed = [*TINY, "--policies", "team", "--run-dir", str(run_dir), "--resume", str(run_dir / "checkpoint"), "--total-decisions", "700"]
    assert trainer.main(resumed) == 0
    assert "iteration 3: 768 env steps" in capsys.readouterr().out  # 2 iterations of 256 restored, one more reaches 700
    assert sorted(p.name for p in run_dir.glob("policy_*")) == ["policy_512", "policy_768"]
    assert sorted(p.name for p in (run_dir / "policy_768").iterdir() if p.is_dir()) == ["team_0", "team_1"]
    assert make_agent(f"rllib:{run_dir / 'policy_768' / 'team_1'}", Engine()).name == "rllib"
    assert trainer.main([*TINY, "--run-dir", str(run_dir)]) == 2
    assert "already holds a run; continue it with --resume" in capsys.readouterr().err


def test_rllib_bot_names_the_policies_and_refuses_other_rules(team_checkpoint):
    with pytest.raises(ValueError, match=r"holds policies \['team_0', 'team_1'\]: choose one"):
        make_agent(f"rllib:{team_checkpoint}", Engine())
    with pytest.raises(ValueError, match="has no policy 'shared'"):
        make_agent(f"rllib:{team_checkpoint},policy=shared", Engine())
    with pytest.raises(CheckpointMismatchError, match="rules.deck"):
        make_agent(f"rllib:{team_checkpoint},policy=team_0", Engine(Rules(deck=32)))
    greedy = make_agent(f"rllib:{team_checkpoint / rllib.MODULE_PATH / 'team_0'}", Engine())
    assert greedy.name == "rllib" and not greedy.sample


def test_trainer_reads_its_preset_and_refuses_bad_options(capsys):
    trainer = load_trainer()
    args = trainer.parse_args([])
    assert (args.policies, args.episode, args.num_envs_per_env_runner) == ("shared", "hand", 16)
    assert trainer.main(["--policies", "seat"]) == 2
    assert trainer.main(["--rules", "{deck: 30}"]) == 2
    assert trainer.main(["--config", "no_such.yaml"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3 and all(line.startswith("examples/rllib_train.py: error: ") for line in err)


def test_a_checkpoint_with_a_shared_policy_plays_it_by_default(tmp_path):
    for policy in ("shared", "team_0"):
        (tmp_path / rllib.MODULE_PATH / policy).mkdir(parents=True)
    assert rllib.module_folder(str(tmp_path)) == tmp_path / rllib.MODULE_PATH / "shared"
    assert rllib.module_folder(str(tmp_path), "team_0") == tmp_path / rllib.MODULE_PATH / "team_0"
    with pytest.raises(CheckpointError, match="no RLlib checkpoint"):
        rllib.module_folder(str(tmp_path / "missing"))


def test_a_module_folders_digest_covers_every_files_name_and_bytes(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "weights").write_bytes(b"abc")
        (folder / "meta.json").write_text("{}")
    first = rllib.folder_sha256(one)
    assert rllib.folder_sha256(two) == first
    (two / "sub" / "weights").write_bytes(b"abd")
    assert rllib.folder_sha256(two) != first
    (two / "sub" / "weights").write_bytes(b"abc")
    (two / "sub" / "weights").rename(two / "sub" / "other")
    assert rllib.folder_sha256(two) != first


@pytest.mark.parametrize("kind", ["missing", "a_file", "empty_folder", "damaged_module"])
def test_a_bad_rllib_folder_gets_one_line_naming_it_and_the_fix(kind, tmp_path, capsys):
    import euchre_lab.play as play_tool

    path = tmp_path / kind
    if kind == "a_file":
        path.write_text("not a checkpoint")
    elif kind == "empty_folder":
        path.mkdir()
    elif kind == "damaged_module":
        path.mkdir()
        (path / rllib.MODULE_FILE).write_bytes(b"not a pickle")
    for tool, code in (("evaluate.py", lambda: evaluate.main([f"rllib:{path}", "random", "--hands", "2", "--no-progress"])),
                       ("play.py", lambda: play_tool.main(["--opponents", f"rllib:{path}"]))):
        assert code() == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err and "Errno" not in err, err
        assert err.startswith(f"{tool}: error: ") and repr(str(path)) in err and err.strip().endswith(rllib.FIX), err


def test_a_process_that_imported_ray_spawns_its_pool_workers():
    """Forking after Ray ran here can lose a worker outright (Ray's threads and gRPC's fork handlers outlive
    ray.shutdown()), so the pool spawns once Ray was imported."""
    import ray  # noqa: F401

    from euchre_agents.pool import start_method

    assert start_method() == "spawn"
