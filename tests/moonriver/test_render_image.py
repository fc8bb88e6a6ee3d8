"""The rgb_array image: the play page's SVG rasterised, with its legend and distinct symbols."""

from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("resvg_py")

from moonriver_env import moonriver_v0
from moonriver_env.moonriver.render import style as S
from moonriver_env.moonriver.render import table_svg
from moonriver_env.moonriver.render.image import svg_to_rgb, table_image
from moonriver_env.moonriver.rules import Game, GameConfig, PartnerKind, Terrain


def _rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])


def played(num_players: int, mode: str, decisions: int, seed: int = 0) -> Game:
    game = Game(GameConfig(num_players=num_players, mode=mode), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(decisions):
        if game.is_over:
            break
        ids = game.legal_action_ids()
        game.apply(int(ids[rng.integers(len(ids))]))
    return game


@pytest.mark.parametrize("num_players, mode", [(2, "base"), (3, "legends"), (4, "base")])
def test_image_is_the_page_svg_rasterised(num_players: int, mode: str) -> None:
    game = played(num_players, mode, 60)
    image = table_image(game)
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    width, height = (float(v) for v in
                     re.search(r'width="([\d.]+)" height="([\d.]+)"', table_svg(game)).groups())
    assert image.shape[:2] == (round(height), round(width))
    assert np.array_equal(image, svg_to_rgb(table_svg(game)))


def test_legend_names_every_colour_symbol_and_partner() -> None:
    svg = table_svg(played(4, "legends", 40))
    assert ">Legend<" in svg
    for terrain in Terrain:
        assert f">{terrain.name.lower()}<" in svg
    for kind in PartnerKind:
        assert f">{S.PARTNER_NAMES[kind]}<" in svg
    for label in ("nugget (1 pt)", "beaver (1 pt)", "corn (1 pt)", "skull: drought",
                  "circle: recruit", "cow on the ranch", "printed cow symbol", "homestead"):
        assert f">{label}<" in svg


def test_nugget_and_corn_are_clearly_distinct_and_both_drawn() -> None:
    nugget, corn = _rgb(S.NUGGET[0]), _rgb(S.CORN[0])
    assert np.linalg.norm(nugget - corn) > 150  # gold against green, not two yellows
    image = table_image(played(4, "base", 80)).reshape(-1, 3).astype(int)
    for colour in (nugget, corn, _rgb(S.BEAVER[0])):
        assert (np.abs(image - colour).sum(axis=1) < 12).sum() > 10  # legend icons at least


def test_image_follows_the_game() -> None:
    game = played(2, "base", 10)
    before = table_image(game)
    game.apply(int(game.legal_action_ids()[0]))
    assert not np.array_equal(before, table_image(game))
    finished = played(2, "base", 10_000, seed=3)
    assert finished.is_over
    assert "game over" in table_svg(finished)
    assert table_image(finished).shape[2] == 3


def test_env_render_rgb_array_is_the_table_image() -> None:
    env = moonriver_v0.raw_env(num_players=3, mode="legends", render_mode="rgb_array")
    env.reset(seed=4)
    frame = env.render()
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape[2] == 3
    assert np.array_equal(frame, table_image(env.unwrapped.game))
