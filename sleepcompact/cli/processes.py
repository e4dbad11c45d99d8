"""The process commands: ``run``, ``worker``, ``scheduler``, and ``sleep`` (a sweep now, queued or inline).

They start the worker and the scheduler as child processes (see ``cli.children``) and stop them warm
on SIGINT or SIGTERM.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from sleepcompact.api import Memory
from sleepcompact.cli.children import Children, module_command
from sleepcompact.cli.common import JsonFlag, app, errors, show
from sleepcompact.cli.light import memory
from sleepcompact.facade import InlineQueue
from sleepcompact.facade.sleep import manual_key

WorkerArgs = Annotated[
    list[str] | None, typer.Argument(help="Extra arguments for celery (e.g. --concurrency 4).")
]


def _prepare() -> None:
    """Migrate the embedded database once, before any worker process opens it."""
    with memory():
        pass


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@errors
def worker(extra: WorkerArgs = None) -> None:
    """Run the Celery worker on the emergency, sleep and admin queues (production: one per machine)."""
    _prepare()
    raise typer.Exit(Children([module_command("worker", *(extra or []))]).supervise())


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@errors
def scheduler(extra: WorkerArgs = None) -> None:
    """Run Celery beat: the nightly and idle sweeps. Run exactly one per deployment."""
    raise typer.Exit(Children([module_command("scheduler", *(extra or []))]).supervise())


@app.command()
@errors
def run() -> None:
    """Run the worker and the scheduler together (the embedded default on one machine)."""
    _prepare()
    raise typer.Exit(Children([module_command("worker"), module_command("scheduler")]).supervise())


@app.command()
@errors
def sleep(
    conversation: Annotated[
        str | None, typer.Option(help="Only this conversation (default: every due one).")
    ] = None,
    now: Annotated[
        bool, typer.Option("--now", help="Tick now even if not due (a fresh key unless --key).")
    ] = False,
    inline: Annotated[
        bool, typer.Option("--inline", help="Run the ticks in this process, not the worker.")
    ] = False,
    key: Annotated[str | None, typer.Option(help="Tick key with --now; the same key runs once.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Run a sweep now: consolidate each agent's journal, then compact what is over the soft threshold.

    Without --now only due conversations are ticked (active since their last sleep, before tonight), with
    tonight's key, so it never ticks one twice in a night. Queued by default: a worker must be running.
    """
    if key is not None and not now:
        raise typer.BadParameter("--key goes with --now (sweeps use the night's key)", param_hint="--key")
    with memory() as mem:
        if inline:
            report, results = _inline(mem, conversation, now, key)
        elif now:
            report, results = mem.sleep.tick_now(_ids(mem, conversation), key).to_dict(), None
        else:
            task_id = mem.admin.producer.send("sleepcompact.sweep_nightly", conversation)
            report, results = {"kind": "nightly", "queued_sweep": task_id}, None
    data = (
        {**report, "results": {c: r.to_dict() for c, r in results.items()}} if results is not None else report
    )
    show(data, as_json, lambda: _text(report, results, now))


def _ids(mem: Memory, conversation: str | None) -> list[str]:
    return [conversation] if conversation else [c.id for c in mem.admin.conversations(limit=1_000_000)]


def _inline(
    mem: Memory, conversation: str | None, now: bool, key: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ticks, run in this process; with --now every one (a used key reports its earlier result)."""
    queue = InlineQueue(mem.sleep.run_tick)
    if now:
        ids = _ids(mem, conversation)
        tick_key = key or manual_key()
        queue.results = {cid: mem.sleep.run_tick(cid, tick_key) for cid in ids}
        return {"kind": "now", "tick_key": tick_key, "examined": len(ids)}, dict(queue.results)
    return mem.sleep.sweep_nightly(conversation_id=conversation, queue=queue).to_dict(), dict(queue.results)


def _text(report: dict[str, Any], results: dict[str, Any] | None, now: bool) -> None:
    if results is None:
        what = f"{report.get('enqueued', 0)} tick(s)" if now else f"nightly sweep {report['queued_sweep']}"
        typer.echo(f"queued {what}; a running worker (sleepcompact run / worker) picks it up")
        return
    for cid, why in report.get("skipped", {}).items():
        typer.echo(f"{cid}: not due, {why} (--now ticks it anyway)")
    if not results and not report.get("skipped"):
        typer.echo("nothing due (every conversation slept since its last activity; --now ticks anyway)")
    for cid, r in results.items():
        c = r.compaction
        figures = f" {c.tokens_before:,} -> {c.tokens_after:,}" if c.tokens_before is not None else ""
        typer.echo(f"{cid}: memories +{r.consolidation.created}, compaction {c.status}{figures}")
