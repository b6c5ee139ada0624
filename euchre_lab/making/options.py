"""The options of `train.py --stage make`: the preset (the table, the iterations, the budget per iteration, the
bootstrap, the seed, the network, the match sizes) and the run-level flags, read from defaults < the run's
journal (when it continues) < the preset < the command line."""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from euchre_lab.cli import OptionError, given_options, layered, option_parser, read_options
from euchre_lab.presets import read_preset

SCRIPT = "train.py"
MAKE = "make"
DEFAULT_PRESET = "configs/recipe.yaml"
JOURNAL = "journal.json"
AGENT = "agent.pt"
START = "start.pt"
"""The first agent of a run that starts from another table's (`start: TABLE`), which its final matches play."""
CARD = "MODEL_CARD.md"
DESCRIPTION = "Make an agent for a table: a first agent, then iterations of labels of its play and distillation."
BOOTSTRAP = "bootstrap"


@dataclass
class Args:
    """The method's options (train.py --stage make): each field is a flag, its docstring the flag's help."""

    config: str = DEFAULT_PRESET
    """YAML preset whose keys are these options (configs/recipe.yaml; configs/recipe_TABLE.yaml per named table)"""
    stage: str = MAKE
    """make: a bootstrap, the iterations, the final matches and the model card in one run folder"""
    run_name: str = ""
    """run folder under runs_dir; empty: the preset's file name"""
    runs_dir: str = "runs"
    """folder that holds the run folders"""
    overwrite: bool = False
    """delete runs/NAME (a run of this method) first and start over; command line only"""
    workers: int = 2
    """processes that label hands and play matches (the results do not depend on it)"""
    ray: str | None = None
    """label and play matches as Ray tasks: `--ray` alone starts a local Ray (--workers CPUs), `--ray ADDRESS` joins a cluster (its nodes must see the same paths)"""
    torch_threads: int = 2
    """CPU threads for torch while distilling; 0 keeps torch's default"""
    progress: bool = True
    """show progress bars"""
    rules: dict = field(default_factory=dict)
    """the table: rules that differ from euchre_env.Rules' defaults (key=value items or a YAML mapping)"""
    iterations: int = 10
    """iterations after the bootstrap, each of the same budget; raising it later continues a finished run"""
    hands: int = 192_000
    """each iteration's budget: hands played by the current agent and labelled"""
    labels: str = "rollout"
    """how an iteration values bids, alone calls and discards: `rollout` (the current agent's play-outs of the hand) or
    `true` (double-dummy, as the bootstrap; cheaper, but it credits a bid with card play no seat can make), cards
    double-dummy either way; or `rollout_all`: every decision, cards too, by the agent's play-outs (about 1.5 times
    the labelling time of `rollout`)"""
    rollout_all_from: int = 7
    """the first iteration whose labels are `rollout_all` whatever `labels` says (0: none): double-dummy card labels
    are cheap and as good as play-outs while the agent is weak, play-outs better once those level off"""
    rollout_hands: int = 64_000
    """hands of each iteration from `rollout_all_from` on (0: `hands`): play-out labels still gain from more hands
    where more iterations of `hands` have levelled off"""
    rollout_network: dict = field(default_factory=dict)
    """hidden_size and num_layers of a smaller network that plays the play-outs of the iterations from
    `rollout_all_from` on (2 or more), distilled afresh at the start of each from the labels of the one before;
    {}: the agent plays its own play-outs (256 x 2 costs about half the agent's labelling time)"""
    bid_share: float = 1 / 3
    """share of each double-dummy iteration's hands (those before `rollout_all_from`) whose bids, alone calls and
    discards are labelled; the rest label their cards only, which costs about a third as much (a bid's play-outs play
    the whole hand for each legal bid). The play-out iterations label every hand's bids"""
    replay: int = 2
    """iterations of labelled data each distillation draws from: its own and the ones before it. The distillation's
    size stays one pass over two iterations' data however many the replay holds (a larger replay is fewer passes
    over more hands); a run moved without its data folders refills them by the current agent"""
    finetune_steps: int = 4_500_000
    """after the last iteration, steps of PPO self-play that fine-tune its agent, kept near it by a KL penalty (the
    settings of configs/finetune.yaml); the fine-tuned agent is the run's agent. 0: none"""
    start: str = BOOTSTRAP
    """what makes the first agent: `bootstrap` (`bootstrap_hands` hands of heuristic play labelled double-dummy), or a
    named table with a shipped agent (its weights, carried over to this table; card by card where the deck differs,
    a card its deck lacks taking a stand-in's weights)"""
    bootstrap_hands: int = 204_800
    """hands of heuristic play labelled double-dummy (open hands) that make the first agent (with `start: bootstrap`)"""
    seed: int = 0
    """seed of every hand dealt, every exploring move and every batch order of the run"""
    network: dict = field(default_factory=lambda: {"hidden_size": 512, "num_layers": 3})
    """the network's hidden_size and num_layers"""
    curve_pairs: int = 1_000
    """duplicate pairs of each learning-curve match (against pimc and heuristic) after the bootstrap and each iteration"""
    final_pairs: int = 10_000
    """duplicate pairs of each final match (pimc, heuristic, and the table's shipped agent where there is one)"""


