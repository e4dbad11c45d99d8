"""Run mutants against named test files, in processes forked from one that imported everything once.

Called by ``scripts/mutation --by-hand`` (docs/mutation.md, "By hand"); run from the repository root,
after ``scripts/mutation`` has made the mutants. mutmut runs each mutant against every test its stats
say reaches the mutated function; for a function the slow compaction tests reach, a mutant that
survives costs minutes. Here the caller names the tests that check the function, and each mutant runs
in a child forked from a parent that has already imported the package and the test plugins (a new
pytest process spends 5 to 15 s importing the mutated copy; a forked child about 1 s).

A failing test is a kill, and is written into mutmut's record (``mutants/**/*.py.meta``, exit code
1), so ``scripts/mutation --report`` counts it and a later mutmut run skips it. A mutant that passes
the named tests is only printed: other tests may still kill it, so its record stays "not run".

Before any mutant, the named tests run once on the unmutated copy and must pass: a test that fails
whatever the mutant (one written for source newer than the mutants) would record every mutant killed.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import importlib
import json
import os
import pkgutil
import signal
import sys
import time
from pathlib import Path

LIMIT_SECONDS = 300  # a mutant that makes a loop endless is stopped here and counted as a timeout


def _names(meta_dir: Path, patterns: list[str], again: bool) -> list[str]:
    """The mutant names matching any pattern (a module name selects all of its mutants)."""
    globs = [p if "*" in p or ".x_" in p or ".xǁ" in p else p + ".*" for p in patterns]
    names = []
    for meta in sorted(meta_dir.glob("sleepcompact/**/*.py.meta")):
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            if any(fnmatch.fnmatchcase(name, g) for g in globs) and (again or code is None):
                names.append(name)
    return names


def _preload() -> None:
    """Import what every child would import: the mutated package, the test plugins, the servers."""
    import pytest  # noqa: F401  (the children call it)

    import sleepcompact

    for info in pkgutil.walk_packages(sleepcompact.__path__, "sleepcompact."):
        if info.name.endswith(".migrations.env"):
            continue  # Alembic's env script runs only under Alembic
        importlib.import_module(info.name)
    for name in ("sleepcompact.api", "tests.support.servers", "tests.support.fake_anthropic"):
        importlib.import_module(name)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _child(name: str, files: list[str]) -> None:
    import pytest

    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, signal.SIG_DFL)
    os.setsid()
    os.environ["MUTANT_UNDER_TEST"] = name
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        code = int(pytest.main(["-x", "-q", "-n", "0", "-p", "no:cacheprovider", *files]))
    except BaseException:
        code = 99
    os._exit(code)


def _clean_run(files: list[str]) -> bool:
    """Whether the named tests pass with no mutant active (the trampolines call the originals)."""
    pid = os.fork()
    if pid == 0:
        _child("", files)
    try:
        _, status = os.waitpid(pid, 0)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
        raise
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def _verdict(status: int, seconds: float) -> str:
    if os.WIFSIGNALED(status):
        return "timeout" if seconds >= LIMIT_SECONDS else "crashed"
    code = os.WEXITSTATUS(status)
    return {0: "survived", 1: "killed"}.get(code, f"error {code}")


def _run(names: list[str], files: list[str], jobs: int, verdicts: dict[str, str]) -> None:
    """Each mutant's verdict into ``verdicts``, ``jobs`` children at a time; one line printed per mutant."""
    running: dict[int, tuple[str, float]] = {}
    todo = list(names)
    try:
        while todo or running:
            while todo and len(running) < jobs:
                name = todo.pop(0)
                pid = os.fork()
                if pid == 0:
                    _child(name, files)
                running[pid] = (name, time.monotonic())
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                for child, (_, started) in running.items():
                    if time.monotonic() - started > LIMIT_SECONDS:
                        os.killpg(child, signal.SIGKILL)
                time.sleep(0.05)
                continue
            name, started = running.pop(pid)
            verdicts[name] = _verdict(status, time.monotonic() - started)
            print(f"{verdicts[name]:<9} {name}", flush=True)
    finally:  # a child still running when the parent stops is stopped too, unjudged
        for child in running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child, signal.SIGKILL)


def _record_kills(meta_dir: Path, verdicts: dict[str, str]) -> int:
    """Write each kill into mutmut's record of its module; a survivor is "not run" (with ``--again``,
    a kill recorded before is taken back: the tests that made it may have been wrong)."""
    recorded = 0
    for meta in sorted(meta_dir.glob("sleepcompact/**/*.py.meta")):
        record = json.loads(meta.read_text())
        codes = record["exit_code_by_key"]
        kills = [n for n in codes if verdicts.get(n) == "killed" and codes[n] != 1]
        for name in kills:
            codes[name] = 1
        taken_back = [n for n in codes if verdicts.get(n) == "survived" and codes[n] is not None]
        for name in taken_back:
            codes[name] = None
        if kills or taken_back:
            # Written whole and then renamed: a second runner reading the records at the same moment
            # (two modules run side by side) never sees a half-written file.
            partial = meta.with_suffix(".meta.partial")
            partial.write_text(json.dumps(record, indent=4))
            os.replace(partial, meta)
            recorded += len(kills)
    return recorded


def main() -> int:
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        sys.exit("usage: mutation_by_hand.py [--jobs N] [--again] MODULE|GLOB ... -- TEST_FILE ...")
    files = argv[argv.index("--") + 1 :]
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--again", action="store_true", help="also mutants that already have a result")
    parser.add_argument("patterns", nargs="+", help="modules or mutmut mutant-name globs")
    args = parser.parse_args(argv[: argv.index("--")])
    meta_dir = Path("mutants").resolve()
    names = _names(meta_dir, args.patterns, args.again)
    print(f"==> {len(names)} mutants against {len(files)} test files, {args.jobs} at a time", flush=True)
    os.chdir(meta_dir)
    sys.path.insert(0, str(meta_dir))
    os.environ.pop("MUTANT_UNDER_TEST", None)
    verdicts: dict[str, str] = {}
    # Before the import, which takes a while: started in the background, the process ignores SIGINT
    # until this handler is set, and a run stopped while importing went on (with stale tests) unseen.
    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, _interrupt)
    try:
        _preload()
        if not _clean_run(files):
            print(
                "==> the named tests fail with no mutant active: nothing run (are the mutants older than "
                "the source the tests expect? make them again: docs/mutation.md, 'By hand')",
                flush=True,
            )
            return 1
        _run(names, files, args.jobs, verdicts)
    except KeyboardInterrupt:  # stopped by hand (Ctrl-C): the kills so far are recorded all the same
        print("==> stopped", flush=True)
    counts = {v: sum(1 for x in verdicts.values() if x == v) for v in sorted(set(verdicts.values()))}
    print(f"==> {counts}; {_record_kills(meta_dir, verdicts)} kills written to mutants/**/*.py.meta")
    return 0


if __name__ == "__main__":
    sys.exit(main())
