"""The conformance corpus: every message shape issue 14 lists, as a client would append it.

One case per shape, in each provider format that has it. A case is a name and the list of message
dicts a client appends, in order; the tests append them, render both providers' requests, validate
them strictly and compare the export with the input. The attachments are real: ``png(w, h)`` builds
a valid PNG (its header carries the dimensions the token count reads) and ``PDF`` is a one-page PDF.
"""

from __future__ import annotations

import base64
import struct
import zlib
from dataclasses import dataclass
from typing import Any

Message = dict[str, Any]


@dataclass(frozen=True)
class Case:
    """A named conversation: the messages exactly as a client appends them."""

    name: str
    messages: list[Message]


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body) & 0xFFFFFFFF
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def png(width: int, height: int, rgb: tuple[int, int, int] = (40, 90, 200)) -> bytes:
    """A valid, solid-colour RGB PNG of the given size (compresses to a few kB even at 1000x1000)."""
    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(row * height, 9)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def png_b64(width: int, height: int) -> str:
    return base64.b64encode(png(width, height)).decode("ascii")


def _pdf() -> bytes:
    """A minimal one-page PDF with a line of text and a correct cross-reference table."""
    stream = b"BT /F1 12 Tf 72 720 Td (Quarterly report: revenue up 4%) Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (n, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


PDF = _pdf()
PDF_B64 = base64.b64encode(PDF).decode("ascii")
TINY_PNG_B64 = png_b64(16, 12)
SIGNATURE = "EqQBCkYIBxgCKkCz7Yq0Zl3Jb0b9sIg1Q9pDqXy1m4t1e8Cw3X4d1iI0lC+5qZ2vR0yHcT5mL8eUwY6gN1oP7rS2tV9aB3=="
ENCRYPTED = "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y=="
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8URj=="


def _user(text: str) -> Message:
    return {"role": "user", "content": text}


def _assistant(text: str) -> Message:
    return {"role": "assistant", "content": text}


def _use(tid: str, name: str, **inp: Any) -> Message:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def _result(tid: str, content: Any, **extra: Any) -> Message:
    return {"type": "tool_result", "tool_use_id": tid, "content": content, **extra}


def _call(cid: str, name: str, arguments: str) -> Message:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool(cid: str, content: str) -> Message:
    return {"role": "tool", "tool_call_id": cid, "content": content}


# -- Anthropic ------------------------------------------------------------------------------------------

THINKING = {
    "type": "thinking",
    "thinking": "The user wants the file size; stat it first.",
    "signature": SIGNATURE,
}
REDACTED_THINKING = {"type": "redacted_thinking", "data": REDACTED}
LATER_THINKING = {"type": "thinking", "thinking": "Now read the first lines.", "signature": SIGNATURE[::-1]}

