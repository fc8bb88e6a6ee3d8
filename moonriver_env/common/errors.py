"""The error every game's engine raises for an action that is not legal now."""

from __future__ import annotations

from typing import Any


class IllegalActionError(ValueError):
    """An action that is not legal now; names the action, the reason and the legal actions."""

    def __init__(self, action: Any, reason: str, legal: list[str] | None = None) -> None:
        self.action = action
        self.reason = reason
        self.legal = legal or []
        message = f"illegal action {action}: {reason}"
        if legal is not None:  # only a legality check lists the legal actions
            shown = ", ".join(self.legal[:12]) + (" ..." if len(self.legal) > 12 else "")
            message += f". Legal now: {shown or 'none'}"
        super().__init__(message)
