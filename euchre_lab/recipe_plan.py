"""The recipe's plan: the named stages a preset's rounds, fine-tunes and evaluation make (`plan`), each with
the settings that identify it and the outputs it writes, and the checks that run before any of them (`check_plan`).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Sequence

from euchre_lab.recipe_options import AGENT, CARD, Args, RecipeError, run_folder
from euchre_lab.stages import Stage

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
    for key in ("behaviour", "rollout_agent", "search_agent"):
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
    from euchre_agents.teacher import check_settings
    from euchre_agents.teacher_data import TeacherDataError, TeacherSettings
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

    made_here = (f"ppo:{run_folder(args)}", f"search:{run_folder(args)}")  # agents this run makes do not exist yet

    def check_named_outright(specs: list[str], option: str) -> None:
        check_agents([spec for spec in specs if not spec.startswith(made_here)], option, engine)

    for stage in stages:
        if stage.kind == "teacher":
            try:
                check_settings(rules, TeacherSettings(**stage.settings["settings"]), stage.settings["shards"], made_here)
            except TeacherDataError as e:
                raise RecipeError(f"{stage.name}: {e}") from None
        elif stage.kind in ("distill", "finetune"):
            train = TrainArgs(**stage.settings["train"])
            check_numbers(train)
            check_game(train)
            if stage.kind == "finetune":
                check_named_outright([spec for spec, _ in opponent_mix(train) + eval_opponents(train) if spec not in (SELF, POOL)], "finetune")
        elif stage.kind == "evaluate":
            check_bots(rules, stage.settings["bots"][1:])
