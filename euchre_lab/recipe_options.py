"""The recipe's options (`train.py --stage recipe`, or a preset with `stage: recipe`): `Args`, read from
defaults < the run's recorded options (--resume) < the preset < the command line.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from euchre_lab.cli import OptionError, given_options, layered, option_parser, read_options
from euchre_lab.presets import read_preset

DESCRIPTION = "The recipe: the learned agent rebuilt by one command, as named stages in one run folder."
"""The recipe's --help headline."""
SCRIPT = "train.py"
RECIPE = "recipe"
DEFAULT_PRESET = "configs/recipe.yaml"
MANIFEST = "manifest.json"
AGENT = "agent.pt"
CARD = "MODEL_CARD.md"


@dataclass
class Args:
    """The recipe's options (train.py --stage recipe): each field is a flag, its docstring the flag's help."""

    config: str = DEFAULT_PRESET
    """YAML preset whose keys are these options (configs/recipe.yaml, configs/recipe_smoke.yaml)"""
    stage: str = RECIPE
    """recipe: every stage below in one run folder (train.py's other stages are ppo and distill)"""
    run_name: str = ""
    """run folder under runs_dir; empty: the preset's file name (recipe, recipe_smoke)"""
    runs_dir: str = "runs"
    """folder that holds the run folders"""
    resume: bool = False
    """continue runs/NAME with the options its manifest records (those given here override them); running the same command again continues too"""
    overwrite: bool = False
    """delete runs/NAME (a recipe's run folder) first and start over; command line only"""
    workers: int = 2
    """processes that label teacher shards and play matches (the results do not depend on it)"""
    ray: str | None = None
    """label shards and play matches as Ray tasks: `--ray` alone starts a local Ray (--workers CPUs), `--ray ADDRESS` joins a cluster (its nodes must see the same paths)"""
    device: str = "auto"
    """torch device of the distillation stages: auto, cpu, cuda, ..."""
    torch_threads: int = 2
    """CPU threads for torch in the distillation stages; 0 keeps torch's default"""
    progress: bool = True
    """show each stage's progress bar"""
    rules: dict = field(default_factory=dict)
    """table rules that differ from euchre_env.Rules' defaults, for every stage: key=value items or a YAML mapping"""
    network: dict = field(default_factory=dict)
    """the first round's network: hidden_size, num_layers, canonical_suits, action_values (later rounds start from the round before)"""
    rounds: list = field(default_factory=list)
    """the rounds, in order: {name, teacher: {shards, TeacherSettings fields}, distill: {train.py options}, data: this|all|[names], init: previous|NAME}; `{previous}` or `{NAME}` in a spec is that round's agent"""
    finetunes: list = field(default_factory=list)
    """PPO fine-tunes after the last round, in order, each kept near the agent it starts from: {name, ppo: {train.py options}, init: previous|NAME}; `{NAME}` in a later spec is its agent"""
    evaluation: dict = field(default_factory=dict)
    """the final matches: {opponents: {SPEC: hands}, seed: S, chunk: C}"""
    rates: dict = field(default_factory=dict)
    """rates for the ETAs until this run measures its own: teacher_LABEL and evaluate_SPEC in hands/s per worker, distill in samples/s"""


COMMAND_LINE_ONLY = ("overwrite", "resume")


class RecipeError(OptionError):
    """A recipe, or a run folder, the recipe cannot continue with (one line, exit status 2)."""


# ---------------------------------------------------------------- options


def run_folder(args: Args) -> Path:
    """runs_dir/run_name."""
    return Path(args.runs_dir) / args.run_name


def parse_args(argv: Sequence[str] | None) -> Args:
    """Args from defaults < the run's recorded options (--resume) < the preset < the command line."""
    parser = option_parser(Args, SCRIPT, DESCRIPTION, special={"ray": dict(nargs="?", const="local", metavar="ADDRESS")})
    cli = given_options(parser, Args, argv)
    values = dataclasses.asdict(Args())
    if cli.get("resume"):
        name = cli.get("run_name") or Path(cli.get("config", DEFAULT_PRESET)).stem
        manifest = Path(cli.get("runs_dir", values["runs_dir"])) / name / MANIFEST
        if not manifest.is_file():
            raise RecipeError(f"--resume: {manifest} does not exist; start the run without --resume")
        values = layered(values, json.loads(manifest.read_text())["options"], {"run_name": name})
    if not cli.get("resume") or "config" in cli:
        values = layered(values, read_options(cli.get("config", values["config"]), Args, DEFAULT_PRESET,
                                              command_line_only=COMMAND_LINE_ONLY))
    args = Args(**layered(values, cli))
    if not args.run_name:
        args = dataclasses.replace(args, run_name=Path(args.config).stem)
    return args


def wants_recipe(argv: Sequence[str] | None) -> bool:
    """Whether a train.py command line asks for the recipe: `--stage recipe`, or a --config preset with `stage: recipe`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    found: dict[str, str] = {}
    for i, token in enumerate(argv):
        for name in ("--stage", "--config"):
            if token == name and i + 1 < len(argv):
                found[name] = argv[i + 1]
            elif token.startswith(name + "="):
                found[name] = token.partition("=")[2]
    if "--stage" in found:
        return found["--stage"] == RECIPE
    if "--config" not in found:
        return False
    try:
        return read_preset(found["--config"], DEFAULT_PRESET).get("stage") == RECIPE
    except ValueError:  # train.py reports the bad preset itself
        return False
