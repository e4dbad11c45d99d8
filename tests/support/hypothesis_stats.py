"""Hypothesis statistics for a state machine run with ``run_state_machine_as_test`` inside a pytest test.

Hypothesis' pytest plugin prints ``--hypothesis-show-statistics`` only for tests it recognises as its
own (``@given`` functions, a machine's ``TestCase``). A plain test function that takes fixtures (such
as the parametrized ``database_url``) and calls ``run_state_machine_as_test`` is not one of them, so
its ``event()`` counts would be lost. :func:`reported_statistics` collects them the way the plugin
does and hands them to the plugin's report for the current test item.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import pytest
from hypothesis.statistics import collector, describe_statistics


@contextmanager
def reported_statistics(request: pytest.FixtureRequest) -> Iterator[None]:
    """Within the block, Hypothesis runs report their statistics (``event()`` counts) for this test."""
    item: Any = request.node

    def note(stats: Any) -> None:
        stats["nodeid"] = item.nodeid
        item.hypothesis_statistics = describe_statistics(stats)

    # Typed as holding None (its default); it holds the plugin's callback while a test runs.
    with cast(Any, collector).with_value(note):
        yield
