"""How the offline summary labels the identifiers it keeps: by the word that names them where they are
first said, so the model reads ``order=`W1234567``` rather than a bare value."""

from __future__ import annotations

import json

import pytest

from tests.support.summaries import section, summarize, tool_call


def test_a_value_said_twice_takes_the_label_of_its_first_mention() -> None:
    summary = summarize(
        [{"role": "user", "content": "My order W1234567 arrived broken, please refund W1234567."}], None
    )
    data = section(summary, "Critical data (verbatim)")
    assert "order=`W1234567`" in data, data


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        ("Please check order: W1234567 today.", "order=`W1234567`"),
        ("See ticket #W1234567 now.", "ticket=`W1234567`"),
        ("Order W1234567 is late.", "order=`W1234567`"),  # the naming word opens the message
        ("The reservation id ZFA04Y is wrong.", "reservation_id=`ZFA04Y`"),
        ("The reservation ID ZFA04Y is wrong.", "reservation_id=`ZFA04Y`"),
        # No naming word: an upper-case shout, a stop word, nothing before it: labelled by its kind.
        ("URGENT W1234567 is stuck.", "id=`W1234567`"),
        ("It is the W1234567 again.", "id=`W1234567`"),
        ("W1234567 is stuck.", "id=`W1234567`"),
    ],
)
def test_the_word_before_a_value_names_it_unless_it_names_nothing(said: str, shown: str) -> None:
    assert section(summarize([{"role": "user", "content": said}], None), "Critical data (verbatim)") == [
        shown
    ]


def test_structured_arguments_and_backticked_commands_are_shown_as_written() -> None:
    arguments = {"filters": {"status": "cancelled", "city": "Zürich"}, "limit": 5, "ids": [3, 1]}
    summary = summarize(
        [
            {"role": "user", "content": "Find cancelled trips."},
            {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "search", arguments)]},
            {"role": "tool", "tool_call_id": "c1", "content": "[]"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call("c2", "shell", {"command": "echo `date` > /tmp/x"})],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "ok"},
        ],
        None,
    )
    # A nested value as JSON with its keys sorted and its text unescaped; numbers and lists as JSON.
    shown = 'filters="{\\"city\\": \\"Zürich\\", \\"status\\": \\"cancelled\\"}", limit="5", ids="[3, 1]"'
    assert f"seq 2 call search({shown}) → ok" in section(summary, "Action ledger")
    # A value that holds backticks is not wrapped in more of them (the markdown would break).
    assert "command=echo `date` > /tmp/x" in section(summary, "Critical data (verbatim)")


def test_a_call_cut_for_room_lists_the_names_its_arguments_lost() -> None:
    script = "cat > settings_local.py <<EOF\n" + "\n".join(f"OPTION_{n} = {n}" for n in range(40))
    script += '\nDATABASES = {"ENGINE": "django.db.backends.sqlite3"}\nEOF\ncp settings_local.py conf/'
    note = "uses app_config.ready then " + "x" * 200 + " finally calls django.setup"
    summary = summarize(
        [
            {"role": "user", "content": "Configure it."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call("c1", "shell", {"script": script, "note": note})],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ],
        None,
    )
    (line,) = [entry for entry in section(summary, "Action ledger") if " call shell(" in entry]
    assert line.endswith("; cut: `django.db.backends.sqlite3`, `django.db`) → ok"), line


def test_field_names_of_tool_inputs_and_outputs_are_not_listed_as_data_even_when_said() -> None:
    summary = summarize(
        [
            {
                "role": "user",
                "content": "Look up booking ZFA04Y; I need its flight_number and the cabin_class.",
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call("c1", "get_booking", {"booking_ref": "ZFA04Y"})],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": json.dumps({"flight_number": "HAT170", "cabin_class": "J"}),
            },
            {"role": "assistant", "content": "Is booking_ref the right field? It is HAT170."},
        ],
        None,
    )
    data = " ".join(section(summary, "Critical data (verbatim)"))
    assert "ZFA04Y" in data and "HAT170" in data
    for field in ("flight_number", "cabin_class", "booking_ref"):
        assert f"`{field}`" not in data, data


@pytest.mark.parametrize("key", ["command", "cmd", "script"])
def test_a_command_is_kept_whole_up_to_200_characters(key: str) -> None:
    command = (
        "rsync -av --delete /srv/app/releases/2024-11-02/ deploy@10.0.0.7:/srv/app/current/ --exclude="
        + "x" * 200
    )
    summary = summarize(
        [
            {"role": "user", "content": "Deploy it."},
            {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "shell", {key: command})]},
            {"role": "tool", "tool_call_id": "c1", "content": "sent"},
        ],
        None,
    )
    (shown,) = [b for b in section(summary, "Critical data (verbatim)") if b.startswith(f"{key}=")]
    value = shown.removeprefix(f"{key}=`").removesuffix("`")
    assert len(value) == 200 and value.endswith("…") and command.startswith(value[:-1].rstrip()), value


def test_under_a_tight_cap_bare_numbers_go_before_a_command() -> None:
    said = "Order numbers 48213, 77120 and 90345 were refunded."
    messages = [
        {"role": "user", "content": said},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("c1", "shell", {"command": "make refunds"})],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    full = section(summarize(messages, None), "Critical data (verbatim)")
    assert "command=`make refunds`" in full and len(full) > 1, full
    for cap in range(400, 20, -2):
        data = section(summarize(messages, None, cap=cap), "Critical data (verbatim)")
        if len(data) < len(full):
            assert "command=`make refunds`" in data, (cap, data)
            return
    pytest.fail("no cap dropped a bullet")


def test_a_tool_output_lends_its_first_four_identifiers_and_one_named_twice_leads() -> None:
    summary = summarize(
        [
            {"role": "user", "content": "List the open reservations."},
            {"role": "assistant", "content": None, "tool_calls": [tool_call("c1", "list_reservations", {})]},
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": "Open: ZQ81KD, AB23XY, MN45PL, CD67RT, EF89UV, GH12WZ",
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call("c2", "list_reservations", {"page": 2})],
            },
            {"role": "tool", "tool_call_id": "c2", "content": "Open: QQ99AA, AB23XY"},
        ],
        None,
    )
    # In the order the output gives them (not sorted), each with the first output that named it.
    assert section(summary, "Critical data (verbatim)") == [
        "id=`AB23XY` (seq 3, tool output)",
        "id=`ZQ81KD` (seq 3, tool output)",
        "id=`MN45PL` (seq 3, tool output)",
        "id=`CD67RT` (seq 3, tool output)",
        "id=`QQ99AA` (seq 5, tool output)",
    ]
