"""A synthetic coding agent: an investigation with large tool outputs, facts and one changed deadline."""

from __future__ import annotations

import random
from dataclasses import dataclass

from sleepcompact.demo.synthetic.transcript import (
    SyntheticConversation,
    _bash,
    _Call,
    _fill,
    _grep,
    _interleave,
    _read,
    _tests,
    _Transcript,
)

MIN_CODING_TURNS = 15
"""Fewest turns ``coding_agent`` accepts: the core investigation, the fact check-ins and the summary."""


# -- coding agent -------------------------------------------------------------------------------------

_CODING_SYSTEM = (
    "You are a careful coding agent working in a Python repository. Use the tools bash, read_file, grep, "
    "edit_file and run_tests. Explain what you do, keep changes minimal and always re-run the tests."
)


_WORDS = ["client", "events", "ledger", "export", "schema", "refund", "currency", "audit", "webhook"]
_Turn = tuple[str, list[_Call]]


@dataclass(frozen=True)
class _Bug:
    """The random draws that make one coding scenario: where the bug is, what it breaks, the facts."""

    pkg: str
    mod: str
    module: str
    helper: str
    test_file: str
    func: str
    cls: str
    ticket: str
    card: str
    keyword: str
    command: str
    expected: str
    got: str
    error_line: str
    url: str
    latency: str
    memory: str
    invoice: int
    py: int
    big: int  # characters of each large tool output


def _draw_bug(rng: random.Random, big_output_tokens: int) -> _Bug:
    pkg = rng.choice(["billing", "payments", "invoicing", "ledger"])
    mod = rng.choice(["invoice", "totals", "tax"])
    func = rng.choice(["compute_tax_total", "sum_line_items", "apply_vat", "total_with_tax"])
    cls = rng.choice(["InvoiceCalculator", "TaxPolicy", "LineItemAggregator", "TotalsEngine"])
    ticket = f"{rng.choice(['HAT', 'BIL', 'PAY'])}{rng.randint(100, 999)}"
    card = f"credit_card_{rng.randint(1_000_000, 9_999_999)}"
    keyword = rng.choice(["rounding", "tax", "cents"])
    test_file = f"tests/test_{mod}.py"
    cents = rng.randint(150, 99_999)
    expected, got = f"{cents // 100}.{cents % 100:02d}", f"{(cents - 1) // 100}.{(cents - 1) % 100:02d}"
    latency, memory = f"{rng.randint(120, 900)} ms", f"{rng.randint(8, 96)} MB"
    invoice, py = rng.randint(10_000, 99_999), rng.choice([10, 11])
    return _Bug(
        pkg,
        mod,
        f"src/{pkg}/{mod}.py",
        f"src/{pkg}/rounding.py",
        test_file,
        func,
        cls,
        ticket,
        card,
        keyword,
        f"pytest {test_file} -k {keyword}",
        expected,
        got,
        f"AssertionError: expected {expected}, got {got}",
        f"https://internal.example.com/tickets/{ticket}",
        latency,
        memory,
        invoice,
        py,
        4 * max(1, big_output_tokens),
    )


def _draw_facts(rng: random.Random, bug: _Bug) -> tuple[str, list[str], tuple[str, str]]:
    """The user's first preference, the facts stated in order, and the one later contradicted."""
    day, hour = rng.choice(["Thursday", "Friday"]), rng.choice([12, 16, 18])
    base_facts = [
        f"our CI runs Python 3.{bug.py}",
        f"the deadline is {day} {hour}:00 UTC",
        f"keep the public API of {bug.cls} unchanged",
        "money must be handled with Decimal, never float",
    ]
    if rng.random() < 0.5:
        contradiction = (base_facts[0], f"CI moved to Python 3.{bug.py + 1}")
    else:
        contradiction = (base_facts[1], f"the deadline moved to Monday {hour - 2}:00 UTC")
    first_fact = "I prefer type hints everywhere"
    later = base_facts[:]
    rng.shuffle(later)
    facts = [first_fact, *later[:3], contradiction[1]]
    if contradiction[0] not in facts[:4]:  # the contradicted fact must be stated before it is contradicted
        facts[3] = contradiction[0]
    return first_fact, facts, contradiction


