"""A local stand-in for the Anthropic HTTP API that the real ``anthropic`` SDK talks to unmodified.

Point the SDK at it with ``anthropic.Anthropic(api_key=..., base_url=fake.url)`` (or the
``ANTHROPIC_BASE_URL`` environment variable).  It speaks enough of the wire protocol for
summarization work:

* ``POST /v1/messages`` - replies come from a queue of :class:`Scripted` replies (see
  :meth:`FakeAnthropic.script`); once it is empty, from the default reply (see
  :meth:`FakeAnthropic.set_default`), whose text, when not given, is a deterministic summary
  derived from the request.
* ``POST /v1/messages/count_tokens`` - ``{"input_tokens": len(request text) // 4}``.
* ``POST /v1/messages/batches`` and ``GET /v1/messages/batches/{id}`` - a Message Batch that
  stays ``in_progress`` for :attr:`FakeAnthropic.polls_until_ended` retrievals, then ``ended``.
* ``POST /v1/messages/batches/{id}/cancel`` - every request of an unfinished batch is canceled.
* ``GET /v1/messages/batches/{id}/results`` - JSON Lines, one result per request, with the
  outcome chosen by :meth:`FakeAnthropic.batch_outcomes` (``succeeded`` by default).

Errors use the API's body shape ``{"type": "error", "error": {"type": ..., "message": ...},
"request_id": ...}`` and every response carries a ``request-id`` header.  Requests without an
API key (``x-api-key``, or ``authorization: Bearer <key>`` as the 2.x SDK sends it) get a 401,
malformed message requests a 400, unknown paths a 404 (none of these consume the queue).

Every request is recorded in :attr:`FakeAnthropic.requests`.  Only the standard library is used:
a :class:`http.server.ThreadingHTTPServer` on ``127.0.0.1`` in a daemon thread.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sleepcompact.domain.cache_breakpoints import cache_problems
from sleepcompact.domain.validation import anthropic_problems

__all__ = [
    "BATCH_OUTCOMES",
    "ERROR_STATUS",
    "FakeAnthropic",
    "Scripted",
    "api_key_of",
    "default_summary",
    "request_text",
]

ERROR_STATUS: dict[str, int] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
"""The API's error types and the HTTP status each comes with."""

_TYPE_FOR_STATUS: dict[int, str] = {status: kind for kind, status in ERROR_STATUS.items()}

BATCH_OUTCOMES: tuple[str, ...] = ("succeeded", "errored", "expired", "canceled")
"""The result types of one batch request (``errored`` may name an error type: ``errored:<type>``)."""

_BATCH_ROUTE = "/v1/messages/batches"


@dataclass
class Scripted:
    """One scripted reply to ``POST /v1/messages``.

    A 200 answers with ``content`` when given (a ``tool_use`` block, say), else with one ``text``
    block (a summary derived from the request when ``None``). Any other status answers with an error
    body of ``error_type`` (by default the type the API uses for that status, ``api_error`` for
    unknown ones).
    """

    status: int = 200
    text: str | None = None
    stop_reason: str = "end_turn"  # or "max_tokens", "refusal", "stop_sequence", ...
    delay_s: float = 0.0  # sleep before answering (to trigger client timeouts)
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers, e.g. retry-after
    error_type: str | None = None  # for non-200: "rate_limit_error", "overloaded_error", ...
    error_message: str = "scripted error"
    input_tokens: int | None = None  # usage to report; default: len(request text) // 4
    output_tokens: int | None = None  # default: len(reply text) // 4, at least 1
    content: list[dict[str, Any]] | None = (
        None  # the reply's blocks as given (e.g. a tool_use); else ``text``
    )

    def resolved_error_type(self) -> str:
        """The error type of a non-200 reply."""
        return self.error_type or _TYPE_FOR_STATUS.get(self.status, "api_error")


@dataclass
class _Batch:
    """The server-side state of one Message Batch."""

    id: str
    created_at: datetime
    requests: list[dict[str, Any]]  # {"custom_id": ..., "params": {...}} as received
    outcomes: dict[str, str]  # custom_id -> outcome, fixed when the batch was created
    polls_left: int
    canceling: bool = False
    ended_at: datetime | None = None
    cancel_initiated_at: datetime | None = None
    results: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Response:
    """What the handler writes back."""

    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


def _iso(moment: datetime) -> str:
    """RFC 3339 with a ``Z``, as the API writes timestamps."""
    return moment.isoformat().replace("+00:00", "Z")


