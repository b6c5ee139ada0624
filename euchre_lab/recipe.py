"""The recipe: the learned agent rebuilt by one command, as named stages in one run folder.

    python train.py --config configs/recipe.yaml                  # runs/recipe/: every stage, in order
    python train.py --config configs/recipe.yaml                  # again: continues where it stopped
    euchre-train --config recipe_smoke.yaml --workers 2 --ray     # labelling and matches as Ray tasks
    python -m euchre_lab.recipe --resume --run-name recipe        # continue with the options the run recorded
    tensorboard --logdir runs/recipe

The stages (`plan`): per round of `rounds`, `teacher_R` (behaviour play, every decision labelled: teacher
shards in data/teacher_R) and `distill_R` (train.py's distillation, from the round before; its agent exported
to agents/R.pt for later rounds to play and label with); per entry of `finetunes`, `finetune_F` (train.py's PPO
self-play, kept near the agent it starts from by its KL term; agents/F.pt); then `export` (agent.pt, the
play-only agent of the last round or fine-tune that
`ppo:runs/NAME/agent.pt` plays), `evaluate_SPEC` per final opponent (duplicate matches in eval/) and
`model_card` (MODEL_CARD.md beside agent.pt).

runs/NAME/manifest.json, written atomically, records each stage's settings, outputs, wall time, rate and
facts. A stage it calls finished, with its outputs present, is never redone; one begun and not finished
continues by its own mechanism: teacher data writes its missing shards, distillation and fine-tuning resume
exactly from their latest checkpoint, a match plays only the chunks an earlier attempt did not finish. Changing
the settings of a stage already begun is refused (exit 2), naming the stage; start a new run name or pass --overwrite.

This module is the driver (the manifest, the run, `main`); the options are `recipe_options`'s, the plan
`recipe_plan`'s, and each kind of stage's runner `stages`'s.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from euchre_agents.atomic import write_atomic
from euchre_env.extras import require
from euchre_lab.cli import OptionError, at_least, check_ranges, fail, remove_stale_temp_files
from euchre_lab.stages import PER_WORKER, RUNNERS, Stage, card_text, duration, rate_key, work_size, write_text
from euchre_lab.recipe_options import (AGENT, CARD, COMMAND_LINE_ONLY, MANIFEST, RECIPE, SCRIPT, Args, RecipeError,
                                        parse_args, run_folder)
from euchre_lab.recipe_plan import check_plan, plan

FORMAT = "euchre-recipe-v1"


# ---------------------------------------------------------------- the manifest


def first_difference(old: Any, new: Any, path: str = "") -> str | None:
    """Where two settings first differ, as `key.sub: old there, new here`; None when equal."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new), key=str):
            found = first_difference(old.get(key), new.get(key), f"{path}.{key}" if path else str(key))
            if found:
                return found
        return None
    return None if old == new else f"{path or 'settings'}: {old!r} there, {new!r} here"


