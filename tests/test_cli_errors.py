"""Every bad input of the command-line tools gets one line naming the problem (and the fix), exit
status 2, no traceback, and nothing written.

The table runs each tool's `__main__` once per row inside one subprocess per tool (`runpy`, with the
row's argv), so that torch is imported once and not once per row; an exception that escapes `main`
is printed there as the interpreter would print it, so a traceback cannot hide. Two rows also run as
processes of their own, exactly as a user types them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import SUBPROCESS_TIMEOUT
from euchre_agents.base import file_sha256

ROOT = Path(__file__).resolve().parents[1]
EXPORT = ROOT / "checkpoints" / "euchre_ppo.pt"
FIX = "pass a checkpoint that train.py wrote"
EVEN = "must be an even number of at least 2 (every deal is played twice, mirrored)"
OLD_DIGEST = "0" * 64
"""The weights sha256 the results in FILES/ppo_results say `ppo:EXPORT` played (not the file's)."""

DRIVER = r"""
import contextlib, io, json, os, runpy, sys, traceback
script, rows = sys.argv[1], json.load(open(sys.argv[2]))
sys.path[:0] = [sys.argv[3], os.path.dirname(script)]  # the checkout, and the script's folder as python puts it
results = []
for argv in rows:
    sys.argv = [script, *argv]
    buffer = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (print(e.code, file=sys.stderr) or 1)
        except BaseException:
            traceback.print_exc()
            code = 1
    results.append({"code": code, "output": buffer.getvalue()})
print(json.dumps(results))
"""

# (row id, argv, text the one line must contain). FILES/RUNS are replaced by the scratch folders.
TRAIN_ROWS = [
    ("num_envs_0", ["--num-envs", "0"], "--num-envs must be greater than 0, got 0"),
    ("num_steps_negative", ["--num-steps", "-3"], "--num-steps must be greater than 0, got -3"),
    ("learning_rate_nan", ["--learning-rate", "nan"], "--learning-rate must be a finite number, got nan"),
    ("gamma_above_1", ["--gamma", "1.5"], "--gamma must be between 0 and 1, got 1.5"),
    ("negative_seed", ["--seed", "-1"], "--seed must be 0 or more, got -1"),
    ("no_whole_rollout", ["--total-timesteps", "100"], "--total-timesteps 100 is less than one rollout"),
    ("not_a_number", ["--num-envs", "many"], "option num_envs: expected int, got 'many'"),
    ("unknown_flag", ["--num-env", "4"], "unrecognized arguments: --num-env 4"),
    ("flag_without_value", ["--num-envs"], "--num-envs/--num_envs: expected one argument"),
    ("episode_match", ["--episode", "match"], "--episode 'match' is not one of hand, game, rubber"),
    ("reward_unknown", ["--reward", "money"], "--reward 'money' is not one of points, win"),
    ("rules_unknown", ["--rules", "{decks: 32}"], "--rules: unknown Rules option(s) ['decks']"),
    ("rules_bad_value", ["--rules", "{deck: 33}"], "--rules: Rules.deck=33 is not allowed"),
    ("rules_items_bad_value", ["--rules", "deck=33", "joker=true"], "--rules: Rules.deck=33 is not allowed"),
    ("rules_bad_yaml", ["--rules", "{deck: 32"], "--rules: '{deck: 32' is not valid YAML"),
    ("rules_not_an_item", ["--rules", "deck"], "--rules takes key=value items or a YAML mapping"),
    ("distill_without_data", ["--stage", "distill"], "--stage distill needs --teacher-data"),
    ("device_cuda_on_cpu", ["--device", "cuda"], "--device cuda: this torch"),
    ("device_unknown", ["--device", "gpu"], "--device 'gpu' is not a torch device"),
    ("opponent_unknown", ["--opponent-mix", "self=0.5,heuristc=0.5"], "--opponent-mix: unknown agent 'heuristc'"),
    ("opponent_weightless", ["--opponent-mix", "self"], "opponent_mix entry 'self' is not NAME=NUMBER"),
    ("opponent_bad_pimc", ["--opponent-mix", "self=1,pimc:worlds=abc=1"], "pimc option worlds takes a number, got 'abc'"),
    ("opponent_garbage_ppo", ["--opponent-mix", "self=1,ppo:FILES/garbage.pt=1"], "is not a torch checkpoint"),
    ("eval_unknown", ["--eval-opponents", "heuristc=100"], "--eval-opponents: unknown agent 'heuristc'"),
    ("eval_hands", ["--eval-opponents", "heuristic=0.5"], "heuristic=0.5: hands must be an even number of at least 2"),
    ("eval_hands_odd", ["--eval-opponents", "heuristic=7"], f"heuristic=7: hands {EVEN}, got 7; give 6 or 8"),
    ("config_missing", ["--config", "FILES/none.yaml"], "config file 'FILES/none.yaml' not found"),
    ("config_malformed", ["--config", "FILES/bad.yaml"], "FILES/bad.yaml is not valid YAML at line 3"),
    ("config_a_list", ["--config", "FILES/list.yaml"], "holds a YAML list, not a mapping"),
    ("config_unknown_option", ["--config", "FILES/unknown.yaml"], "unknown option(s) ['num_env']"),
    ("config_overwrite", ["--config", "FILES/overwrite.yaml"], "['overwrite'] can only be given on the command line"),
    ("resume_garbage", ["--resume", "FILES/garbage.pt"], f"'FILES/garbage.pt' is not a torch checkpoint; {FIX}"),
    ("resume_empty", ["--resume", "FILES/empty.pt"], "'FILES/empty.pt' is empty (0 bytes"),
    ("resume_truncated", ["--resume", "FILES/truncated.pt"], "'FILES/truncated.pt' is truncated or damaged"),
    ("resume_dict_without_rules", ["--resume", "FILES/norules.pt"], "is not a train.py checkpoint: it lacks"),
    ("resume_tensor", ["--resume", "FILES/tensor.pt"], "holds a Tensor, not a train.py checkpoint"),
    ("resume_missing", ["--resume", "FILES/none.pt"], "no checkpoint at 'FILES/none.pt' (no such file)"),
    ("resume_folder", ["--resume", "FILES"], "is a folder, not a file"),
    ("resume_export", ["--resume", str(EXPORT)], "is a play-only export (python -m euchre_lab.training.export_policy writes those)"),
    ("run_name_taken", ["--run-name", "taken"], "run folder RUNS/taken already holds an earlier run"),
    ("overwrite_not_a_run", ["--run-name", "notes", "--overwrite"], "--overwrite deletes only run folders, and RUNS/notes also holds todo.txt"),
    ("run_name_path", ["--run-name", "a/b"], "--run-name 'a/b' must be a plain folder name"),
    ("runs_dir_a_file", ["--runs-dir", "FILES/empty.pt"], "FILES/empty.pt is a file, not a folder"),
]

EVALUATE_ROWS = [
    ("one_bot", ["heuristic"], "a match takes exactly two bots"),
    ("unknown_bot", ["heuristc", "random"], "unknown agent 'heuristc'; known agents:"),
    ("pimc_worlds_abc", ["pimc:worlds=abc", "random"], "pimc option worlds takes a number, got 'abc'"),
    ("pimc_unknown_option", ["pimc:depth=3", "random"], "unknown pimc option 'depth'"),
    ("ppo_garbage", ["ppo:FILES/garbage.pt", "random"], f"'FILES/garbage.pt' is not a torch checkpoint; {FIX}"),
    ("ppo_empty", ["ppo:FILES/empty.pt", "random"], "'FILES/empty.pt' is empty (0 bytes"),
    ("ppo_truncated", ["ppo:FILES/truncated.pt", "random"], "'FILES/truncated.pt' is truncated or damaged"),
    ("ppo_dict_without_rules", ["ppo:FILES/norules.pt", "random"], "is not a train.py checkpoint: it lacks"),
    ("ppo_missing", ["ppo:FILES/none.pt", "random"], "no checkpoint at 'FILES/none.pt'"),
    ("ppo_other_rules", [f"ppo:{EXPORT}", "random", "--rules", "deck=32"], "rules.deck: checkpoint 24, here 32"),
    ("hands_0", ["heuristic", "random", "--hands", "0"], f"hands {EVEN}, got 0"),
    ("hands_odd", ["heuristic", "random", "--hands", "7"], f"hands {EVEN}, got 7; give 6 or 8"),
    ("games_odd", ["heuristic", "random", "--games", "3"], f"games {EVEN}, got 3; give 2 or 4"),
    ("hands_and_games", ["heuristic", "random", "--hands", "4", "--games", "4"], "give either hands or games"),
    ("hands_not_a_number", ["heuristic", "random", "--hands", "many"], "option hands: expected int, got 'many'"),
    ("progress_not_a_bool", ["heuristic", "random", "--progress=maybe"], "option progress: expected bool, got 'maybe'"),
    ("workers_0", ["heuristic", "random", "--workers", "0"], "--workers must be 1 or more, got 0"),
    ("chunk_0", ["heuristic", "random", "--chunk", "0"], "--chunk must be 1 or more, got 0"),
    ("seed_negative", ["heuristic", "random", "--seed", "-1"], "--seed must be 0 or more, got -1"),
    ("rules_unknown", ["heuristic", "random", "--rules", "decks=32"], "unknown Rules option(s) ['decks']"),
    ("rules_bad_value", ["heuristic", "random", "--rules", "deck=33"], "Rules.deck=33 is not allowed"),
    ("rules_bad_yaml", ["heuristic", "random", "--rules", "{deck: 32"], "--rules: '{deck: 32' is not valid YAML"),
    ("round_robin_repeats", ["--round-robin", "random", "random"], "--round-robin needs two or more different bots"),
    ("config_missing", ["--config", "FILES/none.yaml"], "config file 'FILES/none.yaml' not found"),
    ("config_malformed", ["--config", "FILES/bad.yaml"], "FILES/bad.yaml is not valid YAML at line 3"),
    ("out_a_file", ["heuristic", "random", "--out", "FILES/empty.pt"], "--out FILES/empty.pt is a file"),
    ("out_holds_another_match", ["heuristic", "random", "--hands", "20", "--out", "FILES/results"],
     "FILES/results already holds the results of another match (hands 10 there, 20 here)"),
    ("out_holds_other_weights", [f"ppo:{EXPORT}", "random", "--hands", "10", "--out", "FILES/ppo_results"],
     f"FILES/ppo_results already holds the results of another match (ppo:{EXPORT} played weights sha256 {OLD_DIGEST} "
     f"there and plays {file_sha256(EXPORT)} here); pass --out DIR or --overwrite"),
    ("unknown_flag", ["heuristic", "random", "--hand", "10"], "unrecognized arguments: --hand 10"),
    ("task_unknown", ["--task", "standard-v9", "ppo"],
     "unknown task 'standard-v9'; known tasks: standard-v1, no-stick-v1, openspiel-v1, joker32-v1, lone-defender-v1"),
    ("task_with_hands", ["--task", "standard-v1", "random", "--hands", "10", "--seed", "3"],
     "--task fixes the rules, deals, pairs and chunk of the protocol; drop --hands --seed"),
    ("task_two_bots", ["--task", "standard-v1", "random", "heuristic"], "--task scores exactly one BOT, got ['random', 'heuristic']"),
    ("quick_without_task", ["heuristic", "random", "--quick"], "--quick goes with --task TASK (the scoring protocol)"),
    ("task_unknown_module", ["--task", "no-stick-v1", "nomodule:policy"], "cannot import module 'nomodule' for the bot spec"),
    ("outside_missing_attr", ["FILES/userbots.py:nothing", "random"], "'FILES/userbots.py' has no attribute 'nothing'"),
    ("outside_missing_file", ["FILES/none.py:policy", "random"], "outside bot file 'FILES/none.py' not found"),
    ("outside_illegal", ["FILES/userbots.py:illegal", "random", "--hands", "4", "--out", "FILES/illegal_out", "--no-progress"],
     "bot 'FILES/userbots.py:illegal' chose the illegal action"),
    ("outside_raises", ["--task", "standard-v1", "FILES/userbots.py:broken", "--out", "FILES/broken_out"],
     "bot 'FILES/userbots.py:broken' raised ZeroDivisionError: division by zero"),
]

SCRIPT_ROWS = [
    ("benchmarks/aec_quick.py", "runs_0", ["--runs", "0"], "--runs must be 1 or more, got 0"),
    ("benchmarks/aec_quick.py", "seconds_not_a_number", ["--seconds", "fast"], "option seconds: expected float, got 'fast'"),
    ("benchmarks/agents_speed.py", "per_phase_0", ["--per-phase", "0"], "--per-phase must be 1 or more, got 0"),
    ("benchmarks/agents_speed.py", "unknown_bot", ["--search", "heuristc"], "--search: unknown agent 'heuristc'"),
    ("benchmarks/agents_speed.py", "not_a_search_bot", ["--search", "heuristic"], "--search 'heuristic' is not a search bot"),
    ("benchmarks/belief_quality.py", "hands_0", ["--hands", "0", "uniform"], "--hands must be 1 or more, got 0"),
    ("benchmarks/belief_quality.py", "unknown_player", ["--players", "heuristc", "uniform"], "--players: unknown agent 'heuristc'"),
    ("benchmarks/belief_quality.py", "unknown_variant", ["uniform", "bogus=1"], "variant 'bogus=1': unknown pimc option 'bogus'"),
    ("benchmarks/making_speed.py", "seconds_0", ["--seconds", "0"], "--seconds must be greater than 0, got 0.0"),
    ("benchmarks/making_speed.py", "unknown_agent", ["--agent", "heuristc"], "unknown agent 'heuristc'"),
    ("benchmarks/paired_difference.py", "one_folder", ["FILES/results"], "the following arguments are required: SECOND"),
    ("benchmarks/paired_difference.py", "not_a_match", ["FILES", "FILES/results"], "FILES is not a match folder of evaluate.py"),
    ("benchmarks/plot_training.py", "no_run", ["RUNS/none"], "run folder RUNS/none not found"),
    ("benchmarks/plot_training.py", "not_a_run", ["RUNS/notes"], "RUNS/notes holds no TensorBoard events"),
    ("benchmarks/teacher_regret.py", "shards_0", ["--shards", "0", "FILES", "heuristic"], "--shards must be 1 or more, got 0"),
    ("benchmarks/teacher_regret.py", "not_teacher_data", ["FILES", "heuristic"], "FILES holds no teacher data (manifest.json is missing)"),
    ("benchmarks/throughput.py", "rounds_0", ["--rounds", "0"], "--rounds must be 1 or more, got 0"),
    ("benchmarks/throughput.py", "clock_unknown", ["--clock", "gpu"], "argument --clock: invalid choice: 'gpu'"),
    ("benchmarks/throughput.py", "sizes_0", ["--sizes", "8", "0"], "--sizes must be 1 or more, got 0"),
    ("benchmarks/web_load.py", "requests_0", ["--requests", "0"], "--requests must be 1 or more, got 0"),
    ("benchmarks/web_load.py", "unknown_flag", ["--bogus"], "unrecognized arguments: --bogus"),
    ("benchmarks/web_load.py", "seconds_0", ["--capacity", "pimc", "--seconds", "0"], "--seconds must be greater than 0, got 0"),
]
"""(script, row id, argv, text the one line must contain) for the benchmarks, which share the tools' command-line layer."""


@pytest.fixture(scope="session")
def scratch(request, tmp_path_factory) -> Path:
    """A working folder with bad files in FILES/ and earlier runs in RUNS/. Under pytest-xdist the
    workers share it and each table's results (the first to take the lock runs the table)."""
    from filelock import FileLock  # a dependency of torch

    shared = hasattr(request.config, "workerinput")
    root = tmp_path_factory.getbasetemp().parent if shared else tmp_path_factory.mktemp("shared")
    base = root / "cli"
    with FileLock(str(root / "cli.lock")):
        if not (base / "ready").exists():
            make_scratch(base)
            (base / "ready").write_text("")
    return base


def make_scratch(base: Path) -> None:
    """The bad files and the earlier runs the rows name."""
    files = base / "files"
    files.mkdir(parents=True)
    (files / "garbage.pt").write_bytes(bytes(range(256)) * 12)
    (files / "empty.pt").write_bytes(b"")
    (files / "truncated.pt").write_bytes(EXPORT.read_bytes()[: EXPORT.stat().st_size // 2])
    torch.save({"model": {}, "format": 1}, files / "norules.pt")
    torch.save(torch.zeros(3), files / "tensor.pt")
    (files / "bad.yaml").write_text("num_envs: [1,\n  rules: {deck: 32\n")
    (files / "list.yaml").write_text("- num_envs\n- 8\n")
    (files / "unknown.yaml").write_text("num_env: 8\n")
    (files / "overwrite.yaml").write_text("overwrite: true\n")
    (files / "userbots.py").write_text("import numpy as np\n\ndef illegal(observation):\n"
                                       "    return int(np.flatnonzero(observation['action_mask'] == 0)[0])\n\n"
                                       "def broken(observation):\n    return 1 / 0\n")
    (files / "results").mkdir()
    config = {"bots": ["heuristic", "random"], "round_robin": [], "hands": 10, "games": None, "seed": 0, "chunk": 500, "rules": {}}
    (files / "results" / "match.json").write_text(json.dumps({"config": config, "match": {}}))
    (files / "ppo_results").mkdir()
    ppo = {**config, "bots": [f"ppo:{EXPORT}", "random"], "weights_sha256": {f"ppo:{EXPORT}": OLD_DIGEST}}
    (files / "ppo_results" / "match.json").write_text(json.dumps({"config": ppo, "match": {}}))
    (base / "runs" / "taken").mkdir(parents=True)
    (base / "runs" / "taken" / "events.out.tfevents.1").write_text("an earlier run\n")
    (base / "runs" / "notes").mkdir()
    (base / "runs" / "notes" / "todo.txt").write_text("not a run\n")


def filled(text: str, base: Path) -> str:
    return text.replace("FILES", str(base / "files")).replace("RUNS", str(base / "runs"))


def run_table(script: str, rows: list, base: Path, extra: list[str]) -> list[dict]:
    """Each row's {"code", "output"}, from one driver process (run once for all the workers)."""
    from filelock import FileLock

    name = script.replace("/", "_")
    results = base / f"{name}.results.json"
    with FileLock(str(base / f"{name}.lock")):
        if not results.exists():
            argvs = [extra + [filled(a, base) for a in argv] for _, argv, _ in rows]
            table = base / f"{name}.json"
            table.write_text(json.dumps(argvs))
            done = subprocess.run(
                [sys.executable, "-c", DRIVER, str(ROOT / script), str(table), str(ROOT)],
                cwd=base, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT,
            )
            assert done.returncode == 0, done.stderr[-3000:]
            results.write_text(done.stdout.splitlines()[-1])
    return json.loads(results.read_text())


@pytest.fixture(scope="session")
def train_results(scratch) -> dict[str, dict]:
    # The tiny preset first (a row's own options come after it and win): a row that wrongly passed
    # the checks would train for seconds, not for the default 10M steps, and fail its assertions.
    extra = ["--config", str(ROOT / "configs" / "ppo_tiny.yaml"), "--runs-dir", str(scratch / "runs")]
    results = run_table("train.py", TRAIN_ROWS, scratch, extra)
    return {row[0]: result for row, result in zip(TRAIN_ROWS, results)}


@pytest.fixture(scope="session")
def evaluate_results(scratch) -> dict[str, dict]:
    results = run_table("evaluate.py", EVALUATE_ROWS, scratch, [])
    return {row[0]: result for row, result in zip(EVALUATE_ROWS, results)}


def assert_one_clear_line(script: str, result: dict, expected: str, base: Path) -> None:
    output = result["output"]
    assert "Traceback" not in output, output
    assert result["code"] == 2, output
    lines = output.strip("\n").split("\n")
    assert len(lines) == 1, output
    assert lines[0].startswith(f"{script}: error: "), output
    assert filled(expected, base) in lines[0], output


@pytest.mark.parametrize("row", TRAIN_ROWS, ids=[r[0] for r in TRAIN_ROWS])
def test_train_bad_input(row, train_results, scratch):
    assert_one_clear_line("train.py", train_results[row[0]], row[2], scratch)


@pytest.mark.parametrize("row", EVALUATE_ROWS, ids=[r[0] for r in EVALUATE_ROWS])
def test_evaluate_bad_input(row, evaluate_results, scratch):
    assert_one_clear_line("evaluate.py", evaluate_results[row[0]], row[2], scratch)


@pytest.mark.parametrize("row", SCRIPT_ROWS, ids=[f"{r[0].split('/')[-1]}-{r[1]}" for r in SCRIPT_ROWS])
def test_benchmark_bad_input(row, scratch):
    script, row_id, _, expected = row
    rows = [(r[1], r[2], r[3]) for r in SCRIPT_ROWS if r[0] == script]
    results = dict(zip((r[0] for r in rows), run_table(script, rows, scratch, [])))
    assert_one_clear_line(script, results[row_id], expected, scratch)


def test_bad_inputs_write_nothing(train_results, evaluate_results, scratch):
    assert sorted(p.name for p in (scratch / "runs").iterdir()) == ["notes", "taken"]
    assert [p.name for p in (scratch / "runs" / "notes").iterdir()] == ["todo.txt"]
    assert [p.name for p in (scratch / "runs" / "taken").iterdir()] == ["events.out.tfevents.1"]
    assert not (scratch / "results").exists() and not (scratch / "runs" / "ppo").exists()
    assert sorted(p.name for p in (scratch / "files" / "results").iterdir()) == ["match.json"]
    assert sorted(p.name for p in (scratch / "files" / "ppo_results").iterdir()) == ["match.json"]
    assert not (scratch / "files" / "illegal_out").exists() and not (scratch / "files" / "broken_out").exists()


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["train.py", "--num-envs", "0"], "train.py: error: --num-envs must be greater than 0, got 0"),
        (["evaluate.py", "ppo:FILES/garbage.pt", "random"], "evaluate.py: error: checkpoint 'FILES/garbage.pt' is not a torch"),
    ],
    ids=["train", "evaluate"],
)
def test_a_bad_input_in_a_process_of_its_own(argv, expected, scratch):
    done = subprocess.run(
        [sys.executable, str(ROOT / argv[0]), *[filled(a, scratch) for a in argv[1:]]],
        cwd=scratch, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT,
    )
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(filled(expected, scratch)), done.stderr


