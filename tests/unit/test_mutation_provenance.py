"""The depth bound on fetched text, where mutation testing found the suite blind (docs/mutation.md).

Fetched blocks (search results, MCP results) are read for their strings down to a fixed depth, so a
hostile block nested thousands deep is neither a crash nor read without end.
"""

from __future__ import annotations

from typing import Any

from sleepcompact.domain.provenance import split_content


def _in_lists(depth: int) -> dict[str, Any]:
    value: Any = "planted text"
    for _ in range(depth):
        value = [value]
    return {"type": "web_search_tool_result", "content": value}


def _in_mappings(depth: int) -> dict[str, Any]:
    value: Any = "planted text"
    for _ in range(depth):
        value = {"inner": value}
    return {"type": "mcp_tool_result", "content": value}


def test_fetched_text_is_read_down_to_the_bound_and_no_further() -> None:
    for block in (_in_lists, _in_mappings):
        assert split_content([block(31)]) == ("", "planted text"), block
        assert split_content([block(32)]) == ("", ""), block


def test_a_block_nested_thousands_deep_is_no_crash() -> None:
    for block in (_in_lists, _in_mappings):
        assert split_content([block(5000)]) == ("", "")