def _code(bug: _Bug) -> tuple[str, str, list[str], list[str]]:
    """The buggy module, its fixed version, and the lines the fix replaces and writes."""
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
        f'"""Invoice totals for the {bug.pkg} service."""\n\nfrom decimal import Decimal\n\n'
        f"from {bug.pkg}.rounding import quantize_cents\n\n\nclass {bug.cls}:\n"
        f'    """Sums invoice lines and applies the tax rate."""\n\n'
        "    def __init__(self, rate: Decimal) -> None:\n        self.rate = rate\n\n"
        f"    def {bug.func}(self, lines: list[Decimal]) -> Decimal:\n"
    )
    return code + "\n".join(old_lines) + "\n", code + "\n".join(new_lines) + "\n", old_lines, new_lines


def _listing(rng: random.Random, bug: _Bug) -> str:
    def entry(i: int) -> str:
        path = (
            f"tests/fixtures/invoice_{i:04d}.json"
            if i % 3
            else f"src/{bug.pkg}/{rng.choice(_WORDS)}_{i:03d}.py"
        )
        return f"{rng.randint(5, 900):>6} {path}"

    files = (bug.module, bug.helper, bug.test_file, f"src/{bug.pkg}/__init__.py")
    lines = [f"{rng.randint(20, 400):>6} {p}" for p in files]
    _fill(lines, bug.big, entry)
    return "\n".join([*lines, f"{rng.randint(50_000, 90_000):>6} total"])


def _test_log(rng: random.Random, bug: _Bug, cmd: str, failing: bool) -> str:
    files = [bug.test_file, "tests/test_rounding.py", "tests/test_discounts.py", "tests/test_api.py"]
    body: list[str] = []
    _fill(body, bug.big, lambda i: f"{files[i % 4]}::test_{rng.choice(_WORDS)}_{bug.keyword}_{i:03d} PASSED")
    n = len(body) + int(failing)
    body = [f"{line} [{100 * (k + 1) // n:3d}%]" for k, line in enumerate(body)]
    head = f"{'=' * 30} test session starts {'=' * 30}\nplatform linux -- Python 3.{bug.py}.9, pytest-8.2.0"
    head += f"\n$ {cmd}\ncollected {n} items"
    took = f"in {rng.randint(3, 60)}.{rng.randint(0, 99):02d}s"
    if not failing:
        return "\n".join([head, *body, f"{'=' * 30} {n} passed {took}"])
    name = f"{bug.test_file}::test_{bug.keyword}_for_{bug.card}"
    fail = [
        f"{name} FAILED",
        "=" * 30 + " FAILURES " + "=" * 30,
        f"    def test_{bug.keyword}_for_{bug.card}():",
        f"        calc = {bug.cls}(rate=Decimal('0.19'))",
        f"        assert calc.{bug.func}(LINES['{bug.card}']) == Decimal('{bug.expected}')",
        f"E       {bug.error_line}",
        f"{bug.test_file}:{rng.randint(20, 200)}: AssertionError",
        f"FAILED {name} - {bug.error_line}",
        f"{'=' * 30} 1 failed, {n - 1} passed {took}",
    ]
    return "\n".join([head, *body, *fail])


def _replay(rng: random.Random, bug: _Bug) -> str:
    def line(i: int) -> str:
        stamp = f"2024-05-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}Z"
        rss = f"{rng.randint(8, 96)} MB"
        return (
            f"{stamp} INFO {bug.pkg}.worker invoice={bug.invoice + i} took {rng.randint(1, 40)} ms rss={rss}"
        )

    lines: list[str] = []
    _fill(lines, bug.big, line)
    calls = [("scripts/replay_invoice.py", "main"), (bug.module, bug.func), (bug.helper, "quantize_cents")]
    frames = [f'  File "/app/{p}", line {rng.randint(10, 300)}, in {f}' for p, f in calls]
    error = f"MismatchError: invoice {bug.invoice} for {bug.card}: expected {bug.expected}, got {bug.got}"
    return "\n".join([*lines, "Traceback (most recent call last):", *frames, error])


