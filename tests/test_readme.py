"""Every ```python block of README.md runs as written, each in a fresh interpreter, so that a snippet
cannot rot. Only budget numbers are reduced (`BUDGETS`: training steps, hands, games, batch sizes and
loop counts above a small cap); everything else is the block as a reader copies it. A block that needs
a package the install does not provide fails here, loudly. Show code that is not meant to run in
another fence (```text, ```pycon).

Blocks run (torch on one thread) in a scratch folder that sees the repository's checkpoints/, configs/ and docs/, with the
repository on the import path, so a block that writes results/ or runs/ leaves the checkout alone.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
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
SHARED = ("checkpoints", "configs", "docs")


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


BLOCKS = python_blocks(README.read_text())


def test_the_readme_has_its_python_blocks():
    assert len(BLOCKS) >= 3
    assert any("euchre_v0.env(" in code for _, code in BLOCKS)


def test_budgets_change_only_numbers():
    sample = 'model.learn(20_000)\nvenv = EuchreVectorEnv(num_envs=4096)\nfor _ in range(100):\n    play(hands=8)\n'
    assert with_small_budgets(sample) == 'model.learn(256)\nvenv = EuchreVectorEnv(num_envs=64)\nfor _ in range(20):\n    play(hands=8)\n'
    for _, code in BLOCKS:
        assert re.sub(r"\d[\d_]*", "#", with_small_budgets(code)) == re.sub(r"\d[\d_]*", "#", code)


@pytest.mark.parametrize("code", [code for _, code in BLOCKS], ids=[name for name, _ in BLOCKS])
def test_readme_python_block_runs(code, tmp_path):
    for name in SHARED:
        (tmp_path / name).symlink_to(ROOT / name)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "MPLBACKEND": "Agg",
        "OMP_NUM_THREADS": "1",  # torch on one thread: on a busy 2-core machine it trains several times faster
    }
    done = subprocess.run(
        [sys.executable, "-c", with_small_budgets(code)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"README block failed:\n{code}\n--- stderr:\n{done.stderr[-4000:]}"
