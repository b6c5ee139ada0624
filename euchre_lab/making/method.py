"""The method, as the parts of one run: label, distil, export, measure.

The bootstrap labels `bootstrap_hands` hands of heuristic play by their double-dummy values (open hands, cheap:
the records' most strength per CPU-hour) and distils them into a fresh network; or, with `start: TABLE`, the first
agent is that named table's shipped agent, carried over to this table (card by card where the deck differs).
Every iteration then takes the current agent to the next by the same three steps, at the same budget:

1. **label**: `hands` hands played by the agent (a share of seats by `heuristic`, a share of moves random, so that
   every action is visited), every decision valued: bids, alone calls and discards by the agent's own play-outs of
   the hand after each action (`labels: rollout`) or double-dummy (`labels: true`), cards double-dummy; or every
   decision, cards too, by the agent's play-outs (`labels: rollout_all`; from iteration `rollout_all_from` on,
   whatever `labels` says) (`euchre_agents.teacher`). The double-dummy iterations label the bids of `bid_share` of
   their hands (the rest their cards only); the play-out iterations label every hand's, may label `rollout_hands`
   hands each, and their play-outs may be played by a smaller `rollout_network`, distilled afresh at the start of
   each iteration from the labels of the one before;
2. **distil** the values into the agent, from its own weights, over a replay of the last `replay` iterations' data,
   as many samples as one pass over two iterations' data, at 5e-4 in the double-dummy iterations and 2.5e-4 in the
   play-out ones (`euchre_lab.training.distill`);
3. **export** the play-only agent, and measure it: the learning-curve matches against `pimc` and `heuristic`.

On a CPU with AMX (`native_bfloat16`) the play-outs run the agent's trunk in bfloat16 and distillation
computes its passes in it, about 1.4 and 1.5 times as fast (`benchmarks/making_speed.py`); elsewhere both stay
float32.

With `finetune_steps`, PPO self-play then fine-tunes the last iteration's agent, a KL penalty keeping it near that
agent (`configs/finetune.yaml`), and the fine-tuned agent is measured the same way and becomes the run's agent.

Only the agent file and the journal carry over between iterations. A replay folder that is missing (a run moved
to another machine) is refilled by the current agent before distilling.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from euchre_env import Rules

ROLLOUT_ALL = "rollout_all"
"""`labels` that values every decision, cards too, by the current agent's play-outs."""
BEHAVIOUR_SHARE = 0.7
"""Share of seats the current agent plays while labelling; `heuristic` plays the rest."""
EPSILON = 0.1
"""Share of moves made uniformly at random while labelling."""
GAMES_PER_SHARD = 256
BOOTSTRAP_TRAINING = {"learning_rate": 1e-3, "distill_epochs": 2.0}
DOUBLE_DUMMY_TRAINING = {"learning_rate": 5e-4, "distill_epochs": 1.0}
"""The distillation of an iteration whose cards are labelled double-dummy: at twice the play-out iterations' rate,
six iterations of 192,000 hands (a third with their bids) made better card play than twelve of 64,000 at 2.5e-4,
in the same time (EXPERIMENTS.md)."""
PLAYOUT_TRAINING = {"learning_rate": 2.5e-4, "distill_epochs": 1.0}
"""The distillation of an iteration whose every decision is labelled by play-outs."""
PLAYOUT_NET_TRAINING = {"learning_rate": 1e-3, "passes": 4.0}
"""The play-out network's distillation, from scratch: as many samples as `passes` passes over the labels of the
play-out iteration it serves (at 256 x 2 over 64,000 hands, 77 s; it played 0.10 points a hand below the agent it
learned from, and its labels made as good an iteration as the agent's own: EXPERIMENTS.md)."""
SAMPLED_ITERATIONS = 2
"""An iteration's distillation draws as many samples as `distill_epochs` passes over this many iterations' data,
whatever its replay holds, so that its cost does not grow with the replay."""
TRAINING = {"stage": "distill", "anneal_lr": True, "max_grad_norm": 1.0, "distill_batch_size": 2048, "holdout_fraction": 0.02,
            "canonical_suits": True, "action_values": True, "save_interval": 250, "keep_checkpoints": 1, "eval_interval": 0,
            "device": "cpu"}
