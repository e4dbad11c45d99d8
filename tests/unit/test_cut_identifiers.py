"""What a cut keeps: the identifiers of the part it removed (issue 15, forward-reference recall).

A ledger line cuts a long argument middle-out (a script written with a heredoc, a long command) and
middle-out truncation cuts an oversized output; either used to take the names of the cut part with it,
so a model resuming from the summary re-typed a script's settings from nothing. Now the cut part's
identifiers are listed where the cut is: on the call's ledger line (each on the newest line that names
it, the first thing to go when the ledger needs room) and in the truncation marker.
"""

from __future__ import annotations

import re

from sleepcompact.adapters.tokenizer import load_counter
from sleepcompact.domain.ledger import bounded, carried_ledger, fold_ledger, render
from sleepcompact.domain.messages import MESSAGE_OVERHEAD
from sleepcompact.domain.prompt import SummaryInput
from sleepcompact.domain.steps import middle_out
from sleepcompact.domain.summary import offline_summary
from tests.support.rows import rows_of

COUNT = load_counter().count

SCRIPT = (
    "cat <<'EOF' > reproduce_issue.py\n"
    "import os\nimport sys\nimport django\nfrom django.conf import settings\n\n"
    "# Configure Django settings for a standalone run\n"
    "settings.configure(\n"
    "    DATABASES={'default': {'ENGINE': 'django.db.backends.sqlite3', 'NAME': ':memory:'}},\n"
    "    INSTALLED_APPS=['django.contrib.auth', 'django.contrib.contenttypes', 'reproduce_app'],\n"
    "    SECRET_KEY='secret',\n)\n"
    "django.setup()\n\n"
    + "".join(f"print('step {n}: checking the inline permissions once more')\n" for n in range(12))
    + "from reproduce_app.models import Report\nprint(Report.objects.count())\nEOF"
)


def mini_run(script: str = SCRIPT, rewrites: int = 1) -> list[dict[str, str]]:
    """A mini-swe-agent style run: the agent writes a script with a heredoc (``rewrites`` times), runs it."""
    messages = [{"role": "user", "content": "Fix the admin inline permission bug in django/contrib/admin."}]
    for _ in range(rewrites):
        messages += [
            {
                "role": "assistant",
                "content": f"THOUGHT: A reproduction script first.\n\n```bash\n{script}\n```",
            },
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
        ]
    messages += [
        {"role": "assistant", "content": "THOUGHT: Run it.\n\n```bash\npython reproduce_issue.py\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n0\n</output>"},
    ]
    return messages


def call_lines(rows_messages: list[dict[str, str]]) -> list[str]:
    return [e.render() for e in fold_ledger(rows_of(rows_messages, COUNT)) if e.kind == "call"]


def test_a_cut_heredoc_keeps_the_names_of_its_middle_on_its_ledger_line() -> None:
    write, run = call_lines(mini_run())
    assert "…" in write  # the script itself is cut middle-out
    for name in ("django.db.backends.sqlite3", ":memory:", "django.contrib.contenttypes"):
        assert name in write, write
    assert write.endswith(") → ok")  # the outcome stays last, as on every call line
    assert run == 'seq 4 call shell(command="python reproduce_issue.py") → ok'  # nothing was cut: no list


def test_a_script_rewritten_lists_its_names_once_on_its_newest_line() -> None:
    lines = call_lines(mini_run(rewrites=3))
    listing = [line for line in lines if "django.db.backends.sqlite3" in line]
    assert listing == [lines[2]]  # the third write, the version the agent runs


def test_a_carried_ledger_reads_its_lists_back_and_drops_them_before_rolling_lines_up() -> None:
    entries = fold_ledger(rows_of(mini_run(rewrites=2), COUNT))
    text = render(entries)
    carried = carried_ledger(text)
    assert render(carried) == text
    # Just over budget: the oldest quarter loses its lists first; no line is rolled up for that.
    tight = bounded(carried, COUNT(text) - 5, COUNT)
    assert len(tight) == len(carried) and "; cut:" not in tight[0].render()
    assert all("rolled up" not in e.render() for e in tight)


def test_the_offline_summary_shows_a_scripts_settings_after_compaction() -> None:
    # A script that names many helpers: its settings, quoted strings, are the first identifiers the
    # summary's own list drops for room; the ledger line of the write keeps them.
    checks = "".join(f"check_inline_permission_{n}(report_admin, user)\n" for n in range(150))
    rows = rows_of(mini_run(SCRIPT.replace("django.setup()\n", f"django.setup()\n{checks}")), COUNT)
    summary = offline_summary(SummaryInput(rows, None, 1200), COUNT)
    assert COUNT(summary) <= 1200
    assert "'django.db.backends.sqlite3'" not in summary  # not the script's text: its names, listed
    assert "`django.db.backends.sqlite3`" in summary


def test_middle_out_lists_what_the_cut_middle_named() -> None:
    lines = [f"line {n}: nothing to see here, just the usual build chatter" for n in range(600)]
    lines[300] = "ERROR loading config/billing/rounding_rules.yaml for booking ZFA04Y"
    text = "\n".join(lines)
    tokens = COUNT(text) + MESSAGE_OVERHEAD
    out, cost = middle_out(text, tokens, 600, 17, COUNT)
    assert cost <= 600
    assert lines[300] not in out  # the line itself was cut
    marker = re.search(
        r"\[\.\.\. [\d,]+ tokens truncated from the middle of this output, which named (.*?); ", out
    )
    assert marker is not None, out
    assert "`config/billing/rounding_rules.yaml`" in marker.group(1)
    assert "`ZFA04Y`" in marker.group(1)
    assert "read_archived(seq=17)" in out


def test_middle_out_of_plain_chatter_keeps_the_plain_marker() -> None:
    text = "\n".join("nothing to see here, just the usual build chatter" for _ in range(600))
    out, cost = middle_out(text, COUNT(text) + MESSAGE_OVERHEAD, 300, 3, COUNT)
    assert cost <= 300
    assert "tokens truncated from the middle of this output; the full text: read_archived(seq=3)" in out


def test_a_deeply_nested_json_output_is_truncated_not_a_crash() -> None:
    """A tool printed JSON nested deeper than the parser recurses: the cut still happens, with its
    marker, and the output's names are simply not listed (json.loads raised RecursionError here)."""
    text = '{"a": ' * 5_000 + "1" + "}" * 5_000
    out, cost = middle_out(text, len(text) // 2, 200, 7, COUNT)
    assert "read_archived(seq=7)" in out and cost <= 200
