"""PPO self-play for Euchre: one network plays every seat it controls in thousands of games at once.

    python train.py                                          # the default preset, configs/ppo.yaml
    python train.py --config configs/ppo_tiny.yaml           # another preset; any option below overrides it
    python train.py --opponent-mix self=0.6,pool=0.2,heuristic=0.2 --rules deck=32 joker=true
    python train.py --resume runs/main/checkpoints/latest.pt # continue a run exactly where it stopped
    tensorboard --logdir runs

Each game is one row of `EuchreVectorEnv`; per step, every game asks one seat for a decision. Per game,
the learner controls all four seats (self-play) or one partnership against an opponent drawn from
`--opponent-mix` (a snapshot from the pool of past learners, or any registered bot); the opponent's
decisions are played but not trained on. `--stage distill` instead learns from teacher data
(`python -m euchre_lab.training.teacher`), and `--init-checkpoint` with `--kl-coef` fine-tunes a distilled policy.
`--stage exploit --target SPEC` (configs/exploit.yaml) trains a best response to a frozen bot and measures its gain.

Checkpoints (runs/{run_name}/checkpoints/update_NNNNNN.pt and latest.pt, written atomically) hold the
model, optimizer, every random stream, the games in progress, the opponent pool, the config, the rules
and the observation layout; `--resume` continues bit for bit on CPU and refuses a checkpoint made for
other rules or another observation layout. `euchre_agents/checkpoint.py` reads and checks a checkpoint,
and `euchre_agents/ppo.py` plays one as the `ppo` bot.

Where each part lives: the options `train_options.py`, their checks `train_checks.py`, the run and its
hints `runs.py`, checkpoints `checkpoints.py`, PPO `ppo_trainer.py` (opponents `league.py`),
distillation `distill.py`, the exploitability probe `exploit.py`; the command-line layer all the tools share is `cli.py`.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys

from euchre_env.extras import MissingExtraError, require
from euchre_lab.cli import fail, interrupted


def main(argv: list[str] | None = None) -> int:
    """train.py's command line: check every option, then train; one line and exit status 2 for a bad input.
    `--stage make` (or a preset with `stage: make`, as configs/recipe.yaml) makes an agent instead (`euchre_lab.making`).
    Without the [train] extra (torch, tensorboard) it says so in one line and exits with status 2."""
    try:
        require("train", what="training")
    except MissingExtraError as e:
        return fail("train.py", e)
    from euchre_agents.checkpoint import CheckpointError
    from euchre_env import RulesError
    from euchre_env.play import BotError
    from euchre_lab.training import exploit
    from euchre_lab.making.driver import main as make
    from euchre_lab.making.options import wants_make
    from euchre_lab.cli import OptionError
    from euchre_lab.training.distill import distill
    from euchre_lab.training.ppo_trainer import train
    from euchre_lab.training.runs import announce, default_run_name, kept_after_interrupt
    from euchre_lab.training.train_checks import check_args, run_folder
    from euchre_lab.training.train_options import EXPLOIT, SCRIPT, parse_args

    stage_functions = {"ppo": train, "distill": distill, EXPLOIT: exploit.run_exploit}
    if wants_make(argv):
        return make(argv)
    args = None
    try:
        args, checkpoint = parse_args(argv, description=__doc__.split("\n\n")[1])
        args = default_run_name(args)
        if args.stage == EXPLOIT:
            args = exploit.learner_args(args)
        inputs = check_args(args, checkpoint)
        if args.overwrite and run_folder(args).exists():
            shutil.rmtree(run_folder(args))
        announce(args)
        stage_functions[args.stage](dataclasses.replace(args, overwrite=False), inputs)
    except (OptionError, CheckpointError, RulesError, BotError) as e:
        return fail(SCRIPT, e)
    except KeyboardInterrupt:
        return interrupted(SCRIPT, kept_after_interrupt(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
