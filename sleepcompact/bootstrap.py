"""The composition root: the one place that builds the engine, units of work, tokenizer, summarizer
and queue, from one ``Settings``.

``bootstrap()`` returns a ``Container``, which the ``Memory`` facade, the worker and the CLI hand to the
services (it implements ``sleepcompact.ports.Dependencies``). Nothing is built at import time; what is
expensive or optional (the summarizer's SDK, the Celery producer) is built on first use.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from sleepcompact.adapters.tokenizer import LazyCounter
from sleepcompact.config import Settings
from sleepcompact.domain.errors import DatabaseNotInitialized
from sleepcompact.domain.ladder import Policy
from sleepcompact.domain.records import ConversationRecord
from sleepcompact.domain.render_cache import RenderCache
from sleepcompact.hooks import Hooks, load_hooks
from sleepcompact.logs import configure_logging, host_configured, redact_with
from sleepcompact.ports import Summarizer, TaskQueue, TextRedactor, TokenCounter
from sleepcompact.store import deployment_secrets, migrate
from sleepcompact.store.conversation_reader import ConversationReader
from sleepcompact.store.engine import is_sqlite, make_engine, make_session_factory
from sleepcompact.store.errors import store_errors
from sleepcompact.store.uow import SqlUnitOfWork

if TYPE_CHECKING:
    from sleepcompact.adapters.queue import CeleryQueue


class Container:
    """Everything the services need, built once per process (see ``bootstrap``)."""

    def __init__(
        self,
        settings: Settings,
        *,
        counter: TokenCounter,
        policy: Policy,
        summarizer: Summarizer | None,
        queue: TaskQueue | None,
    ) -> None:
        self.settings = settings
        self.counter = counter
        self.policy = policy
        self._summarizer = summarizer
        self._queue = queue
        self._producer: CeleryQueue | None = None
        # The summarizer and the producer are built on first use, which many threads may reach at once
        # (AsyncMemory's pool): one of each, or a second producer's broker connection would leak.
        self._lazy = threading.Lock()
        self._factors: tuple[float, dict[str, float]] | None = None
        self._redaction_key: bytes | None = None
        self.engine: Engine = make_engine(
            settings.database_url, busy_timeout_s=settings.sqlite_busy_timeout_s
        )
        self._sessions = make_session_factory(self.engine)
        self._read_sessions = make_session_factory(self.engine, readonly=True)
        self._reader = ConversationReader(self.engine)
        self.render_cache = RenderCache(settings.render_cache_conversations)
        self.hooks = load_hooks(Hooks(), settings.hooks)

    def uow(self) -> SqlUnitOfWork:
        """A fresh unit of work (one transaction)."""
        return SqlUnitOfWork(self._sessions)

    def read_uow(self) -> SqlUnitOfWork:
        """A unit of work for reads only; on SQLite it never waits for the write lock."""
        return SqlUnitOfWork(self._read_sessions)

    def read_conversation(self, conversation_id: str) -> ConversationRecord | None:
        """One conversation row by primary key on a pooled connection, with no transaction around it."""
        return self._reader.read(conversation_id)

    def factors(self) -> Mapping[str, float]:
        """The calibrated tokenizer factors, cached in-process for ``calibration_cache_s``, so the guard's
        decision stays one indexed read."""
        now = time.monotonic()
        if self._factors is None or now - self._factors[0] > self.settings.calibration_cache_s:
            with self.read_uow() as uow:
                self._factors = (now, uow.calibration.factors())
        return self._factors[1]

    def redaction_key(self) -> bytes:
        """The key of every placeholder number: ``SLEEPCOMPACT_REDACTION_KEY``, else the one the database
        keeps (made by its migration), read once per process."""
        if self._redaction_key is None:
            configured = self.settings.redaction_key
            self._redaction_key = (
                configured.encode("utf-8") if configured else deployment_secrets.redaction_key(self.engine)
            )
        return self._redaction_key

    def redactor(self, scope: str | None = None) -> TextRedactor:
        """A fresh ``Redactor`` with the settings' policy (emails, card numbers), the deployment's key
        and ``scope`` (placeholders are stable within it)."""
        from sleepcompact.adapters.redaction import RedactionPolicy, Redactor

        policy = RedactionPolicy(
            emails=self.settings.redact_emails, card_numbers=self.settings.redact_card_numbers
        )
        return Redactor(policy, key=self.redaction_key(), scope=scope or "")

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer in use (chosen from the settings on first use)."""
        with self._lazy:
            if self._summarizer is None:
                from sleepcompact.adapters.summarizers import make_summarizer  # its SDKs: on first use

                self._summarizer = make_summarizer(
                    self.settings, self.counter.count, redaction_key=self.redaction_key
                )
            return self._summarizer

    @property
    def queue(self) -> TaskQueue:
        """Where ticks go: the queue given to ``bootstrap``, else the Celery producer."""
        return self._queue if self._queue is not None else self.producer

    @property
    def producer(self) -> CeleryQueue:
        """The Celery producer for ``settings.broker_url`` (connects on first send)."""
        with self._lazy:
            if self._producer is None:
                from sleepcompact.adapters.queue import CeleryQueue

                self._producer = CeleryQueue(self.settings)
            return self._producer

    def close(self) -> None:
        """Release the connection pool (and the broker connection, if a task was sent)."""
        if self._producer is not None:
            self._producer.close()
        self.hooks.close()
        self.engine.dispose()


