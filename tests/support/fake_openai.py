"""A local stand-in for the OpenAI HTTP API that the real ``openai`` SDK (and the OpenAI Agents SDK on
top of it) talks to unmodified.

Point a client at it with ``openai.AsyncOpenAI(api_key="test", base_url=fake.url)``. It speaks the
non-streaming form of two endpoints:

* ``POST /v1/chat/completions`` - a ``chat.completion`` whose message is the next scripted
  :class:`Reply` (text, tool calls, or both);
* ``POST /v1/responses`` - a ``response`` whose ``output`` holds the same reply as Responses items (a
  ``message`` with an ``output_text`` part, ``function_call`` items).

Replies come from a queue (:meth:`FakeOpenAI.script`); once it is empty every request is answered with
the text ``"ok"``. A reply may instead be an HTTP error (``status``), force a ``finish_reason`` (e.g.
``"length"``) or report exact ``usage``; by default usage reports ``len(request body) // 4`` input
tokens. A request without a bearer key gets a 401, an unknown path a 404, a malformed body a 400
(none consumes the queue). Every request is recorded in :attr:`FakeOpenAI.requests` as
``(path, body)``. Only the standard library is used: a :class:`http.server.ThreadingHTTPServer` on
``127.0.0.1`` in a daemon thread.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "Reply"]


@dataclass
class Reply:
    """One scripted answer: ``text`` and/or ``tool_calls`` as ``(name, arguments)`` pairs; ``status`` other
    than 200 answers with that HTTP error instead; ``usage`` is ``(input, output)`` tokens."""

    text: str | None = "ok"
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    finish_reason: str | None = None
    status: int = 200
    usage: tuple[int, int] | None = None


class FakeOpenAI:
    """The stand-in server; ``url`` is the SDK's ``base_url`` (it ends in ``/v1``)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._queue: deque[Reply] = deque()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        with self._lock:
            self._queue.extend(replies)

    def bodies(self, path: str) -> list[dict[str, Any]]:
        """The bodies of the requests made to ``path`` (``/v1/chat/completions``, ``/v1/responses``)."""
        with self._lock:
            return [body for p, body in self.requests if p == path]

    def stop(self) -> None:
        """Shut the server down."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    # -- answering ------------------------------------------------------------------------------------

    def answer(self, path: str, body: dict[str, Any], raw_size: int) -> tuple[int, dict[str, Any]]:
        """(status, body) for one well-formed request (the queue's next reply, or ``"ok"``)."""
        with self._lock:
            self.requests.append((path, body))
            reply = self._queue.popleft() if self._queue else Reply()
            n = next(self._ids)
        if reply.status != 200:
            error = {"message": reply.text or "scripted error", "type": "server_error", "param": None}
            return reply.status, {"error": {**error, "code": None}}
        model = str(body.get("model", "fake-model"))
        usage_in, usage_out = reply.usage or (raw_size // 4, max(1, len(reply.text or "") // 4))
        if path == "/v1/chat/completions":
            return 200, _completion(reply, n, model, usage_in, usage_out)
        return 200, _response(reply, n, model, usage_in, usage_out)


def _completion(reply: Reply, n: int, model: str, usage_in: int, usage_out: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{n}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(reply.tool_calls)
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1_700_000_000 + n,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"),
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": usage_in,
            "completion_tokens": usage_out,
            "total_tokens": usage_in + usage_out,
        },
    }


def _response(reply: Reply, n: int, model: str, usage_in: int, usage_out: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.text is not None:
        output.append(
            {
                "type": "message",
                "id": f"msg_{n}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for i, (name, args) in enumerate(reply.tool_calls):
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{n}_{i}",
                "call_id": f"call_{n}_{i}",
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
        )
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 1_700_000_000 + n,
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "usage": {
            "input_tokens": usage_in,
            "output_tokens": usage_out,
            "total_tokens": usage_in + usage_out,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


_ROUTES = ("/v1/chat/completions", "/v1/responses")


def _handler(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-request-id", "req_fake")
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, kind: str, message: str) -> None:
            self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length") or 0))
            path = self.path.split("?", 1)[0]
            if not self.headers.get("authorization", "").startswith("Bearer "):
                self._error(401, "invalid_request_error", "no API key")
                return
            if path not in _ROUTES:
                self._error(404, "invalid_request_error", f"unknown path {path}")
                return
            try:
                body = json.loads(raw)
            except ValueError:
                self._error(400, "invalid_request_error", "the body is not JSON")
                return
            if not isinstance(body, dict) or ("messages" not in body and "input" not in body):
                self._error(400, "invalid_request_error", "messages or input is required")
                return
            self._send(*fake.answer(path, body, len(raw)))

    return Handler
