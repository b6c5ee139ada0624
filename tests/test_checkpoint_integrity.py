"""Checkpoints carry a checksum of their contents that reading verifies, a damaged file is one clear
line naming the newest numbered checkpoint that still verifies, and the temp files an atomic write
leaves after `kill -9` are cleared when a tool starts again. (train.py's own resume from a damaged
run is in test_train.py, which holds the tiny run.)"""

from __future__ import annotations

import io
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import SUBPROCESS_TIMEOUT
from euchre_agents.atomic import TEMP_FILES, write_atomic
from euchre_agents.base import file_sha256
from euchre_agents.checkpoint import CHECKSUM, CheckpointError, contents_sha256, read_checkpoint, with_checksum
from euchre_agents.ppo import PPOAgent
from euchre_env import Engine
from euchre_lab.cli import remove_stale_temp_files

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "checkpoints" / "ppo_selfplay.pt"
"""A shipped checkpoint written before checksums (its bytes are never changed here)."""


def training_like() -> dict:
    """A dict shaped like a training checkpoint: weights, optimizer state, games, random states, config."""
    return {
        "model": {"trunk.0.weight": torch.arange(12, dtype=torch.float32).reshape(3, 4), "trunk.0.bias": torch.zeros(3)},
        "optimizer": {"state": {0: {"step": torch.tensor(3.0), "exp_avg": torch.ones(3, 4)}},
                      "param_groups": [{"lr": 1e-3, "eps": 1e-5, "params": [0, 1]}]},
        "games": {"phase": torch.tensor([0, 1, 2], dtype=torch.int8), "key": torch.tensor([2**62, -5])},
        "rng": {"python": (3, (1, 2, 3), None), "numpy": {"state": {"state": 2**100 + 7, "inc": 9}}},
        "config": {"seed": 1, "rules": {"deck": 24}, "opponent_mix": "self=1"},
        "update": 3,
    }


def mutations() -> dict:
    """One small change to each part of `training_like()`."""
    def change(edit):
        checkpoint = training_like()
        edit(checkpoint)
        return checkpoint

    return {
        "one weight": change(lambda c: c["model"]["trunk.0.weight"].view(-1)[5].add_(1e-6)),
        "a weight's shape": change(lambda c: c["model"].update({"trunk.0.weight": c["model"]["trunk.0.weight"].reshape(4, 3)})),
        "a weight's dtype, same bytes": change(lambda c: c["model"].update({"trunk.0.bias": torch.zeros(3, dtype=torch.int32)})),
        "optimizer moment": change(lambda c: c["optimizer"]["state"][0]["exp_avg"].view(-1)[11].mul_(2)),
        "optimizer step count": change(lambda c: c["optimizer"]["state"][0]["step"].add_(1)),
        "learning rate": change(lambda c: c["optimizer"]["param_groups"][0].update(lr=1.0001e-3)),
        "a game's phase": change(lambda c: c["games"]["phase"].__setitem__(2, 3)),
        "python random state": change(lambda c: c["rng"].update(python=(3, (1, 2, 4), None))),
        "numpy random state": change(lambda c: c["rng"]["numpy"]["state"].update(inc=8)),
        "a config string": change(lambda c: c["config"].update(opponent_mix="self=2")),
        "a string for a number": change(lambda c: c["config"].update(seed="1")),
        "a list for a tuple": change(lambda c: c["rng"].update(python=[3, (1, 2, 3), None])),
        "an extra entry": change(lambda c: c.update(extra=None)),
    }


@pytest.mark.parametrize("name", list(mutations()))
def test_the_checksum_changes_with_any_change_to_the_contents(name):
    assert contents_sha256(mutations()[name]) != contents_sha256(training_like())


def test_the_checksum_survives_a_save_and_load_and_ignores_the_order_of_keys():
    sealed = with_checksum(training_like())
    buffer = io.BytesIO()
    torch.save(sealed, buffer)
    loaded = torch.load(io.BytesIO(buffer.getvalue()), weights_only=True)
    assert loaded[CHECKSUM] == sealed[CHECKSUM] == contents_sha256(loaded)
    assert contents_sha256(dict(reversed(list(training_like().items())))) == sealed[CHECKSUM]
    assert with_checksum(sealed)[CHECKSUM] == sealed[CHECKSUM]  # the entry itself is not part of the sum


