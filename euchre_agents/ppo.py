"""The PPO policy network, its checkpoint format, and the `ppo` bot that plays a trained checkpoint.

`make_agent("ppo:runs/main/checkpoints/latest.pt", engine)` plays greedily (the most probable legal
action); `ppo:PATH,sample` samples from the masked policy instead. A checkpoint only plays the rules
it was trained on, and observations with the same blocks: any difference is refused with
`CheckpointMismatchError`, which names every field that differs. A checkpoint whose blocks merely sit
at other positions (an older layout of the same features) plays unchanged: its first layer's columns
are moved to the new positions, which computes exactly the same function. A checkpoint that carries
a checksum (`CHECKSUM`: the sha256 of all its other entries, which train.py and `export_policy` write)
is read only if its contents still match it.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from pathlib import Path
from typing import IO, Any

import numpy as np
import torch
import torch.nn as nn

from euchre_agents.atomic import write_atomic
from euchre_agents.base import Agent
from euchre_env.cards import NUM_SUITS, SUIT_OFFSET, same_colour_suit
from euchre_env.engine import Engine
from euchre_env.observation import AXIS_SIZES, BLOCK_AXES, block_shapes
from euchre_env.rules import Rules

MASKED_LOGIT = -1e8
"""Logit given to illegal actions: exp() of it underflows to exactly 0, so they are never sampled."""


CHECKPOINT_FORMAT = 1
"""The `format` train.py writes into every checkpoint (and `export_policy` keeps)."""
CHECKSUM = "sha256"
"""The checkpoint entry holding the sha256 of all its other entries (`contents_sha256`); older files have none."""
NUMBERED = "update_*.pt"
"""The numbered checkpoints train.py keeps beside latest.pt (update_NNNNNN.pt)."""


class CheckpointError(ValueError):
    """A file that is not a usable train.py checkpoint: missing, unreadable, truncated or incomplete."""


class CheckpointMismatchError(CheckpointError):
    """A checkpoint made for other rules or another observation layout than the engine's."""