ANTHROPIC_CASES = [
    Case(
        "anthropic_thinking_in_open_tool_loop",
        [
            _user("How big is notes.txt, and what does it start with?"),
            {
                "role": "assistant",
                "content": [THINKING, REDACTED_THINKING, _use("toolu_01", "stat", path="notes.txt")],
            },
            {"role": "user", "content": [_result("toolu_01", "4096 bytes")]},
            {
                "role": "assistant",
                "content": [LATER_THINKING, _use("toolu_02", "head", path="notes.txt", n=3)],
            },
            {"role": "user", "content": [_result("toolu_02", "# Notes\n- buy milk\n- call Ada")]},
        ],
    ),
    Case(
        "anthropic_image_sources",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Compare these three screenshots."},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": TINY_PNG_B64},
                    },
                    {"type": "image", "source": {"type": "url", "url": "https://example.com/shot-2.png"}},
                    {"type": "image", "source": {"type": "file", "file_id": "file_011CNha8iCJcU1wXNR6q4V8w"}},
                ],
            },
            _assistant("The second one shows the error dialog."),
        ],
    ),
    Case(
        "anthropic_document_sources",
        [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64},
                        "title": "Q3 report",
                    },
                    {"type": "document", "source": {"type": "url", "url": "https://example.com/q2.pdf"}},
                    {
                        "type": "document",
                        "source": {"type": "file", "file_id": "file_011CPMxVD3fHLUhvTqtsQA5w"},
                    },
                    {"type": "text", "text": "What changed between the quarters?"},
                ],
            },
            _assistant("Revenue rose 4% in Q3."),
        ],
    ),
    Case(
        "anthropic_server_web_search",
        [
            _user("Who won the 2024 Tour de France?"),
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me search for that."},
                    {
                        "type": "server_tool_use",
                        "id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                        "name": "web_search",
                        "input": {"query": "2024 Tour de France winner"},
                    },
                    {
                        "type": "web_search_tool_result",
                        "tool_use_id": "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
                        "content": [
                            {
                                "type": "web_search_result",
                                "url": "https://example.com/tour-2024",
                                "title": "Tour de France 2024 results",
                                "encrypted_content": ENCRYPTED,
                                "page_age": "July 21, 2024",
                            }
                        ],
                    },
                    {
                        "type": "text",
                        "text": "Tadej Pogacar won the 2024 Tour de France.",
                        "citations": [
                            {
                                "type": "web_search_result_location",
                                "url": "https://example.com/tour-2024",
                                "title": "Tour de France 2024 results",
                                "encrypted_index": "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm==",
                                "cited_text": "Pogacar wins his third Tour",
                            }
                        ],
                    },
                ],
            },
            _user("Thanks!"),
        ],
    ),
    Case(
        "anthropic_mcp_tools",
        [
            _user("List the open issues in the tracker."),
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "mcp_tool_use",
                        "id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
                        "name": "list_issues",
                        "server_name": "tracker",
                        "input": {"state": "open"},
                    },
                    {
                        "type": "mcp_tool_result",
                        "tool_use_id": "mcptoolu_014Q35RayjACSWkSj4X2yov1",
                        "is_error": False,
                        "content": [{"type": "text", "text": "#12 login fails; #15 slow search"}],
                    },
                    {"type": "text", "text": "Two are open: #12 and #15."},
                ],
            },
            _user("Close #15."),
        ],
    ),
    Case(
        "anthropic_container_upload",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Plot the column 'price' of this CSV."},
                    {"type": "container_upload", "file_id": "file_011CPMxVD3fHLUhvTqtsQA5w"},
                ],
            },
            _assistant("Done: the plot is in the container as price.png."),
        ],
    ),
    Case(
        "anthropic_cache_control",
        [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "Here is the style guide.",
                        "cache_control": {"type": "ephemeral"},
                    },
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": TINY_PNG_B64},
                        "cache_control": {"type": "ephemeral", "ttl": "1h"},
                    },
                ],
            },
            {"role": "assistant", "content": [_use("toolu_cc1", "lint", path="src/app.py")]},
            {
                "role": "user",
                "content": [_result("toolu_cc1", "3 warnings", cache_control={"type": "ephemeral"})],
            },
            _assistant("Three warnings; none block the release."),
        ],
    ),
    Case(
        "anthropic_unknown_future_block",
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What does this widget say?"},
                    {
                        "type": "future_widget",
                        "widget_id": "w-42",
                        "payload": {"rows": [1, 2, 3], "label": "beta"},
                    },
                ],
            },
            _assistant("It lists three rows labelled beta."),
        ],
    ),
    Case(
        "anthropic_parallel_tool_use",
        [
            _user("Weather in Paris, Rome and Oslo?"),
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Checking all three."},
                    _use("toolu_p1", "weather", city="Paris"),
                    _use("toolu_p2", "weather", city="Rome"),
                    _use("toolu_p3", "weather", city="Oslo"),
                ],
            },
            {
                "role": "user",
                "content": [
                    _result("toolu_p2", "31C"),
                    _result("toolu_p1", "24C"),
                    _result("toolu_p3", "12C"),
                ],
            },
            _assistant("Paris 24C, Rome 31C, Oslo 12C."),
        ],
    ),
    Case(
        "anthropic_empty_tool_result",
        [
            _user("Create the three directories."),
            {
                "role": "assistant",
                "content": [
                    _use("toolu_e1", "mkdir", path="a"),
                    _use("toolu_e2", "mkdir", path="b"),
                    _use("toolu_e3", "mkdir", path="c"),
                ],
            },
            {
                "role": "user",
                "content": [
                    _result("toolu_e1", ""),
                    _result("toolu_e2", []),
                    {"type": "tool_result", "tool_use_id": "toolu_e3"},
                ],
            },
            _assistant("All three exist now."),
        ],
    ),
    Case(
        "anthropic_reused_tool_id",
        [
            _user("Run the tests, then run them again."),
            {"role": "assistant", "content": [_use("toolu_same", "pytest", args="-q")]},
            {"role": "user", "content": [_result("toolu_same", "1 failed")]},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "Fixing."}, _use("toolu_same", "pytest", args="-x")],
            },
            {"role": "user", "content": [_result("toolu_same", "all passed")]},
            _assistant("Green now."),
        ],
    ),
]

# -- OpenAI ---------------------------------------------------------------------------------------------

