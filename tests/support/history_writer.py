"""A second process that writes to a conversation while the test's process holds rendering caches.

Run as ``python -m tests.support.history_writer DATABASE_URL``; reads one JSON command per line on
stdin (``append``, ``compact``, ``pop``, ``restore``, ``clear``) and answers each with one JSON line.
"""

from __future__ import annotations

import json
import sys

from sleepcompact import Memory


def main() -> None:
    mem = Memory(database_url=sys.argv[1])
    try:
        for line in sys.stdin:
            cmd = json.loads(line)
            op, cid = cmd["op"], cmd["conversation_id"]
            result: object = None
            if op == "append":
                mem.append_many(cid, cmd["messages"])
            elif op == "compact":
                result = mem.compactions.compact(cid, force=True).compaction_id
            elif op == "pop":
                popped = mem.pop(cid)
                result = popped[0] if popped else None
            elif op == "restore":
                result = list(mem.compactions.restore(cmd["compaction_id"]))
            elif op == "clear":
                result = mem.clear(cid)
            print(json.dumps({"ok": True, "result": result}), flush=True)
    finally:
        mem.close()


if __name__ == "__main__":
    main()
