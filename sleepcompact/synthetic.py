"""Deterministic synthetic agent conversations for the demo, tests and benchmarks.

Every generator draws from its own ``random.Random(seed)``: the same seed gives
byte-identical messages, a different seed gives different names, numbers and
identifiers. Messages are Anthropic-shaped dicts that ``normalize()`` accepts:
roles alternate starting with the user, tool_use blocks sit in assistant turns
and their tool_result blocks in the user turn right after.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "MIN_ASSISTANT_TURNS",
    "MIN_CODING_TURNS",
    "SyntheticConversation",
    "coding_agent",
    "personal_assistant",
    "scaled",
]

_T = TypeVar("_T")

MIN_CODING_TURNS = 15
"""Fewest turns ``coding_agent`` accepts: the core investigation, the fact check-ins and the summary."""
MIN_ASSISTANT_TURNS = 19
"""Fewest turns ``personal_assistant`` accepts: every fact, question and contradiction once."""


@dataclass(frozen=True)
class SyntheticConversation:
    """A generated conversation plus the ground truth that compaction and memory tests check against."""

    name: str
    system: str
    messages: list[dict[str, Any]]
    facts: list[str]
    identifiers: list[str]
    contradicted: list[tuple[str, str]]


@dataclass(frozen=True)
class _Call:
    name: str
    input: dict[str, Any]
    output: str
    error: bool = False


def _bash(command: str, output: str, error: bool = False) -> _Call:
    return _Call("bash", {"command": command}, output, error)


def _tests(command: str, output: str) -> _Call:
    return _Call("run_tests", {"command": command}, output)


def _read(path: str, output: str) -> _Call:
    return _Call("read_file", {"path": path}, output)


def _grep(pattern: str, path: str, output: str) -> _Call:
    return _Call("grep", {"pattern": pattern, "path": path}, output)


def _interleave(rng: random.Random, items: list[_T], extra: list[_T], lo: int, hi: int | None = None) -> None:
    """Insert ``extra`` into ``items`` in order, at random positions between ``lo`` and ``hi``."""
    positions = sorted(rng.randint(lo, len(items) if hi is None else hi) for _ in extra)
    for pos, item in reversed(list(zip(positions, extra, strict=True))):
        items.insert(pos, item)


class _Transcript:
    """Appends messages with alternating roles; tool ids are ``toolu_{seed}_{n:04d}``."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.messages: list[dict[str, Any]] = []
        self._next = 1

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def assistant(self, text: str, calls: Sequence[_Call] = ()) -> None:
        """One assistant turn; with calls, also the user turn that carries their results."""
        if not calls:
            self.messages.append({"role": "assistant", "content": text})
            return
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
        results: list[dict[str, Any]] = []
        for call in calls:
            call_id = f"toolu_{self.seed}_{self._next:04d}"
            self._next += 1
            blocks.append({"type": "tool_use", "id": call_id, "name": call.name, "input": dict(call.input)})
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "content": call.output}
            if call.error:
                result["is_error"] = True
            results.append(result)
        self.messages.append({"role": "assistant", "content": blocks})
        self.messages.append({"role": "user", "content": results})


def _fill(lines: list[str], target: int, make: Callable[[int], str]) -> None:
    """Append ``make(i)`` lines until the joined text reaches ``target`` characters."""
    size, i = sum(len(s) + 1 for s in lines), 0
    while size < target:
        line = make(i)
        lines.append(line)
        size += len(line) + 1
        i += 1


# -- coding agent -------------------------------------------------------------------------------------

_CODING_SYSTEM = (
    "You are a careful coding agent working in a Python repository. Use the tools bash, read_file, grep, "
    "edit_file and run_tests. Explain what you do, keep changes minimal and always re-run the tests."
)


