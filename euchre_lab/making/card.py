"""What a run leaves besides its journal: agent.pt, which keeps the preset that made it, the learning-curve
figure and MODEL_CARD.md."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from euchre_agents.atomic import write_atomic
from euchre_env import Rules
from euchre_env.named_tables import table_name
from euchre_lab.making.journal import FORMAT, HEARTBEAT_S
from euchre_lab.making.method import CURVE_SEED, FINETUNE, finetune_name
from euchre_lab.making.options import BOOTSTRAP, preset_of

CURVE_FIGURE = "curve.png"


def machine() -> str:
    """This machine in one line: its CPU model (with its family, model and stepping numbers, which tell apart the
    hosts that a cloud names alike), cores and system, and whether the play-outs and distillation ran in bfloat16
    (`native_bfloat16`)."""
    from euchre_agents.network import native_bfloat16

    model = platform.processor() or platform.machine()
    try:
        fields = dict(line.split(":", 1) for line in Path("/proc/cpuinfo").read_text().split("\n\n")[0].splitlines()
                      if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        model = f"{fields['model name']} (family {fields['cpu family']}, model {fields['model']}, stepping {fields['stepping']})"
    except (OSError, KeyError, ValueError):
        pass
    precision = "bfloat16 play-outs and distillation" if native_bfloat16() else "float32"
    return f"{model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}, {precision}"


def commit() -> str | None:
    """The checkout's commit (with `+changes` when its tracked files differ from it), None outside a checkout."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode:
        return None
    return head.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


def made_by(run: Any) -> dict[str, Any]:
    """How the agent was made: the method, the preset (as read and as written in its file), the commands that ran it
(a run continued by a second command has two), the commit."""
    from euchre_lab.presets import locate

    try:
        text = locate(run.args.config).read_text()
    except OSError:
        text = None
    return {"method": FORMAT, "preset": preset_of(run.args), "preset_file": run.args.config, "preset_text": text,
            "commands": run.journal.data.get("commands", []), "commit": commit()}


def agent_made_by(agent: Path) -> dict[str, Any] | None:
    """The `made_by` that agent.pt keeps (the commit that made it, not that of a later command that only played final
    matches or rewrote the card), None where the file is missing or has none."""
    from euchre_agents.checkpoint import PLAY, CheckpointError, read_checkpoint

    try:
        return read_checkpoint(str(agent), PLAY).get("made_by")
    except (CheckpointError, OSError):
        return None


def write_agent(run: Any, src: Path, dst: Path, part: str) -> dict[str, Any]:
    """agent.pt: the last iteration's play-only agent with `made_by` (the preset's text among it); written again
    where the run moved without it, with the `made_by` of the command that first wrote it."""
    from euchre_agents.base import file_sha256
    from euchre_agents.checkpoint import PLAY, POLICY_KEYS, read_checkpoint, save_policy

    policy = {k: v for k, v in read_checkpoint(str(src), PLAY).items() if k in POLICY_KEYS}
    made = (run.journal.part(part) or {}).get("facts", {}).get("made_by") or made_by(run)
    save_policy({**policy, "made_by": made}, str(dst))
    return {"sha256": file_sha256(dst), "bytes": dst.stat().st_size, "made_by": made, "work": 0}


def shipped_spec(rules: Rules) -> str | None:
    """The spec of the shipped agent of these rules' named table, where there is one (the final head-to-head)."""
    from euchre_agents.ppo import shipped_path

    table = table_name(rules)
    return f"ppo:{shipped_path(table)}" if table and shipped_path(table).exists() else None


# ---------------------------------------------------------------- the curve and the card


FINETUNE_OFFSET = 0.5
"""Where a fine-tune's curve point stands: half an iteration after the iteration it fine-tuned."""


def stage_position(head: str) -> float:
    """The curve's x of a stage: 0 for the bootstrap, k for iteration k, k + FINETUNE_OFFSET for its fine-tune."""
    if head == "bootstrap":
        return 0
    if head.startswith(f"{FINETUNE}_"):
        return int(head.removeprefix(f"{FINETUNE}_")) + FINETUNE_OFFSET
    return int(head.removeprefix("iter_"))