COMMAND_LINE_ONLY = ("overwrite",)
RUN_OPTIONS = ("config", "stage", "run_name", "runs_dir", "overwrite", "workers", "ray", "torch_threads", "progress")
"""Options that say where and how the run goes, not what it makes: free to change when a run continues."""
PRESET_KEYS = tuple(f.name for f in dataclasses.fields(Args) if f.name not in RUN_OPTIONS)
"""The preset proper: what the agent is made from (the journal refuses a change of any but `iterations`)."""
NETWORK_KEYS = ("hidden_size", "num_layers")
LABELS = ("rollout", "true", "rollout_all")


class MakeError(OptionError):
    """A preset, or a run folder, the method cannot continue with (one line, exit status 2)."""


def run_folder(args: Args) -> Path:
    """runs_dir/run_name."""
    return Path(args.runs_dir) / args.run_name


def preset_of(args: Args) -> dict[str, Any]:
    """The preset proper of these options, as the journal and the agent file keep it."""
    return {k: getattr(args, k) for k in PRESET_KEYS}


def parse_args(argv: Sequence[str] | None) -> Args:
    """Args from defaults < the preset < the command line; the run name defaults to the preset's file name."""
    parser = option_parser(Args, SCRIPT, DESCRIPTION, special={"ray": dict(nargs="?", const="local", metavar="ADDRESS")})
    cli = given_options(parser, Args, argv)
    values = dataclasses.asdict(Args())
    values = layered(values, read_options(cli.get("config", values["config"]), Args, DEFAULT_PRESET,
                                          command_line_only=COMMAND_LINE_ONLY))
    args = Args(**layered(values, cli))
    if not args.run_name:
        args = dataclasses.replace(args, run_name=Path(args.config).stem)
    return args


def wants_make(argv: Sequence[str] | None) -> bool:
    """Whether a train.py command line asks for this method: `--stage make`, or a --config preset with `stage: make`."""
    argv = list(sys.argv[1:] if argv is None else argv)
    found: dict[str, str] = {}
    for i, token in enumerate(argv):
        for name in ("--stage", "--config"):
            if token == name and i + 1 < len(argv):
                found[name] = argv[i + 1]
            elif token.startswith(name + "="):
                found[name] = token.partition("=")[2]
    if "--stage" in found:
        return found["--stage"] == MAKE
    if "--config" not in found:
        return False
    try:
        return read_preset(found["--config"], DEFAULT_PRESET).get("stage") == MAKE
    except ValueError:  # train.py reports the bad preset itself
        return False


def preset_text(args: Args) -> str:
    """The preset proper as the YAML-compatible JSON text an agent file keeps."""
    return json.dumps(preset_of(args), sort_keys=True)
