"""ObservationEncoder: the table as one flat float32 vector of named views, viewer first.

docs/circles_observation.md is generated from this module (``markdown()``)."""

from __future__ import annotations

import numpy as np

from moonriver_env.common.view import View, ViewSpec, layout

from .config import ITEMS, MAX_PLAYERS, MIN_PLAYERS, RUBY, CirclesConfig, Space
from .game import CirclesGame, ContestStage, Entry, Phase, coins

PLAYER_FEATURES: tuple[str, ...] = (
    "present", "money", "rubies", "gold", "silver", "deposit",
    *(f"{item}s" for item in ITEMS),
    "bet_staked", "bet_folded", "bet_sat_out", "bet_undecided", "stake", "has_score", "score",
    "throwing", "to_throw", "bet_winner",
)
_F = {name: i for i, name in enumerate(PLAYER_FEATURES)}
DEPOSIT_CLIP = 4  # deposits are shown divided by the money cap, clipped at this many caps
_PLAYER_DOCS = (
    "present (a player sits there); money / money_cap; rubies / (money_cap // 9); gold / 2; "
    "silver / 2; deposit / money_cap (clipped at 4); shovels, tickets, wagons / their stock; "
    "saloon bet: staked (a contestant, the bettor too), folded, sat out (broke), undecided; "
    "stake / 9; has_score; latest contest score d / ring size; throwing in the current "
    "(re-)throw round; still to throw in it (so a score without it is this round's); winner "
    "of the bet (while the payer is decided)"
)


