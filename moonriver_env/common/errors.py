"""``IllegalActionError``, and ``PicklableError``: errors that cross a process boundary intact."""

from __future__ import annotations

from typing import Any


def _rebuild(cls: type[BaseException], args: tuple[object, ...],
             state: dict[str, object]) -> BaseException:
    """An exception of ``cls`` with these ``args`` and attributes, without calling __init__."""
    exc = cls.__new__(cls, *args)
    exc.args = args
    exc.__dict__.update(state)
    return exc


class _CopyOnCall(type):
    """``cls(exc)`` of an ``exc`` already of ``cls`` returns a copy without calling ``__init__``."""

    # Any: a metaclass __call__ returning a declared type would replace each subclass's own
    # constructor signature and result in mypy's eyes.
    def __call__(cls, *args: object, **kwargs: object) -> Any:
        """A copy for ``cls(exc)``; otherwise the usual construction."""
        # Gymnasium's AsyncVectorEnv re-raises a worker's error as type(exc)(exc).
        if len(args) == 1 and not kwargs and isinstance(args[0], cls):
            return _rebuild(cls, args[0].args, dict(args[0].__dict__))
        return super().__call__(*args, **kwargs)


class PicklableError(metaclass=_CopyOnCall):
    """Mixin (before the exception base): pickles an error with its type, args and attributes."""

    # Python's default __reduce__ calls the class with self.args (the message only), which
    # fails for an __init__ that takes other arguments.
    def __reduce__(self) -> tuple[object, ...]:
        """Rebuild from type, args and attributes; ``__init__`` is not called again."""
        args = self.args  # type: ignore[attr-defined]  # the exception base's
        return (_rebuild, (type(self), args, dict(self.__dict__)))


class IllegalActionError(PicklableError, ValueError):
    """An action that is not legal now; names the action, the reason and the legal actions."""

    def __init__(self, action: object, reason: str, legal: list[str] | None = None) -> None:
        self.action = action
        self.reason = reason
        self.legal = legal or []
        message = f"illegal action {action}: {reason}"
        if legal is not None:  # only a legality check lists the legal actions
            shown = ", ".join(self.legal[:12]) + (" ..." if len(self.legal) > 12 else "")
            message += f". Legal now: {shown or 'none'}"
        super().__init__(message)
