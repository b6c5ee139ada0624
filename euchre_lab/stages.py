"""The recipe's stages, one function each: teacher data, distillation or PPO fine-tuning, export, a final match, the
model card.

Each runner takes the stage (`Stage`: its name, settings and output paths) and the run (`RecipeRun`: the
recipe's options, folder and manifest) and returns the stage's facts: what it made (data sizes, the
match's margin) and `work`, the units it did in this attempt, from which the recipe measures its rate.
`work_size` says how many units a stage has to do, for the ETA printed when it starts.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from euchre_agents.atomic import write_atomic
from euchre_agents.base import file_sha256
from euchre_env import Rules

DECISIONS_PER_HAND = 16.6
"""Labelled decisions per hand of teacher data (3,304,332 in 198,144 hands in the shipped agent's first round); sizes a distillation
stage whose data is not written yet."""


@dataclass
class Stage:
    """One named step of the recipe: what it is (`kind`), its settings (its identity in the manifest) and
    the files it leaves (`outputs`, paths)."""

    name: str
    kind: str
    settings: dict[str, Any]
    outputs: dict[str, str] = field(default_factory=dict)
    describe: str = ""
    """what it does, for its progress line"""


# ---------------------------------------------------------------- sizes, for the ETAs


def rate_key(stage: Stage) -> str:
    """Which measured rate a stage's ETA uses: stages of one key run at about the same speed."""
    if stage.kind == "teacher":
        s = stage.settings["settings"]
        return f"teacher_{s['label']}" + ("_cards" if s["label"] == "rollout" and s["rollout_cards"] else "")
    if stage.kind == "evaluate":
        return f"evaluate_{stage.settings['bots'][1]}"
    return stage.kind


PER_WORKER = ("teacher", "evaluate")
"""Kinds whose rates are per worker process (their work is spread over --workers)."""


def teacher_decisions(folder: str | Path) -> int | None:
    """The labelled decisions a teacher data folder holds, None if it holds no data yet."""
    from euchre_agents.teacher_data import MANIFEST, read_manifest

    if not (Path(folder) / MANIFEST).exists():
        return None
    return sum(read_manifest(folder)["shards"].values())


def work_size(stage: Stage, stages: dict[str, Stage]) -> float:
    """The units of work the whole stage does: hands for teacher data and matches, samples for distillation, steps
    for fine-tuning."""
    if stage.kind == "teacher":
        return stage.settings["shards"] * stage.settings["settings"]["games_per_shard"]
    if stage.kind == "evaluate":
        return stage.settings["hands"]
    if stage.kind == "finetune":
        train = stage.settings["train"]
        batch = train["num_envs"] * train["num_steps"]
        return train["total_timesteps"] // batch * batch
    if stage.kind == "distill":
        train = stage.settings["train"]
        rows = 0.0
        for folder in train["teacher_data"].split(","):
            written = teacher_decisions(folder)
            if written is None:
                source = next(s for s in stages.values() if s.outputs.get("data") == folder)
                written = work_size(source, stages) * DECISIONS_PER_HAND
            rows += written * (1 - train["holdout_fraction"])
        return rows * train["distill_epochs"]
    return 0.0


# ---------------------------------------------------------------- teacher data


def run_teacher(stage: Stage, run: Any) -> dict[str, Any]:
    """Write (or continue) the stage's teacher shards: behaviour play with every decision labelled."""
    from euchre_agents.teacher import generate
    from euchre_agents.teacher_data import TeacherSettings
    from euchre_lab.backends import task_runner

    out = stage.outputs["data"]
    before = teacher_decisions(out) or 0
    shards_before = len(_listed_shards(out))
    settings = TeacherSettings(**stage.settings["settings"])
    manifest = generate(out, stage.settings["shards"], Rules.from_dict(stage.settings["rules"]), settings,
                        progress=run.args.progress, run_jobs=task_runner(run.args.workers, run.args.ray))
    decisions = sum(manifest["shards"].values())
    size = sum(p.stat().st_size for p in Path(out).glob("shard_*.npz"))
    made = (len(manifest["shards"]) - shards_before) * settings.games_per_shard
    return {"shards": len(manifest["shards"]), "hands": len(manifest["shards"]) * settings.games_per_shard,
            "decisions": decisions, "bytes": size, "work": made, "decisions_this_attempt": decisions - before}


def _listed_shards(folder: str) -> list[str]:
    from euchre_agents.teacher_data import MANIFEST, read_manifest

    return list(read_manifest(folder)["shards"]) if (Path(folder) / MANIFEST).exists() else []


# ---------------------------------------------------------------- distillation and fine-tuning


def training_args(stage: Stage, run: Any, resume: str = "") -> Any:
    """train.py's `Args` of a distillation or fine-tuning stage: its settings plus the run-level options (device, threads)."""
    from euchre_lab.train_options import Args

    a = run.args
    return Args(**stage.settings["train"], run_name=stage.name, runs_dir=str(run.folder), resume=resume,
                progress=a.progress, device=a.device, torch_threads=a.torch_threads)


def run_training(stage: Stage, run: Any) -> dict[str, Any]:
    """Distil or fine-tune (or continue, exactly, from the stage's latest checkpoint), then export the stage's agent."""
    from euchre_agents.checkpoint import RESUME, export_policy, read_checkpoint
    from euchre_lab.checkpoints import LATEST
    from euchre_lab.distill import distill
    from euchre_lab.ppo_trainer import train
    from euchre_lab.train_checks import check_args

    folder = run.folder / stage.name
    latest = folder / "checkpoints" / LATEST
    checkpoint = read_checkpoint(str(latest), RESUME) if latest.exists() else None
    if checkpoint is None and folder.exists():  # stopped before its first checkpoint: only event files to drop
        shutil.rmtree(folder)
    args = training_args(stage, run, resume=str(latest) if checkpoint is not None else "")
    start = 0 if checkpoint is None else checkpoint["global_step"]
    {"distill": distill, "ppo": train}[args.stage](args, check_args(args, checkpoint))
    export_policy(str(latest), stage.outputs["agent"])
    done = read_checkpoint(str(latest), RESUME)
    facts = {"updates": done["update"], "samples": done["global_step"], "work": done["global_step"] - start}
    if args.stage == "distill":
        facts["teacher_decisions"] = sum(len_shards(s) for s in done["teacher"]["sources"])
    return facts


def len_shards(source: dict[str, Any]) -> int:
    """The decisions of one teacher folder that a distillation read (held-out shards included)."""
    from euchre_agents.teacher_data import read_manifest

    shards = read_manifest(source["folder"])["shards"]
    return sum(shards[str(k)] for k in source["shards"])


# ---------------------------------------------------------------- export


def run_export(stage: Stage, run: Any) -> dict[str, Any]:
    """runs/NAME/agent.pt: the last round's policy, play only (what `ppo:runs/NAME/agent.pt` plays)."""
    from euchre_agents.checkpoint import export_policy

    export_policy(str(stage.settings["checkpoint"]), stage.outputs["agent"])
    path = Path(stage.outputs["agent"])
    return {"bytes": path.stat().st_size, "sha256": file_sha256(path), "work": 0}


# ---------------------------------------------------------------- evaluation


def run_evaluate(stage: Stage, run: Any) -> dict[str, Any]:
    """A duplicate-deal match of the agent against one opponent (continuing from the chunks an interrupted
    attempt finished); its results folder and margin."""
    from euchre_lab import journal
    from euchre_lab.match import play_match
    from euchre_lab.report import save_match

    s = stage.settings
    a, b = s["bots"]
    rules = Rules.from_dict(s["rules"])
    folder = Path(stage.outputs["results"]).parent
    match = play_match(rules, a, b, hands=s["hands"], seed=s["seed"], chunk=s["chunk"], workers=run.args.workers,
                       ray=run.args.ray, progress=run.args.progress, journal=folder / "chunks")
    config = {**s, "workers": run.args.workers, "ray": run.args.ray}
    save_match(match, folder, config, plots=False)
    journal.remove(folder / "chunks")
    print(match.report(), flush=True)
    margin, share = match.margin_per_hand, match.point_share_a
    return {"pairs": match.num_pairs, "hands": match.num_hands, "margin": dataclasses.asdict(margin),
            "point_share": dataclasses.asdict(share), "seed": s["seed"], "weights_sha256": match.weights.get(a),
            "work": match.num_hands}


RUNNERS: dict[str, Callable[[Stage, Any], dict[str, Any]]] = {
    "teacher": run_teacher,
    "distill": run_training,
    "finetune": run_training,
    "export": run_export,
    "evaluate": run_evaluate,
}
"""The runner of each kind of stage but the model card (`euchre_lab.recipe` writes that from the manifest)."""


def write_text(path: Path, text: str) -> None:
    """A text file written atomically."""
    write_atomic(path, lambda f: f.write(text.encode()))


# ---------------------------------------------------------------- the model card


def duration(seconds: float) -> str:
    """`42 s`, `12.5 min` or `3.20 h`."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.2f} h"


def _what(stage: Stage, facts: dict[str, Any]) -> str:
    """A stage's data sizes or result, for the card's table."""
    if stage.kind == "teacher":
        return f"{facts['shards']:,} shards, {facts['hands']:,} hands, {facts['decisions']:,} labelled decisions, {facts['bytes'] / 2**20:.1f} MB"
    if stage.kind == "distill":
        return f"{facts['updates']:,} updates, {facts['samples']:,} samples over {facts['teacher_decisions']:,} decisions"
    if stage.kind == "finetune":
        return f"{facts['updates']:,} updates, {facts['samples']:,} steps"
    if stage.kind == "export":
        return f"{facts['bytes'] / 2**20:.1f} MB, sha256 {facts['sha256'][:16]}…"
    if stage.kind == "evaluate":
        m = facts["margin"]
        return f"margin {m['value']:+.3f} [{m['low']:+.3f}, {m['high']:+.3f}] over {facts['pairs']:,} pairs"
    return ""


def card_text(args: Any, manifest: dict[str, Any], stages: list[Stage]) -> str:
    """MODEL_CARD.md: what the agent is, the rules, each stage's settings, data sizes and wall time, its margins."""
    from euchre_lab.match_result import rules_label

    records = manifest["stages"]
    done = [s for s in stages if records.get(s.name, {}).get("status") == "finished"]
    agent = next(s for s in stages if s.kind == "export").outputs["agent"]
    first = next(s for s in stages if s.kind == "distill").settings["train"]
    network = {k: first.get(k) for k in ("hidden_size", "num_layers", "canonical_suits", "action_values") if k in first}
    export = next((records[s.name]["facts"] for s in done if s.kind == "export"), {})
    lines = [
        f"# Model card: {agent}",
        "",
        f"A play-only Euchre policy (`ppo:{agent}`; `make_agent(\"ppo:{agent}\", engine)`), made by the recipe "
        f"`{args.config}` in `{Path(agent).parent}` (`python train.py --config {args.config} --run-name {args.run_name}`).",
        "",
        f"- **Rules:** {rules_label(args.rules)} (`{json.dumps(args.rules, sort_keys=True)}` over `euchre_env.Rules`' defaults)",
        f"- **Network:** {network or 'train.py defaults'} (the first round's; later rounds start from the round before)",
        f"- **Wall time:** {duration(sum(records[s.name].get('wall_s', 0.0) for s in done))} over {len(done)} finished stages"
        f" ({args.workers} worker(s){'' if args.ray is None else ', Ray ' + str(args.ray)})",
        *([f"- **Weights:** sha256 `{export['sha256']}` (the matches below name the weights they played by its first 16 digits)"] if "sha256" in export else []),
        "",
        "## Stages",
        "",
        "| stage | what | made | wall time | attempts |",
        "|---|---|---|---:|---:|",
    ]
    for s in done:
        r = records[s.name]
        lines.append(f"| {s.name} | {s.describe} | {_what(s, r['facts'])} | {duration(r['wall_s'])} | {r['attempts']} |")
    lines += ["", "## Strength (duplicate deals; 95% intervals)", "",
              "| opponent | pairs | hands | margin per hand | point share | seed | weights sha256 |",
              "|---|---:|---:|---|---|---:|---|"]
    for s in done:
        if s.kind == "evaluate":
            f = records[s.name]["facts"]
            m, p = f["margin"], f["point_share"]
            lines.append(f"| {s.settings['bots'][1]} | {f['pairs']:,} | {f['hands']:,} | **{m['value']:+.3f}** "
                         f"[{m['low']:+.3f}, {m['high']:+.3f}] | {100 * p['value']:.1f}% [{100 * p['low']:.1f}, "
                         f"{100 * p['high']:.1f}] | {f['seed']} | {(f.get('weights_sha256') or '?')[:16]} |")
    lines += ["", "Wall time is summed over a stage's attempts; an attempt killed outright (kill -9) is not counted. "
              "Every setting of every stage is in `manifest.json` beside this card.", ""]
    return "\n".join(lines)