def stage_label(x: float) -> str:
    """`12`, or `12 + fine-tune`."""
    return f"{int(x)} + fine-tune" if x != int(x) else f"{int(x)}"


def curve_points(journal: dict[str, Any], opponent: str) -> list[tuple[float, dict[str, float]]]:
    """(position, margin) of each learning-curve match against `opponent` the journal holds, in order."""
    points = []
    for name, record in journal["parts"].items():
        head, _, tail = name.partition("/")
        if tail == f"curve_{opponent}" and record.get("status") == "finished":
            points.append((stage_position(head), record["facts"]["margin"]))
    return sorted(points, key=lambda p: p[0])


def draw_curve(journal: dict[str, Any], out: Path, title: str) -> None:
    """The learning curve: the margin against each curve opponent after each iteration, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for opponent in ("pimc", "heuristic"):
        points = curve_points(journal, opponent)
        if points:
            x = [k for k, _ in points]
            y = [m["value"] for _, m in points]
            err = [[m["value"] - m["low"] for _, m in points], [m["high"] - m["value"] for _, m in points]]
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=f"vs {opponent}")
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("iteration (0: the first agent; a half step: the fine-tune)")
    ax.set_ylabel("margin, points per hand (95% interval)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    write_atomic(out, lambda f: fig.savefig(f, format="png", dpi=110))
    plt.close(fig)


def elapsed(parts: dict[str, Any]) -> float:
    """Seconds from the first part's start to the last finished part's end, by the journal's clock."""
    import datetime

    stamp = lambda text: datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S%z").timestamp()  # noqa: E731
    starts = [stamp(p["started"]) for p in parts.values() if p.get("started")]
    ends = [stamp(p["finished"]) for p in parts.values() if p.get("finished")]
    return max(ends) - min(starts) if starts and ends else 0.0


