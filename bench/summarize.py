#!/usr/bin/env python3
"""Summarises a compare CSV: per workload, case and tool, the median and min-max of each measure (Markdown)."""
import csv
import statistics
import sys
from collections import OrderedDict


def spread(values, fmt):
    if not values:
        return "-"
    med = statistics.median(values)
    if len(values) == 1:
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def main(path, date=None):
    rows = list(csv.DictReader(open(path)))
    if date:
        rows = [r for r in rows if r["date"].startswith(date)]
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["workload"], r["case"], r["tool"]), []).append(r)
    print("| workload | case | tool | runs | wall s | rate | CPU s | peak RSS MiB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for (workload, case, tool), rs in groups.items():
        unit = rs[0]["rate_unit"]
        corrupt = sum(1 for r in rs if r.get("verified") != "yes")
        # A corrupt run's numbers describe a wrong result: the measures are over the verified runs only.
        good = [r for r in rs if r.get("verified") == "yes"]
        def floats(key):
            return [float(r[key]) for r in good if r[key] not in ("", None)]
        rate_fmt = "{:.1f}" if unit == "MB/s" else "{:.0f}"
        if unit == "wasted_bytes":
            rate = spread([v / 1048576 for v in floats("rate")], "{:.2f}") + " MiB re-sent"
        else:
            rate = spread(floats("rate"), rate_fmt) + " " + unit
        rss = spread([v / 1024 for v in floats("peak_rss_kib")], "{:.1f}")
        tool_cell = f"{tool} ({corrupt} corrupt)" if corrupt else tool
        print(f"| {workload} | {case} | {tool_cell} | {len(rs)} | {spread(floats('wall_s'), '{:.2f}')} | {rate} | "
              f"{spread(floats('cpu_s'), '{:.2f}')} | {rss} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
