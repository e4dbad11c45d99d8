"""Tenant isolation: nothing of one tenant (or agent) reaches what another can see or what is sent for it.

Three principals share one database: tenant A's ``agent-1``, tenant B's ``agent-1`` (the same agent id
in another tenant: a query that filtered by agent alone would mix them) and tenant B's ``agent-2`` (a
second agent of one tenant: memories are per agent). Each has two conversations whose messages, tool
output and journal entries carry the principal's own canary. Everything runs for all of them
(appends, journal entries, consolidation, compaction, sleep ticks with the same tick key, the guard's
emergency compaction), then each principal's view (contexts in both formats, ``prepare_context``,
summaries, memories and memory search, archive search, journal, ticks, export) must hold its own
canary and no one else's.

The second test does the same with the real Anthropic SDK against the local fake server (summaries,
LLM rescoring of the journal, the emergency path, one Message Batch mixing every principal): every
request body sent while working for one principal carries none of the others' canaries, and each
principal's stored summaries are the replies to its own requests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sleepcompact import Memory, Settings
from sleepcompact.domain.validation import anthropic_problems
from tests.support.fake_anthropic import FakeAnthropic, default_summary
from tests.support.queues import RecordingQueue

MODEL = "claude-sonnet-4-5"
WINDOW = 4_000


@dataclass
class Principal:
    """One tenant's agent, its canary (the suffix has non-hex letters: no digest can contain it)."""

    name: str
    tenant_id: str
    agent_id: str
    canary: str
    conversations: list[str] = field(default_factory=list)

    @property
    def marks(self) -> tuple[str, ...]:
        """The canary and its unique suffix (what survives word splitting and lower-casing)."""
        return (self.canary.lower(), self.canary.rsplit("-", 1)[1].lower())


def _principals() -> list[Principal]:
    return [
        Principal("A/agent-1", "tenant-a", "agent-1", "CANARY-TENANT-A-q7f3ez"),
        Principal("B/agent-1", "tenant-b", "agent-1", "CANARY-TENANT-B-AGENT1-w41d9k"),
        Principal("B/agent-2", "tenant-b", "agent-2", "CANARY-TENANT-B-AGENT2-x0c5ay"),
    ]


def _prose(canary: str, chars: int, salt: int) -> str:
    """Agent-like text every principal shares (so searches and recall match across them), plus the canary."""
    words = (
        *("fix", "the", "rounding", "bug", "in", "src/billing/invoice.py", "compute_tax_total", "rounds"),
        *("half-up", "run", "pytest", "-k", "rounding", "the", "user", "prefers", "metric", "units"),
        *("decided", "to", "keep", "Decimal"),
    )
    body = " ".join(words[(salt + i) % len(words)] for i in range(chars // 6))
    return f"{body} {canary} {body}"[:chars] + f" ({canary})"


def _exchange(mem: Memory, cid: str, canary: str, salt: int) -> None:
    """One turn: a request, a tool call with a large output, an explanation; each carries the canary."""
    call_id = f"toolu_{salt:04d}"
    mem.append(
        cid, {"role": "user", "content": f"Request {salt}: deploy {canary}. " + _prose(canary, 500, salt)}
    )
    mem.append(
        cid,
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Checking the build for {canary}."},
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": "bash",
                    "input": {"command": f"grep {canary} -r ."},
                },
            ],
        },
    )
    mem.append(
        cid,
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": _prose(canary, 2_000, salt + 1)}
            ],
        },
    )
    mem.append(cid, {"role": "assistant", "content": _prose(canary, 800, salt + 2)})


def _setup(mem: Memory, principals: list[Principal]) -> None:
    """Two conversations per principal with history and journal entries, all carrying its canary."""
    for p in principals:
        for n in range(2):
            cid = mem.create_conversation(
                MODEL, tenant_id=p.tenant_id, agent_id=p.agent_id, context_window=WINDOW
            )
            p.conversations.append(cid)
            mem.append(cid, {"role": "system", "content": f"You are the deploy agent of {p.canary}."})
            for i in range(3):
                _exchange(mem, cid, p.canary, 10 * n + i)
        cid = p.conversations[0]
        mem.journal.add(cid, f"The user prefers {p.canary} for every deploy", tags=["preference"])
        mem.journal.add(cid, f"Decided to pin {p.canary} as the build id", tags=["decision"])
        mem.journal.add(
            p.conversations[1],
            f"The staging host is {p.canary}.internal",
            source_type="observation",
            tags=["fact"],
        )


