"""`python -m euchre_lab.training.teacher OUT --shards N [...]`: write teacher data for distillation (resumable).

    python -m euchre_lab.training.teacher data/teacher --shards 200 --workers 2 --epsilon 0.1 --behaviour heuristic=1
    python -m euchre_lab.training.teacher data/teacher --shards 400 ...   # the same command with more shards continues it
    python -m euchre_lab.training.teacher data/teacher --shards 400 --ray auto ...   # shards as tasks on a Ray cluster

The data and its labels are `euchre_agents.teacher`'s, its storage `euchre_agents.teacher_data`'s; every
option below except OUT, --shards, --workers, --ray and --rules is a `TeacherSettings` field, part of the
data's identity. The files do not depend on where the shards were played.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from euchre_agents.pool import WorkerDied
from euchre_agents.teacher import check_settings, generate
from euchre_agents.teacher_data import MANIFEST, TeacherDataError, TeacherSettings, read_manifest
from euchre_env.extras import require
from euchre_env.rules import Rules, RulesError
from euchre_lab.evaluation.backends import RAY_LOCAL, connect_ray, task_runner
from euchre_lab.cli import at_least, check_ranges, fail, given_options, interrupted, option_parser, remove_stale_temp_files

SCRIPT = "python -m euchre_lab.training.teacher"
SETTINGS = {f.name for f in dataclasses.fields(TeacherSettings)}


@dataclass
class Args:
    """The teacher-data tool's options: each field is a flag, its docstring the flag's help."""

    out: str = ""
    """folder of the data (created, or resumed if it exists)"""
    shards: int = 0
    """shards 0..N-1 to have written (hands = N * games_per_shard)"""
    workers: int = 1
    """worker processes (the files do not depend on it)"""
    ray: str | None = None
    """play the shards as Ray tasks: `--ray` alone starts a local Ray (with --workers CPUs), `--ray ADDRESS` joins the cluster there (`auto`, HOST:PORT, ray://HOST:PORT), whose nodes must see OUT at the same path"""
    rules: dict = field(default_factory=dict)
    """table rules that differ from euchre_env.Rules' defaults: key=value items or a YAML mapping"""


def parse_args(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """The options given (OUT and --shards required), typed; the rest take their defaults."""
    parser = option_parser(
        (Args, TeacherSettings), SCRIPT, __doc__.split("\n\n")[0],
        positional={"out": dict(metavar="OUT")},
        special={"shards": dict(required=True, metavar="N"), "ray": dict(nargs="?", const=RAY_LOCAL, metavar="ADDRESS")},
    )
    return given_options(parser, (Args, TeacherSettings), argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or continue) the teacher data; one line and exit status 2 for a bad input, 130 on Ctrl-C."""
    try:
        given = parse_args(argv)
        require("train", "torch", what="teacher data")  # its manifest records the network's observation signature
        args = Args(**{k: v for k, v in given.items() if k not in SETTINGS})
        settings = TeacherSettings(**{k: v for k, v in given.items() if k in SETTINGS})
        rules = Rules.from_dict(args.rules)
        check_ranges(args, {"workers": at_least(1)})
        before = sum(read_manifest(args.out)["shards"].values()) if (Path(args.out) / MANIFEST).exists() else 0
        check_settings(rules, settings, args.shards)
        run_jobs = None
        if args.ray is not None:
            connect_ray(args.ray, num_cpus=args.workers)
            run_jobs = task_runner(ray=args.ray)
        remove_stale_temp_files(Path(args.out), SCRIPT)
        start = time.perf_counter()
        manifest = generate(args.out, args.shards, rules, settings, workers=args.workers, run_jobs=run_jobs)
    except (TeacherDataError, RulesError, ValueError, OSError, WorkerDied) as e:
        return fail(SCRIPT, e)
    except KeyboardInterrupt:
        return interrupted(SCRIPT, "the shards written are kept: run the same command again to continue")
    made = sum(manifest["shards"].values()) - before
    seconds = time.perf_counter() - start
    print(
        f"{args.out}: {sum(manifest['shards'].values())} labelled decisions in {len(manifest['shards'])} shards; "
        f"this run {made} in {seconds:.0f} s ({made / max(seconds, 1e-9) / max(args.workers, 1):.0f} per second per worker)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
