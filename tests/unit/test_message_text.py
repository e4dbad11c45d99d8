"""The text of stored content, as the token counts, the archive search and the summaries read it.

``content_text`` decides what a part costs and what can be found in it: a tool call of any kind is its
name and its input as JSON with non-ASCII kept as written (an escaped "café" costs more tokens and is
not found by a search for it), a thinking block is its thinking, and a block missing an optional field
reads as if the field were empty.
"""

from __future__ import annotations

from typing import Any

import pytest

from sleepcompact.domain.messages import MESSAGE_OVERHEAD, content_text, opaque_text, part_tokens


def words(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize("btype", ["tool_use", "server_tool_use", "mcp_tool_use"])
def test_a_tool_call_reads_as_its_name_and_its_input(btype: str) -> None:
    block = {"type": btype, "id": "toolu_1", "name": "search", "input": {"query": "café près d'ici"}}
    assert content_text([block]) == 'search {"query": "café près d\'ici"}'


def test_a_tool_call_without_a_name_or_an_input_reads_as_an_empty_call() -> None:
    assert content_text([{"type": "server_tool_use", "id": "srvtoolu_1"}]) == " {}"


def test_a_thinking_block_reads_as_its_thinking_not_its_signature() -> None:
    block = {"type": "thinking", "thinking": "The user wants the short answer.", "signature": "EqQBCk"}
    assert content_text([block]) == "The user wants the short answer."


@pytest.mark.parametrize("block", [{"type": "text"}, {"type": "thinking", "signature": "EqQBCk"}])
def test_a_block_without_its_text_reads_as_nothing(block: dict[str, Any]) -> None:
    assert content_text([{"type": "text", "text": "before"}, block, {"type": "text", "text": "after"}]) == (
        "before\n\nafter"
    )


def test_redacted_thinking_and_encrypted_results_are_read_as_opaque_text() -> None:
    """What the model reads but no one can search: redacted thinking and the encrypted content of
    server tool results (at the top level or one level in), each counted as tokens."""
    results = [
        {
            "type": "web_search_result",
            "url": "https://a.example",
            "title": "A",
            "encrypted_content": "EqgfCioIARgB",
        },
        {
            "type": "web_search_result",
            "url": "https://b.example",
            "title": "B",
            "encrypted_content": "Zm9vYmFy",
        },
    ]
    content: list[dict[str, Any]] = [
        {"type": "text", "text": "hi"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy"},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_2", "encrypted_content": "TOP"},
    ]
    assert opaque_text(content) == "EmwKAhgBEgy\nEqgfCioIARgB\nZm9vYmFy\nTOP"
    assert opaque_text("plain text") == ""
    assert opaque_text([{"type": "text", "text": "hi"}, {"type": "redacted_thinking"}]) == ""


def _search_results(*payloads: str) -> list[dict[str, Any]]:
    return [
        {"type": "web_search_result", "url": f"https://{i}.example", "title": f"R{i}", "encrypted_content": p}
        for i, p in enumerate(payloads)
    ]


def test_a_web_searchs_encrypted_results_are_counted_once_and_never_searchable() -> None:
    """The results' encrypted payloads are opaque: counted once as tokens (a 5-result search used to
    cost twice its payloads, so the guard compacted early) and kept out of the searchable text."""
    block = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": _search_results("AAA BBB", "CCC"),
    }
    assert content_text([block]) == (
        '{"content": [{"type": "web_search_result", "url": "https://0.example", "title": "R0"}, '
        '{"type": "web_search_result", "url": "https://1.example", "title": "R1"}]}'
    )
    assert opaque_text([block]) == "AAA BBB\nCCC"
    readable = words(content_text([block]))
    assert part_tokens([block], words) == readable + 3 + MESSAGE_OVERHEAD


def test_a_result_list_keeps_its_other_fields_and_items_as_they_are() -> None:
    block = {
        "type": "tool_search_tool_result",
        "content": [{"type": "tool_reference", "id": "ref_1", "encrypted_content": "E"}, "plain", 3],
        "error": None,
    }
    assert (
        content_text([block])
        == '{"content": [{"type": "tool_reference", "id": "ref_1"}, "plain", 3], "error": null}'
    )
    fetched = {
        "type": "web_fetch_tool_result",
        "content": {"type": "web_fetch_result", "url": "https://z.example"},
    }
    assert content_text([fetched]) == '{"content": {"type": "web_fetch_result", "url": "https://z.example"}}'


def test_an_unknown_blocks_non_ascii_is_read_as_written() -> None:
    """Escaped, "Zürich" would cost more tokens and not be found by a search for it."""
    block = {
        "type": "web_fetch_tool_result",
        "content": {"title": "Zürich über alles", "url": "https://z.example"},
    }
    assert content_text([block]) == '{"content": {"title": "Zürich über alles", "url": "https://z.example"}}'


def test_redacted_thinking_is_counted_by_its_data_and_never_read_as_text() -> None:
    block = {"type": "redacted_thinking", "data": "EmwK AhgB Egy", "note": "kept out"}
    assert content_text([{"type": "text", "text": "hi"}, block]) == "hi"
    assert part_tokens([block], words) == 3 + MESSAGE_OVERHEAD
    assert part_tokens([{"type": "redacted_thinking"}], words) == MESSAGE_OVERHEAD


def test_a_text_document_costs_its_texts_tokens() -> None:
    source = {"type": "text", "media_type": "text/plain", "data": "one two three four"}
    document = {"type": "document", "source": source, "title": "notes"}
    assert part_tokens([{"type": "text", "text": "read this"}, document], words) == 2 + 4 + MESSAGE_OVERHEAD
