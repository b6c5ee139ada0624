"""Every ```python block of README.md and docs/*.md runs as written, each in a fresh interpreter, so that a
snippet cannot rot; every shell command they show is parsed by the tool it calls, so that a renamed flag
or a moved file fails here.

Python blocks: only budget numbers are reduced (`BUDGETS`: training steps, hands, games, batch sizes and
loop counts above a small cap); everything else is the block as a reader copies it. A block that needs
a package the install does not provide fails here, loudly. Show code that is not meant to run in
another fence (```text, ```pycon). Blocks run (torch on one thread) in a scratch folder that sees the
repository's checkpoints/, configs/, docs/ and experiments/, with the repository on the import path, so a
block that writes results/ or runs/ leaves the checkout alone.

Shell commands (each line of a ```bash block, and each `python ...` or `euchre-...` inline code span):
the project's tools run with argparse stopped right after it parsed the command line (`PARSED`), so
nothing is trained or played; `make TARGET` runs as `make -n TARGET`. Every path into configs/,
checkpoints/, experiments/ or docs/ that a command names must exist.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SUBPROCESS_TIMEOUT

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
NUMBER = r"(?P<n>\d[\d_]*)"
BUDGETS = [
    (rf"\.learn\({NUMBER}", 256),  # Stable-Baselines3 training steps
    (rf"\btotal_timesteps\s*=\s*{NUMBER}", 1024),
    (rf"\bhands\s*=\s*{NUMBER}", 20),
    (rf"\bgames\s*=\s*{NUMBER}", 4),
    (rf"\bnum_envs\s*=\s*{NUMBER}", 64),
    (rf"\brange\({NUMBER}\)", 20),
]
"""(pattern whose group `n` is a budget number, the largest value the test lets it keep)."""
SHARED = ("checkpoints", "configs", "docs", "experiments")


def python_blocks(text: str) -> list[tuple[str, str]]:
    """(id, code) of each ```python block, the id naming the section it sits in."""
    blocks, section, count = [], "top", {}
    fences = r"^(#+ [^\n]*)$|^```(\w*)[^\n]*\n(.*?)^```[ \t]*$"  # a heading, or any fenced block
    for match in re.finditer(fences, text, re.MULTILINE | re.DOTALL):
        if match.group(1):
            section = re.sub(r"[^a-z0-9]+", "_", match.group(1).lstrip("# ").lower()).strip("_")
        elif match.group(2) == "python":
            count[section] = count.get(section, 0) + 1
            blocks.append((f"{section}_{count[section]}", match.group(3)))
    return blocks


def with_small_budgets(code: str) -> str:
    """The block with each budget number above its cap replaced by the cap."""
    for pattern, cap in BUDGETS:

        def cut(m: re.Match) -> str:
            value = int(m.group("n").replace("_", ""))
            start, end = m.span("n")
            return m.group(0)[: start - m.start()] + str(min(value, cap)) + m.group(0)[end - m.start() :]

        code = re.sub(pattern, cut, code)
    return code


def doc_name(path: Path) -> str:
    return path.stem.lower()


BLOCKS = [(f"{doc_name(doc)}_{name}", code) for doc in DOCS for name, code in python_blocks(doc.read_text())]


def test_the_readme_and_every_docs_page_have_their_python_blocks():
    readme = python_blocks(README.read_text())
    assert len(readme) >= 2
    assert any("euchre_v0.env(" in code for _, code in readme)
    assert {"architecture", "rules", "bots", "evaluation", "environment"} <= {n.split("_")[0] for n, _ in BLOCKS}


def test_budgets_change_only_numbers():
    sample = 'model.learn(20_000)\nvenv = EuchreVectorEnv(num_envs=4096)\nfor _ in range(100):\n    play(hands=8)\n'
    assert with_small_budgets(sample) == 'model.learn(256)\nvenv = EuchreVectorEnv(num_envs=64)\nfor _ in range(20):\n    play(hands=8)\n'
    for _, code in BLOCKS:
        assert re.sub(r"\d[\d_]*", "#", with_small_budgets(code)) == re.sub(r"\d[\d_]*", "#", code)


@pytest.mark.parametrize("code", [code for _, code in BLOCKS], ids=[name for name, _ in BLOCKS])
def test_every_python_block_in_the_docs_runs(code, tmp_path):
    for name in SHARED:
        (tmp_path / name).symlink_to(ROOT / name)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",  # torch on one thread: on a busy 2-core machine it trains several times faster
    }
    done = subprocess.run(
        [sys.executable, "-c", with_small_budgets(code)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT
    )
    assert done.returncode == 0, f"docs block failed:\n{code}\n--- stderr:\n{done.stderr[-4000:]}"


# ---------------------------------------------------------------- shell commands

TOOLS = {"train.py", "evaluate.py", "play.py"}
ENTRY_POINTS = {"euchre-train": "euchre_lab.training.train", "euchre-evaluate": "euchre_lab.evaluation.evaluate", "euchre-play": "euchre_lab.play"}
NOT_OURS = ("pip", "tensorboard", "source", "ray", "cd", "export", "git")
"""Commands of other programs, shown for the reader and not checked here."""
REPO_PATH = r"(?<![\w./-])(?:configs|checkpoints|experiments|docs)/[\w.*/=-]*[\w*]"


def shell_commands(text: str) -> list[str]:
    """Each command of the ```bash blocks (continuation lines joined) and each inline `python ...` /
    `euchre-...` code span."""
    commands = []
    for block in re.findall(r"^```bash[^\n]*\n(.*?)^```", text, re.MULTILINE | re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(line.strip())
    for span in re.findall(r"(?<!`)`((?:python|euchre-)[^`]+)`(?!`)", text):
        if not span.startswith(("python3", "python -c")) and " " in span and " [" not in span:  # not a synopsis
            commands.append(span.strip())
    return commands


def command_argv(command: str) -> list[str]:
    """The words of `command` without comments, leading VAR=value settings, `time`, `nice` or a trailing `&`."""
    words = shlex.split(command, comments=True)
    while words and (re.match(r"^[A-Z_]+=", words[0]) or words[0] in ("time", "nice")):
        words = words[1:]
    return [w for w in words if w != "&"]


COMMANDS = sorted({(doc_name(doc), command) for doc in DOCS for command in shell_commands(doc.read_text())})

PARSE_ONLY = """
import argparse, os, runpy, sys, importlib
original = argparse.ArgumentParser.parse_args
def parse_and_stop(self, args=None, namespace=None):
    original(self, args, namespace)
    print("PARSED", flush=True)
    os._exit(0)
