"""Euchre in RLlib: the AEC env as an RLlib multi-agent env, a masked RLModule, policy mappings, the `rllib` bot.

Needs the `ray` extra (`pip install euchre-lab[ray]`); nothing else in the package imports this module
except when an `rllib:PATH` bot is built. RLlib's new API stack (RLModule, ConnectorV2, EnvRunner) is used.

- `make_env(env_config)`: `euchre_v0.env(...)` wrapped by RLlib's own `PettingZooEnv`; the rules stay in
  the engine (an illegal action raises `IllegalActionError`, so a training run that samples one fails).
- `EuchreRLModule`: the same `ActorCritic` network as train.py (MLP trunk, masked policy head, value
  head); illegal actions get logit `MASKED_LOGIT`, whose probability is exactly zero.
- `policy_mapping(kind)`: `"shared"` trains one policy for all four seats; `"team"` one per partnership
  (`team_0` for player_0/player_2, `team_1` for player_1/player_3).
- `rllib:PATH[,policy=ID][,sample]`: a trained module as a bot. PATH is a checkpoint written by
  `examples/rllib_train.py` (an `Algorithm.save_to_path` folder) or one module's folder inside it.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path
from typing import Any, Callable

import torch
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

from euchre_agents.base import file_sha256
from euchre_agents.checkpoint import CheckpointError, check_compatible, observation_signature
from euchre_agents.network import ActorCritic
from euchre_agents.ppo import PPOAgent
from euchre_env import euchre_v0
from euchre_env.engine import EPISODE_HAND, Engine
from euchre_env.rules import Rules

ENV_NAME = "euchre_v0"
"""The name `examples/rllib_train.py` registers `make_env` under (`config.environment(ENV_NAME)`)."""
SHARED = "shared"
TEAM = "team"
MODULE_PATH = Path("learner_group") / "learner" / "rl_module"
"""Where an Algorithm checkpoint keeps its RLModules, one folder per policy id."""
MODULE_FILE = "class_and_ctor_args.pkl"
"""The file every RLModule checkpoint folder holds (RLlib's `Checkpointable.CLASS_AND_CTOR_ARGS_FILE_NAME`)."""
FIX = "pass the folder examples/rllib_train.py wrote (an Algorithm checkpoint) or one RLModule's folder inside it"


def make_env(env_config: dict[str, Any] | None = None) -> PettingZooEnv:
    """The AEC env for RLlib; env_config keys `rules` (a dict), `episode` and `reward` as in `euchre_v0.env`."""
    cfg = dict(env_config or {})
    rules = Rules.from_dict(cfg.get("rules") or {})
    return PettingZooEnv(euchre_v0.env(rules=rules, episode=cfg.get("episode", EPISODE_HAND), reward=cfg.get("reward", "points")))


def policy_ids(kind: str) -> list[str]:
    """The policies a mapping trains: `["shared"]` or `["team_0", "team_1"]`."""
    if kind == SHARED:
        return [SHARED]
    if kind == TEAM:
        return [f"team_{t}" for t in range(2)]
    raise ValueError(f"policy mapping must be {SHARED!r} (one policy for all seats) or {TEAM!r} (one per team), got {kind!r}")


def policy_mapping(kind: str) -> Callable[..., str]:
    """RLlib's `policy_mapping_fn(agent_id, episode, **kwargs)` for one shared policy or one per team."""
    ids = policy_ids(kind)

    def mapping(agent_id: str, *args: Any, **kwargs: Any) -> str:
        return ids[int(agent_id.rsplit("_", 1)[1]) % len(ids)]

    return mapping


def module_config(env_config: dict[str, Any], hidden_size: int = 256, num_layers: int = 2, canonical_suits: bool = False) -> dict[str, Any]:
    """The RLModule's model_config: network sizes plus the game it is for (saved with every checkpoint)."""
    engine = Engine(Rules.from_dict(env_config.get("rules") or {}), episode=env_config.get("episode", EPISODE_HAND))
    return {
        "hidden_size": hidden_size,
        "num_layers": num_layers,
        "canonical_suits": canonical_suits,
        "rules": engine.rules.to_dict(),
        "episode": engine.episode,
        "observation": observation_signature(engine),
    }


class EuchreRLModule(TorchRLModule, ValueFunctionAPI):
    """PPO's RLModule over `{"observation", "action_mask"}` observations: train.py's masked ActorCritic."""

    def setup(self) -> None:
        """Build the ActorCritic for the game named in model_config."""
        cfg = self.model_config
        engine = Engine(Rules.from_dict(cfg["rules"]), episode=cfg["episode"])
        self.net = ActorCritic(engine, cfg["hidden_size"], cfg["num_layers"], cfg["canonical_suits"])

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits, _ = self.net(obs["observation"], obs["action_mask"] > 0)
        return {Columns.ACTION_DIST_INPUTS: logits}

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits, values = self.net(obs["observation"], obs["action_mask"] > 0)
        return {Columns.ACTION_DIST_INPUTS: logits, Columns.VF_PREDS: values}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """(B,) state values (the mask plays no part)."""
        return self.net.get_value(batch[Columns.OBS]["observation"])


# ---------------------------------------------------------------------------------------- the bot


def module_folder(path: str, policy: str | None = None) -> Path:
    """The RLModule folder of `policy` in an Algorithm checkpoint (or `path` itself if it is one module's folder)."""
    root = Path(path)
    if not root.is_dir():
        what = "a file, not a folder" if root.exists() else "no such folder"
        raise CheckpointError(f"no RLlib checkpoint at {path!r} ({what}); {FIX}")
    modules = root / MODULE_PATH
    if not modules.is_dir():
        if policy is not None:
            raise ValueError(f"{path!r} is one RLModule's folder; policy={policy} needs an Algorithm checkpoint")
        return root
    found = sorted(p.name for p in modules.iterdir() if p.is_dir())
    if policy is None:
        policy = SHARED if SHARED in found else (found[0] if len(found) == 1 else None)
        if policy is None:
            raise ValueError(f"{path!r} holds policies {found}: choose one with rllib:PATH,policy=ID")
    if policy not in found:
        raise ValueError(f"{path!r} has no policy {policy!r}; it holds {found}")
    return modules / policy


def folder_sha256(folder: Path) -> str:
    """One sha256 over a folder's files: each file's path (relative, in sorted order) and the sha256 of its bytes."""
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(folder).as_posix()}\0{file_sha256(file)}\n".encode())
    return digest.hexdigest()


