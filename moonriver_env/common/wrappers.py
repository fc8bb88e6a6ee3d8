"""PettingZoo wrappers every game's ``env()`` may use."""

from __future__ import annotations

from typing import Any

from pettingzoo.utils import wrappers

from .errors import IllegalActionError
from .validate import action_id


class ActionIdWrapper(wrappers.AssertOutOfBoundsWrapper):  # type: ignore[misc]  # untyped
    """PettingZoo's out-of-space check, strict: a value that is not an id raises."""

    # A value that is not an integer id of the action space raises IllegalActionError (state
    # unchanged) before TerminateIllegalWrapper indexes the mask with it; an integer id that
    # is merely illegal now goes on to that wrapper, which ends the game.

    def step(self, action: Any) -> None:
        """Check the action's type and range, then pass its plain int id on."""
        agent = self.agent_selection
        if action is None and (self.terminations[agent] or self.truncations[agent]):
            super(wrappers.AssertOutOfBoundsWrapper, self).step(action)
            return
        n = int(self.action_space(agent).n)
        aid = action_id(action, n)
        if not 0 <= aid < n:
            raise IllegalActionError(aid, f"action ids run from 0 to {n - 1}")
        super(wrappers.AssertOutOfBoundsWrapper, self).step(aid)


def stock_chain(aec: Any, illegal_reward: float) -> wrappers.OrderEnforcingWrapper:
    """``aec`` behind TerminateIllegalWrapper, ActionIdWrapper and OrderEnforcingWrapper."""
    aec = wrappers.TerminateIllegalWrapper(aec, illegal_reward=illegal_reward)
    return wrappers.OrderEnforcingWrapper(ActionIdWrapper(aec))
