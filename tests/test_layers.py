"""Packages import downward only: the engine package knows nothing of the bots, and the bots' modules
import each other without a cycle."""

from __future__ import annotations

import ast
import os

import numpy as np
import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")


def imports_of(path: str, top_level_only: bool) -> set[str]:
    """Modules a source file imports (at module level only, or anywhere)."""
    tree = ast.parse(open(path).read())
    nodes = tree.body if top_level_only else ast.walk(tree)
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


def package_modules(package: str) -> dict[str, str]:
    folder = os.path.join(ROOT, package)
    return {f"{package}.{name[:-3]}": os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".py")}


def test_the_engine_package_never_imports_the_bots():
    for module, path in package_modules("euchre_env").items():
        bad = {m for m in imports_of(path, top_level_only=False) if m == "euchre_agents" or m.startswith("euchre_agents.")}
        assert not bad, f"{module} imports {sorted(bad)}"


TOOLS = ("euchre_lab", "train", "evaluate", "play")


@pytest.mark.parametrize("package", ["euchre_env", "euchre_agents", "euchre_play"])
def test_the_engine_the_bots_and_the_table_never_import_the_tools(package):
    for module, path in package_modules(package).items():
        bad = {m for m in imports_of(path, top_level_only=False) if m.split(".")[0] in TOOLS}
        assert not bad, f"{module} imports {sorted(bad)}"


def test_the_bots_modules_import_each_other_without_a_cycle():
    modules = {m: p for m, p in package_modules("euchre_agents").items() if not m.endswith("__init__")}
    graph = {m: {i for i in imports_of(p, top_level_only=True) if i in modules} for m, p in modules.items()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, f"import cycle: {' -> '.join(path + (module,))}"
        if module in done:
            return
        for other in graph[module]:
            visit(other, path + (module,))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_the_single_agent_env_takes_a_policy_object():
    from euchre_env.single_agent import EuchreSingleEnv

    class FirstLegal:
        def act(self, obs, mask):
            return np.argmax(mask, axis=1)

    env = EuchreSingleEnv(partner=FirstLegal(), opponents=FirstLegal())
    obs, info = env.reset(seed=0)
    assert obs.shape == env.observation_space.shape and info["action_mask"].any()
    with pytest.raises(TypeError, match="act\\(obs, mask\\)"):
        EuchreSingleEnv(partner=42)


def test_a_bot_spec_without_a_registry_says_how_to_get_one(monkeypatch):
    from euchre_env import single_agent

    monkeypatch.setattr(single_agent, "_bot_registry", lambda: None)
    with pytest.raises(ValueError, match="entry-point group 'euchre_env.bots'"):
        single_agent.EuchreSingleEnv(partner="heuristic")
