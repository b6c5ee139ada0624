"""Packages import downward only (engine < env < agents < lab and table), with no cycle, and importing
a layer loads nothing it does not need."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import SUBPROCESS_TIMEOUT

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


PACKAGES = ("euchre_env", "euchre_agents", "euchre_lab", "euchre_play")
ENGINE_MODULES = {
    f"euchre_env.{name}"
    for name in ("cards", "deal_keys", "engine", "infoset", "kernels", "observation", "record", "rows", "rules", "state", "tables")
}
"""The rules engine inside `euchre_env`; the rest of the package (the envs and their wrappers) sits above it."""
PACKAGE_LAYER = {"euchre_env": 1, "euchre_agents": 2, "euchre_lab": 3, "euchre_play": 3}


def layer(module: str) -> int:
    """0 engine, 1 env, 2 agents, 3 lab and table: a module imports only from its own layer or below."""
    return 0 if module in ENGINE_MODULES else PACKAGE_LAYER[module.split(".")[0]]


def project_modules() -> dict[str, str]:
    """Every module of the four packages (a package's `__init__` under the package's name) -> its path."""
    out = {}
    for package in PACKAGES:
        for module, path in package_modules(package).items():
            out[module.removesuffix(".__init__")] = path
    return out


def import_graph(modules: dict[str, str]) -> dict[str, set[str]]:
    """module -> the project modules it imports anywhere in its source (function-level imports included).

    `from P import name` counts as importing `P.name` when that is a module, else `P`; imports of
    anything outside the packages (numpy, and torch, ray, fastapi, uvicorn, rich imported on use) are not edges.
    """
    graph = {}
    for module, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0, f"{module} imports relatively; the packages import by absolute name"
                for alias in node.names:
                    name = f"{node.module}.{alias.name}"
                    targets.add(name if name in modules else node.module)
        graph[module] = {t for t in targets if t in modules and t != module}
    return graph


def upward_edges(graph: dict[str, set[str]]) -> list[str]:
    """The imports that reach a higher layer than the importer's."""
    return sorted(f"{m} -> {t}" for m, targets in graph.items() for t in targets if layer(t) > layer(m))


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph` as a path that returns to its start, or None."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module) :] + [module]
        if module in done:
            return None
        for other in sorted(graph.get(module, ())):
            if cycle := visit(other, path + [module]):
                return cycle
        done.add(module)
        return None

    for module in sorted(graph):
        if cycle := visit(module, []):
            return cycle
    return None


def test_the_packages_import_downward_without_a_cycle():
    graph = import_graph(project_modules())
    assert graph["euchre_agents.builtin"] >= {"euchre_agents.pimc", "euchre_agents.ppo"}  # function-level ones counted
    assert not upward_edges(graph), upward_edges(graph)
    cycle = find_cycle(graph)
    assert cycle is None, f"import cycle: {' -> '.join(cycle)}"


def test_the_layer_check_catches_an_upward_import_and_a_cycle():
    graph = import_graph(project_modules())
    upward = {**graph, "euchre_agents.base": graph["euchre_agents.base"] | {"euchre_lab.training.train"}}
    assert upward_edges(upward) == ["euchre_agents.base -> euchre_lab.training.train"]
    circular = {**graph, "euchre_agents.belief": graph["euchre_agents.belief"] | {"euchre_agents.registry"}}
    cycle = find_cycle(circular)
    assert cycle is not None and cycle[0] == cycle[-1]
    assert {"euchre_agents.belief", "euchre_agents.registry", "euchre_agents.pimc"} <= set(cycle)


@pytest.mark.parametrize(
    "module, absent",
    [
        ("euchre_env", ("torch", "euchre_agents._dds", "euchre_agents")),
        ("euchre_agents.base", ("torch", "euchre_agents._dds", "euchre_agents.pimc", "euchre_agents.solver")),
    ],
)
def test_importing_a_layer_loads_nothing_heavier(module, absent):
    code = f"import sys, {module}; print(sorted(m for m in {absent!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"import {module} loads {done.stdout.strip()}"


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