def _redact_log_value(value: object) -> object:
    """What ``sleepcompact.logs`` redacts every logged value with (the rules compile on first use)."""
    from sleepcompact.adapters.redaction import redact_for_log

    return redact_for_log(value)


def bootstrap(
    settings: Settings | None = None,
    *,
    counter: TokenCounter | None = None,
    summarizer: Summarizer | Callable[[str], str] | None = None,
    policy: Policy | None = None,
    queue: TaskQueue | None = None,
    auto_migrate: bool | None = None,
) -> Container:
    """Build the dependencies for ``settings`` (default: ``Settings()``), migrating an embedded database.

    An embedded SQLite database is migrated automatically; any other database must already be at this
    version's schema (``sleepcompact init``), so a fleet of workers never races on DDL. ``summarizer``
    may be a plain ``(prompt) -> str`` function; ``queue`` replaces the Celery producer for ticks.
    """
    settings = settings or Settings()
    redact_with(_redact_log_value)  # before anything logs: no secret in any log line
    if settings.log_format is not None and not host_configured():
        configure_logging(settings)  # asked for by SLEEPCOMPACT_LOG_FORMAT; else the library stays silent
    wrapped = None
    if summarizer is not None and not hasattr(summarizer, "summarize"):
        from sleepcompact.adapters.summarizers import CallableSummarizer

        summarizer = wrapped = CallableSummarizer(summarizer)
    container = Container(
        settings,
        counter=counter or LazyCounter(),
        policy=policy or Policy(),
        summarizer=summarizer,  # type: ignore[arg-type]  # a callable was wrapped just above
        queue=queue,
    )
    if wrapped is not None:
        wrapped.redaction_key = container.redaction_key  # what the function is given is redacted
    engine = container.engine
    try:
        # The first connection: a server that is down or a SQLite file locked past the busy timeout is
        # a typed error here (StoreUnavailable, StoreBusy), not a driver traceback.
        with store_errors():
            migrated = is_sqlite(engine) if auto_migrate is None else auto_migrate
            current = migrate.upgrade(engine)[1] if migrated else migrate.current_revision(engine)
    except BaseException:
        container.close()
        raise
    if current != migrate.head_revision():
        container.close()
        raise DatabaseNotInitialized(
            f"the database at {engine.url.render_as_string(hide_password=True)} is not at schema "
            f"{migrate.head_revision()}; run `sleepcompact init`"
        )
    return container
