"""The canonical-event hub: every event is logged once and reaches every observer, whatever breaks."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from sleepcompact import telemetry


@pytest.fixture(autouse=True)
def no_leftover_observers() -> Iterator[None]:
    """Each test starts and ends with the observers it found (the hub is process-wide)."""
    before = telemetry.observers()
    yield
    for observer in telemetry.observers():
        if observer not in before:
            telemetry.unsubscribe(observer)


def test_emit_logs_one_line_and_calls_every_observer_with_the_fields() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    also: list[str] = []

    def first(event: str, fields: Mapping[str, Any]) -> None:
        seen.append((event, dict(fields)))

    def second(event: str, fields: Mapping[str, Any]) -> None:
        also.append(event)

    telemetry.subscribe(first)
    telemetry.subscribe(second)
    telemetry.subscribe(first)  # twice is once
    with capture_logs() as logs:
        telemetry.emit("compaction", conversation_id="c1", outcome="applied", tokens_saved=10)
    assert seen == [("compaction", {"conversation_id": "c1", "outcome": "applied", "tokens_saved": 10})]
    assert also == ["compaction"]
    assert logs == [
        {"event": "compaction", "log_level": "info", "conversation_id": "c1", "outcome": "applied",
         "tokens_saved": 10}
    ]  # fmt: skip


def test_unsubscribed_observers_are_no_longer_called() -> None:
    seen: list[str] = []

    def observer(event: str, fields: Mapping[str, Any]) -> None:
        seen.append(event)

    telemetry.subscribe(observer)
    telemetry.emit("guard", action="none")
    telemetry.unsubscribe(observer)
    telemetry.unsubscribe(observer)  # unknown: ignored
    telemetry.emit("guard", action="none")
    assert seen == ["guard"]


def test_an_exploding_observer_never_breaks_emit_nor_the_others_and_is_reported_once() -> None:
    seen: list[str] = []

    def explodes(event: str, fields: Mapping[str, Any]) -> None:
        raise ValueError("boom sk-ant-api03-observer-secret")

    def counts(event: str, fields: Mapping[str, Any]) -> None:
        seen.append(event)

    telemetry.subscribe(explodes)
    telemetry.subscribe(counts)
    with capture_logs() as logs:
        telemetry.emit("sleep_tick", outcome="done")
        telemetry.emit("sleep_tick", outcome="done")
    assert seen == ["sleep_tick", "sleep_tick"]
    failures = [e for e in logs if e["event"] == "telemetry_observer_failed"]
    assert len(failures) == 1  # once per observer, not once per event
    assert failures[0]["error"] == "ValueError" and failures[0]["log_level"] == "warning"
    assert "sk-ant" not in str(logs)  # the exception's message is not logged


def test_observers_see_events_the_log_level_filters_out() -> None:
    seen: list[str] = []

    def observer(event: str, fields: Mapping[str, Any]) -> None:
        seen.append(event)

    telemetry.subscribe(observer)
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))  # errors only
    try:
        telemetry.emit("llm_call", model="m", ms=5)
    finally:
        structlog.configure(**saved)
    assert seen == ["llm_call"]


def test_the_level_can_be_raised_for_failures() -> None:
    with capture_logs() as logs:
        telemetry.emit("compaction", level="warning", outcome="failed")
    assert logs[0]["log_level"] == "warning"
