"""A batched API over the engine for self-play training and fast evaluation.

`EuchreVectorEnv` is a `gymnasium.vector.VectorEnv`. It advances N games with one call holding one
action per game (for the seat to act in that game) and returns that seat's observation, the rewards
of all four seats (N, 4), and done flags; `info["action_mask"]` and `info["to_play"]` hold each game's
legal mask and acting seat. Finished games restart in the same call (Gymnasium's `SAME_STEP`
autoreset): the observation returned for a finished game is the first decision of its next episode,
while the rewards and `terminated` flag belong to the episode that just ended. `observe(seats)` gives
each game's observation from any seat.

`max_hands` (default 10,000, `ENV_DEFAULTS`; None: no limit) truncates a game once that many of its
hands are over (scored or thrown in) and its episode is not: `truncated[i]` is True and the game
restarts in the same call, like a finished one. Real play always ends; this only guards against a
policy that never names trump under `stick_the_dealer=False`.

The games live as game records (`record.py`, one row each of an (N, R) matrix) that the rule kernels
step in place, with the autoreset and the observations in the same pass (`kernels.records_step`).
`env.state` is the same games as an `EuchreState`: once it has been read (or set), every step reads
the games from it and writes them back, so it stays current and a state changed or set from outside
is the one that plays on; until then the records alone are stepped. Training reads what it needs from
`info` and `observe` and never reads `state`, so it stays on the records path.

`random_legal_actions` (the env's method, or the function over any (N, A) mask) picks one legal action
per game uniformly in compiled code, for random play and random opponents.
"""

from __future__ import annotations

import sys
from typing import Any

import gymnasium
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from numba import njit

from euchre_env import kernels
from euchre_env.cards import NUM_SEATS
from euchre_env.deal_keys import mix64
from euchre_env.defaults import ENV_DEFAULTS
from euchre_env.engine import Engine, EuchreState, IllegalActionError, game_keys
from euchre_env.observation import encode
from euchre_env.record import DEAL_COUNT, blank_record, get_legal, load_rows, store_rows
from euchre_env.rows import row_view, unowned
from euchre_env.rules import Rules
from euchre_env.state import FIELDS
from euchre_env.tasks import task_settings
from euchre_env.truncation import check_max_hands

_DTYPE = {name: dtype for name, dtype, _, _ in FIELDS}
_UNHELD_REFS = 2
"""`sys.getrefcount` of an array that only `EuchreVectorEnv._returned` holds (its list, and the call's argument)."""