def _core(
    rng: random.Random, bug: _Bug, code: str, fixed: str, edit: dict[str, str]
) -> tuple[list[_Turn], str]:
    """The investigation, the edit and its verification, and the module's git history (drawn in the
    order the scenario has always drawn them, so a seed gives the same text)."""
    b = bug
    grep_out = (
        f"{b.module}:{rng.randint(10, 40)}:    def {b.func}(self, lines: list[Decimal]) -> Decimal:\n"
        f"{b.test_file}:{rng.randint(10, 90)}:        assert calc.{b.func}(LINES['{b.card}']) == "
        f"Decimal('{b.expected}')\n{b.helper}:3:def quantize_cents(value: Decimal) -> Decimal:"
    )
    history = "\n".join(
        f"{rng.getrandbits(28):07x} {m}" for m in (f"{b.ticket} prep", f"add {b.func}", "initial")
    )
    helper_code = (
        "from decimal import ROUND_HALF_UP, Decimal\n\n\ndef quantize_cents(value: Decimal) -> Decimal:\n"
        '    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)\n'
    )
    ticket_text = (
        f"{b.ticket}: invoice {b.invoice} for {b.card} is off by one cent ({b.expected} expected, {b.got} "
        f"billed). Reported by support; p95 latency {b.latency}, worker memory {b.memory}. See {b.url}"
    )
    quick = f"$ {b.command}\n........\n8 passed, 214 deselected in 0.41s"
    replay_cmd = f"python scripts/replay_invoice.py --ticket {b.ticket}"
    turns: list[_Turn] = [
        (
            f"Let me look at the project layout and open {b.module}.",
            [_bash("find src tests -type f | sort | xargs wc -l", _listing(rng, b)), _read(b.module, code)],
        ),
        (
            f"Reproducing the failure with `{b.command}`.",
            [_tests(b.command, _test_log(rng, b, b.command, True))],
        ),
        (
            f"The failure is `{b.error_line}`. Where is `{b.func}` used?",
            [_grep(b.func, "src tests", grep_out)],
        ),
        (f"`{b.func}` calls quantize_cents from {b.helper}; reading it.", [_read(b.helper, helper_code)]),
        (
            f"Replaying {b.ticket} on production data for a stack trace.",
            [_bash(replay_cmd, _replay(rng, b), True)],
        ),
        (
            f"Checking the ticket at {b.url} for context on {b.card}.",
            [_bash(f"curl -s {b.url}", ticket_text)],
        ),
        (
            f"The float conversion in `{b.cls}.{b.func}` loses a cent before rounding. Editing {b.module}.",
            [_Call("edit_file", edit, f"Applied 1 edit to {b.module} (2 lines changed).")],
        ),
        (f"Re-running `{b.command}`.", [_tests(b.command, quick)]),
        (
            "Now the full suite, to be sure nothing else moved.",
            [_tests("pytest -q", _test_log(rng, b, "pytest -q", False))],
        ),
        (f"Reopening {b.module} to double-check the final version.", [_read(b.module, fixed)]),
    ]
    return turns, history


def _side_trips(
    rng: random.Random, bug: _Bug, code: str, fixed: str, history: str
) -> tuple[list[_Turn], list[_Turn]]:
    """Extra turns before and after the fix, shuffled, to reach the requested length."""
    b = bug
    quick = f"$ {b.command}\n........\n8 passed, 214 deselected in 0.41s"
    before_fix: list[_Turn] = [
        (
            f"Looking for other references to {b.card}.",
            [_grep(b.card, "tests", f"{b.test_file}:12:    '{b.card}': [...],")],
        ),
        (f"Checking the history of {b.module}.", [_bash(f"git log --oneline -n 3 -- {b.module}", history)]),
        (
            f"Reading {b.test_file} around the {b.keyword} tests.",
            [_read(b.test_file, f"from {b.pkg}.{b.mod} import {b.cls}\n")],
        ),
        (f"Reopening {b.module} to look at `{b.func}` again.", [_read(b.module, code)]),
        (f"Is `{b.cls}` constructed anywhere else?", [_grep(b.cls, "src", f"{b.module}:8:class {b.cls}:")]),
    ]
    after_fix: list[_Turn] = [
        (f"Re-running `{b.command}` once more to rule out flakiness.", [_tests(b.command, quick)]),
        (
            f"Type-checking {b.module}.",
            [_bash(f"mypy --strict {b.module} {b.helper}", "Success: no issues found")],
        ),
        (
            f"Reviewing the change to {b.module}.",
            [_bash(f"git diff --stat {b.module}", f" {b.module} | 4 ++--")],
        ),
        (f"Reading {b.module} once more after the edit.", [_read(b.module, fixed)]),
    ]
    rng.shuffle(before_fix)
    rng.shuffle(after_fix)
    return before_fix, after_fix


