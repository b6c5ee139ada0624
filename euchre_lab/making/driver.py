"""The driver of `train.py --stage make`: the parts of a run in order, each skipped when the journal has it
finished, each continued where it stopped otherwise, with an ETA before each and TensorBoard scalars after."""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from euchre_env import Rules
from euchre_env.extras import require
from euchre_lab.cli import at_least, between, check_ranges, fail, interrupted, remove_stale_temp_files
from euchre_lab.making import card, method
from euchre_lab.making.journal import Journal
from euchre_lab.making.method import Part, iteration_name
from euchre_lab.training.paths import latest_checkpoint
from euchre_lab.making.options import (AGENT, BOOTSTRAP, CARD, JOURNAL, LABELS, NETWORK_KEYS, SCRIPT, START, Args,
                                       MakeError, parse_args, preset_of, run_folder)

FALLBACK_RATES = {"label_true": 520.0, "label_rollout": 300.0, "label_rollout_all": 160.0, "distil": 37_000.0,
                  "label_playout_net": 500.0, "distil_playout": 54_000.0,
                  method.FINETUNE: 3_400.0, "match_pimc": 56.0, "match_heuristic": 2_000.0, "match_shipped": 1_500.0}
"""Units per second on the 2-core machine with 2 workers (hands for labels and matches, samples for distilling, steps
for the fine-tune), for the ETAs until the run measures its own: the rates the project measured on that machine
(labels and distillation in bfloat16)."""


@dataclass
class MakeRun:
    """What the parts share: the options, the run folder, the journal and TensorBoard."""

    args: Args
    folder: Path
    journal: Journal
    writer: Any = None

    def stage_agent_path(self, stage: str) -> Path:
        """The agent file a stage (an iteration or a fine-tune, by its name) makes."""
        return self.folder / "agents" / f"{stage}.pt"

    def agent_path(self, k: int) -> Path:
        """Iteration k's agent file."""
        return self.stage_agent_path(iteration_name(k))

    def finetune_agent_path(self, k: int) -> Path:
        """The agent file of iteration k's fine-tune."""
        return self.stage_agent_path(method.finetune_name(k))

    def last_agent_path(self) -> Path:
        """The file of the agent the run ends with: the last iteration's, or its fine-tune's."""
        return self.stage_agent_path(method.last_name(self.args))

    def playout_net_path(self, k: int) -> Path:
        """The file of the network that plays iteration k's play-outs."""
        return self.stage_agent_path(method.playout_name(k))

    def data_path(self, k: int) -> Path:
        """Iteration k's labelled hands."""
        return self.folder / "data" / iteration_name(k)


# ---------------------------------------------------------------- the plan


def iteration_parts(run: MakeRun, k: int) -> list[Part]:
    """The parts of the bootstrap (k = 0) or of iteration k: label, distil, export, the learning-curve matches."""
    a, name = run.args, iteration_name(k)
    if k == 0 and a.start != BOOTSTRAP:
        parts = [Part(f"{name}/carry_over", "export", 0, lambda r: method.carry_over(r, a.start, r.folder / START))]
    else:
        parts = learning_parts(run, k)
    return parts + curve_parts(run, name, run.agent_path(k))


def curve_parts(run: MakeRun, name: str, agent: Path) -> list[Part]:
    """The learning-curve matches of stage `name`'s agent."""
    parts = []
    for opponent in method.CURVE_OPPONENTS:
        out = run.folder / "curve" / f"{name}_vs_{opponent}"
        parts.append(Part(f"{name}/curve_{opponent}", f"match_{opponent}", 2 * run.args.curve_pairs,
                          lambda r, o=opponent, out=out: method.match(r, agent, o, r.args.curve_pairs, method.CURVE_SEED, out)))
    return parts


def finetune_parts(run: MakeRun) -> list[Part]:
    """The fine-tune of the last iteration's agent, its export and its learning-curve matches; none without
    `finetune_steps`."""
    k = run.args.iterations
    if not run.args.finetune_steps:
        return []
    name = method.finetune_name(k)
    return [Part(f"{name}/train", method.FINETUNE, run.args.finetune_steps, lambda r: method.finetune(r, k)),
            Part(f"{name}/export", "export", 0, lambda r: method.export_finetune(r, k)),
            *curve_parts(run, name, run.last_agent_path())]


