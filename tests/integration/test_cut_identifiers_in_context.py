"""After a compaction, the names a cut removed are still in the context the model gets (issue 15).

A coding agent writes a reproduction script with a heredoc, works on for a while, and the script is
folded into the summary; later the agent writes a second script with the same settings. The summary's
action ledger shows the write cut middle-out, and the settings the cut took (the database engine, the
installed apps) listed on that line, so they are in the next request. An oversized output truncated
middle-out names what its cut middle held in its marker.
"""

from __future__ import annotations

import json

from sleepcompact import Memory
from sleepcompact.domain.messages import content_text

SETTINGS = (
    "settings.configure(\n"
    "    DATABASES={'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}},\n"
    "    INSTALLED_APPS=['django.contrib.auth', 'django.contrib.contenttypes', 'reproduce_app'],\n"
    "    SECRET_KEY='secret',\n)\n"
)
CHECKS = "".join(f"check_inline_permission_{n}(report_admin, user)\n" for n in range(150))
SCRIPT = (
    "cat <<'EOF' > reproduce_issue.py\nimport os\nimport sys\nimport django\n"
    "from django.conf import settings\n\n# Configure Django settings for a standalone run\n"
    f"{SETTINGS}django.setup()\n{CHECKS}EOF"
)


def _agent_run() -> list[dict[str, str]]:
    messages = [
        {"role": "system", "content": "You are a coding agent. Act with one ```bash block per message."},
        {"role": "user", "content": "Fix the admin inline permission bug in django/contrib/admin."},
        {"role": "assistant", "content": f"THOUGHT: A reproduction script first.\n\n```bash\n{SCRIPT}\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
    ]
    for n in range(30):
        listing = "\n".join(f"{400 + 10 * n + k}\t    # nothing of note on this line" for k in range(40))
        messages += [
            {
                "role": "assistant",
                "content": f"THOUGHT: Read on.\n\n```bash\nsed -n '{400 + 10 * n},+40p' options.py\n```",
            },
            {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{listing}\n</output>"},
        ]
    return messages


def _request_text(mem: Memory, cid: str) -> str:
    return json.dumps(mem.prepare_context(cid).request(), ensure_ascii=False)


def test_a_folded_scripts_settings_are_in_the_next_request(sqlite_memory: Memory) -> None:
    cid = sqlite_memory.create_conversation("claude-sonnet-4-5", context_window=32_000)
    sqlite_memory.append_many(cid, _agent_run())
    assert sqlite_memory.compactions.compact(cid).status == "applied"

    text = _request_text(sqlite_memory, cid)
    (summary,) = [r for r in sqlite_memory.export(cid).messages if r["kind"] == "summary"]
    write = next(
        line
        for line in content_text(summary["content"]).splitlines()
        if "call shell(command=\"cat <<'EOF' > reproduce_issue.py" in line
    )
    assert "'ENGINE': 'django.db.backends.sqlite3'" not in text  # the script itself was folded
    for name in ("django.db.backends.sqlite3", ":memory:", "django.contrib.contenttypes"):
        assert f"`{name}`" in write  # listed on the write's ledger line...
        assert f"`{name}`" in text  # ...which the next request carries


def test_an_oversized_output_names_its_cut_middle_in_the_next_request(sqlite_memory: Memory) -> None:
    cid = sqlite_memory.create_conversation("claude-sonnet-4-5", context_window=16_000)
    lines = [f"line {n}: nothing to see here, just the usual build chatter" for n in range(1500)]
    lines[700] = "ERROR loading config/billing/rounding_rules.yaml for booking ZFA04Y"
    sqlite_memory.append_many(
        cid,
        [
            {"role": "user", "content": "Why does the billing build fail?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "make"}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "\n".join(lines)}],
            },
        ],
    )
    assert sqlite_memory.compactions.compact(cid).status == "applied"

    text = _request_text(sqlite_memory, cid)
    assert lines[700] not in text  # cut from the middle
    assert "which named `config/billing/rounding_rules.yaml`" in text
    assert "`ZFA04Y`" in text
