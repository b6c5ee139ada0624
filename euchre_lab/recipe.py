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
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from euchre_agents.atomic import write_atomic
from euchre_env.extras import require
from euchre_lab.cli import (OptionError, at_least, check_ranges, fail, given_options, layered, option_parser, read_options,
                            remove_stale_temp_files)
from euchre_lab.presets import read_preset
from euchre_lab.stages import PER_WORKER, RUNNERS, Stage, card_text, duration, rate_key, work_size, write_text

SCRIPT = "train.py"
RECIPE = "recipe"
DEFAULT_PRESET = "configs/recipe.yaml"
MANIFEST = "manifest.json"
FORMAT = "euchre-recipe-v1"
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


RUN_LEVEL = ("config", "stage", "run_name", "runs_dir", "resume", "overwrite", "workers", "ray", "device",
             "torch_threads", "progress", "rates")
"""Options that never change a stage's results, so never part of its settings."""
COMMAND_LINE_ONLY = ("overwrite", "resume")
ROUND_KEYS = {"name", "teacher", "distill", "data", "init"}
FINETUNE_KEYS = {"name", "ppo", "init"}
NETWORK_KEYS = {"hidden_size", "num_layers", "canonical_suits", "action_values"}
SET_BY_RECIPE = {"stage", "run_name", "runs_dir", "resume", "overwrite", "config", "teacher_data", "init_checkpoint",
                 "progress", "device", "torch_threads", "rules", *NETWORK_KEYS}
"""train.py options a round's `distill:` or a fine-tune's `ppo:` may not set: the recipe sets them."""
TRAIN_RUN_LEVEL = {"config", "run_name", "runs_dir", "resume", "overwrite", "progress", "device", "torch_threads"}
"""train.py options a distillation or fine-tune stage takes from the recipe's run, never part of its settings."""
DISTILL_DEFAULTS = {"eval_interval": 0, "keep_checkpoints": 2}
"""Where a round's distillation differs from train.py's defaults unless it says otherwise: the final matches
are the recipe's evaluation, and two numbered checkpoints besides latest.pt are plenty."""
PLACEHOLDER = re.compile(r"\{(\w+)\}")
DEFAULT_EVAL = {"opponents": {"heuristic": 20000, "pimc": 20000}, "seed": 9101, "chunk": 500}


class RecipeError(OptionError):
    """A recipe, or a run folder, the recipe cannot continue with (one line, exit status 2)."""


# ---------------------------------------------------------------- options


def run_folder(args: Args) -> Path:
    """runs_dir/run_name."""
    return Path(args.runs_dir) / args.run_name


def parse_args(argv: Sequence[str] | None) -> Args:
    """Args from defaults < the run's recorded options (--resume) < the preset < the command line."""
    parser = option_parser(Args, SCRIPT, __doc__.split("\n\n")[0], special={"ray": dict(nargs="?", const="local", metavar="ADDRESS")})
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


# ---------------------------------------------------------------- the plan


def resolve(text: str, agents: dict[str, str], previous: str | None, where: str) -> str:
    """`{previous}` and `{NAME}` in a spec replaced by those rounds' agent paths."""
    def agent(m: re.Match) -> str:
        name = previous if m.group(1) == "previous" else m.group(1)
        if name not in agents:
            raise RecipeError(f"{where}: {m.group(0)} names no earlier round (earlier: {sorted(agents) or 'none'})")
        return agents[name]

    return PLACEHOLDER.sub(agent, text)


def round_names(args: Args) -> list[str]:
    """Each round's name (`name`, else r1, r2, ...), checked to be plain and distinct."""
    names = [str(r.get("name", f"r{i + 1}")) if isinstance(r, dict) else "" for i, r in enumerate(args.rounds)]
    for i, (r, name) in enumerate(zip(args.rounds, names)):
        if not isinstance(r, dict) or not set(r) <= ROUND_KEYS or "teacher" not in r:
            raise RecipeError(f"rounds[{i}]: a round is a mapping with keys teacher (required), {sorted(ROUND_KEYS - {'teacher'})}")
        if not re.fullmatch(r"\w+", name) or name == "previous":
            raise RecipeError(f"rounds[{i}]: name {name!r} must be a plain word other than 'previous'")
    if len(set(names)) != len(names):
        raise RecipeError(f"rounds: names {names} repeat")
    return names