class EuchreVectorEnv(VectorEnv):
    """N Euchre games stepped together. Same engine and observation encoding as `euchre_v0`.

    `task="standard-v1"` (a name of `euchre_env.tasks`) fixes the rules, episode and reward to the task's.
    `copy=True` (the default) returns arrays that are the caller's for as long as it refers to them; one it has
    let go of is reused for a later step (so that 65,536 games do not map a fresh 127 MB every step).
    `copy=False` returns one observation buffer that every reset and step overwrites (as Gymnasium's
    vector envs do with `copy=False`): faster for large N, but an observation kept across a step
    must be copied by the caller. `obs_dtype=np.uint8` returns the same cells as uint8 (4x less
    memory traffic to a GPU learner); the score cells of game and rubber episodes then hold points:
    multiply by `engine.observation_scale` for the float32 values.

    Unlike most Gymnasium vector envs, `rewards` is (N, 4), one column per seat: every seat's reward
    comes back from every step, whoever acted. `np_random` is seeded with the deals (the constructor's
    seed, or reset's); the deals themselves depend only on (seed, game), and `random_legal_actions()`
    draws from `np_random` when given no generator.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "name": "euchre_vector_v0", "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        rules: Rules | None = None,
        episode: str = ENV_DEFAULTS.episode,
        reward: str = ENV_DEFAULTS.reward,
        seed: int | None = None,
        copy: bool = True,
        max_hands: int | None = ENV_DEFAULTS.max_hands,
        obs_dtype: type = np.float32,
        task: str | None = None,
    ):
        self.max_hands = check_max_hands(max_hands)
        rules, episode, reward = task_settings(task, rules, episode, reward)
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        self.num_envs = int(num_envs)
        self.obs_dtype = np.dtype(obs_dtype)
        if self.obs_dtype not in (np.float32, np.uint8):
            raise ValueError(f"obs_dtype must be float32 or uint8, got {self.obs_dtype}")
        self._divide_score = self.obs_dtype == np.float32
        """float32 observations hold the score as points / target, uint8 ones as points."""
        self.engine = Engine(rules, episode=episode, reward=reward)
        self.rules = self.engine.rules
        high = float(max(4, self.rules.rubber_games))
        if self.obs_dtype == np.uint8:  # score cells in points
            high = float(max(high, self.rules.target_points + 3))
        size = self.engine.observation_size
        self.single_observation_space = gymnasium.spaces.Box(0, high, (size,), self.obs_dtype)
        self.single_action_space = gymnasium.spaces.Discrete(self.engine.num_actions)
        self.observation_space = gymnasium.spaces.Box(0, high, (self.num_envs, size), self.obs_dtype)
        self.action_space = gymnasium.spaces.MultiDiscrete(np.full(self.num_envs, self.engine.num_actions))
        self._seed = seed
        if seed is not None:
            self._np_random, self._np_random_seed = seeding.np_random(seed)
        self.copy = bool(copy)
        self._obs_buffer: np.ndarray | None = None
        self._returned: dict[str, list[np.ndarray]] = {}
        """The output arrays of the last two steps by kind, reused once the caller has let go of them (`_unheld`)."""
        self._first_deal: np.ndarray | None = None
        """(N,) each game's `deal_count` when its episode began (for `max_hands`)."""
        self._records: np.ndarray | None = None
        """(N, R) the games as records, which the kernels step."""
        self._state: EuchreState | None = None
        """The games as a state, once `state` is read or set: from then on each step reads it and writes it back."""
        self._blank = blank_record(self.engine.num_cards)
        self._last: tuple[np.ndarray, np.ndarray] | None = None
        """The legal masks and seats to act that the last reset or step returned."""

    @property
    def state(self) -> EuchreState | None:
        """The games as an `EuchreState` (None before `reset`), kept current from then on: changes made
        to it, or a state assigned here (same rules), are what the next step plays on."""
        if self._state is None and self._records is not None:
            self._state = self._snapshot()
        return self._state

    def _snapshot(self) -> EuchreState:
        """The records as a new `EuchreState`."""
        n = self._records.shape[0]
        state = EuchreState.empty(n, self.engine.num_cards, self.engine.num_actions)
        store_rows(self._records, *state.arrays(), np.arange(n), True)
        return state

    @state.setter
    def state(self, value: EuchreState | None) -> None:
        self._state, self._records, self._last = value, None, None

    def snapshot(self) -> EuchreState:
        """A copy of the games as an `EuchreState` (what a checkpoint saves); unlike reading `state`, it
        leaves the env on the records-only path."""
        if self._state is not None:
            return self._state.copy()
        if self._records is None:
            raise RuntimeError("call reset() before snapshot()")
        return self._snapshot()

    def load(self, state: EuchreState) -> None:
        """Continue from a copy of `state`'s games (same rules; a `snapshot`); unlike setting `state`, the env
        stays on the records-only path. `max_hands` counts the hands from here."""
        n = state.num_games
        self._state, self._first_deal = None, None
        self._records = np.empty((n, self._blank.size), self._blank.dtype)
        load_rows(*state.arrays(), np.arange(n), self._records, True)
        self._last = state.legal.copy(), state.to_play.astype(np.int64)

    def _games(self) -> np.ndarray:
        """The games as records; read from `state` when it has been read or set (the caller may have changed it)."""
        if self._state is not None:
            n = self._state.num_games
            if self._records is None or self._records.shape[0] != n:
                self._records = np.empty((n, self._blank.size), self._blank.dtype)
            load_rows(*self._state.arrays(), np.arange(n), self._records, True)
        return self._records

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start N new episodes. Game i's deals depend only on (seed, i); no seed: the constructor's."""
        if seed is None:
            seed = self._seed
        super().reset(seed=seed)
        self._state, self._records = None, np.repeat(self._blank[None], self.num_envs, axis=0)
        obs, legal, to_play = self._outputs(self.num_envs)
        keys = game_keys(seed, self.num_envs)
        kernels.records_init(self._records, self.engine.table, keys, to_play, legal, obs, self._divide_score)
        self._first_deal = self._records[:, DEAL_COUNT].copy()
        self._last = legal, to_play
        return obs, {"action_mask": legal, "to_play": to_play}

    def _outputs(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Arrays for one call's observations (the reused buffer with `copy=False`), legal masks and seats."""
        if self.copy:
            obs = self._unheld("obs", (n, self.engine.observation_size), self.obs_dtype)
        else:
            if self._obs_buffer is None or self._obs_buffer.shape[0] != n:
                self._obs_buffer = np.empty((n, self.engine.observation_size), self.obs_dtype)
            obs = self._obs_buffer
        return obs, self._unheld("legal", (n, self.engine.num_actions), bool), self._unheld("to_play", (n,), np.int64)

    def _unheld(self, kind: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        """A new array for a step's output: one of the last two of this kind the env returned if nobody refers to
        it any more (no name, view, tensor or buffer of the caller's), else a fresh one. At 65,536 games a fresh
        observation array is 127 MB that the OS maps page by page as the step writes it, at every step."""
        returned = self._returned.setdefault(kind, [])
        out = None
        for i in range(len(returned)):
            if returned[i].shape == shape and sys.getrefcount(returned[i]) <= _UNHELD_REFS:
                out = returned.pop(i)
                break
        if out is None:
            out = np.empty(shape, dtype)
        self._returned[kind] = [*returned[-1:], out]
        return out

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per game -> (obs, rewards (N, 4), terminated, truncated, info).

        Raises IllegalActionError (nothing applied) if any game's action is illegal.
        """
        if self._records is None and self._state is None:
            raise RuntimeError("call reset() before step()")
        records = self._games()
        n = records.shape[0]
        acts = self.engine.action_ids(actions, n, lambda: self._state or self._snapshot())
        if self._first_deal is None or self._first_deal.shape != (n,):
            self._first_deal = records[:, DEAL_COUNT].copy()  # a state set from outside: count from now
        rewards = np.empty((n, 4), np.float32)
        terminated, truncated = np.empty(n, bool), np.empty(n, bool)
        final_score, final_points = np.empty((n, 2), _DTYPE["score"]), np.empty((n, 2), _DTYPE["hand_points"])
        obs, legal, to_play = self._outputs(n)
        code = kernels.records_step(
            records, self.engine.table, acts, rewards, self._first_deal,
            -1 if self.max_hands is None else self.max_hands, terminated, truncated,
            final_score, final_points, to_play, legal, obs, self._divide_score,
        )
        if code >= 0:  # nothing was applied
            self.engine.check_actions(self._state or self._snapshot(), acts)  # raises with the full message
            raise IllegalActionError(f"illegal action {int(acts[code])} in game {code}")
        if self._state is not None:
            store_rows(records, *self._state.arrays(), np.arange(n), True)
        info: dict[str, Any] = {}
        if code == kernels.STEPPED_AND_ENDED:
            info["final_score"], info["final_hand_points"] = final_score, final_points
        info["action_mask"], info["to_play"] = legal, to_play
        self._last = legal, to_play
        return obs, rewards, terminated, truncated, info

    def observe(self, seats: int | np.ndarray) -> np.ndarray:
        """(N, D) each game's observation from seat `seats[g]` (one int: that seat in every game), in the
        env's dtype, as a new array. Read from the records: it does not switch the env to `state`.

        After a step, a game whose episode ended is seen at the start of its next episode.
        """
        if self._records is None and self._state is None:
            raise RuntimeError("call reset() before observe()")
        records = self._games()
        n = records.shape[0]
        me = np.asarray(seats)
        if me.ndim == 0:
            me = np.full(n, me)
        if me.shape != (n,) or me.dtype.kind not in "iu" or me.min() < 0 or me.max() >= NUM_SEATS:
            raise ValueError(f"seats must be one seat number 0-3 or {n} of them (one per game), got {seats!r}")
        out = np.empty((n, self.engine.observation_size), self.obs_dtype)
        _observe_records(records, self.engine.table, me.astype(np.int64, copy=False), out, self._divide_score)
        return out

    def random_legal_actions(self, rng: np.random.Generator | None = None) -> np.ndarray:
        """(N,) int64 one legal action per game, uniformly at random from `rng` (default `np_random`),
        for the masks the last reset or step returned (a compiled pick: the cheap way to drive random play)."""
        if rng is None:
            rng = self.np_random
        if self._state is not None or self._records is None:
            return random_legal_actions(self.action_masks, rng)
        out = np.empty(self._records.shape[0], np.int64)
        _pick_legal_records(self._records, _draw_seed(rng), out)  # the same picks, from the bit sets
        return out

    @property
    def action_masks(self) -> np.ndarray:
        """(N, A) bool legal mask of the seat to act in each game (do not modify)."""
        if self._state is None and self._last is not None:
            return self._last[0]
        return self.state.legal

    @property
    def to_play(self) -> np.ndarray:
        """(N,) seat to act in each game."""
        if self._state is None and self._last is not None:
            return self._last[1].astype(_DTYPE["to_play"])
        return self.state.to_play

    def render(self) -> None:
        """None: the vector env has no render modes (`euchre_v0.env(render_mode="ansi")` draws one game)."""
        return None


@njit(cache=True)
def _observe_records(records, t, seats, out, divide_score):
    """`encode` each game's record g from seat seats[g] into out[g]."""
    t, out = unowned(t), unowned(out)
    for g in range(records.shape[0]):
        encode(row_view(records, g), seats[g], t, row_view(out, g), divide_score)


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(N,) int64 one action per row of the (N, A) legal mask, uniformly among its legal ones (0 for a
    row with none). One draw from `rng` per call seeds a splitmix64 stream, one number per row."""
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.dtype.kind not in "biu":
        raise ValueError(f"mask must be an (N, A) bool or integer array, got shape {mask.shape}, dtype {mask.dtype}")
    out = np.empty(mask.shape[0], np.int64)
    _pick_legal(mask, _draw_seed(rng), out)
    return out


def _draw_seed(rng: np.random.Generator) -> np.uint64:
    """One call's seed for `_uniform`: the next raw 64 bits of `rng`'s bit generator."""
    return np.uint64(rng.bit_generator.random_raw())


@njit(cache=True, inline="always")
def _uniform(seed, g):
    """Row g's number in [0, 1) of the stream seeded by `seed` (splitmix64 of seed + g * golden ratio)."""
    return np.float64(mix64(seed + np.uint64(g + 1) * _GOLDEN) >> np.uint64(11)) * (1.0 / 2**53)


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True)
def _pick_legal(mask, seed, out):
    """out[g] = the k-th legal action of row g, k = floor(_uniform(seed, g) * its number of legal actions)."""
    for g in range(mask.shape[0]):
        count = 0
        for action in range(mask.shape[1]):
            count += mask[g, action] != 0
        k = min(int(_uniform(seed, g) * count), count - 1)
        out[g] = 0
        for action in range(mask.shape[1]):
            if mask[g, action] != 0:
                if k == 0:
                    out[g] = action
                    break
                k -= 1