def _hours(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds < 5400 else f"{seconds / 3600:.2f} h"


def card_text(run: Any, final: str, planned: list[str]) -> str:
    """MODEL_CARD.md from the journal: the preset and command, the commit, the machine, each part's wall time, the
    curve and the final matches with their seeds. Times count the parts named in `planned` (the preset's plan), not
    the parts an earlier preset of a continued run played."""
    parts = {name: run.journal.data["parts"][name] for name in planned if name in run.journal.data["parts"]}
    lines = header_lines(run, final, parts)
    lines += ["", "## Wall time by iteration", "", *iteration_rows(run, parts)]
    lines += finetune_lines(run, parts)
    lines += ["", "## Where the time goes", "", "| kind of part | wall time | share |", "|---|---:|---:|"]
    lines += [f"| {kind} | {_hours(seconds)} | {100 * share:.0f}% |" for kind, seconds, share in profile(parts)]
    lines += curve_lines(run)
    lines += final_lines(final, parts)
    lines += ["", "## Exploitability", "", *probe_lines(run), "",
              "Every part's settings, facts and wall time are in `journal.json` beside this card.", ""]
    return "\n".join(lines)


def header_lines(run: Any, final: str, parts: dict[str, Any]) -> list[str]:
    """The card's title and its facts: the table, the commands and preset, the commit, the machine, the wall time,
    the first agent and the weights' sha256."""
    from euchre_lab.evaluation.match_result import rules_label

    j = run.journal.data
    others = len(j["parts"]) - len(parts)
    agent = run.folder / "agent.pt"
    made = made_by(run)
    kept = agent_made_by(agent) or made  # what made agent.pt, not a later command that only rewrote this card
    table = table_name(Rules.from_dict(run.args.rules))
    return [
        f"# Model card: {agent}",
        "",
        f"A play-only Euchre agent (`ppo:{agent}`) for the table **{table or rules_label(run.args.rules)}**, made by "
        f"`train.py --stage make` ({FORMAT}).",
        "",
        f"- **Command{'s' * (len(made['commands']) > 1)}:** " + "; then ".join(f"`{c}`" for c in made["commands"]),
        f"- **Preset:** `{json.dumps(made['preset'], sort_keys=True)}`" + (
            " (agent.pt keeps it and the preset file's text under `made_by`)" if kept["preset"] == made["preset"] else
            f"; agent.pt was made with `{json.dumps(kept['preset'], sort_keys=True)}` (the run was continued with this one later)"),
        f"- **Commit** (that made agent.pt): `{kept['commit'] or 'not a git checkout'}`",
        f"- **Machine:** {'; '.join(j.get('machines', [])) or machine()} ({run.args.workers} worker(s))",
        f"- **Wall time, end to end:** {_hours(sum(p['wall_s'] for p in parts.values()))} over {len(parts)} parts "
        f"(an attempt killed outright counts to its last heartbeat, at most {HEARTBEAT_S:.0f} s before it stopped); "
        f"{_hours(elapsed(parts))} from the first part's start to the last part's end, pauses between commands included"
        + (f"; the journal keeps {others} more part(s) of an earlier preset, not counted" if others else ""),
        f"- **First agent:** {first_agent(run)}",
        f"- **Weights:** sha256 `{parts[f'{final}/agent']['facts']['sha256']}`",
    ]


def curve_lines(run: Any) -> list[str]:
    """The learning curve's figure and its table: each stage's margins against `pimc` and `heuristic`."""
    j = run.journal.data
    lines = ["", f"## Learning curve ({run.args.curve_pairs:,} pairs per point, deals of seed {CURVE_SEED})", "",
             f"![learning curve]({CURVE_FIGURE})", "", "| iteration | vs pimc | vs heuristic |", "|---|---|---|"]
    pimc, heuristic = dict(curve_points(j, "pimc")), dict(curve_points(j, "heuristic"))
    for k in sorted(set(pimc) | set(heuristic)):
        lines.append(f"| {stage_label(k)} | {_margin(pimc.get(k))} | {_margin(heuristic.get(k))} |")
    return lines


def final_lines(final: str, parts: dict[str, Any]) -> list[str]:
    """The table of the final matches that finished: opponent, pairs, margin, point share, seed and wall time."""
    lines = ["", "## Final matches (duplicate deals, 95% intervals)", "",
             "| opponent | pairs | margin per hand | point share | seed | wall time |", "|---|---:|---|---|---:|---:|"]
    for name, record in parts.items():
        if name.startswith(f"{final}/vs_") and record.get("status") == "finished":
            f = record["facts"]
            share = f["point_share"]
            lines.append(f"| `{f['opponent']}` | {f['pairs']:,} | **{_margin(f['margin'])}** | {100 * share['value']:.1f}% | "
                         f"{f['seed']} | {_hours(record['wall_s'])} |")
    return lines


def iteration_rows(run: Any, parts: dict[str, Any]) -> list[str]:
    """The table of each iteration's wall time by step (with a column for its play-out network where the preset has one)."""
    playouts = bool(run.args.rollout_network)
    lines = ["| iteration | " + "play-out network | " * playouts + "label | distil | curve matches | labelled decisions | "
             "distillation samples |", "|---|" + "---:|" * (5 + playouts)]
    for k in range(run.args.iterations + 1):
        head = "bootstrap" if k == 0 else f"iter_{k:03d}"
        rec = {tail: parts.get(f"{head}/{tail}", {}) for tail in ("playout_net", "label", "distil", "curve_pimc", "curve_heuristic")}
        curve = rec["curve_pimc"].get("wall_s", 0.0) + rec["curve_heuristic"].get("wall_s", 0.0)
        playout = f"{_hours(rec['playout_net'].get('wall_s', 0.0))} | " * playouts
        lines.append(f"| {head} | {playout}{_hours(rec['label'].get('wall_s', 0.0))} | {_hours(rec['distil'].get('wall_s', 0.0))} | "
                     f"{_hours(curve)} | {rec['label'].get('facts', {}).get('decisions', 0):,} | "
                     f"{rec['distil'].get('facts', {}).get('samples', 0):,} |")
    return lines


def finetune_lines(run: Any, parts: dict[str, Any]) -> list[str]:
    """The fine-tune's row: its steps, updates and wall time; nothing for a run without one."""
    if not run.args.finetune_steps:
        return []
    head = finetune_name(run.args.iterations)
    train = parts.get(f"{head}/train", {})
    facts = train.get("facts", {})
    return ["", f"Then `{head}`: iteration {run.args.iterations}'s agent fine-tuned by {facts.get('steps', 0):,} steps "
                f"({facts.get('updates', 0):,} updates) of PPO self-play kept near it by a KL penalty (configs/finetune.yaml) "
                f"in {_hours(train.get('wall_s', 0.0))}."]


def first_agent(run: Any) -> str:
    """What iteration 0 was: the bootstrap, or another table's shipped agent carried over (with its sha256)."""
    if run.args.start == BOOTSTRAP:
        return f"a bootstrap: {run.args.bootstrap_hands:,} hands of `heuristic` play labelled double-dummy, distilled into a fresh network"
    facts = (run.journal.part("bootstrap/carry_over") or {}).get("facts", {})
    return (f"the {run.args.start} table's shipped agent (`{facts.get('source', '?')}`, sha256 `{facts.get('source_sha256', '?')}`), "
            f"its weights carried over to this table, its policy's logits divided by {facts.get('temperature', float('nan')):.2f} "
            f"to the scale of its action values (its greedy play unchanged)"
            + ("; the final match against it is `start`" if run.args.iterations else "; no iterations, so it is this agent"))


PROBE_STEPS = 2_000_000
"""The stated budget of the card's exploitability probe: PPO steps of a best response started from the agent's weights."""


def probe_command(run: Any) -> str:
    """The probe whose result the card shows: a best response of PROBE_STEPS trained against the frozen agent."""
    from euchre_lab.evaluation.match_result import rules_label

    table = "" if not run.args.rules else f" --rules {rules_label(run.args.rules)}"
    return (f"python train.py --config configs/exploit.yaml --target ppo:{run.folder / 'agent.pt'} --exploit-init target "
            f"--total-timesteps {PROBE_STEPS}{table} --runs-dir {run.folder} --run-name probe")


def probe_lines(run: Any) -> list[str]:
    """The probe's gain against the agent at its budget, or the command that measures it (the card is written anew
    each time the run's command runs, so run it again after the probe)."""
    found = run.folder / "probe" / "exploit.json"
    if not found.is_file():
        return [f"Not measured yet: `{probe_command(run)}`, then the run's command again to rewrite this card."]
    p = json.loads(found.read_text())
    g = p["gain"]
    return [f"A best response of {p['steps']:,} PPO steps from the agent's weights gains **{_margin(g)}** points per hand "
            f"against it over {p['pairs']:,} pairs (seed {p['final_match']['seed']}): `{probe_command(run)}`."]


PROFILE_KINDS = {"label_true": "labelling, open hands (bootstrap)", "label_rollout": "labelling, play-outs (iterations)",
                 "label_rollout_all": "labelling, play-outs for every decision (iterations)",
                 "label_playout_net": "labelling, play-outs by the play-out network for every decision (iterations)",
                 "distil": "distillation", "distil_playout": "distillation of the play-out networks", FINETUNE: "fine-tune (PPO self-play)", "export": "exports"}


def profile(parts: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(kind, seconds, share of the whole) of the journaled parts' wall time by kind of part, largest first; matches
    split into the learning curve's and the final ones."""
    totals: dict[str, float] = {}
    for name, record in parts.items():
        kind = record["kind"]
        if kind.startswith("match_"):
            kind = ("final matches" if name.startswith("final_") else "learning-curve matches") + f" vs {kind[6:]}"
        kind = PROFILE_KINDS.get(kind, kind)
        totals[kind] = totals.get(kind, 0.0) + record["wall_s"]
    whole = sum(totals.values()) or 1.0
    return [(k, v, v / whole) for k, v in sorted(totals.items(), key=lambda kv: -kv[1])]


def _margin(m: dict[str, float] | None) -> str:
    """A journaled estimate (a match's margin, the probe's gain) as `Estimate` prints it; "" for none."""
    from euchre_lab.evaluation.estimates import Estimate

    return "" if m is None else str(Estimate(**m))


def write_card(run: Any, final: str, planned: list[str], path: Path) -> dict[str, Any]:
    """MODEL_CARD.md and the learning-curve figure beside agent.pt; `planned` names the preset's parts."""
    draw_curve(run.journal.data, run.folder / CURVE_FIGURE, f"{run.args.run_name}: margin after each iteration")
    text = card_text(run, final, planned)
    write_atomic(path, lambda f: f.write(text.encode()))
    return {"bytes": len(text), "work": 0}
