"""`python -m euchre_lab.training.export_policy SRC [SRC ...] DST`: write a play-only policy from train.py checkpoints.

    python -m euchre_lab.training.export_policy runs/main/checkpoints/latest.pt agents/main.pt
    python -m euchre_lab.training.export_policy runs/main/checkpoints/latest.pt agents/wide.pt --hidden-size 768   # the same policy, wider
    python -m euchre_lab.training.export_policy runs/ft1/agent.pt runs/ft2/agent.pt agents/soup.pt   # the mean of their weights

One checkpoint: its play-only export (`euchre_agents.checkpoint.export_policy`), with `--hidden-size` the same
function in a wider network for `--init-checkpoint`. Several: the policy whose every weight is their mean
(`average_policies`), for fine-tunes of one network. DST is written atomically and is the same bytes
whatever it is called.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Sequence

from euchre_env.extras import require
from euchre_lab.cli import OptionError, fail, given_options, option_parser

SCRIPT = "python -m euchre_lab.training.export_policy"


@dataclass
class Args:
    """The export tool's options: each field is a flag, its docstring the flag's help."""

    src: list = field(default_factory=list)
    """checkpoints written by train.py (or play-only exports); several: fine-tunes of one network, averaged"""
    dst: str = ""
    """where to write the policy"""
    hidden_size: int | None = None
    """widen the network to this many units per hidden layer, computing the same function (one SRC only)"""
    seed: int = 0
    """seed of the widening's random unit copies and shares"""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """The command line read into `Args` (SRC and DST required)."""
    parser = option_parser(Args, SCRIPT, __doc__.split("\n\n")[0],
                           positional={"src": dict(nargs="+", metavar="SRC"), "dst": dict(metavar="DST")})
    args = Args(**given_options(parser, Args, argv))
    if len(args.src) > 1 and args.hidden_size is not None:
        raise OptionError("--hidden-size widens one checkpoint; give one SRC, or drop it")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Write the policy; one line and exit status 2 for a bad input, with nothing written."""
    try:
        args = parse_args(argv)
        require("train", "torch", what="exporting a policy")
        from euchre_agents.checkpoint import average_policies, export_policy

        if len(args.src) > 1:
            average_policies(args.src, args.dst)
        else:
            export_policy(args.src[0], args.dst, args.hidden_size, args.seed)
    except (ValueError, OSError) as e:   # OptionError, CheckpointError, RulesError: all ValueErrors
        return fail(SCRIPT, e)
    print(f"wrote {args.dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