def teacher_stage(args: Args, folder: Path, r: dict, name: str, agents: dict[str, str], previous: str | None) -> Stage:
    """Teacher data of one round: its shards, rules and generator settings (specs resolved to agent paths)."""
    from euchre_agents.teacher_data import TeacherDataError, TeacherSettings

    given = dict(r["teacher"])
    shards = given.pop("shards", None)
    if not isinstance(shards, int) or isinstance(shards, bool) or shards < 2:
        raise RecipeError(f"round {name}: teacher.shards must be a whole number of at least 2 (one is held out), got {shards!r}")
    known = {f.name for f in dataclasses.fields(TeacherSettings)}
    if set(given) - known:
        raise RecipeError(f"round {name}: unknown teacher option(s) {sorted(set(given) - known)}; known: shards, {sorted(known)}")
    for key in ("behaviour", "rollout_agent"):
        if key in given:
            given[key] = resolve(str(given[key]), agents, previous, f"round {name} teacher.{key}")
    try:
        settings = TeacherSettings(**given)
    except (TeacherDataError, TypeError) as e:
        raise RecipeError(f"round {name}: teacher: {e}") from None
    out = str(folder / "data" / f"teacher_{name}")
    return Stage(f"teacher_{name}", "teacher", {"shards": shards, "rules": args.rules, "settings": dataclasses.asdict(settings)},
                 {"data": out}, f"{shards:,} shards of {settings.games_per_shard} hands, {settings.label} labels, "
                 f"behaviour {settings.behaviour}")


def train_defaults(not_read: Sequence[str]) -> dict[str, Any]:
    """train.py's defaults for a training stage's settings: less the run-level options and those the stage never reads."""
    from euchre_lab.train_options import Args as TrainArgs

    return {k: v for k, v in dataclasses.asdict(TrainArgs()).items() if k not in {*TRAIN_RUN_LEVEL, *not_read}}


def recipe_set_or_unknown(given: dict[str, Any]) -> list[str]:
    """The train.py options in `given` that the recipe sets itself or that train.py does not know."""
    from euchre_lab.train_options import OPTION_NAMES

    return sorted(set(given) & SET_BY_RECIPE) + sorted(set(given) - OPTION_NAMES)


def distill_stage(args: Args, folder: Path, r: dict, name: str, data: dict[str, str], agents: dict[str, str],
                  previous: str | None) -> Stage:
    """Distillation of one round: train.py's options, its teacher folders and the round it starts from."""
    from euchre_lab.train_options import NOT_READ_BY_DISTILL

    given = dict(r.get("distill") or {})
    refused = recipe_set_or_unknown(given)
    if refused:
        raise RecipeError(f"round {name}: distill option(s) {refused} are set by the recipe or unknown to train.py")
    which = r.get("data", "this")
    folders = {"this": [name], "all": list(data)}.get(which, which) if isinstance(which, (str, list)) else None
    if not isinstance(folders, list) or not set(folders) <= set(data):
        raise RecipeError(f"round {name}: data {which!r} must be this, all or a list of this or earlier rounds {list(data)}")
    init = r.get("init", "previous" if previous else "none")
    init_path = "" if init == "none" else resolve(f"{{{init}}}", agents, previous, f"round {name} init")
    train = {**train_defaults(NOT_READ_BY_DISTILL), **DISTILL_DEFAULTS, "stage": "distill", **given, "rules": args.rules,
             "teacher_data": ",".join(data[f] for f in folders), "init_checkpoint": init_path,
             **{k: v for k, v in args.network.items()}}
    start = f"from {previous if init == 'previous' else init}" if init_path else "from scratch"
    epochs = float(given.get("distill_epochs", 4.0))
    return Stage(f"distill_{name}", "distill", {"train": train},
                 {"checkpoint": str(folder / f"distill_{name}" / "checkpoints" / "latest.pt"),
                  "agent": str(folder / "agents" / f"{name}.pt")},
                 f"{epochs:g} epoch{'s' * (epochs != 1)} over the data of {'+'.join(folders)}, {start}")


def finetune_stage(args: Args, folder: Path, f: Any, name: str, agents: dict[str, str], previous: str) -> Stage:
    """One PPO fine-tune, from an earlier round or fine-tune (the one before by default), the KL term keeping it
    near that agent; `{previous}` and `{NAME}` in its opponent specs are those agents."""
    from euchre_lab.train_options import NOT_READ_BY_PPO

    if not isinstance(f, dict) or set(f) - FINETUNE_KEYS or not isinstance(f.get("ppo", {}), dict):
        raise RecipeError(f"fine-tune {name}: a mapping with keys ppo (train.py options), name and init (previous or an earlier name), got {f!r}")
    given = dict(f.get("ppo") or {})
    refused = recipe_set_or_unknown(given) + sorted(set(given) & set(NOT_READ_BY_PPO))
    if refused:
        raise RecipeError(f"fine-tune {name}: ppo option(s) {refused} are set by the recipe, unknown to train.py or not PPO's")
    for key in ("opponent_mix", "eval_opponents"):
        if key in given:
            given[key] = resolve(str(given[key]), agents, previous, f"fine-tune {name} ppo.{key}")
    init = str(f.get("init", "previous"))
    init_path = resolve(f"{{{init}}}", agents, previous, f"fine-tune {name} init")
    train = {**train_defaults(NOT_READ_BY_PPO), "stage": "ppo", **given, "rules": args.rules, "init_checkpoint": init_path, **args.network}
    return Stage(f"finetune_{name}", "finetune", {"train": train},
                 {"checkpoint": str(folder / f"finetune_{name}" / "checkpoints" / "latest.pt"),
                  "agent": str(folder / "agents" / f"{name}.pt")},
                 f"{train['total_timesteps']:,} steps of PPO against {train['opponent_mix']}, KL {train['kl_coef']:g} "
                 f"toward {previous if init == 'previous' else init}")


