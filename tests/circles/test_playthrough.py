"""A reference Circles game: three heuristic agents, seed 2024, as a readable transcript.

A change of the rules, the skill model, the generator's use or the heuristic shows up here as
a readable diff of the first decisions, chance events and effects (regenerate the expected
text with ``transcript()`` after an intended change and say why in the commit).
"""

from __future__ import annotations

import textwrap

from moonriver_env.agents.registry import make_agent

from moonriver_env.circles import CirclesConfig, CirclesGame

EXPECTED = textwrap.dedent("""\
    first_player player=0
    P0 throw 7
    flick player=0 aim=7 travel=6 stop=6
    P0 tickets 1
      spends 1 ticket(s): marble to 7 (GOLD)
      GOLD: gains 3
    P1 throw 4
    flick player=1 aim=4 travel=4 stop=11
    P1 tickets 0
      GOLD: gains 3
    P2 throw 9
    flick player=2 aim=9 travel=10 stop=1
    P2 tickets 0
      GOLD: gains 3
    P0 throw 6
    flick player=0 aim=6 travel=8 stop=9
    P0 tickets 0
    thief_die player=0 face=5
      THIEF 5: robs the bank of 0
    P1 throw 2
    flick player=1 aim=2 travel=1 stop=10
      the marble travelled 1 (< 2): invalid flick
    P2 throw 11
    flick player=2 aim=11 travel=8 stop=18
    P2 tickets 0
    P0 throw 3
    flick player=0 aim=3 travel=2 stop=0
    P0 tickets 1
      spends 1 ticket(s): marble to 1 (GOLD)
      GOLD: gains 3
    P1 throw 6
    flick player=1 aim=6 travel=6 stop=7
    P1 tickets 0
      GOLD: gains 3
    P2 throw 4
    flick player=2 aim=4 travel=3 stop=10
    P2 tickets 1
      spends 1 ticket(s): marble to 11 (GOLD)
      GOLD: gains 3
    P0 throw 10
""").splitlines()


def transcript(game: CirclesGame, limit: int) -> list[str]:
    """The first ``limit`` events of a game's record, one readable line each."""
    lines = []
    for e in game.to_record()["events"][:limit]:
        if e["type"] == "decision":
            lines.append(f"P{e['player']} {e['text']}")
        elif e["type"] == "chance":
            payload = " ".join(f"{k}={v}" for k, v in e.items() if k not in ("type", "event"))
            lines.append(f"{e['event']} {payload}")
        else:
            lines.append(f"  {e['text']}")
    return lines


def test_reference_game_plays_as_recorded() -> None:
    game = CirclesGame(CirclesConfig(num_players=3), seed=2024)
    agents = [make_agent("heuristic", seed=p, game="circles") for p in range(3)]
    while not game.is_over:
        p = game.current_player
        game.apply(agents[p].act(game, {"action_mask": game.legal_mask()}))
    assert transcript(game, 40) == EXPECTED
    assert (game.winners(), game.turns, game.end_reason) == ([1], 35, "ranch")
    assert [game.wealth(p) for p in range(3)] == [17, 18, 18]
    assert CirclesGame.from_record(game.to_record()).to_record() == game.to_record()
