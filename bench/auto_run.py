"""One `haul get --json` run for bench/auto.sh: times each line of its NDJSON stream as it arrives and prints one
JSON object: wall seconds, the most connections it used (from `connections` events and `progress` lines), the
connection counts it chose in order, each second's speed, and the best speed over any one-second window.

usage: auto_run.py HAUL_ARGS...   (the whole command, `--json` included)
"""

import json
import subprocess
import sys
import time


def main() -> int:
    started = time.monotonic()
    process = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    samples = [(0.0, 0)]  # (seconds since start, bytes received)
    most = 0
    choices = []
    exit_code = None
    for line in process.stdout:
        now = time.monotonic() - started
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        kind = record.get("type")
        if kind == "progress":
            samples.append((now, record.get("receivedBytes", 0)))
            most = max(most, record.get("connections", 0))
        elif kind == "connections":
            choices.append(record.get("connections", 0))
            most = max(most, record.get("connections", 0))
        elif kind == "completed":
            samples.append((now, record.get("bytes", samples[-1][1])))
        elif kind == "summary":
            exit_code = record.get("exitCode")
    process.wait()
    wall = time.monotonic() - started
    # The best speed over any window of at least one second between two samples, and when it was first reached.
    windows = []
    for index, (end, received) in enumerate(samples):
        for start, earlier in reversed(samples[:index]):
            if end - start >= 1.0:
                windows.append((end, (received - earlier) / (end - start)))
                break
    print(json.dumps({
        "wall": round(wall, 3),
        "exit": process.returncode if exit_code is None else exit_code,
        "most_connections": most,
        "choices": choices,
        "windows": [(round(t, 2), round(s)) for t, s in windows],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
