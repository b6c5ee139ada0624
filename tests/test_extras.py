"""A command that needs an extra the install lacks says so in one line, naming the exact `pip install`, and
exits with status 2 (no traceback); the core (`pip install .`) never needs torch to import a tool."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SUBPROCESS_TIMEOUT
from euchre_env.extras import EXTRAS, MissingExtraError, install_command, require

ROOT = Path(__file__).resolve().parents[1]
OPTIONAL = ("torch", "tensorboard", "ray", "fastapi", "uvicorn", "rich")


def without_extras(call: str) -> subprocess.CompletedProcess:
    """Run `call` (an expression giving an exit status) in a fresh interpreter where no optional module imports."""
    code = f"import sys\nfor name in {OPTIONAL!r}: sys.modules[name] = None\n{call}"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)


@pytest.mark.parametrize(
    "call, extra",
    [
        ("from euchre_lab.training.train import main; sys.exit(main(['--help']))", "train"),
        ("from euchre_lab.evaluation.evaluate import main; sys.exit(main(['ppo', 'random', '--hands', '2']))", "train"),
        ("from euchre_lab.evaluation.evaluate import main; sys.exit(main(['search', 'random', '--hands', '2']))", "train"),
        ("from euchre_lab.evaluation.evaluate import main; sys.exit(main(['heuristic', 'random', '--hands', '2', '--ray']))", "ray"),
        ("from euchre_lab.training.teacher import main; sys.exit(main(['unwritten', '--shards', '1']))", "train"),
        ("from euchre_lab.play import main; sys.exit(main([]))", "play"),
        ("from euchre_lab.play import main; sys.exit(main(['--web']))", "play"),
        ("import runpy; sys.argv = ['rllib_train.py', '--help']; runpy.run_path('examples/rllib_train.py', run_name='__main__')", "ray"),
    ],
)
def test_a_missing_extra_gets_one_line_naming_its_install_and_exit_2(call, extra, tmp_path):
    done = without_extras(call.replace("'unwritten'", repr(str(tmp_path / "teacher"))))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert done.stderr.strip().endswith(f"needs the [{extra}] extra ({'fastapi' if '--web' in call else EXTRAS[extra][0]} "
                                        f"is not installed): pip install 'euchre-lab[{extra}]'"), done.stderr
    assert not (tmp_path / "teacher").exists()


def test_the_core_tools_import_and_play_without_any_extra(tmp_path):
    out = tmp_path / "match"
    done = without_extras(
        "import euchre_lab.training.train, euchre_lab.evaluation.evaluate, euchre_lab.play, euchre_lab.training.teacher\n"
        "from euchre_lab.evaluation.evaluate import main\n"
        f"sys.exit(main(['heuristic', 'random', '--hands', '4', '--workers', '1', '--no-progress', '--out', {str(out)!r}]))"
    )
    assert done.returncode == 0, done.stderr
    assert (out / "pairs.csv").exists()


def test_require_names_the_module_and_the_install_command():
    with pytest.raises(MissingExtraError, match=r"^the thing needs the \[train\] extra \(no_such_module_x is not installed\): "
                                                r"pip install 'euchre-lab\[train\]'$") as raised:
        require("train", "no_such_module_x", what="the thing")
    assert isinstance(raised.value, ValueError) and raised.value.name == "no_such_module_x"
    require("train", "json", what="the thing")  # an importable module passes
    assert install_command("play") == "pip install 'euchre-lab[play]'"
    with pytest.raises(KeyError, match="no extra 'plots'"):
        require("plots", what="x")


def requirement_names(extras: dict[str, list[str]], extra: str) -> set[str]:
    """The distributions an extra installs, its references to other extras of euchre-lab expanded."""
    names = set()
    for item in extras[extra]:
        name, _, rest = item.partition("[")
        name = name.split(">")[0].split("=")[0].split("<")[0].strip()
        if name == "euchre-lab":
            for inner in rest.rstrip("]").split(","):
                names |= requirement_names(extras, inner.strip())
        else:
            names.add(name)
    return names


def test_each_extra_installs_the_modules_the_helper_checks():
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert set(modules) <= requirement_names(extras, extra), extra
    assert {"torch", "tensorboard", "rich", "fastapi", "uvicorn", "ray"} <= requirement_names(extras, "dev")
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not any(name.startswith(("torch", "tensorboard", "ray", "rich", "fastapi")) for name in core)