"""train.py's distillation options every distillation of the method shares."""
CURVE_OPPONENTS = ("pimc", "heuristic")
CURVE_SEED = 46_100
FINAL_SEEDS = {"pimc": 46_201, "heuristic": 46_202, "shipped": 46_203, "start": 46_204}
"""Deals of the matches: the same for every iteration and every run, and used for nothing else."""
CARD_DECISIONS_PER_HAND = 11.3
BID_DECISIONS_PER_HAND = 5.3
"""Labelled card plays, and bids, alone calls and discards, per hand (16.6 in all: 1,061,486 decisions in 64,000 hands
of every hand's bids, 1,117,799 in 99,072 hands of none): size a distillation whose data is not written yet."""


def decisions_per_hand(bid_share: float) -> float:
    """Labelled decisions per hand where `bid_share` of the hands have their bids labelled."""
    return CARD_DECISIONS_PER_HAND + BID_DECISIONS_PER_HAND * bid_share


@dataclass
class Part:
    """One resumable piece of a run: its name in the journal, its kind (which rate its ETA uses), its units of work,
    and the function that does (or continues) it and returns its facts."""

    name: str
    kind: str
    size: float
    do: Callable[[Any], dict[str, Any]]


def iteration_name(k: int) -> str:
    """`bootstrap` for 0, else `iter_001`, ..."""
    return "bootstrap" if k == 0 else f"iter_{k:03d}"


FINETUNE = "finetune"
FINETUNE_PRESET = "configs/finetune.yaml"
"""train.py's preset of the fine-tune: its opponents, KL penalty, learning rate and batch."""


def finetune_name(k: int) -> str:
    """`finetune_012`: the fine-tune of iteration k's agent."""
    return f"{FINETUNE}_{k:03d}"


def last_name(args: Any) -> str:
    """The name of the stage that makes the run's agent: the last iteration, or its fine-tune."""
    return finetune_name(args.iterations) if args.finetune_steps else iteration_name(args.iterations)


