"""A call run in a thread of its own, as a second worker (or child) would run it, with its outcome."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
HANG_GUARD_S = 60  # bounds a deadlock in the test itself; never part of an assertion


class InThread(threading.Thread, Generic[T]):
    """Runs ``call`` once started; ``outcome()`` joins it and returns its result, or fails the test with
    what it raised (never swallowed) or because it hung."""

    def __init__(self, call: Callable[[], T]) -> None:
        super().__init__(daemon=True)
        self._call = call
        self._result: T | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._result = self._call()
        except BaseException as exc:  # reported by outcome(), not swallowed
            self.error = exc

    def outcome(self) -> T:
        self.join(HANG_GUARD_S)
        assert not self.is_alive(), "the call in the other thread hung"
        assert self.error is None, repr(self.error)
        assert self._result is not None
        return self._result