class Manifest:
    """runs/NAME/manifest.json: the recipe's options and, per stage, its settings, outputs, times and facts."""

    def __init__(self, path: Path, options: dict[str, Any]):
        self.path = path
        self.data = json.loads(path.read_text()) if path.exists() else {"format": FORMAT, "stages": {}}
        if self.data.get("format") != FORMAT:
            raise RecipeError(f"{path} is not a recipe manifest; choose another --run-name")
        self.data["options"] = options

    def record(self, name: str) -> dict[str, Any] | None:
        """The stage's record, None if it never started."""
        return self.data["stages"].get(name)

    def finished(self, stage: Stage) -> bool:
        """Finished by the manifest, with every output present."""
        record = self.record(stage.name)
        return bool(record and record["status"] == "finished" and all(Path(p).exists() for p in stage.outputs.values()))

    def check(self, stages: list[Stage]) -> None:
        """Refuse a stage begun with other settings, or a recorded stage this recipe lacks."""
        names = {s.name for s in stages}
        for name in self.data["stages"]:
            if name not in names:
                raise RecipeError(f"stage {name} of {self.path.parent} is not in this recipe; use a new --run-name, or --overwrite to start over")
        for stage in stages:
            record = self.record(stage.name)
            change = record and first_difference(record["settings"], stage.settings)
            if change:
                raise RecipeError(f"stage {stage.name} was {record['status']} with other settings ({change}); "
                                  "use a new --run-name, or --overwrite to start over")

    def save(self) -> None:
        """Write the manifest atomically."""
        write_atomic(self.path, lambda f: f.write(json.dumps(self.data, indent=1).encode()))

    def start(self, stage: Stage) -> None:
        """Record that the stage is running (a later run continues it)."""
        record = self.data["stages"].setdefault(stage.name, {"kind": stage.kind, "settings": stage.settings, "attempts": 0})
        record.update(status="running", outputs=stage.outputs, started=_now(), attempts=record["attempts"] + 1)
        self.save()

    def finish(self, stage: Stage, seconds: float, facts: dict[str, Any], rate: float | None) -> None:
        """Record the stage finished: its wall time (summed over its attempts), facts and measured rate."""
        record = self.data["stages"][stage.name]
        record.update(status="finished", finished=_now(), wall_s=record.get("wall_s", 0.0) + seconds, facts=facts,
                      rate_key=rate_key(stage), rate=rate)
        self.save()

    def rate(self, key: str) -> float | None:
        """The latest rate this run measured for stages of this key."""
        rates = [r["rate"] for r in self.data["stages"].values() if r.get("rate_key") == key and r.get("rate")]
        return rates[-1] if rates else None


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


# ---------------------------------------------------------------- the driver


@dataclass
class RecipeRun:
    """What the stages share: the options, the run folder, the manifest and the planned stages by name."""

    args: Args
    folder: Path
    manifest: Manifest
    stages: dict[str, Stage]


def eta(run: RecipeRun, stage: Stage) -> tuple[float | None, str]:
    """Seconds the stage should take, from its size and the rate this run measured (else the preset's), and whence."""
    key = rate_key(stage)
    size = work_size(stage, run.stages)
    if size == 0:
        return 0.0, "no work to measure"
    measured = run.manifest.rate(key)
    rate, whence = (measured, "measured in this run") if measured else (run.args.rates.get(key), "the preset's rate")
    if not rate:
        return None, f"no rate for {key} yet"
    parallel = max(1, run.args.workers) if stage.kind in PER_WORKER else 1
    unit = "hands/s per worker" if stage.kind in PER_WORKER else "steps/s" if stage.kind == "finetune" else "samples/s"
    return size / (rate * parallel), f"{rate:,.0f} {unit}, {whence}"


def say(text: str) -> None:
    """One progress line of the recipe."""
    print(f"recipe: {text}", flush=True)


def run_stage(run: RecipeRun, stage: Stage, index: int, total: int) -> None:
    """Run one stage (continuing it if begun), with its ETA line first and its time and rate recorded after."""
    seconds, whence = eta(run, stage)
    left = "ETA unknown" if seconds is None else f"ETA {duration(seconds)}"
    say(f"[{index}/{total}] {stage.name}: {stage.describe}; {left} ({whence})")
    run.manifest.start(stage)
    start = time.perf_counter()
    facts = model_card(run) if stage.kind == "model_card" else RUNNERS[stage.kind](stage, run)
    wall = time.perf_counter() - start
    work = facts.pop("work", 0)
    parallel = max(1, run.args.workers) if stage.kind in PER_WORKER else 1
    rate = work / wall / parallel if work and wall > 0 else None
    run.manifest.finish(stage, wall, facts, rate)
    say(f"[{index}/{total}] {stage.name} done in {duration(wall)}")