class ObservationEncoder:
    """Builds observations of any viewer for the games of one configuration."""

    def __init__(self, config: CirclesConfig | None = None) -> None:
        self.config = config if config is not None else CirclesConfig()
        cfg = self.config
        ring = cfg.ring_size
        specs: tuple[ViewSpec, ...] = (
            ("phase", (len(Phase),), "decision one-hot: "
             + ", ".join(p.name.lower() for p in Phase)),
            ("actor", (MAX_PLAYERS,), "relative player to act (one-hot; zeros when over)"),
            ("turn_owner", (MAX_PLAYERS,), "relative player whose turn it is (one-hot)"),
            ("marble", (ring,), "ring index of the marble (one-hot)"),
            ("layout", (ring, len(Space)), "space kind of each ring index: "
             + ", ".join(s.name.lower() for s in Space)),
            ("players", (MAX_PLAYERS, len(PLAYER_FEATURES)),
             "per relative player (viewer first): " + _PLAYER_DOCS),
            ("shop", (len(ITEMS),), "shop stock / box stock: " + ", ".join(ITEMS)),
            ("mine", (len(cfg.mine),), "mine cells from the entrance: 1 while occupied"),
            ("next_mine", (1,), "value of the next mine cell / largest cell value (0: empty)"),
            ("cup", (len(cfg.cup_costs),), "donation slots: 1 when filled"),
            ("bag", (4,), "bag tokens / their starting count: silver, gold, ruby, stones"),
            ("turns_left", (1,), "turns before the turn cap / the cap"),
            ("num_players", (MAX_PLAYERS - MIN_PLAYERS + 1,), "players one-hot: 2, 3, 4, 5"),
            ("bet_stage", (len(ContestStage),), "saloon bet stage one-hot: "
             + ", ".join(s.name.lower() for s in ContestStage)),
            ("die", (6,), "pending thief die face one-hot (faces 1-6; zeros: none)"),
        )
        self.views: dict[str, View] = layout(specs)
        self.size = self.views["die"].stop
        self.high = float(DEPOSIT_CLIP)  # the largest value any entry takes
        self._o = {name: v.start for name, v in self.views.items()}
        kinds = np.zeros((ring, len(Space)), dtype=np.float32)
        kinds[np.arange(ring), [int(s) for s in cfg.spaces]] = 1.0
        self._base = np.zeros(self.size, dtype=np.float32)
        lo = self.views["layout"]
        self._base[lo.start:lo.stop] = kinds.ravel()
        self._stock = [max(1, s) for s in cfg.stock]
        self._bag = [max(1, b) for b in cfg.bag]
        self._max_rubies = cfg.money_cap // RUBY

    def view(self, obs: np.ndarray, name: str) -> np.ndarray:
        """The named view of an observation vector, reshaped."""
        v = self.views[name]
        return obs[..., v.start:v.stop].reshape(*obs.shape[:-1], *v.shape)

    def encode(self, game: CirclesGame, viewer: int) -> np.ndarray:
        """A fresh observation vector of ``game`` seen by player ``viewer``."""
        cfg, o = self.config, self._o
        if game.config is not cfg and game.config != cfg:
            raise ValueError("ObservationEncoder.encode: the game's config differs from the "
                             "observer's (observation sizes depend on it)")
        n = game.num_players
        obs = self._base.copy()
        obs[o["phase"] + int(game.phase)] = 1.0
        if not game.is_over:
            obs[o["actor"] + (game.actor - viewer) % n] = 1.0
        obs[o["turn_owner"] + (game.owner - viewer) % n] = 1.0
        obs[o["marble"] + game.marble] = 1.0
        width = len(PLAYER_FEATURES)
        cap, ring = cfg.money_cap, cfg.ring_size
        for rel in range(n):
            p = (viewer + rel) % n
            row = o["players"] + rel * width
            rubies, gold, silver = coins(game.money[p])
            values = [1.0, game.money[p] / cap, rubies / self._max_rubies, gold / 2, silver / 2,
                      min(game.deposit[p] / cap, DEPOSIT_CLIP),
                      *(game.items[p][i] / self._stock[i] for i in range(len(ITEMS)))]
            obs[row:row + len(values)] = values
            entry = game.entry[p]
            if entry != Entry.NONE:
                obs[row + _F["bet_staked"] + int(entry) - 1] = 1.0
            obs[row + _F["stake"]] = game.stake[p] / RUBY
            if game.score[p] >= 0:
                obs[row + _F["has_score"]] = 1.0
                obs[row + _F["score"]] = game.score[p] / ring
            if p in game.group:
                obs[row + _F["throwing"]] = 1.0
                if p in game.queue:
                    obs[row + _F["to_throw"]] = 1.0
            if p == game.contest_winner:
                obs[row + _F["bet_winner"]] = 1.0
        for i in range(len(ITEMS)):
            obs[o["shop"] + i] = game.shop[i] / self._stock[i]
        nxt = game.mine_next
        obs[o["mine"] + nxt:o["mine"] + len(cfg.mine)] = 1.0
        if nxt < len(cfg.mine):
            obs[o["next_mine"]] = cfg.mine[nxt] / max(cfg.mine)
        obs[o["cup"]:o["cup"] + game.cup_filled] = 1.0
        for i in range(4):
            obs[o["bag"] + i] = game.bag[i] / self._bag[i]
        obs[o["turns_left"]] = game.turns_left / cfg.max_turns
        obs[o["num_players"] + n - MIN_PLAYERS] = 1.0
        obs[o["bet_stage"] + int(game.stage)] = 1.0
        if game.die:
            obs[o["die"] + game.die - 1] = 1.0
        return obs

    def markdown(self) -> str:
        """The observation layout as Markdown (docs/circles_observation.md)."""
        lines = [
            "# Circles: Far West observation",
            "",
            "Generated by `python -m moonriver_env.circles.observation` from "
            "`moonriver_env.circles.observation`; do not edit by hand.",
            "",
            f"One float32 vector of {self.size} values for the Far West ring "
            f"({self.config.ring_size} spaces) and 2 to 5 players, every value in "
            f"[0, {self.high:g}]. Players are relative to the viewer (0 = the viewer, 1 = the "
            "next player clockwise); seats beyond the number of players are zero. Everything "
            "in the game is public, so nothing is hidden from any viewer. In the PettingZoo "
            "environment it comes as `observation`, beside `action_mask` (the legal actions of "
            "the player to act; zeros for everyone else and once the game is over); "
            "`env.observation_views` holds the table below.",
            "",
            "| view | start | stop | shape | content |",
            "|---|---|---|---|---|",
        ]
        lines += [f"| {v.name} | {v.start} | {v.stop} | {v.shape} | {v.doc} |"
                  for v in self.views.values()]
        lines += ["", "Player features, in order: " + ", ".join(PLAYER_FEATURES) + "."]
        return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(ObservationEncoder().markdown())
