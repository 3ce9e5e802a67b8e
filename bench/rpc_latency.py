#!/usr/bin/env python3
"""Times aria2 JSON-RPC calls against `haul serve` over one keep-alive connection: median and p99 per method.

usage: rpc_latency.py PORT SECRET CALLS PID  (PID: the daemon, for its resident memory before and after)
Prints one line per method: "method median_ms p99_ms count", then "rss_kib before after".
"""
import http.client
import json
import statistics
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    port, secret, calls, pid = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    methods = {
        "tellActive": [],
        "tellWaiting(0,1000)": [0, 1000],
        "tellWaiting(0,1000,5 keys)": [0, 1000, ["gid", "status", "totalLength", "completedLength", "downloadSpeed"]],
        "tellWaiting(-1,10)": [-1, 10],
        "tellStopped(-1,1000)": [-1, 1000],
        "getGlobalStat": [],
    }
    before = rss_kib(pid)
    timings = {name: [] for name in methods}
    for _ in range(calls):
        for name, params in methods.items():
            method = "aria2." + name.split("(")[0]
            body = json.dumps({"jsonrpc": "2.0", "id": "b", "method": method, "params": ["token:" + secret] + params})
            start = time.perf_counter()
            connection.request("POST", "/jsonrpc", body, {"Content-Type": "application/json"})
            response = connection.getresponse()
            payload = response.read()
            timings[name].append((time.perf_counter() - start) * 1000)
            answer = json.loads(payload)
            if "error" in answer:
                sys.exit(f"{name}: {answer['error']}")
    after = rss_kib(pid)
    for name, values in timings.items():
        values.sort()
        p99 = values[min(len(values) - 1, int(len(values) * 0.99))]
        print(f"{name} {statistics.median(values):.2f} {p99:.2f} {len(values)}")
    print(f"rss_kib {before} {after}")


if __name__ == "__main__":
    main()
