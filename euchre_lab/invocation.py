"""How a running tool names itself in its messages: `euchre-train` when started as the installed command,
`train.py` when started from the checkout."""

from __future__ import annotations

import sys
from pathlib import Path


def tool_name(script: str) -> str:
    """The console script's name (`euchre-train`) when the process was started as one, else `script`."""
    name = Path(sys.argv[0]).name
    return name if name.startswith("euchre-") else script


def help_command(script: str) -> str:
    """The command that lists the tool's options: `euchre-train --help`, `python train.py --help`, or
    `python -m euchre_lab.training.teacher --help` for a tool named by its full command."""
    name = tool_name(script)
    return f"{name} --help" if name != script or script.startswith("python ") else f"python {script} --help"