def shard_plan(hands: int) -> tuple[int, int]:
    """(shards, hands per shard) of a labelling budget: shards of 256 hands, at least four of them."""
    per_shard = max(1, min(GAMES_PER_SHARD, hands // 4))
    return max(4, hands // per_shard), per_shard


# ---------------------------------------------------------------- label


def iteration_labels(labels: str, rollout_all_from: int, k: int) -> str:
    """The labels of iteration k: `rollout_all` from iteration `rollout_all_from` on (when it is not 0), else `labels`."""
    return ROLLOUT_ALL if 0 < rollout_all_from <= k else labels


def is_playout_iteration(args: Any, k: int) -> bool:
    """Whether iteration k labels every decision, cards too, by play-outs (the bootstrap: no)."""
    return bool(k) and iteration_labels(args.labels, args.rollout_all_from, k) == ROLLOUT_ALL


def iteration_hands(args: Any, k: int) -> int:
    """Hands iteration k labels: the bootstrap's (k = 0) `bootstrap_hands`, `rollout_hands` in the play-out
    iterations where it is set, else `hands`."""
    if k == 0:
        return args.bootstrap_hands
    return args.rollout_hands if is_playout_iteration(args, k) and args.rollout_hands else args.hands


def iteration_bid_share(args: Any, k: int) -> float:
    """Share of iteration k's hands whose bids are labelled: `bid_share` in the double-dummy iterations, every hand's
    in the bootstrap (open-hand labels cost no play-out) and in the play-out iterations."""
    return 1.0 if k == 0 or is_playout_iteration(args, k) else args.bid_share


def iteration_training(args: Any, k: int) -> dict[str, float]:
    """Learning rate and passes of iteration k's distillation: the bootstrap's, a double-dummy or a play-out one's."""
    if k == 0:
        return BOOTSTRAP_TRAINING
    return PLAYOUT_TRAINING if is_playout_iteration(args, k) else DOUBLE_DUMMY_TRAINING


def iteration_decisions(args: Any, k: int) -> float:
    """Labelled decisions iteration k's data will hold (by the measured decisions a hand): size its distillation
    before the data is written."""
    return iteration_hands(args, k) * decisions_per_hand(iteration_bid_share(args, k))


def uses_playout_net(args: Any, k: int) -> bool:
    """Whether iteration k's play-outs are played by a `rollout_network` distilled for it."""
    return bool(args.rollout_network) and is_playout_iteration(args, k)


def playout_name(k: int) -> str:
    """`playout_013`: the network that plays iteration k's play-outs."""
    return f"playout_{k:03d}"


def teacher_settings(k: int, agent: str | None, seed: int, hands: int, labels: str, refill: bool = False,
                     playout: str | None = None, bid_share: float = 1.0):
    """The labelling of iteration k (0: the bootstrap's open-hand labels of heuristic play; else `labels` labels of
    `agent`'s play, its play-outs played by the agent file `playout`, else by `agent`, the bids of `bid_share` of its
    hands labelled); a refill draws other deals."""
    from euchre_agents.network import native_bfloat16
    from euchre_agents.teacher_data import TeacherSettings

    per_shard = shard_plan(hands)[1]
    data_seed = seed * 10_000 + 2 * k + int(refill)
    if k == 0:
        return TeacherSettings(label="true", behaviour="heuristic=1", epsilon=EPSILON, games_per_shard=per_shard, seed=data_seed)
    spec = f"ppo:{agent}"
    everything = labels == ROLLOUT_ALL
    return TeacherSettings(label="rollout" if everything else labels, rollout_cards=everything,
                           behaviour=f"{spec}={BEHAVIOUR_SHARE},heuristic={1 - BEHAVIOUR_SHARE:.1f}",
                           rollout_agent=f"ppo:{playout or agent}" + (",bf16" if native_bfloat16() else ""), epsilon=EPSILON,
                           bid_share=bid_share, games_per_shard=per_shard, seed=data_seed)


def label(run: Any, folder: Path, settings: Any, hands: int) -> dict[str, Any]:
    """Write (or finish) a folder of labelled hands; what it holds and the hands labelled now."""
    from euchre_agents.teacher import generate
    from euchre_agents.teacher_data import MANIFEST, differences, manifest_identity, read_manifest
    from euchre_env.engine import EPISODE_HAND, Engine
    from euchre_lab.evaluation.backends import task_runner

    rules = Rules.from_dict(run.args.rules)
    shards, _ = shard_plan(hands)
    if (folder / MANIFEST).exists() and differences(read_manifest(folder), manifest_identity(rules, settings, Engine(rules, EPISODE_HAND))):
        shutil.rmtree(folder)  # begun by an agent file of another path (the run folder moved): labelled anew
    before = len(read_manifest(folder)["shards"]) if (folder / MANIFEST).exists() else 0
    manifest = generate(folder, shards, rules, settings, progress=run.args.progress,
                        run_jobs=task_runner(run.args.workers, run.args.ray))
    made = (len(manifest["shards"]) - before) * settings.games_per_shard
    return {"decisions": sum(manifest["shards"].values()), "hands": shards * settings.games_per_shard, "work": made}


# ---------------------------------------------------------------- distil and export


def distil_passes(args: Any, k: int, folders: int) -> float:
    """Passes over its replay of `folders` folders that iteration k's distillation makes (the bootstrap's: two)."""
    passes = iteration_training(args, k)["distill_epochs"]
    return passes if k == 0 else passes * min(k, SAMPLED_ITERATIONS) / folders


def training_args(run: Any, k: int, folders: list[Path], init: str, resume: str):
    """train.py's `Args` of iteration k's distillation."""
    training = {**iteration_training(run.args, k), "distill_epochs": distil_passes(run.args, k, len(folders))}
    return distillation_args(run, iteration_name(k), run.args.network, training, k, folders, init, resume)


def playout_net_samples(args: Any, k: int) -> float:
    """Samples of the distillation of play-out iteration k's network: `passes` passes over that iteration's labels."""
    return PLAYOUT_NET_TRAINING["passes"] * iteration_decisions(args, k)


def playout_net_args(run: Any, k: int, folders: list[Path], resume: str):
    """train.py's `Args` of the distillation of iteration k's play-out network, from scratch."""
    passes = playout_net_samples(run.args, k) / max(1, decisions_in(folders))
    training = {"learning_rate": PLAYOUT_NET_TRAINING["learning_rate"], "distill_epochs": passes}
    return distillation_args(run, playout_name(k), run.args.rollout_network, training, k, folders, "", resume)


def distillation_args(run: Any, name: str, network: dict, training: dict, k: int, folders: list[Path], init: str,
                      resume: str):
    """train.py's `Args` of one of the run's distillations: `network` from `init` (fresh when empty) over `folders`."""
    from euchre_agents.network import native_bfloat16
    from euchre_lab.training.train_options import Args

    a = run.args
    return Args(**TRAINING, **training, **network, distill_bf16=native_bfloat16(),
                teacher_data=",".join(str(f) for f in folders), init_checkpoint=init, resume=resume, rules=a.rules,
                seed=a.seed * 10_000 + k, run_name=name, runs_dir=str(run.folder / "training"),
                progress=a.progress, torch_threads=a.torch_threads)


def decisions_in(folders: list[Path]) -> int:
    """Labelled decisions the folders hold, by their manifests."""
    from euchre_agents.teacher_data import read_manifest

    return sum(sum(read_manifest(f)["shards"].values()) for f in folders)


def latest_checkpoint_or_empty(folder: Path) -> Path:
    """The path of a part's latest checkpoint. Where none was written, what its training folder holds (the
    TensorBoard logs of a start killed before its first checkpoint) goes, so that the part starts over empty."""
    from euchre_lab.training.paths import latest_checkpoint

    latest = latest_checkpoint(folder)
    if not latest.exists() and folder.exists():
        shutil.rmtree(folder)
    return latest


def distil(run: Any, k: int, folders: list[Path], init: str) -> dict[str, Any]:
    """Distil the folders' labels into the agent `init` (a fresh network when empty), continuing exactly from the
    distillation's latest checkpoint if one was written; its updates and samples."""
    return distil_stage(run, iteration_name(k), folders, lambda resume: training_args(run, k, folders, init, resume))


def playout_net(run: Any, k: int, folders: list[Path]) -> dict[str, Any]:
    """Distil iteration k's play-out network from the labels of the iterations before it, and export it to
    agents/playout_K.pt (which iteration k's export deletes with the previous agent); its updates, samples, sha256."""
    facts = distil_stage(run, playout_name(k), folders, lambda resume: playout_net_args(run, k, folders, resume))
    exported = export_agent(run, playout_name(k), run.stage_agent_path(playout_name(k)))
    drop_checkpoints(run, playout_name(k))
    return {**facts, "sha256": exported["sha256"]}


def distil_stage(run: Any, name: str, folders: list[Path], make_args: Callable[[str], Any]) -> dict[str, Any]:
    """One distillation of the run, by the train.py `Args` that `make_args(resume)` gives, continuing exactly from its
    latest checkpoint if one was written; its updates and samples."""
    from euchre_agents.checkpoint import RESUME, read_checkpoint
    from euchre_lab.training.distill import distill
    from euchre_lab.training.train_checks import check_args

    latest = latest_checkpoint_or_empty(run.folder / "training" / name)
    checkpoint = read_checkpoint(str(latest), RESUME) if latest.exists() else None
    args = make_args(str(latest) if checkpoint else "")
    start = 0 if checkpoint is None else checkpoint["global_step"]
    distill(args, check_args(args, checkpoint))
    done = read_checkpoint(str(latest), RESUME)
    return {"updates": done["update"], "samples": done["global_step"], "work": done["global_step"] - start,
            "data": [str(f.relative_to(run.folder)) for f in folders]}


def finetune_batch() -> tuple[int, int]:
    """(steps per update, value warm-up updates) of FINETUNE_PRESET."""
    from euchre_lab.training.train_options import read_config

    preset = read_config(FINETUNE_PRESET)
    return preset["num_envs"] * preset["num_steps"], preset.get("value_warmup_updates", 0)


def finetune(run: Any, k: int) -> dict[str, Any]:
    """Fine-tune iteration k's agent by `finetune_steps` of PPO self-play (FINETUNE_PRESET), continuing exactly from the
    fine-tune's latest checkpoint if one was written; its updates and steps."""
    from euchre_agents.checkpoint import RESUME, read_checkpoint
    from euchre_lab.training.ppo_trainer import train
    from euchre_lab.training.train_checks import check_args
    from euchre_lab.training.train_options import parse_args

    a, name = run.args, finetune_name(k)
    latest = latest_checkpoint_or_empty(run.folder / "training" / name)
    how = ["--progress", str(a.progress).lower(), "--torch-threads", str(a.torch_threads)]
    if latest.exists():
        argv = ["--resume", str(latest), *how]
        start = read_checkpoint(str(latest), RESUME)["global_step"]
    else:
        batch, warmup = finetune_batch()
        warmup = min(warmup, a.finetune_steps // batch // 2)   # a short fine-tune keeps half its updates for the policy
        argv = ["--config", FINETUNE_PRESET, "--init-checkpoint", str(run.agent_path(k)),
                "--total-timesteps", str(a.finetune_steps), "--value-warmup-updates", str(warmup), "--eval-interval", "0",
                "--keep-checkpoints", "1", "--seed", str(a.seed * 10_000 + k), "--runs-dir", str(run.folder / "training"),
                "--run-name", name, "--device", "cpu", *how]
        argv += ["--rules", json.dumps(a.rules)] if a.rules else []
        start = 0
    args, checkpoint = parse_args(argv)
    train(args, check_args(args, checkpoint))
    done = read_checkpoint(str(latest), RESUME)
    return {"updates": done["update"], "steps": done["global_step"], "work": done["global_step"] - start}


def export_finetune(run: Any, k: int) -> dict[str, Any]:
    """agents/finetune_K.pt from the fine-tune's last checkpoint, beside iteration k's agent (more iterations
    continue from that one); the fine-tune's checkpoints go."""
    exported = export_agent(run, finetune_name(k), run.finetune_agent_path(k))
    drop_checkpoints(run, finetune_name(k))
    return exported


def replay_iterations(run: Any, k: int) -> list[int]:
    """The iterations whose data iteration k distils: its own and those before it within the replay (the bootstrap: 0)."""
    return list(range(max(1, k - run.args.replay + 1), k + 1)) if k else [0]


def export(run: Any, k: int) -> dict[str, Any]:
    """agents/iter_K.pt from the distillation's last checkpoint; the earlier agent and the data that no longer fits the
    replay go, and so do the distillation's checkpoints (its TensorBoard logs stay)."""
    agent = run.agent_path(k)
    exported = export_agent(run, iteration_name(k), agent)
    run.journal.set_agent(k, agent)
    for old in agent.parent.glob("*.pt"):
        if old != agent:
            old.unlink()
    keep = {run.data_path(j) for j in replay_iterations(run, k + 1)[:-1]}
    for folder in (run.folder / "data").glob("*"):
        if folder not in keep:
            shutil.rmtree(folder)
    drop_checkpoints(run, iteration_name(k))
    return exported


def export_agent(run: Any, name: str, agent: Path) -> dict[str, Any]:
    """Write the play-only `agent` from the run's training `name`'s last checkpoint; its sha256 and bytes."""
    from euchre_agents.base import file_sha256
    from euchre_agents.checkpoint import export_policy
    from euchre_lab.training.paths import latest_checkpoint

    agent.parent.mkdir(parents=True, exist_ok=True)
    export_policy(str(latest_checkpoint(run.folder / "training" / name)), str(agent))
    return {"sha256": file_sha256(agent), "bytes": agent.stat().st_size, "work": 0}


def drop_checkpoints(run: Any, name: str) -> None:
    """Delete the checkpoints of the run's training `name` once its agent is exported (its TensorBoard logs stay).
    Last of an export's steps: until then a killed export can be done again from them."""
    from euchre_lab.training.paths import checkpoint_folder

    shutil.rmtree(checkpoint_folder(run.folder / "training" / name))


CALIBRATION_HANDS = 512
"""Hands the carried-over agent plays with itself to calibrate its policy's temperature (`calibrate_policy`)."""


def write_start(run: Any, table: str, start: Path) -> tuple[Path, float]:
    """Write the named table's shipped agent, carried over to this run's table and calibrated, to `start`; the
    source's path and the temperature its logits were divided by."""
    from euchre_agents.checkpoint import carry_policy
    from euchre_agents.ppo import shipped_path

    source = shipped_path(table)
    carry_policy(str(source), str(start), Rules.from_dict(run.args.rules))
    return source, calibrate_policy(start, run.args.seed)


def calibrate_policy(path: Path, seed: int) -> float:
    """Divide an agent's policy logits by the temperature that brings them nearest (in cross-entropy) to softmax of its
    own action values, over the decisions of hands it plays with itself; the temperature. Greedy play is unchanged.

    Distillation trains the policy toward softmax(values): a fine-tuned agent (the shipped standard one was sharpened
    to T = 0.05) is 20 times as peaked, and a first distillation from it spent its updates flattening the logits and
    wrecked its bids (EXPERIMENTS.md, "Making agents")."""
    import numpy as np
    import torch

    from euchre_agents.checkpoint import PLAY, POLICY_KEYS, read_checkpoint, save_policy
    from euchre_agents.network import MASKED_LOGIT, sharpen_policy
    from euchre_agents.ppo import PPOAgent
    from euchre_env.engine import EPISODE_HAND, Engine
    from euchre_env.play import play

    policy = read_checkpoint(str(path), PLAY)
    engine = Engine(Rules.from_dict(policy["rules"]), EPISODE_HAND)
    agent = PPOAgent.from_checkpoint(engine, str(path), seed=seed)
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    state = engine.init(np.random.default_rng(seed).integers(0, 2**63, size=CALIBRATION_HANDS, dtype=np.uint64))
    play(engine, state, [agent], np.zeros(4, np.int64), on_decision=lambda _b, _r, obs, mask, _a: seen.append((obs.copy(), mask.copy())))
    obs = torch.from_numpy(np.concatenate([o for o, _ in seen]))
    mask = torch.from_numpy(np.concatenate([m for _, m in seen]))
    with torch.no_grad():
        logits, _, q = agent.net.heads(obs, mask)
        target = torch.softmax(torch.where(mask, q, torch.full((), MASKED_LOGIT)), dim=1)

        def cross_entropy(t: float) -> float:
            return -(target * torch.where(mask, torch.log_softmax(logits / t, dim=1), torch.zeros(()))).sum(1).mean().item()

        temperature = min(np.geomspace(0.25, 100.0, 81).tolist(), key=cross_entropy)
    model = sharpen_policy(agent.net, temperature).state_dict()
    save_policy({**{k: policy[k] for k in POLICY_KEYS}, "model": model}, str(path))
    return float(temperature)


def carry_over(run: Any, table: str, start: Path) -> dict[str, Any]:
    """The first agent from a named table's shipped agent: its weights, carried over to this run's table
    (`carry_policy`); kept as `start` (the final matches play it) and as the current agent."""
    from euchre_agents.base import file_sha256

    source, temperature = write_start(run, table, start)
    agent = run.agent_path(0)
    agent.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(start, agent)
    run.journal.set_agent(0, agent)
    return {"table": table, "source": source.name, "source_sha256": file_sha256(source), "temperature": temperature,
            "sha256": file_sha256(agent), "work": 0}


# ---------------------------------------------------------------- matches


def match(run: Any, agent: Path, opponent: str, pairs: int, seed: int, out: Path) -> dict[str, Any]:
    """A duplicate match of the agent against `opponent` (continuing the chunks an earlier attempt finished); its margin."""
    from euchre_lab.evaluation import journal
    from euchre_lab.evaluation.match import play_match
    from euchre_lab.evaluation.report import save_match

    spec = f"ppo:{agent}"
    # chunks of another match there are stale (a final match stopped before `final_pairs` changed): played anew
    result, _ = journal.play_continuing(out / "chunks", lambda: play_match(
        Rules.from_dict(run.args.rules), spec, opponent, hands=2 * pairs, seed=seed, workers=run.args.workers,
        ray=run.args.ray, progress=run.args.progress, journal=out / "chunks"), drop_other=True)
    save_match(result, out, {"bots": [spec, opponent], "pairs": pairs, "seed": seed, "rules": run.args.rules}, plots=False)
    journal.remove(out / "chunks")
    return {"opponent": opponent, "pairs": result.num_pairs, "seed": seed, "margin": dataclasses.asdict(result.margin_per_hand),
            "point_share": dataclasses.asdict(result.point_share_a), "weights_sha256": result.weights.get(spec),
            "work": result.num_hands}