def _visible(mem: Memory, cid: str, *, prepared: Any = None) -> dict[str, str]:
    """Everything the conversation's tenant and agent can read, as JSON text, by where it came from."""
    view = mem.context(cid)
    openai = mem.context(cid, fmt="openai")
    out = {
        "context": json.dumps([view.system, view.messages, view.memories], ensure_ascii=False),
        "context (openai)": json.dumps(openai.messages, ensure_ascii=False),
        "history": json.dumps(
            [h.to_dict() for h in mem.compactions.history(cid)], ensure_ascii=False, default=str
        ),
        "memories": json.dumps(
            [m.to_dict() for m in mem.memories.list(cid, include_invalid=True)], ensure_ascii=False
        ),
        "memory search": json.dumps(
            [m.to_dict() for m in mem.memories.search(cid, "canary")], ensure_ascii=False
        ),
        "archive search": json.dumps(
            [
                [hit.to_dict() for hit in mem.search_history(cid, q, limit=200)]
                for q in ("canary", "invoice rounding", "deploy")
            ],
            ensure_ascii=False,
        ),
        "journal": json.dumps([e.to_dict() for e in mem.journal.entries(cid)], ensure_ascii=False),
        "ticks": json.dumps([t.to_dict() for t in mem.sleep.ticks(cid)], ensure_ascii=False),
        "export": json.dumps(mem.export(cid).to_dict(), ensure_ascii=False, default=str),
    }
    if prepared is not None:
        out["prepare_context"] = json.dumps([prepared.system, prepared.messages], ensure_ascii=False)
    return out


def _assert_isolated(mem: Memory, principals: list[Principal], prepared: dict[str, Any]) -> None:
    for p in principals:
        others = [q for q in principals if q is not p]
        for cid in p.conversations:
            seen = _visible(mem, cid, prepared=prepared.get(cid))
            for where, text in seen.items():
                lowered = text.lower()
                for q in others:
                    for mark in q.marks:
                        assert mark not in lowered, f"{q.name}'s canary in {p.name}'s {where} ({cid})"
            # Not vacuous: the principal's own canary is there, and so are its memories.
            for where in ("context", "memories", "memory search", "archive search", "journal", "export"):
                assert p.canary.lower() in seen[where].lower(), f"{p.name}'s own canary missing from {where}"
            # A search for another principal's canary finds nothing here.
            for q in others:
                assert mem.search_history(cid, q.canary) == []
                assert mem.memories.search(cid, q.canary) == []


def test_each_tenant_and_agent_sees_only_its_own_data(database_url: str) -> None:
    """Offline summarizer, both databases: appends, journal, consolidation, compaction, ticks, the guard."""
    principals = _principals()
    queue = RecordingQueue()
    with Memory(Settings(database_url=database_url), auto_migrate=True, queue=queue) as mem:
        _setup(mem, principals)
        everyone = [(p, cid) for p in principals for cid in p.conversations]
        for p, _ in everyone[::2]:
            mem.memories.consolidate(p.conversations[0])
        for _, cid in everyone:
            assert mem.compactions.compact(cid).status == "applied"
        for p, cid in everyone:
            _exchange(mem, cid, p.canary, 100)
            # One key for every conversation: tick keys are per conversation, so each one runs.
            result = mem.sleep.tick(cid, "night-2026-11-22")
            assert not result.already_done
            assert mem.sleep.tick(cid, "night-2026-11-22").already_done is True
        prepared: dict[str, Any] = {}
        for p, cid in everyone:
            for i in range(4):
                _exchange(mem, cid, p.canary, 200 + i)
            ctx = mem.prepare_context(cid, system=f"Agent of {p.tenant_id}/{p.agent_id}")
            assert ctx.action in ("emergency_compacted", "fallback_compacted"), ctx.action
            assert anthropic_problems(ctx.messages) == []
            prepared[cid] = ctx
        # Every principal ended with memories of its own (so the checks below are not vacuous).
        for p in principals:
            assert any(p.canary in m.content for m in mem.memories.list(p.conversations[0]))
        _assert_isolated(mem, principals, prepared)


# -- with the real SDK against the fake Anthropic server ------------------------------------------------

_DIGEST = re.compile(r"fake-anthropic digest ([0-9a-f]{12})")