def coding_agent(seed: int = 0, turns: int = 40, big_output_tokens: int = 6000) -> SyntheticConversation:
    """A user asks a coding agent to fix a rounding bug; ``2 * turns`` messages, some outputs huge.

    Large tool outputs (file listing, test logs, a replay log with a stack trace) are
    each at least ``4 * big_output_tokens`` characters.
    """
    if turns < MIN_CODING_TURNS:
        raise ValueError(f"turns must be at least {MIN_CODING_TURNS}, got {turns}")
    rng = random.Random(seed)
    big = 4 * max(1, big_output_tokens)
    pkg = rng.choice(["billing", "payments", "invoicing", "ledger"])
    mod = rng.choice(["invoice", "totals", "tax"])
    module, helper, test_file = f"src/{pkg}/{mod}.py", f"src/{pkg}/rounding.py", f"tests/test_{mod}.py"
    func = rng.choice(["compute_tax_total", "sum_line_items", "apply_vat", "total_with_tax"])
    cls = rng.choice(["InvoiceCalculator", "TaxPolicy", "LineItemAggregator", "TotalsEngine"])
    ticket = f"{rng.choice(['HAT', 'BIL', 'PAY'])}{rng.randint(100, 999)}"
    card = f"credit_card_{rng.randint(1_000_000, 9_999_999)}"
    keyword = rng.choice(["rounding", "tax", "cents"])
    command = f"pytest {test_file} -k {keyword}"
    cents = rng.randint(150, 99_999)
    expected, got = f"{cents // 100}.{cents % 100:02d}", f"{(cents - 1) // 100}.{(cents - 1) % 100:02d}"
    error_line = f"AssertionError: expected {expected}, got {got}"
    url = f"https://internal.example.com/tickets/{ticket}"
    latency, memory = f"{rng.randint(120, 900)} ms", f"{rng.randint(8, 96)} MB"
    invoice, py = rng.randint(10_000, 99_999), rng.choice([10, 11])
    day, hour = rng.choice(["Thursday", "Friday"]), rng.choice([12, 16, 18])
    base_facts = [
        f"our CI runs Python 3.{py}",
        f"the deadline is {day} {hour}:00 UTC",
        f"keep the public API of {cls} unchanged",
        "money must be handled with Decimal, never float",
    ]
    if rng.random() < 0.5:
        contradiction = (base_facts[0], f"CI moved to Python 3.{py + 1}")
    else:
        contradiction = (base_facts[1], f"the deadline moved to Monday {hour - 2}:00 UTC")
    first_fact = "I prefer type hints everywhere"
    later = base_facts[:]
    rng.shuffle(later)
    facts = [first_fact, *later[:3], contradiction[1]]
    if contradiction[0] not in facts[:4]:  # the contradicted fact must be stated before it is contradicted
        facts[3] = contradiction[0]

    ret = "        return quantize_cents({})"
    old_lines = [
        "        total = sum(float(x) * float(1 + self.rate) for x in lines)",
        ret.format("Decimal(total)"),
    ]
    new_lines = [
        '        total = sum((x * (1 + self.rate) for x in lines), Decimal("0"))',
        ret.format("total"),
    ]
    code = (
        f'"""Invoice totals for the {pkg} service."""\n\nfrom decimal import Decimal\n\n'
        f"from {pkg}.rounding import quantize_cents\n\n\nclass {cls}:\n"
        f'    """Sums invoice lines and applies the tax rate."""\n\n'
        "    def __init__(self, rate: Decimal) -> None:\n        self.rate = rate\n\n"
        f"    def {func}(self, lines: list[Decimal]) -> Decimal:\n"
    )
    code, fixed = code + "\n".join(old_lines) + "\n", code + "\n".join(new_lines) + "\n"
    words = ["client", "events", "ledger", "export", "schema", "refund", "currency", "audit", "webhook"]

    def listing() -> str:
        def entry(i: int) -> str:
            path = (
                f"tests/fixtures/invoice_{i:04d}.json"
                if i % 3
                else f"src/{pkg}/{rng.choice(words)}_{i:03d}.py"
            )
            return f"{rng.randint(5, 900):>6} {path}"

        lines = [
            f"{rng.randint(20, 400):>6} {p}" for p in (module, helper, test_file, f"src/{pkg}/__init__.py")
        ]
        _fill(lines, big, entry)
        return "\n".join([*lines, f"{rng.randint(50_000, 90_000):>6} total"])

    def test_log(cmd: str, failing: bool) -> str:
        files = [test_file, "tests/test_rounding.py", "tests/test_discounts.py", "tests/test_api.py"]
        body: list[str] = []
        _fill(body, big, lambda i: f"{files[i % 4]}::test_{rng.choice(words)}_{keyword}_{i:03d} PASSED")
        n = len(body) + int(failing)
        body = [f"{line} [{100 * (k + 1) // n:3d}%]" for k, line in enumerate(body)]
        head = f"{'=' * 30} test session starts {'=' * 30}\nplatform linux -- Python 3.{py}.9, pytest-8.2.0"
        head += f"\n$ {cmd}\ncollected {n} items"
        took = f"in {rng.randint(3, 60)}.{rng.randint(0, 99):02d}s"
        if not failing:
            return "\n".join([head, *body, f"{'=' * 30} {n} passed {took}"])
        name = f"{test_file}::test_{keyword}_for_{card}"
        fail = [
            f"{name} FAILED",
            "=" * 30 + " FAILURES " + "=" * 30,
            f"    def test_{keyword}_for_{card}():",
            f"        calc = {cls}(rate=Decimal('0.19'))",
            f"        assert calc.{func}(LINES['{card}']) == Decimal('{expected}')",
            f"E       {error_line}",
            f"{test_file}:{rng.randint(20, 200)}: AssertionError",
            f"FAILED {name} - {error_line}",
            f"{'=' * 30} 1 failed, {n - 1} passed {took}",
        ]
        return "\n".join([head, *body, *fail])

    def replay() -> str:
        def line(i: int) -> str:
            stamp = f"2024-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}Z"
            rss = f"{rng.randint(8, 96)} MB"
            return f"{stamp} INFO {pkg}.worker invoice={invoice + i} took {rng.randint(1, 40)} ms rss={rss}"

        lines: list[str] = []
        _fill(lines, big, line)
        calls = [("scripts/replay_invoice.py", "main"), (module, func), (helper, "quantize_cents")]
        frames = [f'  File "/app/{p}", line {rng.randint(10, 300)}, in {f}' for p, f in calls]
        error = f"MismatchError: invoice {invoice} for {card}: expected {expected}, got {got}"
        return "\n".join([*lines, "Traceback (most recent call last):", *frames, error])

    grep_out = (
        f"{module}:{rng.randint(10, 40)}:    def {func}(self, lines: list[Decimal]) -> Decimal:\n"
        f"{test_file}:{rng.randint(10, 90)}:        assert calc.{func}(LINES['{card}']) == "
        f"Decimal('{expected}')\n{helper}:3:def quantize_cents(value: Decimal) -> Decimal:"
    )
    helper_code = (
        "from decimal import ROUND_HALF_UP, Decimal\n\n\ndef quantize_cents(value: Decimal) -> Decimal:\n"
        '    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n'
    )
    ticket_text = (
        f"{ticket}: invoice {invoice} for {card} is off by one cent ({expected} expected, {got} "
        f"billed). Reported by support; p95 latency {latency}, worker memory {memory}. See {url}"
    )
    quick = f"$ {command}\n........\n8 passed, 214 deselected in 0.41s"
    replay_cmd = f"python scripts/replay_invoice.py --ticket {ticket}"
    edit = {"path": module, "old_text": "\n".join(old_lines), "new_text": "\n".join(new_lines)}
    history = "\n".join(
        f"{rng.getrandbits(28):07x} {m}" for m in (f"{ticket} prep", f"add {func}", "initial")
    )
    core: list[tuple[str, list[_Call]]] = [
        (
            f"Let me look at the project layout and open {module}.",
            [_bash("find src tests -type f | sort | xargs wc -l", listing()), _read(module, code)],
        ),
        (f"Reproducing the failure with `{command}`.", [_tests(command, test_log(command, True))]),
        (f"The failure is `{error_line}`. Where is `{func}` used?", [_grep(func, "src tests", grep_out)]),
        (f"`{func}` calls quantize_cents from {helper}; reading it.", [_read(helper, helper_code)]),
        (f"Replaying {ticket} on production data for a stack trace.", [_bash(replay_cmd, replay(), True)]),
        (f"Checking the ticket at {url} for context on {card}.", [_bash(f"curl -s {url}", ticket_text)]),
        (
            f"The float conversion in `{cls}.{func}` loses a cent before rounding. Editing {module}.",
            [_Call("edit_file", edit, f"Applied 1 edit to {module} (2 lines changed).")],
        ),
        (f"Re-running `{command}`.", [_tests(command, quick)]),
        (
            "Now the full suite, to be sure nothing else moved.",
            [_tests("pytest -q", test_log("pytest -q", False))],
        ),
        (f"Reopening {module} to double-check the final version.", [_read(module, fixed)]),
    ]
    before_fix: list[tuple[str, list[_Call]]] = [
        (
            f"Looking for other references to {card}.",
            [_grep(card, "tests", f"{test_file}:12:    '{card}': [...],")],
        ),
        (f"Checking the history of {module}.", [_bash(f"git log --oneline -n 3 -- {module}", history)]),
        (
            f"Reading {test_file} around the {keyword} tests.",
            [_read(test_file, f"from {pkg}.{mod} import {cls}\n")],
        ),
        (f"Reopening {module} to look at `{func}` again.", [_read(module, code)]),
        (f"Is `{cls}` constructed anywhere else?", [_grep(cls, "src", f"{module}:8:class {cls}:")]),
    ]
    after_fix: list[tuple[str, list[_Call]]] = [
        (f"Re-running `{command}` once more to rule out flakiness.", [_tests(command, quick)]),
        (f"Type-checking {module}.", [_bash(f"mypy --strict {module} {helper}", "Success: no issues found")]),
        (f"Reviewing the change to {module}.", [_bash(f"git diff --stat {module}", f" {module} | 4 ++--")]),
        (f"Reading {module} once more after the edit.", [_read(module, fixed)]),
    ]
    rng.shuffle(before_fix)
    rng.shuffle(after_fix)
    slots = turns - 1
    n_checks, n_actions = len(facts) - 1, slots - len(facts) + 1
    actions, later_actions = core[:6], core[6:]  # investigation, then the edit and its verification
    n_extra = n_actions - len(core)
    _interleave(rng, actions, [before_fix[k % len(before_fix)] for k in range(n_extra // 2)], 3)
    _interleave(rng, later_actions, [after_fix[k % len(after_fix)] for k in range(n_extra - n_extra // 2)], 2)
    actions += later_actions
    check_at = {(j + 1) * slots // (n_checks + 1) for j in range(n_checks)}
    check_ins = [
        f"Quick status on {ticket}: reproduced with `{command}`, digging into {module}. Anything to know?",
        f"Progress update: `{func}` in {module} looks like the culprit. Any other constraints?",
        f"Still on {ticket}. Anything about the environment I should know?",
        f"Before I wrap up {ticket}: has anything changed on your side?",
    ]
    first = (
        f"Hi! Please fix {ticket}: customers see invoice totals off by one cent ({url}). It probably lives "
        f"in {module}. {first_fact}, and please keep runs under {latency}."
    )
    t = _Transcript(seed)
    t.user(first)
    action_iter, ack, j = iter(actions), "", 0
    for i in range(slots):
        if i in check_at:
            j += 1
            t.assistant(check_ins[(j - 1) % len(check_ins)])
            t.user(f"Actually, {facts[j]}." if j == n_checks else f"One thing: {facts[j]}.")
            ack = "Noted. "
        else:
            text, calls = next(action_iter)
            t.assistant(ack + text, calls)
            ack = ""
    diff = "\n".join(
        [f"--- a/{module}", f"+++ b/{module}", f"@@ class {cls}:", *("-" + x for x in old_lines)]
        + ["+" + x for x in new_lines]
    )
    t.assistant(
        f"Fixed {ticket}. `{error_line}` came from float arithmetic in `{cls}.{func}`; totals now stay "
        f"Decimal until quantize_cents in {helper}.\n\n{diff}\n\n`{command}` and the full suite pass; "
        f"{card} now bills {expected}."
    )
    identifiers = [module, helper, test_file, func, cls, ticket, card, command, error_line, url]
    return SyntheticConversation(
        "coding-agent", _CODING_SYSTEM, t.messages, facts, identifiers, [contradiction]
    )


# -- personal assistant -------------------------------------------------------------------------------

_ASSISTANT_SYSTEM = (
    "You are a friendly personal assistant. Remember what the user says; be honest about gaps."
)


def personal_assistant(seed: int = 0, turns: int = 30) -> SyntheticConversation:
    """A user chats with an assistant: facts, preferences, knowledge gaps, a near duplicate and a move.

    ``turns`` is the number of user messages (one of them a tool result); there are ``2 * turns`` messages.
    """
    if turns < MIN_ASSISTANT_TURNS:
        raise ValueError(f"turns must be at least {MIN_ASSISTANT_TURNS}, got {turns}")
    rng = random.Random(seed)
    name = rng.choice(["Alice", "Priya", "Jonas", "Mei", "Tomás", "Ingrid", "Kwame"])
    old_city, new_city = rng.sample(["Berlin", "Hamburg", "Cologne", "Leipzig", "Bremen", "Dresden"], 2)
    dep = rng.choice(["Munich", "Frankfurt", "Vienna", "Zurich"])
    dest = rng.choice(["Lisbon", "Oslo", "Madrid", "Dublin", "Athens"])
    flight = f"{rng.choice(['LH', 'LX', 'OS', 'EW'])} {rng.randint(100, 999)}"
    dep_time = f"{rng.randint(5, 21):02d}:{rng.choice([0, 10, 25, 40, 55]):02d}"
    date = f"{rng.choice(['March', 'April', 'May', 'June'])} {rng.randint(1, 28)}"
    pairs = [
        ("peanuts", "peanut"),
        ("shellfish", "shellfish"),
        ("sesame", "sesame"),
        ("tree nuts", "tree nut"),
    ]
    allergen, adjective = rng.choice(pairs)
    sister = rng.choice(["Clara", "Noor", "Hana", "Elif"])
    birthday = f"{rng.choice(['July', 'October'])} {rng.randint(1, 28)}"
    booking = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
    hotel = rng.choice(["Hotel Aurora", "Casa Lumen", "Harbour Inn", "Pension Mira"])
    job = rng.choice(["a nurse", "a data engineer", "a teacher", "an architect"])
    seat = rng.choice(["window", "aisle"])
    km, temp, wind = rng.randint(900, 3200), rng.randint(8, 27), rng.randint(5, 30)

    f_units, f_home, f_job = f"{name} prefers metric units", f"I live in {old_city}", f"I work as {job}"
    f_allergy, f_dup = f"I'm allergic to {allergen}", f"I have a {adjective} allergy"
    f_flight = f"my flight {flight} leaves {dep} at {dep_time} on {date}"
    f_booking = f"my booking reference at {hotel} is {booking}"
    f_sister, f_seat = f"my sister {sister}'s birthday is {birthday}", f"I always prefer a {seat} seat"
    f_move = f"I moved from {old_city} to {new_city}"
    facts = [f_units, f_home, f_job, f_allergy, f_flight, f_booking, f_seat, f_sister, f_dup, f_move]
    forecast = f"{dest}, {date}: {temp} °C, wind {wind} km/h, rain {rng.randint(0, 9)} mm"
    weather = _Call("get_weather", {"city": dest, "date": date, "units": "metric"}, forecast)
    ask_weather = f"What will the weather be like in {dest} on {date}?"
    core: list[tuple[str, str]] = [
        (f"Hi! I'm {name}. Please remember: {f_units}.", f"Nice to meet you, {name}! I'll use metric units."),
        (f"Some background: {f_home} and {f_job}.", f"Got it: you live in {old_city} and work as {job}."),
        (f"Important: {f_allergy}.", f"Noted, I'll flag anything containing {allergen}."),
        (f"Next week I travel: {f_flight}, going to {dest}.", f"Saved: {flight} from {dep} at {dep_time}."),
        (
            "What's the gate for my flight?",
            f"I don't know the gate for {flight} yet; check the app that day.",
        ),
        (f"And {f_booking}.", f"Stored {booking} for {hotel}."),
        (f"How far is {dest} from {dep}?", f"Roughly {km} km as the crow flies."),
        (ask_weather, f"In {dest}: {temp} °C and wind {wind} km/h. Pack a light jacket."),
        (f"By the way, {f_seat}.", f"Understood, a {seat} seat whenever I help with bookings."),
        ("What's the Wi-Fi password at my hotel?", f"I don't have it; ask {hotel} reception, ref {booking}."),
        (f"Suggest a snack for flight {flight}.", f"Dried mango; it has no {allergen}, but check the label."),
        (f"Also, {f_sister}.", f"I'll remind you before {birthday}."),
        (f"Do you know {sister}'s phone number?", "I don't; you haven't told me and I can't look it up."),
        (f"Just so you know, {f_dup}.", f"Yes, you're allergic to {allergen}; I'll keep avoiding it."),
        (f"Big news: {f_move} last month.", f"Congratulations! Your home city is now {new_city}."),
        ("Which train goes from my new home to the airport?", f"I don't have {new_city} timetables yet."),
        (f"Draft a birthday message for {sister}.", f"Happy birthday, {sister}! Have a great year. {name}"),
        ("Thanks, that's all for now.", f"You're welcome, {name}. Have a good trip on {flight}!"),
    ]
    fillers = [
        ("When does my flight leave again?", f"{flight} leaves {dep} at {dep_time} on {date}."),
        ("What was my booking reference?", f"Your reference at {hotel} is {booking}."),
        ("Convert {n} miles for me.", "That's about {km} km."),
        ("Any airport food I should avoid?", f"Anything with {allergen}; ask staff about ingredients."),
        ("How many kilograms is {n} pounds?", "About {kg} kg."),
        ("Book me a seat for the flight, please.", f"I can't book directly; pick a {seat} seat on {flight}."),
    ]
    rng.shuffle(fillers)
    extra: list[tuple[str, str]] = []
    for k in range(turns - len(core) - 1):  # the weather turn adds a tool-result user message
        question, answer = fillers[k % len(fillers)]
        n = rng.randint(2, 400)
        extra.append((question.format(n=n), answer.format(km=f"{n * 1.609:.1f}", kg=f"{n * 0.4536:.1f}")))
    _interleave(rng, core, extra, 6, len(core) - 1)
    t = _Transcript(seed)
    for question, answer in core:
        t.user(question)
        if question == ask_weather:
            t.assistant("Let me check the forecast.", [weather])
        t.assistant(answer)
    identifiers = [flight, booking, hotel, dest, sister]
    return SyntheticConversation(
        "personal-assistant", _ASSISTANT_SYSTEM, t.messages, facts, identifiers, [(f_home, f_move)]
    )


# -- scaling ------------------------------------------------------------------------------------------


def scaled(conv: SyntheticConversation, target_messages: int) -> list[dict[str, Any]]:
    """Repeat the conversation until there are at least ``target_messages`` messages.

    Copy ``k`` (from 1) suffixes every tool id with ``_r{k}`` so ids stay unique and
    results stay paired, and marks its opening user text with ``[round k+1]``. The
    copies are whole, so roles keep alternating and every call keeps its result.
    """
    if not conv.messages:
        raise ValueError("cannot scale an empty conversation")
    out: list[dict[str, Any]] = []
    k = 0
    while len(out) < target_messages:
        for i, msg in enumerate(conv.messages):
            new = copy.deepcopy(msg)
            if k and isinstance(new["content"], list):
                for block in new["content"]:
                    for key in ("id", "tool_use_id"):
                        if key in block and block.get("type") in ("tool_use", "tool_result"):
                            block[key] = f"{block[key]}_r{k}"
            if k and i == 0 and isinstance(new["content"], str):
                new["content"] = f"[round {k + 1}] {new['content']}"
            out.append(new)
        k += 1
    return out
