"""A synthetic coding agent: an investigation with large tool outputs, facts and one changed deadline."""

from __future__ import annotations

import random

from sleepcompact.synthetic.transcript import (
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
