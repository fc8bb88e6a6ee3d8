"""The text board's key (engine.text.cell_key): every letter explained, printed where the
text board is shown to a person (terminal play, replay)."""

from __future__ import annotations

import json

from moonriver_env.__main__ import main as cli
from moonriver_env.moonriver.rules import Game, GameConfig, PartnerKind, Terrain
from moonriver_env.moonriver.rules.components import PARTNER_LETTERS, TERRAIN_LETTERS
from moonriver_env.moonriver.rules.text import cell_key
from moonriver_env.play.session import GameOptions, PlaySession
from moonriver_env.play.terminal import play_terminal


def test_the_key_names_every_letter() -> None:
    key = cell_key()
    for terrain in Terrain:
        assert f"{TERRAIN_LETTERS[terrain]} {terrain.name.lower()}" in key
    for kind in PartnerKind:
        assert f"{PARTNER_LETTERS[kind]} {kind.name.lower().replace('_', ' ')}" in key
    assert "Z cornfield" in key and "R farm" in key
    assert "F1w = forest, 1 cow, cowboy" in key
    assert "###" in key and " = " in key


def test_terminal_play_prints_the_key_first() -> None:
    session = PlaySession(GameOptions(players=2, humans=(0,), opponents=("random",), seed=4))
    out: list[str] = []
    answers = iter(["q"])
    play_terminal(session, lambda _: next(answers), out.append)
    assert out[0] == cell_key()


def test_replay_prints_the_key_before_the_table(tmp_path, capsys) -> None:
    game = Game(GameConfig(num_players=2), seed=3)
    while not game.is_over:
        game.apply(int(game.legal_action_ids()[0]))
    path = tmp_path / "game.json"
    path.write_text(json.dumps(game.to_record()))
    assert cli(["replay", str(path), "--no-step"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(cell_key() + "\n")
    assert out.count("key: a cell reads") == 1
