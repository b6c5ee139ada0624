"""The one play loop and the one way to call a bot.

A bot is any object with `act(obs (n, D), mask (n, A)) -> (n,)` legal action ids; one that declares
`needs_full_state = True` (the cheating `oracle`) is also given the engine state and the rows it acts
for: `act(obs, mask, state, rows)`. `act` below is the only place that calls a bot's `act`, and `play`
the only loop that plays bots against each other on a batched state (evaluation, teacher data, the
single-agent env's opponents). pimc's compiled rollouts keep their own loop for speed.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from euchre_env.cards import NUM_SEATS
from euchre_env.engine import Engine, EuchreState



class BotError(ValueError):
    """A bot failed while playing: an illegal action, a malformed answer, or an exception of the user's code."""


DecisionHook = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], "np.ndarray | None"]


def bot_label(bot: Any) -> str:
    """What to call a bot in messages: its `name`, else its class name."""
    return str(getattr(bot, "name", type(bot).__name__))


def _action_text(engine: Engine | None, action: int) -> str:
    return engine.action_label(action) if engine is not None else str(action)


def act(
    bot: Any,
    obs: np.ndarray,
    mask: np.ndarray,
    state: EuchreState | None = None,
    rows: np.ndarray | None = None,
    *,
    label: str | None = None,
    engine: Engine | None = None,
) -> np.ndarray:
    """The bot's (n,) int64 actions for n decisions, checked to be legal.

    `state, rows` (the engine state and the rows decided on) reach the bot only when it declares
    `needs_full_state`. A wrong shape or dtype, or an illegal action, raises `BotError` naming the bot
    (`label`, else its name); `engine` (default: the bot's own) names the actions in the message.
    """
    mask = np.asarray(mask, bool)
    if getattr(bot, "needs_full_state", False):
        actions = bot.act(obs, mask, state, rows)
    else:
        actions = bot.act(obs, mask)
    actions = np.asarray(actions)
    n = mask.shape[0]
    name = bot_label(bot) if label is None else label
    if actions.shape != (n,) or not np.issubdtype(actions.dtype, np.integer):
        raise BotError(f"bot {name!r} returned {actions.shape} {actions.dtype} actions for {n} decisions")
    bad = np.flatnonzero((actions < 0) | (actions >= mask.shape[1]))
    if not bad.size:
        bad = np.flatnonzero(~mask[np.arange(n), actions])
    if bad.size:
        engine = engine if engine is not None else getattr(bot, "engine", None)
        i = int(bad[0])
        raise BotError(
            f"bot {name!r} chose the illegal action {_action_text(engine, int(actions[i]))}; legal: "
            + ", ".join(_action_text(engine, int(a)) for a in np.flatnonzero(mask[i]))
        )
    return actions.astype(np.int64)


def seat_bots(seat_bot: np.ndarray, n: int, num_bots: int) -> np.ndarray:
    """`seat_bot` as an (n, 4) int64 array of bot indices (a (4,) array applies to every game)."""
    table = np.asarray(seat_bot)
    if table.shape == (NUM_SEATS,):
        table = np.broadcast_to(table, (n, NUM_SEATS))
    if table.shape != (n, NUM_SEATS) or table.dtype.kind not in "iu":
        raise ValueError(f"seat_bot must be ints of shape (4,) or ({n}, 4), got {table.shape} {table.dtype}")
    if table.size and (table.min() < 0 or table.max() >= num_bots):
        raise ValueError(f"seat_bot indexes {num_bots} bots, got values {table.min()}..{table.max()}")
    return table.astype(np.int64, copy=False)


def play(
    engine: Engine,
    state: EuchreState,
    bots: Sequence[Any],
    seat_bot: np.ndarray,
    *,
    on_decision: DecisionHook | None = None,
    obs: np.ndarray | None = None,
    until: Callable[[EuchreState], np.ndarray] | None = None,
    labels: Sequence[str] | None = None,
    rewards: np.ndarray | None = None,
) -> np.ndarray:
    """Step every game of `state` (in place) to the end of its episode; (n, 2) int64 points per team.

    `bots[seat_bot[g, s]]` plays seat s of game g (`seat_bot` (n, 4), or (4,) for every game); each bot
    is called once per step on all the games where it is to act (through `act`). Points are summed
    from `state.hand_points` over the hands scored.

    Options:
    - `on_decision(bot_index, rows, obs_rows, mask_rows, actions)`: called once per step, before the
      step, with every decision of that step (rows ascending; `bot_index` (m,) who made each). It may
      return (m,) actions to play instead (teacher data's exploration), or None to keep them.
    - `obs`: an (n, D) float32 buffer for the observations (else one is allocated).
    - `until(state) -> (n,) bool`: `play` returns before the first step at which it is True for a game
      not yet done (the engine steps every live game together; the single-agent env, one game, stops
      at the learner's turn).
    - `labels`: the bots' names in error messages (default: each bot's name).
    - `rewards`: an (n, 4) array the step rewards are added into.
    """
    n = state.num_games
    table = seat_bots(seat_bot, n, len(bots))
    names = [bot_label(b) for b in bots] if labels is None else list(labels)
    if obs is None or obs.shape != (n, engine.observation_size):
        obs = np.empty((n, engine.observation_size), np.float32)
    points = np.zeros((n, 2), np.int64)
    games = np.arange(n)
    while True:
        live = ~state.done
        if until is not None and (live & np.asarray(until(state), bool)).any():
            return points
        rows = np.flatnonzero(live)
        if not rows.size:
            return points
        engine.observe(state, out=obs)
        who = table[games, np.maximum(state.to_play, 0)]
        actions = np.zeros(n, np.int64)
        for b, bot in enumerate(bots):
            mine = rows[who[rows] == b]
            if mine.size:
                actions[mine] = act(bot, obs[mine], state.legal[mine], state, mine, label=names[b], engine=engine)
        if on_decision is not None:
            chosen = on_decision(who[rows], rows, obs[rows], state.legal[rows], actions[rows])
            if chosen is not None:
                actions[rows] = chosen
        step_rewards = engine.step(state, actions)
        if rewards is not None:
            rewards += step_rewards
        points += state.hand_points