def layer_init(layer: nn.Linear, std: float = float(np.sqrt(2)), bias: float = 0.0) -> nn.Linear:
    """Orthogonal weights and constant bias, as in CleanRL's PPO."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


SUIT_FREE_AXES = frozenset(["seat", "trick", "phase", "team", "tricks", "bid"])
"""Observation axes that name no suit and no card: suit relabelling leaves them as they are."""


def suit_relabelling(engine: Engine) -> tuple[np.ndarray, np.ndarray]:
    """For each reference suit r: (obs_src (4, D), action_src (4, A)), canonical index -> actual index.

    The relabelling maps suit r to suit 0, its colour-mate to suit 3 (= same_colour_suit(0), so the
    bowers stay bowers) and the other two suits, in their order, to 1 and 2; the joker stays itself.
    Each observation block is relabelled along its `card`, `suit` and `bid_choice` axes (`BLOCK_AXES`).
    """
    deck, layout, shapes = engine.deck, engine.observation_layout, block_shapes(engine.num_cards)
    unknown = {a for axes in BLOCK_AXES.values() for a in axes} - SUIT_FREE_AXES - {"card", "suit", "bid_choice"}
    if unknown:
        raise ValueError(f"canonical_suits cannot relabel observation axes {sorted(unknown)}")
    cards = deck.num_cards
    card_of = {(int(rank), int(suit)): card for card, (rank, suit) in enumerate(zip(deck.rank, deck.suit)) if suit >= 0}
    obs_src = np.tile(np.arange(engine.observation_size), (NUM_SUITS, 1))
    action_src = np.tile(np.arange(engine.num_actions), (NUM_SUITS, 1))
    for r in range(NUM_SUITS):
        mate = same_colour_suit(r)
        suit_src = np.array([r, *sorted(set(range(NUM_SUITS)) - {r, mate}), mate])  # canonical suit -> actual suit
        card_src = np.array(
            [c if deck.suit[c] < 0 else card_of[int(deck.rank[c]), int(suit_src[deck.suit[c]])] for c in range(cards)]
        )
        choice_src = np.arange(AXIS_SIZES["bid_choice"])
        choice_src[SUIT_OFFSET : SUIT_OFFSET + NUM_SUITS] = SUIT_OFFSET + suit_src
        axis_src = {"card": card_src, "suit": suit_src, "bid_choice": choice_src}
        for name, cells in layout.items():
            src = cells.reshape(shapes[name])
            for k, axis in enumerate(BLOCK_AXES[name]):
                if axis in axis_src:
                    src = np.take(src, axis_src[axis], axis=k)
            obs_src[r, cells] = src.reshape(-1)
        action_src[r, :cards] = card_src
        first = engine.first_suit_action
        action_src[r, first : first + NUM_SUITS] = first + suit_src
    return obs_src, action_src


class ActorCritic(nn.Module):
    """One MLP trunk shared by a masked policy head and a value head, for one engine's observations.

    With `canonical_suits`, each observation is first relabelled so that its reference suit (trump, or
    before trump is made the upcard's suit) is suit 0 (see `suit_relabelling`); the policy's logits are
    mapped back to the real action ids, so callers never see the relabelling.
    """

    def __init__(
        self,
        engine: Engine,
        hidden_size: int = 256,
        num_layers: int = 2,
        canonical_suits: bool = False,
        action_values: bool = False,
    ):
        super().__init__()
        layers: list[nn.Module] = []
        width = engine.observation_size
        for _ in range(num_layers):
            layers += [layer_init(nn.Linear(width, hidden_size)), nn.ReLU()]
            width = hidden_size
        self.trunk = nn.Sequential(*layers)
        self.policy = layer_init(nn.Linear(width, engine.num_actions), std=0.01)
        self.value = layer_init(nn.Linear(width, 1), std=1.0)
        self.action_value = layer_init(nn.Linear(width, engine.num_actions), std=1.0) if action_values else None
        self.canonical_suits = canonical_suits
        if canonical_suits:
            obs_src, action_src = suit_relabelling(engine)
            self.register_buffer("trump_cells", torch.from_numpy(engine.observation_layout["trump"]), persistent=False)
            self.register_buffer("upcard_cells", torch.from_numpy(engine.observation_layout["upcard"]), persistent=False)
            self.register_buffer("obs_src", torch.from_numpy(obs_src), persistent=False)
            self.register_buffer("action_src", torch.from_numpy(action_src), persistent=False)
            self.register_buffer("action_dst", torch.from_numpy(np.argsort(action_src, axis=1)), persistent=False)
            self.register_buffer("upcard_suit", torch.from_numpy(engine.deck.upcard_suit.astype(np.int64)), persistent=False)

    def reference_suit(self, obs: torch.Tensor) -> torch.Tensor:
        """(n,) trump where it is made, else the upcard's suit."""
        trump = obs[:, self.trump_cells]
        upcard = self.upcard_suit[obs[:, self.upcard_cells].argmax(dim=1)]
        return torch.where(trump.sum(dim=1) > 0, trump.argmax(dim=1), upcard)

    def relabel(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(observations with their reference suit as suit 0, the reference suits (n,)): one gather per row."""
        ref = self.reference_suit(obs)
        return obs.gather(1, self.obs_src[ref]), ref

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits (n, A), values (n,)); illegal actions get `MASKED_LOGIT`."""
        logits, value, _ = self.heads(obs, mask)
        return logits, value

    def heads(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """(masked logits (n, A), state values (n,), per-action values (n, A) or None without that head)."""
        if self.canonical_suits:
            obs, ref = self.relabel(obs)
            mask = mask.gather(1, self.action_src[ref])
        h = self.trunk(obs)
        logits = torch.where(mask, self.policy(h), torch.full((), MASKED_LOGIT, device=obs.device))
        q = None if self.action_value is None else self.action_value(h)
        if self.canonical_suits:
            logits = logits.gather(1, self.action_dst[ref])
            q = None if q is None else q.gather(1, self.action_dst[ref])
        return logits, self.value(h).squeeze(-1), q

    def get_value(self, obs: torch.Tensor) -> torch.Tensor:
        """(n,) state values."""
        if self.canonical_suits:
            obs, _ = self.relabel(obs)
        return self.value(self.trunk(obs)).squeeze(-1)


@torch.no_grad()
def widen_network(net: ActorCritic, engine: Engine, hidden_size: int, seed: int = 0) -> ActorCritic:
    """A copy of `net` with `hidden_size` units per hidden layer that computes the same function (Net2WiderNet).

    Each new unit copies the incoming weights of a randomly drawn unit of its layer; the outgoing weights
    of a unit and its copies are split among them in random shares that sum to one, so the output is
    unchanged while the copies get different gradients and can learn apart.
    """
    old_linears = [m for m in net.trunk if isinstance(m, nn.Linear)]
    old_size = old_linears[0].out_features
    if hidden_size <= old_size:
        raise ValueError(f"the network is {old_size} wide already; widen it to more than that, not {hidden_size}")
    wide = ActorCritic(engine, hidden_size, len(old_linears), net.canonical_suits, net.action_value is not None)
    new_linears = [m for m in wide.trunk if isinstance(m, nn.Linear)]
    generator = torch.Generator().manual_seed(seed)
    source, share = None, None
    for old, new in zip(old_linears, new_linears):
        weight = old.weight if source is None else old.weight[:, source] * share
        source = torch.cat([torch.arange(old_size), torch.randint(old_size, (hidden_size - old_size,), generator=generator)])
        new.weight.copy_(weight[source])
        new.bias.copy_(old.bias[source])
        draw = torch.rand(hidden_size, generator=generator) + 0.5
        share = draw / torch.zeros(old_size).index_add_(0, source, draw)[source]
    for name in ("policy", "value", "action_value"):
        old, new = getattr(net, name), getattr(wide, name)
        if old is not None:
            new.weight.copy_(old.weight[:, source] * share)
            new.bias.copy_(old.bias)
    return wide


@torch.no_grad()
def sharpen_policy(net: ActorCritic, temperature: float) -> ActorCritic:
    """`net` with its policy's logits divided by `temperature` (the policy head's weight and bias scaled in
    place): the same greedy play, sampled closer to it below 1. A distilled policy's logits are its teacher's
    action values in points, so sampled at temperature 1 it plays far worse than greedily."""
    net.policy.weight.div_(temperature)
    net.policy.bias.div_(temperature)
    return net


def observation_signature(engine: Engine) -> dict[str, Any]:
    """What a network's input and output depend on: observation size, each block's cells, number of actions."""
    return {
        "observation_size": int(engine.observation_size),
        "observation_layout": [[name, cells.tolist()] for name, cells in engine.observation_layout.items()],
        "num_actions": int(engine.num_actions),
    }


def layout_cells(signature: dict[str, Any]) -> dict[str, np.ndarray]:
    """Each block's cells from a saved signature (`[name, cells]`, or `[name, start, stop]` before cells were kept)."""
    out = {}
    for name, *where in signature["observation_layout"]:
        out[name] = np.arange(where[0], where[1]) if len(where) == 2 else np.asarray(where[0], dtype=np.int64)
    return out


def check_compatible(checkpoint: dict[str, Any], engine: Engine, source: str, same_positions: bool = False) -> None:
    """Raise `CheckpointMismatchError` naming each difference between the checkpoint's rules/observations and the engine's.

    Blocks at other positions are accepted (`build_network` moves them) unless `same_positions`, as
    when training resumes: its optimizer state is laid out like the old network.
    """
    problems = []
    saved_rules, rules = checkpoint["rules"], engine.rules.to_dict()
    for key in sorted(set(saved_rules) | set(rules)):
        if saved_rules.get(key) != rules.get(key):
            problems.append(f"rules.{key}: checkpoint {saved_rules.get(key)!r}, here {rules.get(key)!r}")
    saved_obs, obs = checkpoint["observation"], observation_signature(engine)
    for key in ("observation_size", "num_actions"):
        if saved_obs[key] != obs[key]:
            problems.append(f"{key}: checkpoint {saved_obs[key]}, here {obs[key]}")
    saved_cells, cells = layout_cells(saved_obs), layout_cells(obs)
    saved_widths = {name: len(c) for name, c in saved_cells.items()}
    widths = {name: len(c) for name, c in cells.items()}
    changed = [n for n in dict.fromkeys([*saved_widths, *widths]) if saved_widths.get(n) != widths.get(n)]
    if changed:
        problems.append(
            "observation blocks of another width: "
            + ", ".join(f"{n} (checkpoint {saved_widths.get(n)}, here {widths.get(n)})" for n in changed)
        )
    elif same_positions and any(not np.array_equal(saved_cells[n], cells[n]) for n in cells):
        problems.append("observation blocks at other positions (play it, or export it again, but training cannot resume)")
    if problems:
        raise CheckpointMismatchError(
            f"{source} was made for a different game than this one: " + "; ".join(problems)
        )


def _relayout_first_layer(state_dict: dict[str, torch.Tensor], saved: dict[str, Any], engine: Engine) -> None:
    """Move the first layer's input columns from the checkpoint's block positions to the engine's."""
    saved_cells, cells = layout_cells(saved), layout_cells(observation_signature(engine))
    source = np.arange(engine.observation_size)
    for name, where in cells.items():
        source[where] = saved_cells[name]
    if not np.array_equal(source, np.arange(engine.observation_size)):
        state_dict["trunk.0.weight"] = state_dict["trunk.0.weight"][:, torch.from_numpy(source)]


POLICY_KEYS = ("format", "model", "model_kwargs", "config", "rules", "observation", "update", "global_step")
"""What a shipped policy keeps of a training checkpoint: enough to play and to check compatibility."""
TRAINING_KEYS = {
    "ppo": POLICY_KEYS + ("optimizer", "pool", "pool_count", "env_state", "games", "rng"),
    "distill": POLICY_KEYS + ("optimizer", "teacher", "rng"),
}
"""What `train.py --resume` needs, by training stage: the policy and everything else the run was in the middle of."""
PLAY = "play"
RESUME = "resume"
_EXPECTED_TYPES = {"model": dict, "model_kwargs": dict, "config": dict, "rules": dict, "observation": dict}
_TRAINING_TYPES = {
    "ppo": {"optimizer": dict, "pool": list, "pool_count": int, "env_state": dict, "games": dict, "rng": dict},
    "distill": {"optimizer": dict, "teacher": dict, "rng": dict},
}
_FIX = "pass a checkpoint that train.py wrote, such as runs/NAME/checkpoints/latest.pt"


def contents_sha256(checkpoint: dict[str, Any]) -> str:
    """The sha256 of every entry of a checkpoint but `CHECKSUM`, walked in a fixed order: tensors by dtype,
    shape and bytes, containers item by item (dict keys sorted), other values by their repr."""
    digest = hashlib.sha256()
    _feed(digest, {k: v for k, v in checkpoint.items() if k != CHECKSUM})
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    """Add one value of a checkpoint to `digest`, tagged with its type and size so that no two values collide."""
    if isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        digest.update(f"tensor {flat.dtype} {tuple(value.shape)}\n".encode())
        digest.update(flat.view(torch.uint8).numpy())
    elif isinstance(value, dict):
        digest.update(f"dict {len(value)}\n".encode())
        for key, item in sorted(value.items(), key=lambda kv: (type(kv[0]).__name__, repr(kv[0]))):
            _feed(digest, key)
            _feed(digest, item)
    elif isinstance(value, (list, tuple)):
        digest.update(f"{type(value).__name__} {len(value)}\n".encode())
        for item in value:
            _feed(digest, item)
    else:
        text = repr(value).encode()
        digest.update(f"{type(value).__name__} {len(text)}\n".encode() + text)


def with_checksum(checkpoint: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint with its `CHECKSUM` entry (re)computed, as train.py and `export_policy` write it."""
    return {**checkpoint, CHECKSUM: contents_sha256(checkpoint)}


def _verifies(checkpoint: Any) -> bool:
    """Whether a loaded checkpoint holds a checksum that matches its contents."""
    return isinstance(checkpoint, dict) and checkpoint.get(CHECKSUM) == contents_sha256(checkpoint)


def newest_good_numbered(path: str | Path) -> Path | None:
    """The newest update_NNNNNN.pt beside `path` (other than it) whose checksum verifies; None if none does."""
    file = Path(path)
    numbered = sorted(file.parent.glob(NUMBERED), key=lambda p: (len(p.name), p.name), reverse=True)
    for other in numbered:
        if other.resolve() == file.resolve():
            continue
        try:
            if _verifies(_torch_load(str(other), "cpu")[0]):
                return other
        except CheckpointError:
            continue
    return None


def _damaged_fix(path: str, purpose: str) -> str:
    """What to do about a checkpoint whose checksum fails: use the newest numbered one beside it that verifies."""
    good = newest_good_numbered(path)
    if purpose == RESUME:
        if good is None:
            return "no numbered checkpoint beside it verifies either: start the run again (--overwrite)"
        return f"resume from the newest numbered checkpoint beside it that verifies: --resume {good}"
    if good is None:
        return "copy or export it again"
    return f"copy it again, or play {good}, the newest numbered checkpoint beside it that verifies"


ZIP_MAGIC = b"PK\x03\x04"
"""How every torch checkpoint (a zip archive) begins."""


def _torch_load(path: str, map_location: str | torch.device) -> tuple[Any, str]:
    """torch.load of plain tensors and values, and the sha256 of the bytes it read; every way a file can
    fail to load is one CheckpointError."""
    file = Path(path)
    if file.is_dir():
        raise CheckpointError(f"checkpoint {path!r} is a folder, not a file; {_FIX}")
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path!r} (no such file); {_FIX}") from None
    except OSError as e:
        raise CheckpointError(f"cannot read checkpoint {path!r}: {e.strerror or e}") from None
    if not data:
        raise CheckpointError(f"checkpoint {path!r} is empty (0 bytes: an interrupted copy?); {_FIX}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's advice about files it then refuses anyway
            loaded = torch.load(io.BytesIO(data), map_location=map_location, weights_only=True)
    except Exception as e:  # torch reports a bad file as UnpicklingError, EOFError, RuntimeError, ...
        zipped = data.startswith(ZIP_MAGIC)
        if zipped and "Unsupported global" in str(e):
            what = "is not a torch checkpoint (it holds more than the tensors and plain values train.py writes)"
        elif zipped or isinstance(e, EOFError):  # damage anywhere in a zip: in its index, its pickle or its records
            what = "is truncated or damaged (a torch file that no longer loads)"
        else:
            what = "is not a torch checkpoint"
        raise CheckpointError(f"checkpoint {path!r} {what}; {_FIX}") from None
    return loaded, hashlib.sha256(data).hexdigest()


def read_checkpoint(path: str, purpose: str = PLAY, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """A train.py checkpoint, checked to hold what `purpose` needs: PLAY (a policy, as the ppo bot plays)
    or RESUME (everything `train.py --resume` continues), and to match its checksum where it has one.
    Anything else is a CheckpointError naming the problem and the fix."""
    return _read_checkpoint(path, purpose, map_location)[0]


def _read_checkpoint(path: str, purpose: str, map_location: str | torch.device) -> tuple[dict[str, Any], str]:
    """`read_checkpoint`, and the sha256 of the file's bytes."""
    checkpoint, file_digest = _torch_load(path, map_location)
    if not isinstance(checkpoint, dict):
        raise CheckpointError(f"checkpoint {path!r} holds a {type(checkpoint).__name__}, not a train.py checkpoint; {_FIX}")
    if CHECKSUM in checkpoint and not _verifies(checkpoint):
        raise CheckpointError(f"checkpoint {path!r} is damaged: its contents do not match the sha256 it was written with; "
                              + _damaged_fix(path, purpose))
    stage = checkpoint.get("stage", "ppo")
    if purpose == RESUME and stage not in TRAINING_KEYS:
        raise CheckpointError(f"checkpoint {path!r} comes from an unknown training stage {stage!r}; {_FIX}")
    missing = [k for k in (TRAINING_KEYS[stage] if purpose == RESUME else POLICY_KEYS) if k not in checkpoint]
    if purpose == RESUME and missing and all(k in checkpoint for k in POLICY_KEYS):
        raise CheckpointError(
            f"checkpoint {path!r} is a play-only export (python -m euchre_lab.export_policy writes those): it has no {', '.join(missing)}, "
            "so training cannot continue from it; resume from the run's checkpoints/latest.pt or update_NNNNNN.pt, "
            "or play it with evaluate.py ppo:PATH"
        )
    if missing:
        raise CheckpointError(f"checkpoint {path!r} is not a train.py checkpoint: it lacks {', '.join(missing)}; {_FIX}")
    if checkpoint["format"] != CHECKPOINT_FORMAT:
        raise CheckpointError(
            f"checkpoint {path!r} has format {checkpoint['format']!r}; this version reads format {CHECKPOINT_FORMAT}"
        )
    expected = {**_EXPECTED_TYPES, **(_TRAINING_TYPES[stage] if purpose == RESUME else {})}
    wrong = [k for k, kind in expected.items() if not isinstance(checkpoint[k], kind)]
    if purpose == RESUME and stage == "ppo" and not wrong and "phase" not in checkpoint["env_state"]:
        wrong = ["env_state"]
    observation = checkpoint["observation"]
    if not wrong and not {"observation_size", "observation_layout", "num_actions"} <= set(observation):
        wrong = ["observation"]
    if wrong:
        raise CheckpointError(f"checkpoint {path!r} is damaged: {', '.join(wrong)} is not what train.py writes; {_FIX}")
    return checkpoint, file_digest


def load_checkpoint(path: str, map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read a checkpoint written by train.py to play it (`read_checkpoint(path, PLAY)`)."""
    return read_checkpoint(path, PLAY, map_location)


def build_network(checkpoint: dict[str, Any], engine: Engine) -> ActorCritic:
    """The network described by a checkpoint, with its trained weights, for a compatible engine."""
    try:
        net = ActorCritic(engine, **checkpoint["model_kwargs"])
        state_dict = dict(checkpoint["model"])
        _relayout_first_layer(state_dict, checkpoint["observation"], engine)
        net.load_state_dict(state_dict)
    except (TypeError, KeyError, IndexError, RuntimeError) as e:
        reason = str(e).strip().splitlines()[0][:200]
        raise CheckpointError(f"the checkpoint's weights do not fit the network it describes ({reason})") from None
    return net


class PPOAgent(Agent):
    """Plays a policy network: greedy over the legal actions, or sampling the masked policy."""

    name = "ppo"

    def __init__(
        self, engine: Engine, net: ActorCritic, sample: bool = False, seed: int | None = None, action_values: bool = False
    ):
        super().__init__(engine, seed)
        if action_values and net.action_value is None:
            raise ValueError("this network has no per-action value head (train it with --action-values true)")
        if action_values and sample:
            raise ValueError("the ppo options `q` (greedy on action values) and `sample` exclude each other")
        self.net = net
        self.sample = sample
        self.action_values = action_values
        self.device = next(net.parameters()).device

    @classmethod
    def from_checkpoint(
        cls, engine: Engine, path: str, sample: bool = False, seed: int | None = None, action_values: bool = False
    ) -> "PPOAgent":
        """Load a train.py checkpoint, refusing one made for other rules or another observation layout;
        `weights_sha256` is the sha256 of the file's bytes (`euchre_agents.base.file_sha256`), taken from the
        very bytes the network was loaded from."""
        checkpoint, file_digest = _read_checkpoint(path, PLAY, "cpu")
        check_compatible(checkpoint, engine, f"checkpoint {path!r}")
        agent = cls(engine, build_network(checkpoint, engine), sample=sample, seed=seed, action_values=action_values)
        agent.weights_sha256 = file_digest
        return agent

    @torch.no_grad()
    def act(self, obs, mask, state=None, rows=None):
        """The policy's action per row (or, with `q`, the legal action of highest value); never an illegal one."""
        obs_t = torch.as_tensor(np.asarray(obs, np.float32), device=self.device)
        mask_t = torch.as_tensor(np.asarray(mask, bool), device=self.device)
        logits, _, q = self.net.heads(obs_t, mask_t)
        if self.action_values:
            return torch.where(mask_t, q, torch.full((), MASKED_LOGIT)).argmax(dim=-1).cpu().numpy()
        if not self.sample:
            return logits.argmax(dim=-1).cpu().numpy()
        # Inverse-CDF sampling from self.rng (so reseeding the bot reseeds its play); the first action
        # whose cumulative probability exceeds u always has a probability above zero.
        cumulative = torch.softmax(logits, dim=-1).cumsum(dim=-1).cpu().numpy()
        u = self.rng.random((cumulative.shape[0], 1)) * cumulative[:, -1:]
        return np.argmax(cumulative > u, axis=1)

    @torch.no_grad()
    def action_probabilities(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(n, A) the masked policy's probabilities (zero on illegal actions)."""
        obs_t = torch.as_tensor(np.asarray(obs, np.float32), device=self.device)
        logits, _ = self.net(obs_t, torch.as_tensor(np.asarray(mask, bool), device=self.device))
        return torch.softmax(logits.double(), dim=-1).cpu().numpy()


def play_policy(src: str) -> dict[str, Any]:
    """The play-only contents of a train.py checkpoint (no optimizer, pool, games or RNG states), in this
    version's observation layout."""
    checkpoint = read_checkpoint(src, PLAY)
    policy = {k: checkpoint[k] for k in POLICY_KEYS}
    engine = Engine(Rules.from_dict(checkpoint["rules"]))
    check_compatible(checkpoint, engine, f"checkpoint {src!r}")
    policy["model"] = dict(checkpoint["model"])
    _relayout_first_layer(policy["model"], checkpoint["observation"], engine)
    policy["observation"] = observation_signature(engine)
    return policy


def save_policy(policy: dict[str, Any], dst: str | IO[bytes]) -> None:
    """Write `play_policy`'s contents with their checksum to a path (atomically) or a binary file: the same
    bytes for either and whatever the file is named, so one policy always has one sha256."""
    if isinstance(dst, (str, Path)):   # through a file object: saved to a path, the archive's folder is named after the file
        write_atomic(Path(dst), lambda f: torch.save(with_checksum(policy), f))
    else:
        torch.save(with_checksum(policy), dst)


def export_policy(src: str, dst: str | IO[bytes], hidden_size: int | None = None, seed: int = 0) -> None:
    """Write a play-only copy of a train.py checkpoint (`play_policy`, with its own checksum); with
    `hidden_size`, the same function in a wider network (`widen_network`), for train.py's --init-checkpoint."""
    policy = play_policy(src)
    if hidden_size is not None:
        engine = Engine(Rules.from_dict(policy["rules"]))
        policy["model"] = widen_network(build_network(policy, engine), engine, hidden_size, seed).state_dict()
        policy["model_kwargs"] = dict(policy["model_kwargs"], hidden_size=hidden_size)
    save_policy(policy, dst)


def average_policies(srcs: list[str], dst: str | IO[bytes]) -> None:
    """Write the play-only policy whose every weight is the mean of the checkpoints' (a "model soup"): meaningful
    for networks fine-tuned from one start, which stay close in weight space. The checkpoints must share their
    rules, observations and network shape (model_kwargs, from which `build_network` makes every layer; a ValueError
    names the first that does not); the rest is the first's."""
    policies = [play_policy(src) for src in srcs]
    first = policies[0]
    for src, policy in zip(srcs[1:], policies[1:]):
        for key in ("rules", "observation", "model_kwargs"):
            if policy[key] != first[key]:
                raise ValueError(f"checkpoint {src!r} has other {key} than {srcs[0]!r}; average only fine-tunes of one network")
    model = {k: torch.stack([p["model"][k].float() for p in policies]).mean(0).to(v.dtype) for k, v in first["model"].items()}
    save_policy(dict(first, model=model), dst)


SHIPPED = (Path(__file__).parent / "shipped" / "euchre_ppo.pt").resolve()
"""The strongest learned agent, which the bare spec `ppo` plays: checkpoints/euchre_ppo.pt in a checkout (through a
link), a copy inside the package when installed from a wheel."""
USAGE = "ppo[:PATH][,sample[,temp=T]|,q]"


def make_ppo(engine: Engine, arg: str, seed: int | None) -> PPOAgent:
    """`ppo` (the shipped agent), `ppo:PATH` (greedy on the policy), `ppo:PATH,sample` (sampling the policy;
    `temp=T` samples its logits divided by T), or `ppo:PATH,q` (greedy on action values)."""
    path, *options = arg.split(",")
    temps = [o.removeprefix("temp=") for o in options if o.startswith("temp=")]
    unknown = [o for o in options if o not in ("sample", "q") and not o.startswith("temp=")]
    if unknown:
        raise ValueError(f"unknown ppo option(s) {unknown}; usage: {USAGE}")
    temperature = _temperature(temps, "sample" in options)
    if not path and not SHIPPED.exists():
        raise ValueError(f"the shipped agent {SHIPPED} is missing; name a checkpoint: {USAGE}")
    agent = PPOAgent.from_checkpoint(
        engine, path or str(SHIPPED), sample="sample" in options, seed=seed, action_values="q" in options
    )
    sharpen_policy(agent.net, temperature)
    return agent


def _temperature(values: list[str], sample: bool) -> float:
    """The one `temp=T` of a ppo spec (1 without it): a number above 0, and only with `sample`."""
    if not values:
        return 1.0
    if len(values) > 1 or not sample:
        raise ValueError(f"ppo option temp=T goes once, with sample (greedy play does not depend on it); usage: {USAGE}")
    try:
        temperature = float(values[0])
    except ValueError:
        temperature = float("nan")
    if not (temperature > 0 and np.isfinite(temperature)):
        raise ValueError(f"ppo option temp takes a number above 0, got {values[0]!r}; usage: {USAGE}")
    return temperature

