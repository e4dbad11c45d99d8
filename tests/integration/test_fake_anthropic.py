"""The fake Anthropic server, exercised through the real ``anthropic`` SDK."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import anthropic
import pytest
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

from tests.support.fake_anthropic import FakeAnthropic, Scripted, api_key_of

MODEL = "claude-fake-model"


def _client(fake: FakeAnthropic, **kwargs: Any) -> anthropic.Anthropic:
    options: dict[str, Any] = {"max_retries": 0, **kwargs}
    return anthropic.Anthropic(api_key="sk-ant-test", base_url=fake.url, **options)


def _create(
    client: anthropic.Anthropic, text: str = "hello there", timeout: float = 60.0
) -> anthropic.types.Message:
    return client.messages.create(
        model=MODEL,
        max_tokens=256,
        system="You summarize.",
        messages=[{"role": "user", "content": text}],
        timeout=timeout,
    )


def _params(text: str) -> MessageCreateParamsNonStreaming:
    return {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": text}]}


def test_scripted_text_and_usage(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Scripted(text="## Task and goals\n- scripted", input_tokens=1234, output_tokens=56))
    message = _create(_client(fake_anthropic))
    assert message.type == "message"
    assert message.role == "assistant"
    assert message.model == MODEL
    assert message.id.startswith("msg_")
    assert [b.type for b in message.content] == ["text"]
    block = message.content[0]
    assert isinstance(block, anthropic.types.TextBlock)
    assert block.text == "## Task and goals\n- scripted"
    assert message.stop_reason == "end_turn"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (1234, 56)
    assert fake_anthropic.pending == 0


def test_the_request_is_recorded(fake_anthropic: FakeAnthropic) -> None:
    _create(_client(fake_anthropic), "remember /src/app.py")
    (record,) = fake_anthropic.requests
    assert record["method"] == "POST"
    assert record["path"] == "/v1/messages"
    # the 2.x SDK sends the key as a bearer token, not as x-api-key
    assert api_key_of(record["headers"]) == "sk-ant-test"
    assert record["headers"]["anthropic-version"]
    assert record["body"]["model"] == MODEL
    assert record["body"]["max_tokens"] == 256
    assert record["body"]["system"] == "You summarize."
    assert record["body"]["messages"] == [{"role": "user", "content": "remember /src/app.py"}]
    assert "remember /src/app.py" in record["raw"]
    assert fake_anthropic.message_requests() == [record["body"]]


def test_default_reply_is_a_deterministic_summary(fake_anthropic: FakeAnthropic) -> None:
    client = _client(fake_anthropic)
    first, second = _create(client, "x" * 400), _create(client, "x" * 400)
    block = first.content[0]
    assert isinstance(block, anthropic.types.TextBlock)
    assert block.text.startswith("## Task and goals\n- summary of 1 messages")
    assert first.content == second.content
    assert first.id != second.id
    assert first.usage.input_tokens == len("You summarize.\n" + "x" * 400) // 4


def test_set_default_applies_when_the_queue_is_empty(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.set_default(Scripted(text="always this"))
    fake_anthropic.script(Scripted(text="first"))
    client = _client(fake_anthropic)
    texts = [_create(client).content[0] for _ in range(3)]
    assert [b.text for b in texts if isinstance(b, anthropic.types.TextBlock)] == [
        "first",
        "always this",
        "always this",
    ]


@pytest.mark.parametrize("stop_reason", ["max_tokens", "refusal"])
def test_stop_reason_comes_through(fake_anthropic: FakeAnthropic, stop_reason: str) -> None:
    fake_anthropic.script(Scripted(text="cut", stop_reason=stop_reason))
    assert _create(_client(fake_anthropic)).stop_reason == stop_reason


@pytest.mark.parametrize(
    ("status", "error_type", "exc_class"),
    [
        (400, "invalid_request_error", anthropic.BadRequestError),
        (401, "authentication_error", anthropic.AuthenticationError),
        (403, "permission_error", anthropic.PermissionDeniedError),
        (404, "not_found_error", anthropic.NotFoundError),
        (429, "rate_limit_error", anthropic.RateLimitError),
        (500, "api_error", anthropic.InternalServerError),
        (529, "overloaded_error", anthropic.InternalServerError),
    ],
)
def test_scripted_errors_raise_the_sdk_classes(
    fake_anthropic: FakeAnthropic, status: int, error_type: str, exc_class: type[anthropic.APIStatusError]
) -> None:
    fake_anthropic.script(Scripted(status=status, error_type=error_type, error_message="nope"))
    with pytest.raises(exc_class) as caught:
        _create(_client(fake_anthropic))
    err = caught.value
    assert isinstance(err, anthropic.APIStatusError)
    assert err.status_code == status
    assert err.request_id is not None and err.request_id.startswith("req_")
    assert isinstance(err.body, dict)
    assert err.body["type"] == "error"
    assert err.body["error"] == {"type": error_type, "message": "nope"}


def test_529_is_the_overloaded_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Scripted(status=529))
    with pytest.raises(anthropic.InternalServerError) as caught:
        _create(_client(fake_anthropic))
    assert caught.value.status_code == 529
    assert type(caught.value).__name__ == "OverloadedError"
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["error"]["type"] == "overloaded_error"


def test_retry_after_header_and_sdk_retries(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(
        Scripted(status=429, headers={"retry-after": "0"}),
        Scripted(status=529, headers={"retry-after": "0"}),
        Scripted(text="third time lucky"),
    )
    message = _create(_client(fake_anthropic, max_retries=2))
    block = message.content[0]
    assert isinstance(block, anthropic.types.TextBlock)
    assert block.text == "third time lucky"
    assert len(fake_anthropic.requests) == 3
    assert [r["headers"].get("x-stainless-retry-count") for r in fake_anthropic.requests] == ["0", "1", "2"]


def test_retry_after_is_visible_on_the_error(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Scripted(status=429, headers={"retry-after": "7"}))
    with pytest.raises(anthropic.RateLimitError) as caught:
        _create(_client(fake_anthropic))
    assert caught.value.response.headers["retry-after"] == "7"


def test_delay_triggers_a_client_timeout(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.script(Scripted(text="too late", delay_s=3.0))
    started = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        _create(_client(fake_anthropic), timeout=0.5)
    assert time.monotonic() - started < 2.5
    # the server stays usable after a client gave up
    assert _create(_client(fake_anthropic)).stop_reason == "end_turn"


def test_connection_refused_is_a_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = anthropic.Anthropic(api_key="sk-ant-test", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(anthropic.APIConnectionError) as caught:
        _create(client)
    assert not isinstance(caught.value, anthropic.APITimeoutError)


def test_missing_api_key_is_401_and_bad_request_is_400(fake_anthropic: FakeAnthropic) -> None:
    client = _client(fake_anthropic)
    with pytest.raises(anthropic.AuthenticationError):
        client.messages.create(
            model=MODEL,
            max_tokens=10,
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"Authorization": anthropic.Omit(), "x-api-key": anthropic.Omit()},
        )
    with pytest.raises(anthropic.BadRequestError):
        client.messages.create(model=MODEL, max_tokens=10, messages=[])
    assert fake_anthropic.pending == 0


def test_base_url_from_the_environment(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.script(Scripted(text="via env"))
    message = _create(anthropic.Anthropic(api_key="sk-ant-test", max_retries=0))
    assert message.content[0] == anthropic.types.TextBlock(type="text", text="via env", citations=None)


def test_count_tokens(fake_anthropic: FakeAnthropic) -> None:
    counted = _client(fake_anthropic).messages.count_tokens(
        model=MODEL, messages=[{"role": "user", "content": "y" * 80}]
    )
    assert counted.input_tokens == 20


def test_batch_lifecycle(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.polls_until_ended = 2
    fake_anthropic.batch_outcomes({"b": "errored", "c": "expired"})
    client = _client(fake_anthropic)
    batch = client.messages.batches.create(
        requests=[
            {"custom_id": "a", "params": _params("first transcript")},
            {"custom_id": "b", "params": _params("second transcript")},
            {"custom_id": "c", "params": _params("third transcript")},
        ]
    )
    assert batch.id.startswith("msgbatch_")
    assert batch.type == "message_batch"
    assert batch.processing_status == "in_progress"
    assert batch.request_counts.processing == 3
    assert batch.results_url is None and batch.ended_at is None
    assert batch.expires_at > batch.created_at

    statuses = []
    for _ in range(10):
        batch = client.messages.batches.retrieve(batch.id)
        statuses.append(batch.processing_status)
        if batch.processing_status == "ended":
            break
    assert statuses == ["in_progress", "in_progress", "ended"]
    counts = batch.request_counts.model_dump()
    assert counts == {"processing": 0, "succeeded": 1, "errored": 1, "expired": 1, "canceled": 0}
    assert batch.results_url == f"{fake_anthropic.url}/v1/messages/batches/{batch.id}/results"
    assert batch.ended_at is not None

    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    assert {k: v.type for k, v in results.items()} == {"a": "succeeded", "b": "errored", "c": "expired"}
    succeeded = results["a"]
    assert isinstance(succeeded, anthropic.types.messages.MessageBatchSucceededResult)
    assert succeeded.message.model == MODEL
    block = succeeded.message.content[0]
    assert isinstance(block, anthropic.types.TextBlock)
    assert block.text.startswith("## Task and goals")
    errored = results["b"]
    assert isinstance(errored, anthropic.types.messages.MessageBatchErroredResult)
    assert errored.error.error.type == "api_error"

    created = [r for r in fake_anthropic.requests if r["method"] == "POST"]
    assert created[0]["path"] == "/v1/messages/batches"
    assert [item["custom_id"] for item in created[0]["body"]["requests"]] == ["a", "b", "c"]
    assert created[0]["body"]["requests"][1]["params"] == _params("second transcript")
    results_get = fake_anthropic.requests[-1]
    assert results_get["path"] == f"/v1/messages/batches/{batch.id}/results"
    assert results_get["headers"]["accept"] == "application/binary"


def test_batch_ends_on_first_poll_and_outcomes_carry_error_types(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.polls_until_ended = 0
    fake_anthropic.batch_outcomes({"x": "errored:invalid_request_error", "y": "canceled"})
    client = _client(fake_anthropic)
    batch = client.messages.batches.create(
        requests=[
            {"custom_id": "x", "params": _params("one")},
            {"custom_id": "y", "params": _params("two")},
        ]
    )
    assert client.messages.batches.retrieve(batch.id).processing_status == "ended"
    results = {r.custom_id: r.result for r in client.messages.batches.results(batch.id)}
    errored = results["x"]
    assert isinstance(errored, anthropic.types.messages.MessageBatchErroredResult)
    assert errored.error.error.type == "invalid_request_error"
    assert results["y"].type == "canceled"


def test_results_before_the_batch_ended(fake_anthropic: FakeAnthropic) -> None:
    client = _client(fake_anthropic)
    batch = client.messages.batches.create(requests=[{"custom_id": "a", "params": _params("one")}])
    with pytest.raises(anthropic.AnthropicError, match="results_url"):
        client.messages.batches.results(batch.id)
    with pytest.raises(anthropic.NotFoundError):
        client.messages.batches.retrieve("msgbatch_missing")


def test_batch_cancel(fake_anthropic: FakeAnthropic) -> None:
    client = _client(fake_anthropic)
    batch = client.messages.batches.create(requests=[{"custom_id": "a", "params": _params("one")}])
    assert client.messages.batches.cancel(batch.id).processing_status == "canceling"
    while (batch := client.messages.batches.retrieve(batch.id)).processing_status != "ended":
        pass
    assert batch.request_counts.canceled == 1
    assert [r.result.type for r in client.messages.batches.results(batch.id)] == ["canceled"]


def test_api_key_of() -> None:
    assert api_key_of({"x-api-key": "k1"}) == "k1"
    assert api_key_of({"authorization": "Bearer k2"}) == "k2"
    assert api_key_of({"authorization": "Basic zzz"}) is None
    assert api_key_of({}) is None


def test_unknown_outcome_is_rejected(fake_anthropic: FakeAnthropic) -> None:
    with pytest.raises(ValueError, match="unknown batch outcome"):
        fake_anthropic.batch_outcomes({"a": "exploded"})


def test_stop_is_idempotent_and_cuts_delays_short() -> None:
    fake = FakeAnthropic()
    fake.script(Scripted(delay_s=30))
    client = _client(fake)
    started = time.monotonic()
    caught: list[BaseException] = []

    def call() -> None:
        try:
            _create(client)
        except anthropic.APIError as exc:
            caught.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    while not fake.requests:
        time.sleep(0.01)
    fake.stop()
    fake.stop()
    worker.join(timeout=10)
    assert not worker.is_alive()
    assert time.monotonic() - started < 10
    assert caught and isinstance(caught[0], anthropic.APIConnectionError)