def test_making_an_agent_with_ray_but_without_the_ray_extra_writes_nothing(tmp_path):
    runs = tmp_path / "runs"
    code = ("import sys\nsys.modules['ray'] = None\nfrom euchre_lab.training.train import main\n"
            f"sys.exit(main(['--config', 'configs/recipe_smoke.yaml', '--ray', '--runs-dir', {str(runs)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and "--ray needs the [ray] extra (ray is not installed)" in done.stderr, done.stderr
    assert not runs.exists()


@pytest.mark.parametrize("sources, flags, says", [
    (["FILES/empty.pt"], [], "checkpoint "),
    (["checkpoints/euchre_ppo.pt", "checkpoints/ppo_selfplay.pt"], [],
     "checkpoint 'checkpoints/ppo_selfplay.pt' has other model_kwargs than 'checkpoints/euchre_ppo.pt'; average only fine-tunes"),
    (["checkpoints/euchre_ppo.pt", "checkpoints/euchre_ppo.pt"], ["--hidden-size", "600"],
     "--hidden-size widens one checkpoint; give one SRC, or drop it"),
    (["FILES/none.pt"], [], "no checkpoint at "),
    (["checkpoints/euchre_ppo.pt"], ["--hidden-size", "8"], "the network is 512 wide already; widen it to more than that, not 8"),
    ([], [], "the following arguments are required: DST"),
])
def test_the_export_tool_refuses_a_bad_input_in_one_line_and_writes_nothing(scratch, sources, flags, says):
    done = subprocess.run(
        [sys.executable, "-m", "euchre_lab.training.export_policy", *(filled(a, scratch) for a in sources), str(scratch / "out.pt"), *flags],
        cwd=ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"python -m euchre_lab.training.export_policy: error: {says}") and done.stderr.count("\n") == 1, done.stderr
    assert not (scratch / "out.pt").exists()


def test_resume_refuses_a_checkpoint_whose_training_state_is_damaged(scratch):
    from euchre_agents.checkpoint import CheckpointError, read_checkpoint, with_checksum

    policy = torch.load(EXPORT, weights_only=True)
    training = {"optimizer": {}, "pool": [], "pool_count": 1, "env_state": [], "games": {}, "rng": {}}
    damaged = with_checksum({**policy, **training})  # a checksum that verifies: only the training state is wrong
    torch.save(damaged, scratch / "damaged.pt")
    with pytest.raises(CheckpointError, match="is damaged: env_state is not what train.py writes"):
        read_checkpoint(str(scratch / "damaged.pt"), "resume")
    read_checkpoint(str(scratch / "damaged.pt"), "play")  # its policy still plays
