"""Euchre for one learning seat as a Gymnasium env; the other three seats are bots.

    import gymnasium, euchre_env
    env = gymnasium.make("EuchreSingle-v0", partner="heuristic", opponents="random")
    env = gymnasium.make("Euchre-standard-v1")                   # a task: its rules, and its partner and opponents
    env = gymnasium.make("Euchre-standard-v1", opponents="pimc")  # keywords override the task's bots

| Observation | Box(0, high, (D,), float32): the learner's information state (the engine's encoding) |
| Actions     | Discrete(A): the engine's action ids (cards, pass, suits, alone, partner)            |
| Mask        | `env.action_masks()` -> (A,) bool, as sb3-contrib's MaskablePPO expects; also `info["action_mask"]` |
| Reward      | the learner's reward summed over everything that happened since its last decision     |

An episode (a hand by default) starts at the learner's first decision: the bots play until it is the
learner's turn. A hand in which the learner never decides (its partner went alone) is skipped in
hand episodes and passes its points on to the next step in game episodes. An illegal action plays a
uniformly random legal action instead and sets `info["illegal_action"]` (`illegal_action="random"`,
so that Gymnasium's env checker can step with unmasked samples), or raises `IllegalActionError`
(`illegal_action="raise"`).

`max_hands` (default 10,000, far beyond any real episode; None: no limit) truncates an episode once
that many hands are over (scored or thrown in): `truncated=True`, as Gymnasium's time limits do.
The defaults of `episode`, `reward` and `max_hands` are the ones every env shares
(`euchre_env.defaults.ENV_DEFAULTS`, tabled in docs/environment.md).

A bot is a policy object with `act(obs (n, D), mask (n, A)) -> (n,) actions` (an `euchre_agents.Agent`, or
any object of that shape), or a spec string such as "heuristic" or "pimc:worlds=20". This package
does not import the bots: a spec is built by the bot registry that an installed package declares
under the entry-point group `euchre_env.bots` (Euchre Lab's `euchre_agents` declares `euchre_agents.registry:make_agent`).
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any, Callable

import gymnasium
import numpy as np

from euchre_env.cards import NUM_SEATS
from euchre_env.defaults import ENV_DEFAULTS
from euchre_env.engine import Engine, EuchreState, OneGame, Phase, game_key
from euchre_env.play import play
from euchre_env.rules import Rules
from euchre_env.tasks import get_task, task_settings
from euchre_env.truncation import check_max_hands

_HAND_OVER = int(Phase.HAND_OVER)
ILLEGAL_RANDOM = "random"
ILLEGAL_RAISE = "raise"
DEFAULT_BOT = "random"
"""The partner and opponents of an env made without a task (a task seats its own, `Task.partner`, `Task.opponents`)."""
BOT_REGISTRY_GROUP = "euchre_env.bots"
"""Entry-point group naming a function `make(spec, engine, seed=...) -> bot` that builds bots from specs."""


@lru_cache(maxsize=1)
def _bot_registry() -> Callable[..., Any] | None:
    """The installed bot registry's `make` function (the first by name), or None."""
    found = sorted(entry_points(group=BOT_REGISTRY_GROUP), key=lambda ep: ep.name)
    return found[0].load() if found else None


def resolve_bot(spec: Any, engine: Engine, seed: int | None = None) -> Any:
    """A bot from a policy object (returned as it is) or a spec string (built by the bot registry)."""
    if not isinstance(spec, str):
        if not callable(getattr(spec, "act", None)):
            raise TypeError(f"a bot must be a spec string or an object with act(obs, mask), got {spec!r}")
        return spec
    make = _bot_registry()
    if make is None:
        raise ValueError(
            f"bot spec {spec!r} needs a bot registry, and no package declares one under the entry-point group "
            f"{BOT_REGISTRY_GROUP!r}; install euchre-lab (pip install -e .) or pass a policy object with act(obs, mask)"
        )
    return make(spec, engine, seed=seed)


