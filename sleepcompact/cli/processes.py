"""The process commands: ``run``, ``worker``, ``scheduler``, and ``sleep`` (a sweep now, queued or inline).

They start the worker and the scheduler as child processes (see ``sleepcompact.processes``) and stop
them warm on SIGINT or SIGTERM.
"""

from __future__ import annotations

from typing import Annotated

import typer

from sleepcompact.agents import InlineQueue
from sleepcompact.cli import JsonFlag, _errors, _memory, _print_json, app
from sleepcompact.processes import Children, module_command
from sleepcompact.services.conversations import utcnow

WorkerArgs = Annotated[
    list[str] | None, typer.Argument(help="Extra arguments for celery (e.g. --concurrency 4).")
]


def _prepare() -> None:
    """Migrate the embedded database once, before any worker process opens it."""
    with _memory():
        pass


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@_errors
def worker(extra: WorkerArgs = None) -> None:
    """Run the Celery worker on the emergency, sleep and admin queues (production: one per machine)."""
    _prepare()
    raise typer.Exit(Children([module_command("worker", *(extra or []))]).supervise())


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@_errors
def scheduler(extra: WorkerArgs = None) -> None:
    """Run Celery beat: the nightly and idle sweeps. Run exactly one per deployment."""
    raise typer.Exit(Children([module_command("scheduler", *(extra or []))]).supervise())


@app.command()
@_errors
def run() -> None:
    """Run the worker and the scheduler together (the embedded default on one machine)."""
    _prepare()
    raise typer.Exit(Children([module_command("worker"), module_command("scheduler")]).supervise())


@app.command()
@_errors
def sleep(
    conversation: Annotated[
        str | None, typer.Option(help="Only this conversation (default: every due conversation).")
    ] = None,
    now: Annotated[
        bool, typer.Option("--now", help="Tick now even if not due (a fresh tick key unless --key).")
    ] = False,
    inline: Annotated[
        bool, typer.Option("--inline", help="Run the ticks in this process instead of the worker.")
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
    with _memory() as mem:
        inline_queue = InlineQueue(mem.run_tick) if inline else None
        if now and inline_queue is not None:
            # Run each tick directly: a key already used reports the earlier result ("already_done").
            ids = [conversation] if conversation else [c.id for c in mem.list_conversations(limit=1_000_000)]
            tick_key = key or f"manual-{utcnow():%Y%m%dT%H%M%S%f}"
            inline_queue.results = {cid: mem.run_tick(cid, tick_key) for cid in ids}
            report = {"kind": "now", "tick_key": tick_key, "examined": len(ids)}
        elif now:
            ids = [conversation] if conversation else [c.id for c in mem.list_conversations(limit=1_000_000)]
            report = mem.tick_now(ids, key)
        elif inline_queue is not None:
            report = mem.sweep_nightly(conversation_id=conversation, queue=inline_queue)
        else:
            task_id = mem.queue.send("sleepcompact.sweep_nightly", conversation)
            report = {"kind": "nightly", "queued_sweep": task_id}
    results = inline_queue.results if inline_queue is not None else {}
    if as_json:
        _print_json({**report, "results": results} if inline else report)
        return
    if not inline:
        what = f"{report.get('enqueued', 0)} tick(s)" if now else f"nightly sweep {report['queued_sweep']}"
        typer.echo(f"queued {what}; a running worker (sleepcompact run / worker) picks it up")
        return
    if not results:
        typer.echo("nothing due (every conversation slept since its last activity; --now ticks anyway)")
    for cid, r in results.items():
        c = r["compaction"]
        typer.echo(
            f"{cid}: memories +{r['consolidation'].get('created', 0)}, compaction {c['status']}"
            + (f" {c['tokens_before']:,} -> {c['tokens_after']:,}" if "tokens_before" in c else "")
        )
