#!/usr/bin/env python3
"""The dashboard's hosts panel in headless Chromium: closed, it never asks for the hosts; opened before any download,
it says no host has been contacted yet; it is read at most once every 2 s; a host that answered 429 with a long
Retry-After shows marked as throttled, first, with its reason, the time of the throttle and the hold left, beside a
host that served, unmarked; host names and reasons go in as text, never as HTML; closed again, it stops asking.

usage: dashboard_hosts.py BASE_URL SECRET OPEN_URL THROTTLED_URL...
(OPEN_URL on a host that serves; the THROTTLED_URLs on 127.0.0.1, whose origin answers 429 with Retry-After.)
"""
import sys
import time
from datetime import datetime, timezone

from selenium.webdriver.common.by import By

from dashboard_driver import Daemon, browser, check, finish, open_dashboard, refreshes, severe_console_errors, wait

BASE, SECRET, OPEN_URL = sys.argv[1:4]
THROTTLED_URLS = sys.argv[4:]
daemon = Daemon(BASE, SECRET)
driver = browser()


def host_refreshes():
    return driver.execute_script("return window.haul.hostRefreshes")


def host_row(name):
    """The panel's row of a host, read in the page in one step: its marks and its cells' text."""
    return driver.execute_script(
        """
        const tr = Array.from(document.querySelectorAll('#host-rows tr'))
          .find(r => r.querySelector('th').textContent === arguments[0]);
        if (!tr) return null;
        const time = tr.querySelector('time');
        return { throttled: tr.dataset.throttled, held: tr.dataset.held, text: tr.innerText,
          badge: tr.querySelector('.badge').textContent, cells: Array.from(tr.cells).map(c => c.textContent),
          datetime: time.getAttribute('datetime'), time: time.textContent,
          index: Array.from(tr.parentNode.children).indexOf(tr) };
        """, name)


def toggle():
    driver.find_element(By.ID, "hosts-toggle").click()


try:
    check(open_dashboard(driver, BASE, SECRET), "the dashboard refreshes")
    # Closed (as it starts): the page refreshes, the hosts are never asked for.
    start = refreshes(driver)
    check(wait(lambda: refreshes(driver) >= start + 2, timeout=10), "the page keeps refreshing")
    check(host_refreshes() == 0, "while the panel is closed the hosts are not read")
    check(driver.find_element(By.ID, "hosts-toggle").get_attribute("aria-expanded") == "false",
          "the panel starts closed (aria-expanded false)")

    # Opened before any download: the empty state, no table.
    toggle()
    check(driver.find_element(By.ID, "hosts-toggle").get_attribute("aria-expanded") == "true",
          "the toggle says the panel is open")
    check(wait(lambda: host_refreshes() >= 1), "opened, the panel reads the hosts")
    empty = driver.find_element(By.ID, "hosts-empty")
    check(empty.is_displayed() and empty.text == "No host has been contacted yet.",
          f"before any download it says no host has been contacted yet ({empty.text!r})")
    check(not driver.find_element(By.ID, "hosts-table").is_displayed(), "and shows no table")

    # On the tick, at most once every 2 s.
    first, began = host_refreshes(), time.time()
    time.sleep(7)
    count, seconds = host_refreshes() - first, time.time() - began
    check(2 <= count <= seconds / 2 + 1,
          f"the hosts are read on the tick, at most once every 2 s ({count} in {seconds:.1f} s)")

    # A host that serves, then a host that answers 429 with a long Retry-After.
    gid = daemon.result("aria2.addUri", [OPEN_URL])
    check(wait(lambda: daemon.status(gid) == "complete", timeout=30), "the download from the open host completes")
    for url in THROTTLED_URLS:
        daemon.result("aria2.addUri", [url])
    check(wait(lambda: (host_row("127.0.0.1") or {}).get("held") == "true", timeout=20),
          "the host that answered 429 with Retry-After shows, held")
    throttled = host_row("127.0.0.1")
    print("  throttled row:", throttled["cells"], flush=True)
    check(throttled["throttled"] == "true" and throttled["badge"] == "Throttled",
          f"it is marked as throttled ({throttled['throttled']}, {throttled['badge']!r})")
    check("429 Too Many Requests" in throttled["cells"][6], f"with its reason ({throttled['cells'][6]!r})")
    thrown = datetime.fromisoformat(throttled["datetime"].replace("Z", "+00:00")) if throttled["datetime"] else None
    check(thrown is not None and abs((datetime.now(timezone.utc) - thrown).total_seconds()) < 120
          and throttled["time"] not in ("", "never"),
          f"and the time of the throttle ({throttled['datetime']}, {throttled['time']!r})")
    hold = throttled["cells"][5]
    check(hold.endswith(" s") and 0 < int(hold.split()[0]) <= 60, f"and the hold left ({hold!r})")
    check("held" in throttled["cells"][1], f"the state says it is held ({throttled['cells'][1]!r})")
    def announced():
        return driver.find_element(By.ID, "announce").get_attribute("textContent")
    check(wait(lambda: "Host throttled: 127.0.0.1 (429 Too Many Requests)" in announced(), timeout=3),
          f"the new throttle is announced to screen readers ({announced()!r})")
    served = host_row("localhost")
    check(served is not None and served["throttled"] == "false" and served["badge"] == "OK"
          and served["time"] == "never", f"the host that served shows unmarked, never throttled ({served})")
    check(served is not None and throttled["index"] < served["index"], "the throttled host comes first")

    # Text from servers is text: a host name and a reason with markup in them show as typed, create no element.
    driver.execute_script(
        "renderHosts([{host: '<img id=\"x-img\" src=\"data:,\">', requests: 1, requestLimit: 1, policyRate: null,"
        " backoffRate: 1, connectionCap: 1, heldFor: 5, lastThrottle: new Date().toISOString(),"
        " reason: '<b id=\"x-b\">429</b> & more', throttles: 1}]);")
    hostile = host_row('<img id="x-img" src="data:,">')
    check(hostile is not None and '<b id="x-b">429</b> & more' in hostile["cells"][6],
          "a host name and a reason with markup show as text")
    check(driver.execute_script("return !document.getElementById('x-img') && !document.getElementById('x-b');"),
          "and make no element")
    after = host_refreshes()
    check(wait(lambda: host_refreshes() > after and host_row("127.0.0.1") is not None, timeout=10),
          "the next reading puts the daemon's hosts back")

    # Narrow: the panel fits a 360 px screen.
    driver.set_window_size(360, 800)
    check(wait(lambda: driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth + 1")), "no sideways scrolling at 360 px")
    driver.set_window_size(1200, 900)

    # Closed again: no more readings.
    toggle()
    time.sleep(0.5)
    closed = host_refreshes()
    time.sleep(5)
    check(host_refreshes() == closed, "closed again, the panel stops reading the hosts")
    check(not driver.find_element(By.ID, "hosts-body").is_displayed(), "and hides its content")

    errors = severe_console_errors(driver)
    check(not errors, f"no console errors ({errors})")
finally:
    driver.quit()

finish("dashboard hosts panel checks")