OPENAI_CASES = [
    Case(
        "openai_legacy_function_call",
        [
            _user("Weather in Paris, then in Rome?"),
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            },
            {"role": "function", "name": "get_weather", "content": '{"temp": 24}'},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "get_weather", "arguments": '{"city": "Rome"}'},
            },
            {"role": "function", "name": "get_weather", "content": '{"temp": 31}'},
            _assistant("Paris 24C, Rome 31C."),
        ],
    ),
    Case(
        "openai_developer_role",
        [
            {"role": "developer", "content": "Answer in one sentence."},
            _user("What is a monad?"),
            _assistant("A monad is a way to chain computations that carry context."),
        ],
    ),
    Case(
        "openai_names_on_messages",
        [
            {"role": "system", "name": "policy", "content": "You moderate a chat room."},
            {"role": "user", "name": "alice", "content": "Can I post links?"},
            {"role": "assistant", "name": "modbot", "content": "Yes, to trusted sites."},
            {"role": "user", "name": "bob", "content": "And images?"},
        ],
    ),
    Case(
        "openai_null_content_with_tool_calls",
        [
            _user("What time is it in Tokyo?"),
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call("call_t1", "clock", '{"tz": "Asia/Tokyo"}')],
            },
            _tool("call_t1", "14:05"),
            _assistant("It is 14:05 in Tokyo."),
        ],
    ),
    Case(
        "openai_content_parts",
        [
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "Describe the image, transcribe the audio, summarize the files.",
                    },
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{TINY_PNG_B64}"}},
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/cat.jpg", "detail": "low"},
                    },
                    {
                        "type": "input_audio",
                        "input_audio": {"data": "UklGRiQAAABXQVZFZm10IBAAAAABAAEA", "format": "wav"},
                    },
                    {
                        "type": "file",
                        "file": {
                            "filename": "report.pdf",
                            "file_data": f"data:application/pdf;base64,{PDF_B64}",
                        },
                    },
                    {"type": "file", "file": {"file_id": "file-6F2ksmvXxt4VdoqmHRw6kL"}},
                ],
            },
            _assistant("A blue square, a short silence, and a report saying revenue rose 4%."),
        ],
    ),
    Case(
        "openai_refusal_only_assistant",
        [
            _user("Write malware for me."),
            {"role": "assistant", "content": None, "refusal": "I can't help with that."},
            _user("OK, explain what antivirus software does instead."),
        ],
    ),
    Case(
        "openai_several_system_and_developer_messages",
        [
            {"role": "system", "content": "You are a travel agent."},
            {"role": "developer", "content": "Prices in EUR."},
            {"role": "system", "content": "Never book without confirmation."},
            _user("Find me a flight to Lisbon."),
            _assistant("There is one at 9:40 for 120 EUR. Book it?"),
            {"role": "developer", "content": "The user is a premium member."},
            _user("Yes, book it."),
        ],
    ),
    Case(
        "openai_parallel_tool_calls",
        [
            _user("Stock prices of ACME and GLOBEX?"),
            {
                "role": "assistant",
                "content": "Looking both up.",
                "tool_calls": [
                    _call("call_a", "quote", '{"ticker": "ACME"}'),
                    _call("call_b", "quote", '{"ticker": "GLOBEX"}'),
                ],
            },
            _tool("call_b", "88.10"),
            _tool("call_a", "12.50"),
            _assistant("ACME 12.50, GLOBEX 88.10."),
        ],
    ),
    Case(
        "openai_empty_tool_result",
        [
            _user("Touch the lock file."),
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call("call_touch", "touch", '{"path": ".lock"}')],
            },
            _tool("call_touch", ""),
            _assistant("Done."),
        ],
    ),
    Case(
        "openai_reused_tool_call_id",
        [
            _user("List the files, then list them again after cleaning."),
            {"role": "assistant", "content": None, "tool_calls": [_call("call_0", "ls", '{"dir": "."}')]},
            _tool("call_0", "a.txt b.txt tmp/"),
            {"role": "assistant", "content": None, "tool_calls": [_call("call_0", "rm", '{"path": "tmp"}')]},
            _tool("call_0", "removed tmp/"),
            {"role": "assistant", "content": None, "tool_calls": [_call("call_0", "ls", '{"dir": "."}')]},
            _tool("call_0", "a.txt b.txt"),
            _assistant("Cleaned: only a.txt and b.txt are left."),
        ],
    ),
]

CASES = [*ANTHROPIC_CASES, *OPENAI_CASES]
BY_NAME = {case.name: case for case in CASES}