_M1, _M2, _M4 = np.uint64(0x5555555555555555), np.uint64(0x3333333333333333), np.uint64(0x0F0F0F0F0F0F0F0F)
_BYTES, _HIGH_BITS = np.uint64(0x0101010101010101), np.uint64(0x8080808080808080)
_SELECT_IN_BYTE = np.array(
    [[([b for b in range(8) if byte >> b & 1] + [0] * 8)[k] for k in range(8)] for byte in range(256)], np.uint8
)
"""[byte, k] -> the place of the k-th set bit of the byte."""


@njit(cache=True, inline="always")
def _byte_counts(x):
    """Each byte of the uint64 x replaced by its number of set bits (SWAR)."""
    x = x - ((x >> np.uint64(1)) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    return (x + (x >> np.uint64(4))) & _M4


@njit(cache=True, inline="always")
def _popcount(x):
    """The number of set bits of the uint64 x."""
    return (_byte_counts(x) * _BYTES) >> np.uint64(56)


@njit(cache=True, inline="always")
def _select_bit(x, k):
    """The place of the k-th (from 0) set bit of the uint64 x, k below its number of set bits; no branch."""
    prefix = _byte_counts(x) * _BYTES  # byte i: the set bits of bytes 0..i
    at_most_k = ((np.uint64(k) * _BYTES) | _HIGH_BITS) - prefix  # byte's high bit: its prefix <= k
    byte = _popcount(at_most_k & _HIGH_BITS)  # the bytes before the k-th bit's
    below = ((prefix << np.uint64(8)) >> (byte * np.uint64(8))) & np.uint64(0xFF)
    return np.int64(byte) * 8 + _SELECT_IN_BYTE[(x >> (byte * np.uint64(8))) & np.uint64(0xFF), k - np.int64(below)]


@njit(cache=True)
def _pick_legal_records(records, seed, out):
    """`_pick_legal` on the games' legal bit sets: the same action for the same seed."""
    for g in range(records.shape[0]):
        bits = np.uint64(get_legal(row_view(records, g)))
        count = np.int64(_popcount(bits))
        k = min(int(_uniform(seed, g) * count), count - 1)
        out[g] = _select_bit(bits, k) if count else 0