def _text_of(content: object) -> str:
    """The text of a ``system`` or message ``content`` value (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                for key in ("text", "content"):
                    value = block.get(key)
                    if value is not None:
                        parts.append(_text_of(value))
    return "\n".join(parts)


def request_text(params: dict[str, Any]) -> str:
    """All the text a message request carries: the system prompt and every message."""
    parts = [_text_of(params.get("system", ""))]
    messages = params.get("messages")
    if isinstance(messages, list):
        parts.extend(_text_of(m.get("content", "")) for m in messages if isinstance(m, dict))
    return "\n".join(p for p in parts if p)


def api_key_of(headers: dict[str, str]) -> str | None:
    """The API key a request carried: ``x-api-key``, else the token of ``authorization: Bearer``.

    The installed SDK (2.x) sends ``api_key`` as ``authorization: Bearer <key>``; older ones and
    other clients send ``x-api-key``.
    """
    if headers.get("x-api-key"):
        return headers["x-api-key"]
    scheme, _, token = headers.get("authorization", "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


def default_summary(params: dict[str, Any]) -> str:
    """The deterministic summary the server writes when no text was scripted."""
    messages = params.get("messages")
    count = len(messages) if isinstance(messages, list) else 0
    text = request_text(params)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return (
        f"## Task and goals\n- summary of {count} messages ({len(text)} characters)\n"
        f"## Lookup hints\n- fake-anthropic digest {digest}"
    )


def _validation_problem(body: object) -> str | None:
    """Why a message request body would be refused with a 400, or ``None``."""
    if not isinstance(body, dict):
        return "request body must be a JSON object"
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "model: Field required"
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    # What the real API refuses with a 400: broken alternation, unanswered or duplicate tool ids,
    # empty text, misplaced thinking (the project's strict validator, which tests check it against).
    problems = anthropic_problems(messages, allow_pending_calls=False) + cache_problems(body)
    return f"messages: {problems[0]}" if problems else None


class FakeAnthropic:
    """A scripted Anthropic API server on a free loopback port, started by the constructor.

    Attributes:
        url: ``http://127.0.0.1:PORT`` - the SDK's ``base_url``.
        requests: every request received, in order, as ``{"method", "path", "query", "headers"
            (lower-cased names), "body" (parsed JSON or None), "raw" (the body text)}``.
        polls_until_ended: how many ``GET /v1/messages/batches/{id}`` of a new batch answer
            ``in_progress`` before the batch is ``ended`` (read when the batch is created).
    """

    def __init__(self, host: str = "127.0.0.1") -> None:
        """Bind to a free port on ``host`` and serve in a daemon thread."""
        self.requests: list[dict[str, Any]] = []
        self.polls_until_ended: int = 1
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._queue: deque[Scripted] = deque()
        self._default = Scripted()
        self._outcomes: dict[str, str] = {}
        # Outcomes by position in the next batch, for callers that cannot know the custom ids in advance.
        self.positional_outcomes: list[str] = []
        self._batches: dict[str, _Batch] = {}
        self._ids = itertools.count(1)
        self._server = ThreadingHTTPServer((host, 0), _make_handler(self))
        self._server.daemon_threads = True
        port = self._server.server_address[1]
        self.url = f"http://{host}:{port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-anthropic", daemon=True
        )
        self._thread.start()

    # ------------------------------------------------------------------ configuration

    def script(self, *replies: Scripted) -> None:
        """Queue replies for ``POST /v1/messages``, used in order before the default reply."""
        with self._lock:
            self._queue.extend(replies)

    def set_default(self, reply: Scripted) -> None:
        """The reply to ``POST /v1/messages`` once the scripted queue is empty."""
        with self._lock:
            self._default = reply

    def batch_outcomes(self, outcomes: dict[str, str]) -> None:
        """``custom_id -> outcome`` for the batches created from now on; other ids succeed.

        An outcome is ``succeeded``, ``errored`` (an ``api_error``), ``errored:<error type>``,
        ``expired`` or ``canceled``.
        """
        for custom_id, outcome in outcomes.items():
            if outcome.split(":", 1)[0] not in BATCH_OUTCOMES:
                raise ValueError(f"unknown batch outcome {outcome!r} for {custom_id!r}")
        with self._lock:
            self._outcomes = dict(outcomes)

    @property
    def pending(self) -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queue)

    def message_requests(self) -> list[dict[str, Any]]:
        """The parsed bodies of every ``POST /v1/messages`` received, in order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["method"] == "POST" and r["path"] == "/v1/messages"]

    def wait_stopped(self, seconds: float) -> bool:
        """Sleep ``seconds``, cut short by :meth:`stop`; whether the server is stopping."""
        return self._stopping.wait(seconds)

    def stop(self) -> None:
        """Shut the server down and release its port (idempotent); delayed replies are cut short."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        """The server itself, for ``with FakeAnthropic() as fake:``."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop the server."""
        self.stop()

    # ------------------------------------------------------------------ request handling

    def _record(self, method: str, target: str, headers: dict[str, str], raw: str) -> dict[str, Any]:
        """Store one request and return its record."""
        parts = urlsplit(target)
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        record: dict[str, Any] = {
            "method": method,
            "path": parts.path,
            "query": {k: v[-1] for k, v in parse_qs(parts.query).items()},
            "headers": headers,
            "body": body,
            "raw": raw,
        }
        with self._lock:
            self.requests.append(record)
        return record

    def _new_id(self, prefix: str) -> str:
        """A unique, deterministic object id such as ``msg_fake000001``."""
        return f"{prefix}_fake{next(self._ids):06d}"

    def _request_id(self) -> str:
        """A unique ``request-id`` header value."""
        return self._new_id("req")

    def _json(self, status: int, payload: object, headers: dict[str, str] | None = None) -> _Response:
        """A JSON response."""
        return _Response(status, json.dumps(payload).encode(), headers=dict(headers or {}))

    def _error(
        self, status: int, error_type: str, message: str, headers: dict[str, str] | None = None
    ) -> _Response:
        """An error response in the API's shape."""
        request_id = self._request_id()
        payload = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": request_id,
        }
        return self._json(status, payload, {"request-id": request_id, **(headers or {})})

    def _message(self, params: dict[str, Any], reply: Scripted) -> dict[str, Any]:
        """The message object a 200 ``reply`` answers ``params`` with."""
        text = reply.text if reply.text is not None else default_summary(params)
        input_tokens = reply.input_tokens
        if input_tokens is None:
            input_tokens = len(request_text(params)) // 4
        output_tokens = reply.output_tokens
        if output_tokens is None:
            output_tokens = max(1, len(text) // 4)
        return {
            "id": self._new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": params.get("model", "claude-fake"),
            "content": reply.content if reply.content is not None else [{"type": "text", "text": text}],
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def handle(self, method: str, target: str, headers: dict[str, str], raw: str) -> _Response:
        """Answer one request (called by the handler thread)."""
        record = self._record(method, target, headers, raw)
        path: str = record["path"].rstrip("/")
        body: Any = record["body"]
        if api_key_of(headers) is None:
            return self._error(401, "authentication_error", "x-api-key header is required")
        if method == "POST" and path == "/v1/messages":
            return self._create_message(body)
        if method == "POST" and path == "/v1/messages/count_tokens":
            problem = _validation_problem({"max_tokens": 1, **body} if isinstance(body, dict) else body)
            if problem:
                return self._error(400, "invalid_request_error", problem)
            return self._json(200, {"input_tokens": len(request_text(body)) // 4})
        if method == "POST" and path == _BATCH_ROUTE:
            return self._create_batch(body)
        if path.startswith(_BATCH_ROUTE + "/"):
            rest = path[len(_BATCH_ROUTE) + 1 :].split("/")
            batch_id, action = rest[0], "/".join(rest[1:])
            if method == "GET" and action == "":
                return self._retrieve_batch(batch_id)
            if method == "GET" and action == "results":
                return self._batch_results(batch_id)
            if method == "POST" and action == "cancel":
                return self._cancel_batch(batch_id)
        return self._error(404, "not_found_error", f"{method} {path} is not served by the fake Anthropic API")

    def _create_message(self, body: Any) -> _Response:
        """``POST /v1/messages``: the next scripted reply, else the default one."""
        problem = _validation_problem(body)
        if problem:
            return self._error(400, "invalid_request_error", problem)
        with self._lock:
            reply = self._queue.popleft() if self._queue else self._default
        if reply.status == 200:
            response = self._json(200, self._message(body, reply))
            response.headers = {"request-id": self._request_id(), **reply.headers}
        else:
            error_type = reply.resolved_error_type()
            response = self._error(reply.status, error_type, reply.error_message, reply.headers)
        response.delay_s = reply.delay_s
        return response

    # ------------------------------------------------------------------ batches

    def _create_batch(self, body: Any) -> _Response:
        """``POST /v1/messages/batches``: a new batch, ``in_progress``."""
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return self._error(400, "invalid_request_error", "requests: at least one request is required")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not custom_id:
                return self._error(400, "invalid_request_error", f"requests.{i}.custom_id: Field required")
            if custom_id in seen:
                return self._error(400, "invalid_request_error", f"duplicate custom_id {custom_id!r}")
            seen.add(custom_id)
            problem = _validation_problem(item.get("params"))
            if problem:
                return self._error(400, "invalid_request_error", f"requests.{i}.params.{problem}")
        with self._lock:
            batch = _Batch(
                id=self._new_id("msgbatch"),
                created_at=datetime.now(UTC),
                requests=requests,
                outcomes={
                    r["custom_id"]: self._outcomes.get(
                        r["custom_id"],
                        self.positional_outcomes[i] if i < len(self.positional_outcomes) else "succeeded",
                    )
                    for i, r in enumerate(requests)
                },
                polls_left=max(0, self.polls_until_ended),
            )
            self._batches[batch.id] = batch
            payload = self._batch_object(batch)
        return self._json(200, payload, {"request-id": self._request_id()})

    def _retrieve_batch(self, batch_id: str) -> _Response:
        """``GET /v1/messages/batches/{id}``: counts one poll, ends the batch after the last one."""
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is not None and batch.ended_at is None:
                if batch.polls_left > 0:
                    batch.polls_left -= 1
                else:
                    self._end(batch)
            payload = self._batch_object(batch) if batch is not None else None
        if payload is None:
            return self._error(404, "not_found_error", f"message batch {batch_id!r} not found")
        return self._json(200, payload, {"request-id": self._request_id()})

    def _cancel_batch(self, batch_id: str) -> _Response:
        """``POST /v1/messages/batches/{id}/cancel``: unfinished requests end ``canceled``."""
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is not None and batch.ended_at is None and not batch.canceling:
                batch.canceling = True
                batch.cancel_initiated_at = datetime.now(UTC)
                batch.outcomes = dict.fromkeys(batch.outcomes, "canceled")
            payload = self._batch_object(batch) if batch is not None else None
        if payload is None:
            return self._error(404, "not_found_error", f"message batch {batch_id!r} not found")
        return self._json(200, payload, {"request-id": self._request_id()})

    def _batch_results(self, batch_id: str) -> _Response:
        """``GET /v1/messages/batches/{id}/results``: the JSON Lines of an ended batch."""
        with self._lock:
            batch = self._batches.get(batch_id)
            lines = list(batch.results) if batch is not None and batch.ended_at is not None else None
        if lines is None:
            return self._error(404, "not_found_error", f"no results for message batch {batch_id!r} (yet)")
        data = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return _Response(200, data, "application/binary", {"request-id": self._request_id()})

    def _end(self, batch: _Batch) -> None:
        """Finish a batch: fix its results (called with the lock held)."""
        batch.ended_at = datetime.now(UTC)
        default = self._default if self._default.status == 200 else Scripted()
        for item in batch.requests:
            outcome = batch.outcomes[item["custom_id"]]
            kind, _, error_type = outcome.partition(":")
            result: dict[str, Any]
            if kind == "succeeded":
                result = {"type": "succeeded", "message": self._message(item["params"], default)}
            elif kind == "errored":
                error = {"type": error_type or "api_error", "message": "scripted batch error"}
                result = {"type": "errored", "error": {"type": "error", "error": error}}
            else:
                result = {"type": kind}
            batch.results.append({"custom_id": item["custom_id"], "result": result})

    def _batch_object(self, batch: _Batch) -> dict[str, Any]:
        """The MessageBatch object of ``batch`` (called with the lock held)."""
        ended = batch.ended_at is not None
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if ended:
            for outcome in batch.outcomes.values():
                counts[outcome.partition(":")[0]] += 1
        else:
            counts["processing"] = len(batch.requests)
        if ended:
            status = "ended"
        elif batch.canceling:
            status = "canceling"
        else:
            status = "in_progress"
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": status,
            "request_counts": counts,
            "created_at": _iso(batch.created_at),
            "expires_at": _iso(batch.created_at + timedelta(hours=24)),
            "ended_at": _iso(batch.ended_at) if batch.ended_at is not None else None,
            "cancel_initiated_at": (
                _iso(batch.cancel_initiated_at) if batch.cancel_initiated_at is not None else None
            ),
            "archived_at": None,
            "results_url": f"{self.url}{_BATCH_ROUTE}/{batch.id}/results" if ended else None,
        }


def _make_handler(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``fake``."""

    class Handler(BaseHTTPRequestHandler):
        """Reads the request, lets ``fake`` answer it and writes the answer."""

        server_version = "fake-anthropic/1"

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            headers = {name.lower(): value for name, value in self.headers.items()}
            response = fake.handle(self.command, self.path, headers, raw)
            if response.delay_s > 0 and fake.wait_stopped(response.delay_s):
                return  # the server is stopping: drop the connection unanswered
            try:
                self.send_response(response.status)
                self.send_header("content-type", response.content_type)
                self.send_header("content-length", str(len(response.body)))
                for name, value in response.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(response.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (a timeout): nothing to answer

        def do_GET(self) -> None:
            """Serve a GET."""
            self._serve()

        def do_POST(self) -> None:
            """Serve a POST."""
            self._serve()

        def do_DELETE(self) -> None:
            """Serve a DELETE (answered 404)."""
            self._serve()

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet: the requests are recorded in ``fake.requests``."""

    return Handler