class EuchreSingleEnv(gymnasium.Env):
    """One learning seat against (and beside) bots built from agent specs."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        rules: Rules | dict | None = None,
        seat: int = 0,
        partner: Any = None,
        opponents: Any = None,
        episode: str = ENV_DEFAULTS.episode,
        reward: str = ENV_DEFAULTS.reward,
        illegal_action: str = ILLEGAL_RANDOM,
        max_hands: int | None = ENV_DEFAULTS.max_hands,
        task: str | None = None,
    ):
        self.max_hands = check_max_hands(max_hands)
        rules, episode, reward = task_settings(task, rules, episode, reward)
        seated = (get_task(task).partner, get_task(task).opponents) if task is not None else (DEFAULT_BOT, DEFAULT_BOT)
        partner, opponents = (seated[0] if partner is None else partner), (seated[1] if opponents is None else opponents)
        if isinstance(rules, dict):
            rules = Rules.from_dict(rules)
        if seat not in range(NUM_SEATS):
            raise ValueError(f"seat must be 0-3, got {seat!r}")
        if illegal_action not in (ILLEGAL_RANDOM, ILLEGAL_RAISE):
            raise ValueError(f"illegal_action must be {ILLEGAL_RANDOM!r} or {ILLEGAL_RAISE!r}, got {illegal_action!r}")
        self.engine = Engine(rules, episode=episode, reward=reward)
        self.rules = self.engine.rules
        self.seat = seat
        self.illegal_action = illegal_action
        self.specs = {(seat + 2) % NUM_SEATS: partner, (seat + 1) % NUM_SEATS: opponents, (seat + 3) % NUM_SEATS: opponents}
        high = float(max(4, self.rules.rubber_games))
        self.observation_space = gymnasium.spaces.Box(0.0, high, (self.engine.observation_size,), np.float32)
        self.action_space = gymnasium.spaces.Discrete(self.engine.num_actions)
        self.bots: dict[int, Any] = {s: resolve_bot(spec, self.engine, seed=s) for s, spec in self.specs.items()}
        self.game: OneGame | None = None
        """The game, played through the engine's one-game kernels (`init_one`, `step_one`)."""
        self._pending_reward = 0.0  # the learner's reward from before its first decision of the episode
        self._first_deal = 0  # the game's deal_count when the episode began (for max_hands)
        self._truncated = False

    @property
    def state(self) -> EuchreState | None:
        """The game as a one-row `EuchreState` (written from the game's record when read after a change)."""
        return None if self.game is None else self.game.state

    @property
    def _done(self) -> bool:
        return self.game.phase >= _HAND_OVER

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Deal from the env's random stream and let the bots play up to the learner's first decision.

        With a seed, every bot that has `reseed(seed)` (each `euchre_agents.Agent`) is reseeded from (seed, its seat).
        """
        super().reset(seed=seed)
        if seed is not None:
            for s, bot in self.bots.items():
                if callable(getattr(bot, "reseed", None)):
                    bot.reseed([seed, s])
        while True:
            self.game = self.engine.init_one(game_key(self.np_random), self.game)
            reward = self._play_bots()
            if not self._done:
                break
        self._first_deal = self.game.deal_count
        self._truncated = False
        self._pending_reward = reward
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """The learner's action, then the bots' until the learner is to act again or the episode ends."""
        if self.game is None or self._done or self._truncated:
            raise RuntimeError("call reset() before step() (and after an episode ends)")
        action = int(action)
        illegal = not (0 <= action < self.engine.num_actions and self.game.legal()[action])
        if illegal and self.illegal_action == ILLEGAL_RAISE:
            self.engine.step_one(self.game, action)  # raises IllegalActionError naming the legal actions
        if illegal:
            action = int(self.np_random.choice(np.flatnonzero(self.action_masks())))
        reward = self._pending_reward + self._step(action)
        reward += self._play_bots()
        self._pending_reward = 0.0
        terminated = self._done
        hands = self.game.deal_count - self._first_deal
        self._truncated = not terminated and self.max_hands is not None and hands >= self.max_hands
        info = self._info()
        info["illegal_action"] = illegal
        return self._observation(), reward, terminated, self._truncated, info

    def action_masks(self) -> np.ndarray:
        """(A,) bool legal actions of the learner now (all False once the episode is over)."""
        if self._done:
            return np.zeros(self.engine.num_actions, bool)
        return self.game.legal()

    def _step(self, action: int) -> float:
        """Apply one action of the seat to act; the learner's reward for it."""
        rewards = self.engine.step_one(self.game, action)
        return 0.0 if rewards is None else float(rewards[0, self.seat])

    def _play_bots(self) -> float:
        """Bots act until the learner is to act or the episode ends; the learner's reward meanwhile."""
        game = self.game
        if game.phase >= _HAND_OVER or game.to_play == self.seat:
            return 0.0
        seats = sorted(self.bots)
        seat_bot = np.zeros(NUM_SEATS, np.int64)  # the learner's seat is never played here: `until` stops there
        seat_bot[seats] = np.arange(len(seats))
        state = game.state
        rewards = np.zeros((1, NUM_SEATS))
        play(self.engine, state, [self.bots[s] for s in seats], seat_bot, until=self._learners_turn, rewards=rewards)
        game.read(state)
        return float(rewards[0, self.seat])

    def _learners_turn(self, state: EuchreState) -> np.ndarray:
        return state.to_play == self.seat

    def _observation(self) -> np.ndarray:
        return self.engine.observe_one(self.game, self.seat)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks().astype(np.int8)}