class Traffic:
    """Splits what the fake server received by the principal it was sent for."""

    def __init__(self, fake: FakeAnthropic) -> None:
        self.fake = fake
        self.by_principal: dict[str, list[dict[str, Any]]] = {}

    @contextmanager
    def on_behalf_of(self, p: Principal) -> Iterator[None]:
        """Requests made inside the block were made for ``p``."""
        start = len(self.fake.requests)
        yield
        self.by_principal.setdefault(p.name, []).extend(self.fake.requests[start:])


def _digests(params: dict[str, Any]) -> set[str]:
    """The digest the fake's default reply to ``params`` carries."""
    return set(_DIGEST.findall(default_summary(params)))


def test_requests_sent_for_a_tenant_carry_nothing_of_another(
    database_url: str, fake_anthropic: FakeAnthropic
) -> None:
    """The Anthropic summarizer (real SDK, fake server): summaries, rescoring, emergency, one mixed batch."""
    principals = _principals()
    settings = Settings(
        database_url=database_url,
        anthropic_api_key="sk-ant-test-key-not-a-secret",
        anthropic_base_url=fake_anthropic.url,
        summarizer="anthropic",
        llm_rescoring=True,
    )
    traffic = Traffic(fake_anthropic)
    fake_anthropic.polls_until_ended = 0
    with Memory(settings, auto_migrate=True, queue=RecordingQueue()) as mem:
        _setup(mem, principals)
        everyone = [(p, cid) for p in principals for cid in p.conversations]
        for p, cid in everyone:
            with traffic.on_behalf_of(p):
                assert mem.compactions.compact(cid).status == "applied"
        for p, cid in everyone:
            _exchange(mem, cid, p.canary, 100)
            with traffic.on_behalf_of(p):
                mem.sleep.tick(cid, "night-2026-11-22")  # rescores the agent's journal, then compacts
        prepared: dict[str, Any] = {}
        for p, cid in everyone:
            for i in range(4):
                _exchange(mem, cid, p.canary, 200 + i)
            with traffic.on_behalf_of(p):
                prepared[cid] = mem.prepare_context(cid)
            assert prepared[cid].action == "emergency_compacted", prepared[cid].reason
        # One batch for everyone: each request in it is checked against the conversation it names.
        for p, cid in everyone:
            for i in range(3):
                _exchange(mem, cid, p.canary, 300 + i)
        owner = {cid: p for p, cid in everyone}
        report = mem.compactions.submit_batch([cid for _, cid in everyone])
        assert report.batch_id and len(report.submitted) == len(everyone)
        done = mem.compactions.poll_batches()
        assert len(done.applied) == len(everyone), (done.applied, done.retried_directly)
        (batch,) = [
            r["body"]
            for r in fake_anthropic.requests
            if r["method"] == "POST" and r["path"].endswith("/batches")
        ]
        conversation_of = {h.id: cid for cid in owner for h in mem.compactions.history(cid)}
        for item in batch["requests"]:
            p = owner[conversation_of[item["custom_id"]]]
            traffic.by_principal[p.name].append({"path": "batch item", "body": item["params"], "raw": ""})

        kinds: set[str] = set()
        for p in principals:
            sent = traffic.by_principal[p.name]
            bodies = [r["body"] for r in sent if isinstance(r.get("body"), dict) and "messages" in r["body"]]
            kinds.update(
                "rescore" if "<journal_entries>" in json.dumps(b["system"]) else "summary" for b in bodies
            )
            text = json.dumps(bodies, ensure_ascii=False).lower()
            assert p.canary.lower() in text, (
                f"nothing of {p.name} was sent for it: the check would be vacuous"
            )
            for q in principals:
                if q is not p:
                    for mark in q.marks:
                        assert mark not in text, f"{q.name}'s canary was sent to the LLM for {p.name}"
            # Every summary stored for p is the reply to a request made for p.
            mine = set().union(*(_digests(b) for b in bodies))
            for cid in p.conversations:
                for h in mem.compactions.history(cid):
                    if h.status == "applied" and h.summarizer_provider == "anthropic":
                        found = set(_DIGEST.findall(h.summary or ""))
                        assert found and found <= mine, f"{p.name}'s summary {h.id} answers another request"
        assert kinds == {"summary", "rescore"}, kinds
        _assert_isolated(mem, principals, prepared)