def labelling(run: MakeRun, k: int, refill: bool = False) -> tuple[Any, int]:
    """(teacher settings, hands) of the bootstrap's (k = 0) or iteration k's labelling, or of a refill of its replay."""
    a = run.args
    hands = method.iteration_hands(a, k)
    previous = None if k == 0 else run.agent_path(k - 1)
    labels = method.iteration_labels(a.labels, a.rollout_all_from, k)
    playout = run.playout_net_path(k) if method.uses_playout_net(a, k) and not refill else None
    return method.teacher_settings(k, previous, a.seed, hands, labels, refill, playout, method.iteration_bid_share(a, k)), hands


def learning_parts(run: MakeRun, k: int) -> list[Part]:
    """Label, distil, export: the bootstrap's (k = 0) or iteration k's way to its agent; first, where the preset has a
    `rollout_network`, the distillation of the network that plays its play-outs."""
    a, name = run.args, iteration_name(k)
    settings, hands = labelling(run, k)
    previous = None if k == 0 else run.agent_path(k - 1)
    replay = method.replay_iterations(run, k)
    samples = sum(method.iteration_decisions(a, j) for j in replay) * method.distil_passes(a, k, len(replay))
    kind = "label_rollout_all" if settings.rollout_cards else f"label_{settings.label}"   # each its own rate for the ETAs
    kind = "label_playout_net" if method.uses_playout_net(a, k) else kind
    playout = []
    if method.uses_playout_net(a, k):
        playout = [Part(f"{name}/playout_net", "distil_playout", method.playout_net_samples(a, k),
                        lambda r: method.playout_net(r, k, replay_folders(r, k)[:-1]))]
    return playout + [
        Part(f"{name}/label", kind, hands, lambda r: method.label(r, r.data_path(k), settings, hands)),
        Part(f"{name}/distil", "distil", samples, lambda r: method.distil(r, k, replay_folders(r, k), str(previous or ""))),
        Part(f"{name}/export", "export", 0, lambda r: method.export(r, k)),
    ]


def replay_folders(run: MakeRun, k: int) -> list[Path]:
    """The data iteration k distils: its own, and the iterations' before it within the replay; a folder that is gone
    (a run moved to another machine with its agent and journal only) is refilled by the current agent."""
    folders = []
    for j in method.replay_iterations(run, k):
        folder = run.data_path(j)
        if j < k and not folder.exists():
            folder = run.folder / "data" / f"refill_{j:03d}"
            method.label(run, folder, *labelling(run, k, refill=True))
        folders.append(folder)
    return folders


def final_parts(run: MakeRun) -> list[Part]:
    """After the last iteration (and its fine-tune): agent.pt with the preset it was made with, the final matches."""
    last = run.args.iterations
    name = final_name(run.args)
    agent = run.folder / AGENT
    parts = [Part(f"{name}/agent", "export", 0, lambda r: card.write_agent(r, r.last_agent_path(), agent, f"{name}/agent"))]
    opponents = {"pimc": "pimc", "heuristic": "heuristic"}
    shipped = card.shipped_spec(Rules.from_dict(run.args.rules))
    if shipped and not is_own_agent(run, name, shipped):
        opponents["shipped"] = shipped
    if run.args.start != BOOTSTRAP and last > 0:
        opponents["start"] = f"ppo:{run.folder / START}"
    for key, spec in opponents.items():
        out = run.folder / "final" / f"vs_{key}"
        parts.append(Part(f"{name}/vs_{key}", f"match_{key}", 2 * run.args.final_pairs,
                          lambda r, s=spec, key=key, out=out: final_match(r, agent, s, key, out)))
    return parts


def final_name(args: Args) -> str:
    """`final_iter_012`, or `final_finetune_012`: the head of the final parts, named by the agent they play."""
    return f"final_{method.last_name(args)}"


