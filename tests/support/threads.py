"""A call run in a thread of its own, as a second worker (or child) would run it, with its outcome; and
a statement hook that holds such a thread at one SQL statement while the test lets another writer in."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, Literal, TypeVar

from sqlalchemy import event

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


class StatementPark:
    """Holds one thread at the first SQL statement ``matches`` accepts, so a test can put another
    writer's work exactly there. ``when="after"`` holds it once the statement has run instead.

    Inside ``with park:`` start the thread, ``reached()``, do the other writer's work, ``release()``,
    then wait for every thread that runs statements: the listener is removed when the block ends,
    and SQLAlchemy's listener list must not change while another thread is running its statements."""

    def __init__(
        self,
        engine: Any,
        thread: threading.Thread,
        matches: Callable[[str], bool],
        *,
        when: Literal["before", "after"] = "before",
    ) -> None:
        self._engine, self._thread, self._matches = engine, thread, matches
        self._event = f"{when}_cursor_execute"
        self.parked, self._go = threading.Event(), threading.Event()

    def _hold(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        held = threading.get_ident() == self._thread.ident and not self.parked.is_set()
        if held and self._matches(statement):
            self.parked.set()
            assert self._go.wait(HANG_GUARD_S)

    def reached(self, what: str) -> None:
        """Wait until the thread is held, failing the test with ``what`` it never reached."""
        assert self.parked.wait(HANG_GUARD_S), f"the thread never reached {what}"

    def release(self) -> None:
        self._go.set()

    def __enter__(self) -> StatementPark:
        event.listen(self._engine, self._event, self._hold)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        event.remove(self._engine, self._event, self._hold)
