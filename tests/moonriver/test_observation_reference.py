"""The fast, cached encoder equals a plain reference encoding written view by view from the docs.

``ObservationEncoder.encode`` is tuned for speed (cached base vectors, ranch entries keyed on
contents, batched writes). The reference below fills each documented view directly from the
game state with no caching, so a stale cache, a missed write or a wrong offset shows up as a
difference on some state of some variant.
"""

from __future__ import annotations

import numpy as np
import pytest

from moonriver_env.moonriver.observation import (
    NUMBER_SCALE,
    RANCH_CHANNELS,
    SCORE_SCALE,
    ObservationEncoder,
)
from moonriver_env.moonriver.rules import Face, Game, GameConfig, PartnerKind, Phase, Terrain
from moonriver_env.moonriver.rules.grid import HOMESTEAD, usable_cells

CH = {name: i for i, name in enumerate(RANCH_CHANNELS)}
BOARDS = ("camp", "mary", "wesley", "calamity", "big_jo")
SPECIALISTS = [k for k in PartnerKind if k != PartnerKind.COWBOY]


def plot_features(game: Game, plot: int) -> list[float]:
    """PLOT_FEATURES of one plot id."""
    data = game.data
    k = int(data.plot_kind[plot])
    terrain = [1.0 if int(data.terrain[k]) == t else 0.0 for t in range(len(Terrain))]
    return [1.0, *terrain, float(data.nugget[k]), float(data.beaver[k]), float(data.corn[k]),
            float(data.cows[k]), float(data.skull[k]), float(data.circle[k]),
            float(data.number[k]) / NUMBER_SCALE]


def reference(enc: ObservationEncoder, game: Game, viewer: int) -> np.ndarray:
    """The observation of ``viewer``, view by view, as docs/observation.md describes it."""
    obs = np.zeros(enc.size, dtype=np.float32)
    v = {name: enc.view(obs, name) for name in enc.views}  # writable views into obs
    n = game.num_players
    data = game.data
    scores = game.scores() if game.is_over else game.running_scores()
    for rel in range(n):
        p = (viewer + rel) % n
        ranch = game.ranches[p]
        planes = v["ranches"][rel].reshape(len(RANCH_CHANNELS), -1)
        for cell in range(planes.shape[1]):
            kind = int(ranch.kind[cell])
            if kind >= 0:
                planes[int(data.terrain[kind]), cell] = 1.0
                for name, column in (("nugget", data.nugget), ("beaver", data.beaver),
                                     ("corn", data.corn), ("skull_symbol", data.skull),
                                     ("circle_symbol", data.circle)):
                    planes[CH[name], cell] = float(column[kind])
            planes[CH["cows"], cell] = float(ranch.cows[cell])
            token = int(ranch.partner[cell])
            if token >= 0:
                kind_of = (PartnerKind.COWBOY if ranch.face[cell] == Face.COWBOY
                           else data.partner_specialists[token])
                planes[CH[f"partner_{kind_of.name.lower()}"], cell] = 1.0
            planes[CH["bridge"], cell] = float(ranch.bridge[cell])
            planes[CH["free"], cell] = float(usable_cells(ranch.rows)[cell] and kind < 0)
        planes[CH["homestead"], HOMESTEAD] = 1.0
        for slot, plot in enumerate(ranch.hand):
            v["reserves"][rel, slot] = plot_features(game, plot)
        v["reserve_size"][rel] = ranch.capacity / 4.0
        v["boards"][rel, BOARDS.index(game.board_names[p])] = 1.0
        v["scores"][rel] = scores[p].total / SCORE_SCALE
    to_rel = {p: (p - viewer) % n for p in range(n)}
    for c, (col, owner) in enumerate(((game.active, game.active_owner),
                                      (game.pending, game.pending_owner))):
        if col is None:
            continue
        for pos in range(len(col)):
            if col[pos] >= 0:
                v["columns"][c, pos] = plot_features(game, col[pos])
            if owner[pos] >= 0:
                v["column_owners"][c, pos, to_rel[owner[pos]]] = 1.0
    for slot, token in enumerate(game.saloon):
        if token >= 0:
            v["saloon"][slot, SPECIALISTS.index(data.partner_specialists[token])] = 1.0
    for token in game.pile:
        v["pile"][SPECIALISTS.index(data.partner_specialists[token])] += 1.0
    v["pile"][:] /= 5.0
    v["phase"][int(game.phase)] = 1.0
    if not game.is_over:
        a = to_rel[game.current_player]
        v["acting"][a] = 1.0
        pending = v["ranches"][a].reshape(len(RANCH_CHANNELS), -1)[CH["pending"]]
        for cell in (*game.circles, game.effect_cell):
            if cell >= 0:
                pending[cell] = 1.0
        if game.phase == Phase.DROUGHT:
            pending[game.skulls[0]] = 1.0
    v["context"][:] = (game.forced, game.emptying, game.last_round, game.builds_done / 2,
                       game.builds_allowed / 2, game.cowboy_moves_left / 3,
                       game.circles[0] >= 0, game.circles[1] >= 0, sum(game.bonus_tiles) / 2)
    for pos in game.order:
        if game.active_owner[pos] >= 0:
            v["turn_order"][to_rel[game.active_owner[pos]], pos] = 1.0
    v["game"][:4] = (game.round / 24, len(game.box) / data.num_plots,
                     len(game.pile) / data.num_partners, game.supply / 32)  # NUM_COWS
    v["game"][2 + n] = 1.0  # players_n
    v["game"][7 + (game.scenario or 0)] = 1.0  # base, or scenario_s
    return obs


VARIANTS = [dict(num_players=4), dict(num_players=3), dict(num_players=2),
            dict(num_players=4, mode="legends", scenario=3),
            dict(num_players=3, mode="legends", scenario=2),
            dict(num_players=2, mode="legends", scenario=1),
            dict(num_players=2, mode="legends", scenario=4)]


@pytest.mark.parametrize("config", VARIANTS, ids=lambda c: "-".join(map(str, c.values())))
def test_encoder_matches_the_reference_on_every_state(config: dict) -> None:
    enc = ObservationEncoder()  # one encoder across games and viewers: caches are shared
    rng = np.random.default_rng(len(config))
    for seed in range(2):
        game = Game(GameConfig(**config), seed=seed)
        while True:
            viewers = range(game.num_players) if rng.random() < 0.3 else [max(
                game.current_player, 0)]
            for viewer in viewers:
                expected = reference(enc, game, viewer)
                got = enc.encode(game, viewer)
                diff = np.flatnonzero(got != expected)
                assert diff.size == 0, (f"seed {seed} round {game.round} {game.phase.name} "
                                        f"viewer {viewer}: differs at {diff[:8].tolist()}")
            if game.is_over:
                break
            ids = game.legal_action_ids()
            game.apply(int(ids[rng.integers(ids.size)]))


def test_encode_into_a_buffer_overwrites_everything() -> None:
    enc = ObservationEncoder()
    game = Game(GameConfig(num_players=4), seed=3)
    buffer = np.full(enc.size, 7.0, dtype=np.float32)
    out = enc.encode(game, 2, out=buffer)
    assert out is buffer
    np.testing.assert_array_equal(buffer, reference(enc, game, 2))