def is_own_agent(run: MakeRun, final: str, spec: str) -> bool:
    """Whether the shipped agent `spec` is this run's own final agent (a run continued after its agent was shipped),
    which it would only play against itself."""
    from euchre_agents.base import file_sha256

    record = run.journal.part(f"{final}/agent") or {}
    made = record.get("facts", {}).get("sha256") if record.get("status") == "finished" else None
    return made is not None and made == file_sha256(spec.removeprefix("ppo:"))


def final_match(run: MakeRun, agent: Path, spec: str, key: str, out: Path) -> dict[str, Any]:
    """One final match; the first agent it plays as `start` is written again if the run moved without it."""
    start = run.folder / START
    if key == "start" and not start.exists():
        method.write_start(run, run.args.start, start)
    return method.match(run, agent, spec, run.args.final_pairs, method.FINAL_SEEDS[key], out)


def plan(run: MakeRun) -> list[Part]:
    """Every part of the run, in order."""
    parts = [p for k in range(run.args.iterations + 1) for p in iteration_parts(run, k)]
    return parts + finetune_parts(run) + final_parts(run)


# ---------------------------------------------------------------- running


def duration(seconds: float) -> str:
    """`42 s`, `12.5 min` or `3.20 h`."""
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.2f} h"


def eta(run: MakeRun, part: Part) -> float:
    """Seconds the part should take, from the rate this run measured for its kind (else the records')."""
    rate = run.journal.rate(part.kind) or FALLBACK_RATES.get(part.kind)
    return part.size / rate if part.size and rate else 0.0


def say(text: str) -> None:
    """One progress line of the run."""
    print(f"make: {text}", flush=True)


def run_part(run: MakeRun, part: Part, index: int, todo: list[Part]) -> None:
    """Do (or continue) one part, with the ETAs of it and of the run first, its time and rate journaled after."""
    left = sum(eta(run, p) for p in todo[todo.index(part):])
    say(f"[{index}] {part.name}: ETA {duration(eta(run, part))}, the run about {duration(left)} more")
    run.journal.start(part.name, part.kind)
    start = time.perf_counter()
    with run.journal.heartbeat(part.name):
        facts = part.do(run)
    wall = time.perf_counter() - start
    work = facts.pop("work", 0)
    run.journal.finish(part.name, wall, facts, work / wall if work and wall > 0 else None)
    log_part(run, part, facts, wall)
    say(f"[{index}] {part.name} done in {duration(wall)}")


def log_part(run: MakeRun, part: Part, facts: dict[str, Any], wall: float) -> None:
    """The learning curve and each part's wall time, to TensorBoard (the step is the iteration)."""
    head, _, tail = part.name.partition("/")
    if not head.startswith(("bootstrap", "iter_")):
        return
    k = 0 if head == "bootstrap" else int(head.removeprefix("iter_"))
    if "margin" in facts:
        for key in ("value", "low", "high"):
            suffix = "" if key == "value" else f"_{key}"
            run.writer.add_scalar(f"curve/margin_vs_{facts['opponent']}{suffix}", facts["margin"][key], k)
    run.writer.add_scalar(f"wall_s/{tail}", wall, k)
    run.writer.flush()


def needs_redo(run: MakeRun, part: Part, parts: list[Part]) -> bool:
    """A finished part of an unfinished iteration whose output the next part needs and which is gone (the run
    moved to another machine with its agent file and journal only), agent.pt where it is gone so, or a final match
    of another size than the preset's `final_pairs` (raised since it was played)."""
    head, _, tail = part.name.partition("/")
    if head.startswith("final_") and tail == "agent":
        return not (run.folder / AGENT).exists()
    if head.startswith("final_") and tail.startswith("vs_"):
        return (run.journal.part(part.name) or {}).get("facts", {}).get("pairs") != run.args.final_pairs
    after = parts[parts.index(part) + 1] if parts.index(part) + 1 < len(parts) else None
    if after is None or run.journal.finished(after.name) or not after.name.startswith(head):
        return False
    k = 0 if head == "bootstrap" else int(head.removeprefix("iter_")) if head.startswith("iter_") else None
    if tail == "label":
        return not (run.data_path(k) / "manifest.json").exists()
    if tail == "playout_net":
        return not run.playout_net_path(k).exists()
    if tail in ("distil", "train"):
        return not latest_checkpoint(run.folder / "training" / head).exists()
    return False


