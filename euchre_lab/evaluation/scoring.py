"""`evaluate.py --task TASK BOT`: the scoring protocol (`euchre_lab.evaluation.protocol`) as a command, writing OUT/score.json.

    python evaluate.py --task standard-v1 ppo --out results/ppo_standard
    python evaluate.py --task no-stick-v1 my_bot.py:policy --quick --dev

Everything that could change the score is fixed by the protocol, so the options that set it (`--rules`,
`--hands`, `--games`, `--seed`, `--chunk`, `--round-robin`, `--config`) are refused beside `--task`.
"""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path
from typing import Any, Sequence

from euchre_agents.atomic import write_atomic
from euchre_agents.pool import WorkerDied
from euchre_env.play import BotError
from euchre_env.tasks import get_task
from euchre_lab.evaluation import protocol
from euchre_lab.evaluation.backends import connect_ray
from euchre_lab.cli import OptionError, at_least, check_ranges, fail
from euchre_lab.invocation import tool_name
from euchre_lab.evaluation.match import DEFAULT_CHUNK, check_bots

SCRIPT = "evaluate.py"
SCORE_FILE = "score.json"


def refused_options(args: Any) -> list[str]:
    """The options given that the protocol fixes (it sets the rules, deals, pairs and chunk)."""
    fixed = {"--rules": bool(args.rules), "--hands": args.hands is not None, "--games": args.games is not None,
             "--seed": args.seed != 0, "--chunk": args.chunk != DEFAULT_CHUNK, "--round-robin": bool(args.round_robin),
             "--config": args.config is not None}
    return [name for name, given in fixed.items() if given]


def checked(args: Any) -> tuple[Any, str, Path]:
    """The task, the one bot and the results folder, every option checked before anything is played."""
    task = get_task(args.task)
    refused = refused_options(args)
    if refused:
        raise OptionError(f"--task fixes the rules, deals, pairs and chunk of the protocol; drop {' '.join(refused)}")
    if len(args.bots) != 1:
        raise OptionError(f"--task scores exactly one BOT, got {args.bots or 'none'}")
    check_ranges(args, {"workers": at_least(1)})
    check_bots(task.rules, [args.bots[0]])
    protocol.check_ladder(task)
    bot = args.bots[0]
    out = Path(args.out) if args.out else Path("results") / f"score_{task.name}_{''.join(c if c.isalnum() or c in '._-' else '_' for c in bot)}"
    if out.exists() and not out.is_dir():
        raise OptionError(f"--out {out} is a file, not a folder; choose another --out")
    if (out / SCORE_FILE).exists() and not args.overwrite:
        raise OptionError(f"{out / SCORE_FILE} already holds a score; pass --out DIR or --overwrite")
    return task, bot, out


def main(args: Any, argv: Sequence[str]) -> int:
    """Score one bot on a task; the exit status (2 for a bad input or a bot that fails while playing)."""
    try:
        task, bot, out = checked(args)
        if args.ray is not None:
            connect_ray(args.ray, num_cpus=args.workers)
    except (OptionError, ValueError, OSError) as error:
        return fail(SCRIPT, error)
    note = protocol.QUICK_NOTE if args.quick else ""

    def say(line: str) -> None:
        print(note + line, flush=True)

    rungs = protocol.ladder(task, args.quick)
    seed = protocol.DEVELOPMENT_SEED if args.dev else protocol.EVALUATION_SEED
    try:
        eta = protocol.eta_seconds(task, bot, rungs, args.workers)
        say(f"{bot} on {task.name} (protocol {task.protocol}, {'development' if args.dev else 'evaluation'} seed {seed}): "
            f"{sum(r.pairs for r in rungs):,} pairs; ETA about {eta / 60:.1f} min on {args.workers} worker{'s' * (args.workers != 1)}")
        start = time.perf_counter()
        matches = protocol.play_ladder(task, bot, rungs, seed, workers=args.workers, ray=args.ray,
                                       progress=args.progress, say=say, note=note)
    except (BotError, WorkerDied) as error:
        return fail(SCRIPT, error)
    seconds = time.perf_counter() - start
    tool = tool_name(SCRIPT)
    command = " ".join(["python " + tool if tool == SCRIPT else tool, *map(shlex.quote, argv)])
    record = protocol.score_record(task, bot, rungs, matches, seed=seed, quick=args.quick, command=command, seconds=seconds,
                                    workers=args.workers)
    write_atomic(out / SCORE_FILE, lambda f: f.write((json.dumps(record, indent=2) + "\n").encode()))
    score = record["score"]
    say(f"score {score['value']:+.3f} [{score['low']:+.3f}, {score['high']:+.3f}]: {record['headline']}")
    say(f"{seconds / 60:.1f} min wall time; wrote {out / SCORE_FILE}")
    return 0
