#!/usr/bin/env python3
"""The dashboard with many downloads (10,000 in the test) in headless Chromium: the first page of rows on screen within
a second of navigation, what one refresh costs in bytes (the WebSocket frames the browser received, read from
Chrome's own network log, divided by the refreshes the page counted), and the page's JavaScript heap after garbage
collection staying flat while it refreshes for SOAK seconds (60 unless HAUL_DASHBOARD_SOAK_SECONDS says otherwise;
the issue's figure is 300). Prints the measured figures. Exit status 0 when every check passes.

usage: dashboard_scale.py BASE_URL SECRET EXPECTED_DOWNLOADS
"""
import json
import os
import statistics
import sys
import time

from selenium.webdriver.common.by import By

from dashboard_driver import browser, check, finish, refreshes, severe_console_errors, wait

BASE, SECRET, EXPECTED = sys.argv[1], sys.argv[2], int(sys.argv[3])
SOAK = int(os.environ.get("HAUL_DASHBOARD_SOAK_SECONDS", "60"))
driver = browser(performance_log=True)


def heap():
    driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
    return driver.execute_cdp_cmd("Runtime.getHeapUsage", {})["usedSize"]


def received_bytes():
    """Bytes of the WebSocket frames and HTTP bodies received since the last call (the log is drained by reading)."""
    total = 0
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.webSocketFrameReceived":
            total += len(message["params"]["response"]["payloadData"].encode())
        elif message["method"] == "Network.dataReceived":
            total += message["params"].get("encodedDataLength", 0)
    return total


try:
    times = []
    for _ in range(3):
        driver.get("about:blank")
        driver.get(BASE + "/#secret=" + SECRET)
        check(wait(lambda: driver.execute_script("return window.haul && window.haul.firstRender"), timeout=30),
              "the first page of rows is rendered")
        times.append(driver.execute_script("return window.haul.firstRender"))
        label = driver.find_element(By.ID, "page-label").text
        check(f"({EXPECTED} downloads)" in label, f"the page knows all {EXPECTED} downloads ({label!r})")
        check(len(driver.find_elements(By.CSS_SELECTOR, "#rows tr")) == 100, "it shows one page of 100 rows")
    median = statistics.median(times)
    print(f"first_render_ms median {median:.0f} max {max(times):.0f} of {len(times)} loads", flush=True)
    check(median < 1000, f"first render within a second ({median:.0f} ms)")

    # Bytes per refresh, once the socket carries the refreshes.
    check(wait(lambda: driver.execute_script("return window.haul.socketOpen")), "the socket is open")
    time.sleep(3)
    received_bytes()
    start = refreshes(driver)
    time.sleep(12)
    count = refreshes(driver) - start
    per_refresh = received_bytes() / max(count, 1)
    print(f"bytes_per_refresh {per_refresh:.0f} over {count} refreshes", flush=True)
    check(count >= 4, f"the page refreshes by itself ({count} in 12 s)")
    check(per_refresh < 100_000, f"a refresh costs less than 100 KB ({per_refresh:.0f} bytes)")

    # The heap stays flat.
    first = heap()
    samples = [first]
    deadline = time.time() + SOAK
    while time.time() < deadline:
        time.sleep(min(15, max(0, deadline - time.time())))
        samples.append(heap())
        received_bytes()
    growth = samples[-1] - first
    print(f"heap_bytes start {first} end {samples[-1]} max {max(samples)} growth {growth} over {SOAK} s", flush=True)
    check(growth < 1_000_000, f"the JS heap is flat over {SOAK} s (grew {growth} bytes)")
    errors = severe_console_errors(driver)
    check(not errors, f"no console errors ({errors})")
finally:
    driver.quit()

finish("dashboard scale checks")