def prepare(args: Args) -> MakeRun:
    """Check the options and the run folder (deleting it first with --overwrite) before anything runs."""
    if args.ray is not None:
        require("ray", "ray", what="--ray")
    check_ranges(args, {"workers": at_least(1), "torch_threads": at_least(0), "iterations": at_least(0),
                        "hands": at_least(16), "bootstrap_hands": at_least(16), "seed": at_least(0), "rollout_all_from": at_least(0),
                        "replay": at_least(1), "rollout_hands": at_least(0), "finetune_steps": at_least(0),
                        "curve_pairs": at_least(1), "final_pairs": at_least(1), "bid_share": between(0, 1)})
    Rules.from_dict(args.rules)
    check_start(args)
    check_finetune(args)
    if args.labels not in LABELS:
        raise MakeError(f"labels={args.labels!r} is not one of {', '.join(LABELS)}")
    check_network("network", args.network)
    check_playouts(args)
    if not re.fullmatch(r"[\w.=-]+", args.run_name) or args.run_name in (".", ".."):
        raise MakeError(f"--run-name {args.run_name!r} must be a plain folder name")
    folder = run_folder(args)
    foreign = folder.exists() and any(folder.iterdir()) and not (folder / JOURNAL).is_file()
    if foreign:
        raise MakeError(f"{folder} holds something other than a run of this method; choose another --run-name")
    if args.overwrite and folder.exists():
        shutil.rmtree(folder)
    run = MakeRun(args, folder, Journal(folder / JOURNAL, preset_of(args)))
    current = run.journal.data["agent"]
    if current and not (folder / current["path"]).exists():
        raise MakeError(f"the run's agent file {folder / current['path']} is missing: copy it with {JOURNAL}, or pass --overwrite to start over")
    return run


def check_network(key: str, network: dict) -> None:
    """A network shape names hidden_size and num_layers, whole numbers of 1 or more, and nothing else."""
    unknown = sorted(set(network) - set(NETWORK_KEYS))
    if unknown or not all(isinstance(network.get(k), int) and network[k] >= 1 for k in NETWORK_KEYS):
        raise MakeError(f"{key} must set {' and '.join(NETWORK_KEYS)} to whole numbers of 1 or more, got {network}")


def check_playouts(args: Args) -> None:
    """`rollout_hands` and `rollout_network` shape the play-out iterations, so they need some (and a play-out network
    learns from the iteration before its first, so those start at 2 or later)."""
    if args.rollout_hands and args.rollout_hands < 16:
        raise MakeError(f"--rollout-hands must be 0 (as `hands`) or 16 or more, got {args.rollout_hands}")
    if args.rollout_network:
        check_network("rollout_network", args.rollout_network)
    need = 2 if args.rollout_network else 1
    if (args.rollout_hands or args.rollout_network) and args.rollout_all_from < need:
        raise MakeError(f"rollout_hands and rollout_network shape the iterations from rollout_all_from on, which is "
                        f"{args.rollout_all_from}; set rollout_all_from to {need} or more")


def check_finetune(args: Args) -> None:
    """A fine-tune, if any, of at least one PPO update of its preset."""
    update = method.finetune_batch()[0] if args.finetune_steps else 0
    if args.finetune_steps < update:
        raise MakeError(f"finetune_steps={args.finetune_steps} is less than one update of the fine-tune "
                        f"({update} steps, {method.FINETUNE_PRESET}); raise it, or 0 for no fine-tune")