def load_module(path: str, policy: str | None = None) -> EuchreRLModule:
    """A trained EuchreRLModule from a checkpoint, on the CPU and in eval mode (no Ray cluster needed)."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    folder = module_folder(path, policy).resolve()
    if not (folder / MODULE_FILE).is_file():
        raise CheckpointError(f"{path!r} is not an RLlib checkpoint ({folder} holds no {MODULE_FILE}); {FIX}")
    try:
        module = RLModule.from_checkpoint(str(folder))
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError) as e:
        detail = (str(e).splitlines() or [""])[0]
        raise CheckpointError(f"{path!r} is not a readable RLlib checkpoint ({type(e).__name__}: {detail}); {FIX}") from None
    if not isinstance(module, EuchreRLModule):
        raise ValueError(f"{path!r} holds a {type(module).__name__}, not a Euchre Lab EuchreRLModule")
    module.eval()
    return module


class RLlibAgent(PPOAgent):
    """Plays a trained EuchreRLModule: greedy over the legal actions, or sampling its masked policy."""

    name = "rllib"

    @classmethod
    def from_module_checkpoint(
        cls, engine: Engine, path: str, policy: str | None = None, sample: bool = False, seed: int | None = None
    ) -> "RLlibAgent":
        """Load a module, refusing one trained for other rules or another observation layout; `weights_sha256` is
        `folder_sha256` of the module's folder."""
        module = load_module(path, policy)
        check_compatible(module.model_config, engine, f"RLlib checkpoint {path!r}", same_positions=True)
        agent = cls(engine, module.net, sample=sample, seed=seed)
        agent.weights_sha256 = folder_sha256(module_folder(path, policy))
        return agent


def make_rllib(engine: Engine, arg: str, seed: int | None) -> RLlibAgent:
    """`rllib:PATH[,policy=ID][,sample]`."""
    path, *options = arg.split(",")
    usage = "usage: rllib:PATH[,policy=ID][,sample]"
    if not path:
        raise ValueError(f"the rllib agent needs a checkpoint; {usage}")
    policy, sample = None, False
    for option in options:
        if option == "sample":
            sample = True
        elif option.startswith("policy=") and option[len("policy=") :]:
            policy = option[len("policy=") :]
        else:
            raise ValueError(f"unknown rllib option {option!r}; {usage}")
    return RLlibAgent.from_module_checkpoint(engine, path, policy=policy, sample=sample, seed=seed)

