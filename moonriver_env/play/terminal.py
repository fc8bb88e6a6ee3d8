"""Play in the terminal: the table as text, the legal moves numbered, a number to choose."""

from __future__ import annotations

from collections.abc import Callable

from moonriver_env.moonriver.render.style import decision_text, player_label
from moonriver_env.moonriver.rules import ActionCodec
from moonriver_env.moonriver.rules.text import cell_key
from moonriver_env.play.session import PlaySession


class QuitGame(Exception):
    """The player typed q: leave the game (a normal end, exit status 0)."""


def ask_move(texts: list[str], read: Callable[[str], str], write: Callable[[str], None]) -> int:
    """Index of the move the player types (its number or its exact text); re-asks on bad input."""
    n = len(texts)
    while True:
        answer = read(f"move (1-{n}, or q to quit) > ").strip()
        if answer.lower() in ("q", "quit"):
            raise QuitGame
        if answer.isascii() and answer.isdigit() and 1 <= int(answer) <= n:
            return int(answer) - 1
        if answer in texts:
            return texts.index(answer)
        write(f"'{answer}' is not a move: type a number from 1 to {n} (or the move's text)")


def play_terminal(session: PlaySession, read: Callable[[str], str] = input,
                  write: Callable[[str], None] = print) -> int:
    """Play one game to the end in the terminal; returns an exit status."""
    game = session.game
    write(cell_key())
    try:
        while not game.is_over:
            player = game.current_player
            if session.human_turn():
                write("\n" + game.table_text())
                ids = game.legal_action_ids().tolist()
                texts = [ActionCodec.to_text(a) for a in ids]
                write(f"\nP{player} (you): {decision_text(game)}")
                for i, text in enumerate(texts, 1):
                    write(f"  {i:>3}. {text}")
                session.act({"action": ids[ask_move(texts, read, write)]})
            else:
                session.advance()
                assert session.last is not None  # the move just made
                write(f"{player_label(game, player, session.names)}: {session.last['text']}")
    except (QuitGame, KeyboardInterrupt, EOFError) as exc:
        write("\nstopped")
        return 0 if isinstance(exc, QuitGame) else 130
    write("\n" + game.table_text())
    for p, score in enumerate(game.scores()):
        write(f"{player_label(game, p, session.names)}: {score.total} = territories "
              f"{score.territories} + resources {score.resources} + partners "
              f"{score.partners} + scenario {score.scenario}")
    write("winners: " + ", ".join(player_label(game, p, session.names) for p in game.winners()))
    return 0
