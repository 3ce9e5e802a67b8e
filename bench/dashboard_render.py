#!/usr/bin/env python3
"""Time to first render of the dashboard in headless Chromium: from navigation start to the first page of rows on
screen (the page records it as window.haul.firstRender), RUNS times, fresh tab each time.

usage: dashboard_render.py URL_WITH_SECRET RUNS EXPECTED_DOWNLOADS
"""
import os
import statistics
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

url, runs, expected = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
options = Options()
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"]:
    options.add_argument(argument)
options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
driver = webdriver.Chrome(options=options, service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))
times = []
try:
    for _ in range(runs):
        driver.get("about:blank")
        driver.get(url)
        deadline = time.time() + 30
        value = None
        while time.time() < deadline:
            value = driver.execute_script("return window.haul && window.haul.firstRender")
            if value:
                break
            time.sleep(0.02)
        label = driver.execute_script("return document.getElementById('page-label').textContent")
        if not value or str(expected) not in label:
            sys.exit(f"no first render of {expected} downloads: {value} / {label}")
        times.append(value)
        # "Next page" asks the daemon for the page (haul.page): the time until its rows are on screen.
        times_next = driver.execute_async_script(
            "const done = arguments[arguments.length - 1], t = performance.now();"
            " document.getElementById('next-page').click();"
            " const poll = () => /^Page 2 /.test(document.getElementById('page-label').textContent)"
            "   ? done(performance.now() - t) : setTimeout(poll, 2);"
            " poll();")
finally:
    driver.quit()
times.sort()
print(f"first_render_ms median {statistics.median(times):.0f} max {times[-1]:.0f} runs {len(times)}")
print(f"next_page_ms {times_next:.1f}")
