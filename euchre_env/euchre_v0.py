"""Euchre, a four-player partnership trick-taking game, as a PettingZoo AEC environment.

| Import             | `from euchre_env import euchre_v0`                     |
|--------------------|--------------------------------------------------------|
| Actions            | Discrete                                               |
| Parallel API       | No                                                     |
| Manual control     | No                                                     |
| Agents             | `agents = ['player_0', 'player_1', 'player_2', 'player_3']` |
| Action shape       | (1,)                                                   |
| Action values      | Discrete(31) for the default 24-card deck (num_cards + 7) |
| Observation shape  | (487,) for the default deck (docs/environment.md)      |
| Observation values | [0, 4]                                                 |

`player_0` and `player_2` are partners against `player_1` and `player_3`. Play goes clockwise,
`player_i` to `player_{i+1}`. All the rules (deck, stick the dealer, going alone, lone defenders,
who leads, scoring, game target) come from one `euchre_env.Rules` config and are applied by
`euchre_env.engine`; this module only translates.

### Arguments
`euchre_v0.env(rules=Rules(), episode="hand", reward="points", render_mode=None, max_hands=10_000, task=None)`
(the defaults every env shares, `euchre_env.defaults.ENV_DEFAULTS`; docs/environment.md)
- `rules`: a `Rules` config (defaults follow the primary rules document).
- `episode`: `"hand"` ends after one hand, `"game"` plays hands until a side reaches
  `rules.target_points`, `"rubber"` plays games until a side has won `rules.rubber_games`.
- `reward`: `"points"` pays, at the end of every hand, each player its team's points minus the other
  team's for that hand; `"win"` pays +1/-1 when the episode ends (0 for a thrown-in hand).
- `render_mode`: `None`, `"ansi"` (returns the table as text) or `"human"` (prints it).
- `task`: a task's name (`"standard-v1"`, `euchre_env.tasks`), which fixes the rules, episode and reward.
- `max_hands`: a safety net against endless episodes. Once this many hands are over (scored or thrown
  in) and the episode is not, every agent is truncated (`truncations[a] = True`, `terminations` stay
  False) and steps out with `None`, as PettingZoo expects. Real play never reaches the default 10,000;
  a policy that always passes under `stick_the_dealer=False` would otherwise throw in forever.
  `None`: no limit.

`reset(seed=..., options={"deal": {"dealer": 0, "hands": [[5 card names] x 4], "upcard": "JH"}})`
starts from an exact deal; the kitty is the rest of the deck. A malformed or impossible deal raises
`DealError` and leaves the environment as it was.

### Observation Space
`{"observation": float32 vector, "action_mask": int8 vector}`. The vector is the acting player's whole
information state, from its own seat (relative seats: 0 self, 1 left, 2 partner, 3 right): its hand,
the upcard and whether it was turned down, the dealer, every bid in order, trump, maker, who went alone
and who sits out, its own discard if it is the dealer, the decision being asked, every card played with
who played it and in which trick, the current trick, each trick's leader, tricks won per team and, in
game and rubber episodes, the score (and games won). Nothing it could not know. The cells of each
feature are in `env.unwrapped.engine.observation_layout` (docs/environment.md draws the layout).

### Legal Actions Mask
`action_mask[a] == 1` exactly for the legal actions of the agent to act; all zeros for every other
agent. Action ids: cards `0..C-1` (play, or the dealer's discard, by phase), then `pass`, `clubs`,
`diamonds`, `hearts`, `spades` (in round one only the upcard's suit is legal: order it up), `alone`,
`partner`. `env.unwrapped.action_name(a)` and `env.unwrapped.action_id("JH")` convert.
An illegal action raises `IllegalActionError` naming it and the legal ones; the state is unchanged.

### Rewards
`reward="points"`: at the end of each hand, every player gets its team's points minus the other team's
(makers 1 for three or four tricks, 2 for a march, 4 for a lone march; euchred: defenders 2). Partners
always get the same reward and the two teams' rewards sum to zero. `reward="win"`: +1/-1 at the end.

### Version History
* v0: first release.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv

from euchre_env import _wrappers
from euchre_env.cards import NUM_SEATS, SUIT_NAMES, SUIT_SYMBOLS
from euchre_env.defaults import ENV_DEFAULTS
from euchre_env.engine import (
    DealError,
    Engine,
    EuchreState,
    OneGame,
    Phase,
    game_key,
    game_keys,
)
from euchre_env.record import legal_mask
from euchre_env.rules import Rules
from euchre_env.tasks import task_settings
from euchre_env.truncation import check_max_hands

AGENTS = [f"player_{i}" for i in range(NUM_SEATS)]
_HAND_OVER = int(Phase.HAND_OVER)
SEAT_NAMES = ("South", "West", "North", "East")


def env(**kwargs: Any) -> AECEnv:
    """The AEC environment with PettingZoo's standard wrappers (order enforcing, bounds checks).

    The wrappers are subclasses of PettingZoo's with faster per-decision paths (see `_wrappers`).
    """
    e = raw_env(**kwargs)
    e = _wrappers.AssertOutOfBounds(e)
    e = _wrappers.OrderEnforcing(e)
    return e


class raw_env(AECEnv):
    """Euchre for four agents; see the module docstring for spaces, masks and rewards."""

    metadata = {"name": "euchre_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False}

    def __init__(
        self,
        rules: Rules | None = None,
        episode: str = ENV_DEFAULTS.episode,
        reward: str = ENV_DEFAULTS.reward,
        render_mode: str | None = None,
        max_hands: int | None = ENV_DEFAULTS.max_hands,
        task: str | None = None,
    ):
        super().__init__()
        rules, episode, reward = task_settings(task, rules, episode, reward)
        self.max_hands = check_max_hands(max_hands)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode={render_mode!r} is not one of {self.metadata['render_modes']} or None")
        self.engine = Engine(rules, episode=episode, reward=reward)
        self.rules = self.engine.rules
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        high = float(max(4, self.rules.rubber_games))
        obs_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, high, (self.engine.observation_size,), np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (self.engine.num_actions,), np.int8),
            }
        )
        act_space = gymnasium.spaces.Discrete(self.engine.num_actions)
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: act_space for a in AGENTS}
        self._game: OneGame | None = None
        """The game being played, stepped by the engine's one-game kernels; `state_` is its state."""
        self._key_rng = np.random.default_rng()
        self._seat_of = {a: seat for seat, a in enumerate(AGENTS)}
        self._no_mask = np.zeros(self.engine.num_actions, np.int8)
        self._paid = False
        """The last step paid someone: `rewards` holds non-zero values until the next step clears it."""
        self._first_deal = 0
        """The game's `deal_count` at reset: every deal since then ended a hand (scored or thrown in)."""
        self._truncated = False
        """The episode was cut by `max_hands` (the agents' truncation flags go as they step out)."""

    @property
    def state_(self) -> EuchreState | None:
        """The game as a one-row `EuchreState` (the same object each time, written when read after a change:
        one held across a step shows the game as it was until `state_` is read again)."""
        return None if self._game is None else self._game.state

    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        """The (shared, cached) observation space."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        """The (shared, cached) action space."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ API

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new episode: a random deal from `seed`, or the exact deal in `options["deal"]`."""
        rng = np.random.default_rng(seed) if seed is not None else self._key_rng
        deal = (options or {}).get("deal")
        if deal is not None:
            rng_state = rng.bit_generator.state
            key = game_keys(rng, 1)
            try:
                dealt = self._state_from_deal(deal, int(key[0]))
                game = OneGame.from_state(dealt)
            except DealError:
                rng.bit_generator.state = rng_state  # a rejected deal leaves the env as it was
                raise
        else:
            game = self.engine.init_one(game_key(rng), self._game)
        self._key_rng = rng
        self._game = game
        self._first_deal = game.deal_count
        self._truncated = False
        self._paid = False
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[game.to_play]

    def _state_from_deal(self, deal: Any, key: int) -> EuchreState:
        if not isinstance(deal, dict) or set(deal) != {"dealer", "hands", "upcard"}:
            raise DealError('options["deal"] must be a dict with exactly the keys "dealer", "hands", "upcard"')
        hands = deal["hands"]
        if not isinstance(hands, (list, tuple)) or len(hands) != NUM_SEATS:
            raise DealError("deal['hands'] must list 4 hands, one per seat")
        ids = []
        for seat, h in enumerate(hands):
            if not isinstance(h, (list, tuple)) or len(h) != 5:
                raise DealError(f"hand of seat {seat} must list 5 cards, got {h!r}")
            ids.append([self._card(c) for c in h])
        return self.engine.init_from_deal(deal["dealer"], np.array(ids), self._card(deal["upcard"]), key=key)

    def _card(self, name: Any) -> int:
        if not isinstance(name, str):
            raise DealError(f"cards are given by name such as 'JH', got {name!r}")
        try:
            return self.engine.deck.card_id(name)
        except ValueError as err:
            raise DealError(str(err)) from None

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's information state and its action mask (all zeros unless it is to act)."""
        seat = self._seat_of[agent]
        game = self._game
        if game.to_play == seat and game.phase < _HAND_OVER and not self._truncated:
            mask = legal_mask(game.record, self.engine.num_actions, np.int8)
        else:
            mask = self._no_mask.copy()
        # Both arrays are new: what a caller holds never changes under it.
        return {"observation": self.engine.observe_one(game, seat), "action_mask": mask}

    def step(self, action: int) -> None:
        """Apply the selected agent's action; raises IllegalActionError (state unchanged) if illegal."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._game
        rewards = self.engine.step_one(game, action)
        self._cumulative_rewards[agent] = 0.0
        if rewards is not None:
            self.rewards = dict(zip(AGENTS, rewards[0].tolist()))
            self._accumulate_rewards()
            self._paid = True
        elif self._paid:  # nobody is paid this step: clear what the last step paid
            self.rewards = dict.fromkeys(AGENTS, 0.0)
            self._paid = False
        if game.phase >= _HAND_OVER:
            self.terminations = dict.fromkeys(AGENTS, True)
            self.infos = {a: {"score": game.state.score[0].tolist()} for a in AGENTS}
        elif self.max_hands is not None and game.deal_count - self._first_deal >= self.max_hands:
            self.truncations = dict.fromkeys(AGENTS, True)
            self._truncated = True
            score = game.state.score[0].tolist()
            self.infos = {a: {"score": score, "hands": game.deal_count - self._first_deal} for a in AGENTS}
        else:
            self.agent_selection = AGENTS[game.to_play]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """The table as text: the acting seat's hand, bids, trump, the trick, tricks and score."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human'.")
            return None
        text = self.table_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------------ helpers for people

    def action_name(self, action: int) -> str:
        """Name of an action id: a card such as 'JH', 'pass', a suit, 'alone' or 'partner'."""
        if not 0 <= action < self.engine.num_actions:
            raise ValueError(f"no action {action}; ids are 0..{self.engine.num_actions - 1}")
        return self.engine.action_names[action]

    def action_id(self, name: str) -> int:
        """Action id of a name ('JH', '10h', 'pass', 'hearts', 'alone', 'partner'; case-insensitive)."""
        key = name.strip().lower()
        names = [n.lower() for n in self.engine.action_names]
        if key in names:
            return names.index(key)
        return self.engine.deck.card_id(name)

    def legal_actions(self) -> list[int]:
        """Legal action ids of the agent to act."""
        return self.engine.legal_actions(self.state_)

    def public_state(self) -> dict[str, Any]:
        """What every seat can see, as a plain dict."""
        s, e = self.state_, self.engine
        trump = int(s.trump[0])
        t = int(s.trick_index[0])
        trick = []
        if int(s.phase[0]) == Phase.PLAY and t < 5:
            trick = [(int(seat), e.deck.names[int(s.trick_cards[0, t, seat])]) for seat in self._trick_order(t)]
        return {
            "phase": Phase(int(s.phase[0])).name.lower(),
            "to_play": int(s.to_play[0]),
            "dealer": int(s.dealer[0]),
            "upcard": e.deck.names[int(s.upcard[0])],
            "upcard_turned_down": bool(s.num_bids[0] >= NUM_SEATS and not s.ordered_up[0]),
            "bids": [e.action_names[int(b)] for b in s.bids[0] if b >= 0],
            "trump": SUIT_NAMES[trump] if trump >= 0 else None,
            "maker": int(s.maker[0]) if trump >= 0 else None,
            "alone": [int(i) for i in range(NUM_SEATS) if self._alone(i)],
            "sitting_out": [int(i) for i in np.flatnonzero(~s.active[0])],
            "current_trick": trick,
            "tricks_won": s.tricks_won[0].tolist(),
            "score": s.score[0].tolist(),
            "games_won": s.games_won[0].tolist(),
            "hand_number": int(s.hand_number[0]),
        }

    def private_state(self, agent: str) -> dict[str, Any]:
        """What only `agent` knows beyond `public_state()`: the cards it holds and, if it is the dealer
        and has buried one, that card (nobody else's cards, no kitty card)."""
        if agent not in self._seat_of:
            raise ValueError(f"no agent {agent!r}; agents are {', '.join(AGENTS)}")
        s, names = self.state_, self.engine.deck.names
        seat = self._seat_of[agent]
        buried = int(s.discard[0]) if int(s.dealer[0]) == seat else -1
        return {
            "hand": [names[c] for c in np.flatnonzero(s.hand[0, seat])],
            "discard": names[buried] if buried >= 0 else None,
        }

    def _alone(self, seat: int) -> bool:
        s = self.state_
        return bool((s.maker_alone[0] and s.maker[0] == seat) or s.lone_defender[0] == seat)

    def _trick_order(self, t: int) -> list[int]:
        s = self.state_
        leader = int(s.trick_leader[0, t])
        seats = [(leader + k) % NUM_SEATS for k in range(NUM_SEATS)]
        return [p for p in seats if s.trick_cards[0, t, p] >= 0]

    def table_text(self) -> str:
        """A readable picture of the table for a person following the game."""
        s, e = self.state_, self.engine
        names = e.deck.names
        pub = self.public_state()
        lines = []
        hand = pub["hand_number"] if s.done[0] else pub["hand_number"] + 1  # at the end: the hand just finished
        lines.append(
            f"Hand {hand} | score NS {pub['score'][0]} - EW {pub['score'][1]}"
            f" | dealer {SEAT_NAMES[pub['dealer']]} (player_{pub['dealer']})"
        )
        trump = pub["trump"]
        if trump is None:
            state = "turned down" if pub["upcard_turned_down"] else "offered"
            lines.append(f"Upcard {pub['upcard']} ({state}); bids so far: {', '.join(pub['bids']) or 'none'}")
        else:
            who = f"player_{pub['maker']}"
            alone = " alone" if pub["maker"] in pub["alone"] else ""
            lines.append(f"Trump {SUIT_SYMBOLS[SUIT_NAMES.index(trump)]} {trump}, made by {who}{alone}")
            if pub["sitting_out"]:
                lines.append("Sitting out: " + ", ".join(f"player_{i}" for i in pub["sitting_out"]))
            lines.append(f"Tricks NS {pub['tricks_won'][0]} - EW {pub['tricks_won'][1]}")
        if pub["current_trick"]:
            lines.append("Trick: " + "  ".join(f"player_{p}:{c}" for p, c in pub["current_trick"]))
        if self._truncated:
            lines.append(f"Truncated: {self.max_hands} hands played (max_hands); score NS {pub['score'][0]} - EW {pub['score'][1]}")
        elif not s.done[0]:
            seat = int(s.to_play[0])
            held = [names[c] for c in np.flatnonzero(s.hand[0, seat])]
            legal = [e.action_names[a] for a in self.legal_actions()]
            lines.append(f"player_{seat} ({SEAT_NAMES[seat]}) to {Phase(int(s.phase[0])).name.lower()}")
            lines.append(f"  hand:  {' '.join(held)}")
            lines.append(f"  legal: {' '.join(legal)}")
        else:
            pts = s.hand_points[0].tolist()
            lines.append(f"Over. last hand: NS +{pts[0]}, EW +{pts[1]}; final score NS {pub['score'][0]} - EW {pub['score'][1]}")
        return "\n".join(lines)