def plan(args: Args) -> list[Stage]:
    """Every stage of the recipe, in order, with its settings and outputs; a bad recipe is a RecipeError."""
    folder = run_folder(args)
    if not args.rounds:
        raise RecipeError(f"{args.config}: the recipe has no rounds")
    if set(args.network) - NETWORK_KEYS:
        raise RecipeError(f"network: unknown key(s) {sorted(set(args.network) - NETWORK_KEYS)}; known: {sorted(NETWORK_KEYS)}")
    stages: list[Stage] = []
    agents: dict[str, str] = {}
    data: dict[str, str] = {}
    previous = None
    for r, name in zip(args.rounds, round_names(args)):
        teacher = teacher_stage(args, folder, r, name, agents, previous)
        data[name] = teacher.outputs["data"]
        distill = distill_stage(args, folder, r, name, data, agents, previous)
        stages += [teacher, distill]
        agents[name], previous = distill.outputs["agent"], name
    for i, f in enumerate(args.finetunes):
        name = str(f.get("name", f"ft{i + 1}")) if isinstance(f, dict) else f"ft{i + 1}"
        if not re.fullmatch(r"\w+", name) or name == "previous" or name in agents:
            raise RecipeError(f"finetunes[{i}]: name {name!r} must be a plain word other than 'previous' and every round's")
        stages.append(finetune_stage(args, folder, f, name, agents, previous))
        agents[name], previous = stages[-1].outputs["agent"], name
    agent = str(folder / AGENT)
    stages.append(Stage("export", "export", {"checkpoint": stages[-1].outputs["checkpoint"]}, {"agent": agent},
                        f"the play-only agent of {previous}"))
    stages += evaluation_stages(args, folder, agent)
    stages.append(Stage("model_card", "model_card", {}, {"card": str(folder / CARD)}, "rules, data, times and margins"))
    return stages


def evaluation_stages(args: Args, folder: Path, agent: str) -> list[Stage]:
    """One duplicate match per final opponent."""
    evaluation = {**DEFAULT_EVAL, **args.evaluation}
    if set(evaluation) - set(DEFAULT_EVAL) or not isinstance(evaluation["opponents"], dict):
        raise RecipeError(f"evaluation: takes opponents {{SPEC: hands}}, seed and chunk, got {args.evaluation!r}")
    from euchre_lab.match import mode_and_pairs

    stages = []
    for spec, hands in evaluation["opponents"].items():
        try:
            mode_and_pairs(hands, None)
        except ValueError as e:
            raise RecipeError(f"evaluation: {spec}: {e}") from None
        slug = re.sub(r"[^\w.=-]+", "_", spec)
        stages.append(Stage(f"evaluate_{slug}", "evaluate",
                            {"bots": [f"ppo:{agent}", spec], "hands": hands, "seed": evaluation["seed"],
                             "chunk": evaluation["chunk"], "rules": args.rules},
                            {"results": str(folder / "eval" / f"vs_{slug}" / "match.json")},
                            f"{hands // 2:,} duplicate pairs against {spec}, seed {evaluation['seed']}"))
    return stages


def check_plan(args: Args, stages: list[Stage]) -> None:
    """What can be checked before anything runs: the rules, the bots named outright, the distillation numbers."""
    from euchre_env import Engine, Rules, RulesError
    from euchre_lab.match import check_bots
    from euchre_lab.train_checks import check_agents, check_numbers, check_game
    from euchre_lab.train_options import POOL, SELF, eval_opponents, opponent_mix
    from euchre_lab.train_options import Args as TrainArgs

    try:
        rules = Rules.from_dict(args.rules)
    except RulesError as e:
        raise RecipeError(f"--rules: {e}") from None
    engine = Engine(rules)

    def check_named_outright(specs: list[str], option: str) -> None:  # agents this run makes do not exist yet
        check_agents([spec for spec in specs if not spec.startswith(f"ppo:{run_folder(args)}")], option, engine)

    for stage in stages:
        if stage.kind == "teacher":
            s = stage.settings["settings"]
            specs = [spec for spec, _ in _weighted(s["behaviour"])] + ([s["rollout_agent"]] if s["label"] == "rollout" else [])
            check_named_outright(specs, "behaviour")
        elif stage.kind in ("distill", "finetune"):
            train = TrainArgs(**stage.settings["train"])
            check_numbers(train)
            check_game(train)
            if stage.kind == "finetune":
                check_named_outright([spec for spec, _ in opponent_mix(train) + eval_opponents(train) if spec not in (SELF, POOL)], "finetune")
        elif stage.kind == "evaluate":
            check_bots(rules, stage.settings["bots"][1:])


def _weighted(text: str) -> list[tuple[str, float]]:
    from euchre_agents.registry import parse_weighted

    return parse_weighted(text, "behaviour")


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
