"""The policy network: one MLP trunk, a masked policy head and value heads, with optional suit relabelling.

`ActorCritic` is what train.py trains and the `ppo` bot plays; `widen_network` makes a wider copy that
computes the same function, and `sharpen_policy` divides its logits by a temperature. Reading one from a
checkpoint file is `euchre_agents.checkpoint.build_network`.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from euchre_env.cards import JACK_RANK, NUM_SUITS, RANK_LETTERS, SUIT_LETTERS, SUIT_OFFSET, same_colour_suit
from euchre_env.engine import Engine
from euchre_env.observation import AXIS_SIZES, BLOCK_AXES, block_shapes

MASKED_LOGIT = -1e8
"""Logit given to illegal actions: exp() of it underflows to exactly 0, so they are never sampled."""


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
    deck = engine.deck
    unknown = {a for axes in BLOCK_AXES.values() for a in axes} - SUIT_FREE_AXES - {"card", "suit", "bid_choice"}
    if unknown:
        raise ValueError(f"canonical_suits cannot relabel observation axes {sorted(unknown)}")
    cards = deck.num_cards
    card_of = {(int(rank), int(suit)): card for card, (rank, suit) in enumerate(zip(deck.rank, deck.suit)) if suit >= 0}
    obs_src = np.empty((NUM_SUITS, engine.observation_size), dtype=np.int64)
    action_src = np.tile(np.arange(engine.num_actions), (NUM_SUITS, 1))
    for r in range(NUM_SUITS):
        mate = same_colour_suit(r)
        suit_src = np.array([r, *sorted(set(range(NUM_SUITS)) - {r, mate}), mate])  # canonical suit -> actual suit
        card_src = np.array(
            [c if deck.suit[c] < 0 else card_of[int(deck.rank[c]), int(suit_src[deck.suit[c]])] for c in range(cards)]
        )
        choice_src = np.arange(AXIS_SIZES["bid_choice"])
        choice_src[SUIT_OFFSET : SUIT_OFFSET + NUM_SUITS] = SUIT_OFFSET + suit_src
        obs_src[r] = cell_sources(engine, engine, {"card": card_src, "suit": suit_src, "bid_choice": choice_src})
        action_src[r, :cards] = card_src
        first = engine.first_suit_action
        action_src[r, first : first + NUM_SUITS] = first + suit_src
    return obs_src, action_src


def cell_sources(src: Engine, dst: Engine, axis_src: dict[str, np.ndarray]) -> np.ndarray:
    """(D_dst,): for each observation cell of `dst`, the cell of `src` it reads, block by block (`BLOCK_AXES`): along an
    axis that `axis_src` names, the index it maps to (a `dst` index to a `src` one); along the others, the same."""
    shapes = block_shapes(src.num_cards)
    sources = np.empty(dst.observation_size, dtype=np.int64)
    for name, cells in dst.observation_layout.items():
        taken = src.observation_layout[name].reshape(shapes[name])
        for k, axis in enumerate(BLOCK_AXES[name]):
            if axis in axis_src:
                taken = np.take(taken, axis_src[axis], axis=k)
        sources[cells] = taken.reshape(-1)
    return sources


def card_stand_ins(src: Engine, dst: Engine) -> np.ndarray:
    """(dst's cards,) for each card of `dst`'s deck, the card of `src`'s deck whose weights it takes: the same card
    (by name) where `src` has it; a plain card it lacks, the lowest card of its suit (the 9 for a 7 or an 8); a
    joker it lacks, the jack of suit 0 (under canonical suits the right bower, the card just below the joker)."""
    deck = src.deck
    same = {name: card for card, name in enumerate(deck.names)}
    lowest = {}
    for suit in range(NUM_SUITS):
        cards = np.flatnonzero(deck.suit == suit)
        lowest[suit] = int(cards[np.argmin(deck.rank[cards])])
    right_bower = same[RANK_LETTERS[JACK_RANK] + SUIT_LETTERS[0]]
    stand_in = [same.get(name, right_bower if suit < 0 else lowest[int(suit)]) for name, suit in zip(dst.deck.names, dst.deck.suit)]
    return np.array(stand_in, dtype=np.int64)


def carry_sources(src: Engine, dst: Engine) -> tuple[np.ndarray, np.ndarray]:
    """(obs_src (D_dst,), action_src (A_dst,)): for each observation cell and action of `dst`, the one of `src`
    whose weights it takes. Card cells and card actions follow `card_stand_ins`; every other block and action
    keeps its meaning (pass, the suits, alone, partner sit after the cards in every deck)."""
    card_src = card_stand_ins(src, dst)
    extras = np.arange(dst.num_actions - dst.num_cards)
    return cell_sources(src, dst, {"card": card_src}), np.concatenate([card_src, src.num_cards + extras])


@torch.no_grad()
def carry_network(net: ActorCritic, src: Engine, dst: Engine) -> ActorCritic:
    """`net`, made for `src`'s deck, as a network for `dst`'s (another deck, or the joker added or dropped): the first
    layer's input columns and the action heads' rows move with `carry_sources`; the rest is unchanged. A start for
    a table whose spaces differ, not a strong player of it: a card that `src` lacks plays like its stand-in."""
    linears = [m for m in net.trunk if isinstance(m, nn.Linear)]
    carried = ActorCritic(dst, linears[0].out_features, len(linears), net.canonical_suits, net.action_value is not None)
    obs_src, action_src = (torch.from_numpy(a) for a in carry_sources(src, dst))
    state = net.state_dict()
    state["trunk.0.weight"] = state["trunk.0.weight"][:, obs_src]
    for head in ("policy", "action_value"):
        if f"{head}.weight" in state:
            for part in ("weight", "bias"):
                state[f"{head}.{part}"] = state[f"{head}.{part}"][action_src]
    carried.load_state_dict(state)
    return carried


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


def native_bfloat16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices fast: AMX tiles usable by oneDNN. There bfloat16 roughly doubles a
    network's throughput; with AVX512-BF16 alone it ran at about half float32's rate (docs/training.md),
    and without either torch emulates it, far slower."""
    try:  # private torch queries: a build without them has no fast bfloat16 path here
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
                    and torch._C._cpu._init_amx())
    except (AttributeError, RuntimeError):
        return False


class Bfloat16(nn.Module):
    """A module that computes in bfloat16 and returns float32: inputs are rounded to bfloat16 on the way in."""

    def __init__(self, module: nn.Module):
        super().__init__()
        self.module = module.to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The module's output for `x`, computed in bfloat16, as float32."""
        return self.module(x.to(torch.bfloat16)).float()


def bfloat16_trunk(net: ActorCritic) -> ActorCritic:
    """`net` (changed in place, for inference only) with its trunk computing in bfloat16 and its heads in float32.

    Where `native_bfloat16()` the trunk's matrix products run about twice as fast (`benchmarks/making_speed.py`); the
    hidden units keep about three significant digits and the heads see them in float32, so the order of the
    actions changes only where two of them are nearly tied."""
    net.trunk = Bfloat16(net.trunk)
    return net