def check_start(args: Args) -> None:
    """A `start` other than the bootstrap names another named table whose shipped agent has the preset's network
    (its spaces may differ: `carry_policy` moves its weights card by card)."""
    if args.start == BOOTSTRAP:
        return
    from euchre_agents.checkpoint import PLAY, read_checkpoint
    from euchre_agents.ppo import shipped_path
    from euchre_env.named_tables import NAMED_TABLES, table_name

    rules = Rules.from_dict(args.rules)
    if args.start not in NAMED_TABLES or args.start == table_name(rules):
        others = [t for t in NAMED_TABLES if t != table_name(rules)]
        raise MakeError(f"start={args.start!r} must be {BOOTSTRAP} or another named table: {', '.join(others)}")
    source = shipped_path(args.start)
    if not source.exists():
        raise MakeError(f"start={args.start}: no agent is shipped for the {args.start} table yet; start from {BOOTSTRAP}")
    shape = {k: read_checkpoint(str(source), PLAY)["model_kwargs"].get(k) for k in NETWORK_KEYS}
    if shape != args.network:
        raise MakeError(f"start={args.start}: its agent's network is {shape}, the preset's {args.network}; set network to its "
                        f"shape, or start from {BOOTSTRAP}")


def drive(run: MakeRun) -> None:
    """Every part in order: the finished ones kept, the rest done (continuing where they stopped)."""
    from torch.utils.tensorboard import SummaryWriter

    parts = plan(run)
    todo = [p for p in parts if not run.journal.finished(p.name) or needs_redo(run, p, parts)]
    first = (f"a bootstrap of {run.args.bootstrap_hands:,}" if run.args.start == BOOTSTRAP
             else f"the {run.args.start} table's agent, carried over")
    more = f" ({run.args.rollout_hands:,} from iteration {run.args.rollout_all_from})" if run.args.rollout_hands else ""
    say(f"run {run.folder}: {run.args.iterations} iterations of {run.args.hands:,} hands{more} after {first}; {len(parts) - len(todo)} of {len(parts)} parts done, about "
        f"{duration(sum(eta(run, p) for p in todo))} left; watch it with: tensorboard --logdir {run.folder}")
    remove_stale_temp_files(run.folder, SCRIPT, recursive=True)
    for key, value in (("machines", card.machine()), ("commands", shlex.join(["python", *sys.argv]))):
        seen = run.journal.data.setdefault(key, [])
        if value not in seen:
            seen.append(value)
    run.journal.save()
    if run.args.ray is not None and todo:
        from euchre_lab.evaluation.backends import connect_ray

        connect_ray(run.args.ray, num_cpus=run.args.workers)
    run.writer = SummaryWriter(str(run.folder))
    try:
        for i, part in enumerate(parts, 1):
            if part in todo:
                run_part(run, part, i, todo)
    finally:
        run.writer.close()
    card.write_card(run, final_name(run.args), [p.name for p in parts], run.folder / CARD)
    say(f"done: {run.folder / AGENT} (play it as ppo:{run.folder / AGENT}), card {run.folder / CARD}")


def continue_command(argv: Sequence[str] | None) -> str:
    """The command that continues a stopped run: the one that ran it, less `--overwrite`, which would start it over."""
    given = list(sys.argv[1:] if argv is None else argv)
    return shlex.join(["python", SCRIPT, *(token for token in given if token != "--overwrite")])


def main(argv: Sequence[str] | None = None) -> int:
    """The method's command line; one line and exit status 2 for a bad input, 130 on Ctrl-C."""
    from euchre_agents.checkpoint import CheckpointError
    from euchre_agents.pool import WorkerDied
    from euchre_agents.teacher_data import TeacherDataError
    from euchre_env import RulesError
    from euchre_env.extras import MissingExtraError
    from euchre_lab.cli import OptionError
    from euchre_lab.evaluation.journal import JournalError

    try:
        drive(prepare(parse_args(argv)))
    except (OptionError, CheckpointError, RulesError, TeacherDataError, ConnectionError, MissingExtraError, JournalError, WorkerDied) as e:
        return fail(SCRIPT, e)
    except (KeyboardInterrupt, SystemExit) as e:  # a distillation stopped by Ctrl-C saves and exits 130 itself
        if isinstance(e, SystemExit) and e.code != 130:
            raise
        return interrupted(SCRIPT, "the agent, the journal, labelled shards, checkpoints and match chunks are kept: "
                                   f"run `{continue_command(argv)}` again to continue the whole run")
    return 0