argparse.ArgumentParser.parse_args = parse_and_stop
kind, target, *argv = sys.argv[1:]
sys.argv = [target, *argv]
if kind == "script":
    sys.path.insert(0, os.path.dirname(target))  # as `python SCRIPT` puts the script's folder first
    runpy.run_path(target, run_name="__main__")
else:
    module = importlib.import_module(target)
    if hasattr(module, "main"):
        sys.exit(module.main())
    runpy.run_module(target, run_name="__main__", alter_sys=True)
print("NOT PARSED: the command never reached argparse", flush=True)
sys.exit(3)
"""


def parse_only(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run a tool's command line up to its parsed options (see PARSE_ONLY)."""
    if argv[0] in ENTRY_POINTS:
        target = ["module", ENTRY_POINTS[argv[0]], *argv[1:]]
    elif argv[0] == "python" and argv[1] == "-m":
        target = ["module", *argv[2:]]
    elif argv[0] == "python":
        target = ["script", str(ROOT / argv[1]), *argv[2:]]
    else:
        raise AssertionError(f"not a command of this project: {argv}")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", PARSE_ONLY, *target], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=SUBPROCESS_TIMEOUT)


def test_the_docs_show_shell_commands_of_every_tool():
    shown = {command_argv(c)[1] if command_argv(c)[0] == "python" else command_argv(c)[0] for _, c in COMMANDS}
    assert TOOLS <= shown and "euchre-play" in shown and "-m" in shown


def test_command_words_drop_only_what_the_shell_would():
    assert command_argv("NUMBA_CACHE_DIR=/tmp/x time python train.py --seed 1   # a comment") == ["python", "train.py", "--seed", "1"]
    assert shell_commands("```bash\npython a.py \\\n  --x 1\n# note\n```\nand `python b.py --y` here") == ["python a.py    --x 1", "python b.py --y"]


@pytest.mark.parametrize("doc, command", COMMANDS, ids=[f"{d}: {c[:70]}" for d, c in COMMANDS])
def test_every_shell_command_in_the_docs_parses(doc, command, tmp_path):
    argv = command_argv(command)
    for path in re.findall(REPO_PATH, command):
        if "*" not in path and not path.startswith(("docs/play_web.png",)):
            assert (ROOT / path).exists(), f"{command!r} names {path}, which is not in the checkout"
    if not argv or argv[0] in NOT_OURS or "pytest" in argv or "bash" in argv:
        return
    if argv[0] == "make":
        done = subprocess.run(["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
        assert done.returncode == 0, done.stderr
        return
    for name in SHARED:
        (tmp_path / name).symlink_to(ROOT / name)
    done = parse_only(argv, tmp_path)
    parsed = "PARSED" in done.stdout or ("--help" in argv and done.stdout.startswith("usage:"))
    assert done.returncode == 0 and parsed, f"{command}\n--- stdout:\n{done.stdout[-2000:]}\n--- stderr:\n{done.stderr[-3000:]}"