def model_card(run: RecipeRun) -> dict[str, Any]:
    """Write MODEL_CARD.md beside agent.pt from the manifest."""
    path = Path(run.stages["model_card"].outputs["card"])
    write_text(path, card_text(run.args, run.manifest.data, list(run.stages.values())))
    return {"bytes": path.stat().st_size}


def prepare(args: Args) -> RecipeRun:
    """Check the options and the run folder (deleting it first with --overwrite), before anything runs."""
    if args.stage != RECIPE:
        raise RecipeError(f"--stage {args.stage!r}: this is the recipe's command line (stage recipe)")
    if args.ray is not None:
        require("ray", "ray", what="--ray")
    check_ranges(args, {"workers": at_least(1), "torch_threads": at_least(0)})
    if not re.fullmatch(r"[\w.=-]+", args.run_name) or args.run_name in (".", ".."):
        raise RecipeError(f"--run-name {args.run_name!r} must be a plain folder name")
    stages = plan(args)
    check_plan(args, stages)
    folder = run_folder(args)
    if args.overwrite and folder.exists():
        if any(folder.iterdir()) and not (folder / MANIFEST).is_file():
            raise RecipeError(f"--overwrite deletes only a recipe's run folder, and {folder} holds no {MANIFEST}; choose another --run-name")
        shutil.rmtree(folder)
    elif folder.exists() and any(folder.iterdir()) and not (folder / MANIFEST).is_file():
        raise RecipeError(f"{folder} holds something other than a recipe run; choose another --run-name")
    options = {k: v for k, v in dataclasses.asdict(args).items() if k not in COMMAND_LINE_ONLY}
    manifest = Manifest(folder / MANIFEST, options)
    manifest.check(stages)
    return RecipeRun(args, folder, manifest, {s.name: s for s in stages})


def drive(run: RecipeRun) -> None:
    """Every stage in order: the finished ones kept, the rest run (continuing where they stopped)."""
    stages = list(run.stages.values())
    todo = [s for s in stages if not run.manifest.finished(s)]
    estimates = [eta(run, s)[0] for s in todo]
    known = sum(e for e in estimates if e is not None)
    say(f"run {run.folder}: {len(stages)} stages, {len(stages) - len(todo)} finished earlier; about {duration(known)} left"
        f"{' (some stages have no rate yet)' if None in estimates else ''}; watch training with: tensorboard --logdir {run.folder}")
    remove_stale_temp_files(run.folder, SCRIPT, recursive=True)
    if todo:
        run.folder.mkdir(parents=True, exist_ok=True)
        run.manifest.save()
    if run.args.ray is not None and todo:
        from euchre_lab.backends import connect_ray

        connect_ray(run.args.ray, num_cpus=run.args.workers)
    for i, stage in enumerate(stages, 1):
        if stage in todo:
            run_stage(run, stage, i, len(stages))
        else:
            say(f"[{i}/{len(stages)}] {stage.name}: finished earlier ({duration(run.manifest.record(stage.name)['wall_s'])}), kept")
    say(f"done: {run.folder / AGENT} (play it as ppo:{run.folder / AGENT}), card {run.folder / CARD}")


def main(argv: Sequence[str] | None = None) -> int:
    """The recipe's command line; one line and exit status 2 for a bad input or a changed stage, 130 on Ctrl-C."""
    from euchre_agents.checkpoint import CheckpointError
    from euchre_agents.teacher_data import TeacherDataError
    from euchre_env import RulesError
    from euchre_env.extras import MissingExtraError
    from euchre_lab.journal import JournalError

    args = None
    try:
        args = parse_args(argv)
        drive(prepare(args))
    except (OptionError, CheckpointError, RulesError, TeacherDataError, ConnectionError, MissingExtraError, JournalError) as e:
        return fail(SCRIPT, e)
    except KeyboardInterrupt:
        where = f" --run-name {args.run_name}" if args else ""
        print(f"\nrecipe: interrupted; finished stages, written shards, checkpoints and match chunks are kept: run the same command (or --resume{where}) to continue",
              file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