def test_a_checkpoint_without_a_checksum_still_plays_and_the_bot_records_the_file_s_hash():
    before = file_sha256(SMALL)
    checkpoint = read_checkpoint(str(SMALL))
    assert CHECKSUM not in checkpoint
    agent = PPOAgent.from_checkpoint(Engine(), str(SMALL))
    assert agent.weights_sha256 == before == file_sha256(SMALL)


@pytest.fixture
def sealed_small(tmp_path) -> tuple[Path, str]:
    """SMALL rewritten with its checksum, as train.py writes checkpoints now; its path and checksum."""
    sealed = with_checksum(read_checkpoint(str(SMALL)))
    path = tmp_path / "sealed.pt"
    torch.save(sealed, path)
    return path, sealed[CHECKSUM]


def test_every_damaged_copy_is_one_line_or_reads_unchanged(sealed_small, tmp_path):
    """Flipped bytes in the zip's index, its pickle or its tensor records, and truncations: each copy is
    refused as one CheckpointError line, or (a flip in padding torch never reads) reads back unchanged."""
    path, digest = sealed_small
    data = path.read_bytes()
    rng = random.Random(0)
    refused = unchanged = 0
    for trial in range(150):
        damaged = bytearray(data)
        where = trial % 3
        if where == 0:
            damaged = damaged[: rng.randrange(len(data))]
        else:
            start = rng.randrange(len(data) - 16) if where == 1 else rng.randrange(max(1, len(data) // 200))
            for k in range(start, start + rng.choice([1, 16])):
                damaged[k] ^= 0xFF
        copy = tmp_path / "damaged.pt"
        copy.write_bytes(bytes(damaged))
        for purpose in ("play", "resume"):
            try:
                checkpoint = read_checkpoint(str(copy), purpose)
            except CheckpointError as e:
                assert "\n" not in str(e) and f"checkpoint {str(copy)!r}" in str(e), str(e)
                refused += 1
            else:
                assert purpose == "play" and contents_sha256(checkpoint) == digest
                unchanged += 1
    assert refused > 100


def test_flipped_weights_load_in_torch_but_the_checksum_refuses_them(sealed_small):
    path, _ = sealed_small
    flip_tensor_bytes(path)
    torch.load(path, weights_only=True)  # torch itself does not notice
    with pytest.raises(CheckpointError) as refused:
        read_checkpoint(str(path))
    message = str(refused.value)
    assert "is damaged: its contents do not match the sha256 it was written with; copy or export it again" in message
    assert "\n" not in message
    with pytest.raises(CheckpointError, match="no numbered checkpoint beside it verifies either: start the run again"):
        read_checkpoint(str(path), "resume")


def flip_tensor_bytes(path: Path, count: int = 16) -> None:
    """Flip `count` bytes in the middle of the largest tensor record of a torch zip, in place."""
    import struct
    import zipfile

    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        record = max((i for i in archive.infolist() if "/data/" in i.filename), key=lambda i: i.file_size)
    name_length, extra_length = struct.unpack("<HH", data[record.header_offset + 26 : record.header_offset + 30])
    start = record.header_offset + 30 + name_length + extra_length + record.file_size // 2
    for k in range(start, start + count):
        data[k] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_checkpoint_names_the_newest_numbered_one_beside_it_that_verifies(sealed_small, tmp_path):
    path, _ = sealed_small
    run = tmp_path / "checkpoints"
    run.mkdir()
    for name in ("update_000009.pt", "update_000010.pt", "update_000011.pt", "latest.pt"):
        shutil.copy(path, run / name)
    for name in ("update_000011.pt", "latest.pt"):
        flip_tensor_bytes(run / name)
    (run / "update_000012.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError) as refused:
        read_checkpoint(str(run / "latest.pt"), "resume")
    assert str(refused.value).endswith(
        f"resume from the newest numbered checkpoint beside it that verifies: --resume {run / 'update_000010.pt'}"
    )
    with pytest.raises(CheckpointError, match=f"or play {run / 'update_000010.pt'}, the newest"):
        read_checkpoint(str(run / "update_000011.pt"))
    read_checkpoint(str(run / "update_000010.pt"), "play")


# ---------------------------------------------------------------- temp files


def test_write_atomic_replaces_a_file_whole_or_not_at_all(tmp_path):
    path = tmp_path / "deep" / "file.bin"
    write_atomic(path, lambda f: f.write(b"first"))
    assert path.read_bytes() == b"first"

    def half_then_fail(f):
        f.write(b"half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_atomic(path, half_then_fail)
    assert path.read_bytes() == b"first"
    assert [p.name for p in path.parent.iterdir()] == ["file.bin"]  # no temp file left behind


def test_a_policy_saved_to_a_path_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from euchre_agents import checkpoint as checkpoint_file

    path = tmp_path / "agent.pt"
    policy = checkpoint_file.play_policy(str(SMALL))
    checkpoint_file.save_policy(policy, str(path))
    saved = path.read_bytes()

    def half_then_fail(obj, f):
        f.write(saved[: len(saved) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_file.torch, "save", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        checkpoint_file.save_policy(policy, str(path))
    assert path.read_bytes() == saved and [p.name for p in tmp_path.iterdir()] == ["agent.pt"]


KILLED_WRITE = ("import os, signal, sys\nfrom pathlib import Path\nfrom euchre_agents.atomic import write_atomic\n"
                "write_atomic(Path(sys.argv[1]), lambda f: (f.write(b'half'), f.flush(), os.kill(os.getpid(), signal.SIGKILL)))")
"""An atomic write killed (SIGKILL) half way."""


def test_the_temp_file_of_a_killed_write_is_removed_at_the_next_start(tmp_path, capsys):
    target = tmp_path / "checkpoints" / "latest.pt"
    target.parent.mkdir()
    target.write_bytes(b"the last complete checkpoint")
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(target)], cwd=ROOT, capture_output=True, timeout=SUBPROCESS_TIMEOUT)
    assert killed.returncode == -9, killed.stderr
    left = list(target.parent.glob(TEMP_FILES))
    assert len(left) == 1 and left[0].read_bytes() == b"half"
    (target.parent / "notes.txt").write_text("kept")
    assert remove_stale_temp_files(target.parent, "train.py") == 1
    assert sorted(p.name for p in target.parent.iterdir()) == ["latest.pt", "notes.txt"]
    assert target.read_bytes() == b"the last complete checkpoint"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "removed 1 stale .tmp file that an interrupted write left in" in err
    assert remove_stale_temp_files(target.parent, "train.py") == 0 and capsys.readouterr().err == ""


def test_only_a_recursive_clean_reaches_into_subfolders(tmp_path, capsys):
    (tmp_path / "agents").mkdir()
    for path in (tmp_path / ".manifest.json.x1.tmp", tmp_path / "agents" / ".r1.pt.77.tmp"):
        path.write_bytes(b"half")
    assert remove_stale_temp_files(tmp_path, "train.py") == 1
    assert (tmp_path / "agents" / ".r1.pt.77.tmp").exists()
    assert remove_stale_temp_files(tmp_path, "train.py", recursive=True) == 1
    assert remove_stale_temp_files(tmp_path / "none", "train.py") == 0


def test_making_an_agent_clears_stale_temp_files_in_its_run_folder_when_it_starts(tmp_path, monkeypatch, capsys):
    from euchre_lab.making import driver

    monkeypatch.setattr(driver, "plan", lambda run: [])
    monkeypatch.setattr(driver.card, "write_card", lambda run, final, planned, path: None)
    monkeypatch.chdir(ROOT)
    argv = ["--config", "configs/recipe_smoke.yaml", "--runs-dir", str(tmp_path)]
    assert driver.main(argv) == 0  # no parts to do: a run folder with its journal
    folder = tmp_path / "recipe_smoke"
    (folder / "data" / "iter_001").mkdir(parents=True)
    stale = [folder / ".journal.json.abc.tmp", folder / "data" / "iter_001" / ".shard_00000.npz.123.tmp"]
    for path in stale:
        path.write_bytes(b"half")
    capsys.readouterr()
    assert driver.main(argv) == 0
    assert not any(path.exists() for path in stale) and (folder / "journal.json").is_file()
    assert "removed 2 stale .tmp files that an interrupted write left in" in capsys.readouterr().err