def coding_agent(seed: int = 0, turns: int = 40, big_output_tokens: int = 6000) -> SyntheticConversation:
    """A user asks a coding agent to fix a rounding bug; ``2 * turns`` messages, some outputs huge.

    Large tool outputs (file listing, test logs, a replay log with a stack trace) are
    each at least ``4 * big_output_tokens`` characters.
    """
    if turns < MIN_CODING_TURNS:
        raise ValueError(f"turns must be at least {MIN_CODING_TURNS}, got {turns}")
    rng = random.Random(seed)
    bug = _draw_bug(rng, big_output_tokens)
    first_fact, facts, contradiction = _draw_facts(rng, bug)
    code, fixed, old_lines, new_lines = _code(bug)
    edit = {"path": bug.module, "old_text": "\n".join(old_lines), "new_text": "\n".join(new_lines)}
    core, history = _core(rng, bug, code, fixed, edit)
    before_fix, after_fix = _side_trips(rng, bug, code, fixed, history)
    slots = turns - 1
    actions = _actions(rng, core, before_fix, after_fix, slots - len(facts) + 1)
    t = _Transcript(seed)
    _converse(t, bug, actions, facts, first_fact, slots)
    diff = "\n".join(
        [f"--- a/{bug.module}", f"+++ b/{bug.module}", f"@@ class {bug.cls}:", *("-" + x for x in old_lines)]
        + ["+" + x for x in new_lines]
    )
    t.assistant(
        f"Fixed {bug.ticket}. `{bug.error_line}` came from float arithmetic in "
        f"`{bug.cls}.{bug.func}`; totals now stay Decimal until quantize_cents in {bug.helper}.\n\n{diff}"
        f"\n\n`{bug.command}` and the full suite pass; {bug.card} now bills {bug.expected}."
    )
    b = bug
    identifiers = [
        b.module,
        b.helper,
        b.test_file,
        b.func,
        b.cls,
        b.ticket,
        b.card,
        b.command,
        b.error_line,
        b.url,
    ]
    return SyntheticConversation(
        "coding-agent", _CODING_SYSTEM, t.messages, facts, identifiers, [contradiction]
    )


def _actions(
    rng: random.Random, core: list[_Turn], before_fix: list[_Turn], after_fix: list[_Turn], n_actions: int
) -> list[_Turn]:
    """The core turns, side trips spread before the edit (from the 4th turn) and after it (from the 3rd)."""
    actions, later_actions = core[:6], core[6:]  # investigation, then the edit and its verification
    n_extra = n_actions - len(core)
    _interleave(rng, actions, [before_fix[k % len(before_fix)] for k in range(n_extra // 2)], 3)
    _interleave(rng, later_actions, [after_fix[k % len(after_fix)] for k in range(n_extra - n_extra // 2)], 2)
    return actions + later_actions


def _converse(
    t: _Transcript, bug: _Bug, actions: list[_Turn], facts: list[str], first_fact: str, slots: int
) -> None:
    """The user's request, then the agent's turns with the user's facts at evenly spaced check-ins."""
    n_checks = len(facts) - 1
    check_at = {(j + 1) * slots // (n_checks + 1) for j in range(n_checks)}
    check_ins = [
        f"Quick status on {bug.ticket}: reproduced with `{bug.command}`, digging into {bug.module}. "
        "Anything to know?",
        f"Progress update: `{bug.func}` in {bug.module} looks like the culprit. Any other constraints?",
        f"Still on {bug.ticket}. Anything about the environment I should know?",
        f"Before I wrap up {bug.ticket}: has anything changed on your side?",
    ]
    t.user(
        f"Hi! Please fix {bug.ticket}: customers see invoice totals off by one cent ({bug.url}). "
        f"It probably lives in {bug.module}. {first_fact}, and please keep runs under {bug.latency}."
    )
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
