#!/usr/bin/env python3
"""An accessibility scan of the dashboard with axe-core (axe-selenium-python bundles it): the list with the details
panel and the hosts panel open, in light and dark colours, at 1200 and 360 px, and the shortcut dialog; no serious or critical
violation. Also: every control is reachable with Tab, and no control is named by a GID. Exit status 0 when every check
passes.

usage: dashboard_axe.py BASE_URL SECRET DETAILS_GID
"""
import re
import sys

from axe_selenium_python import Axe
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys

from dashboard_driver import browser, check, finish, open_dashboard, press, row, wait

BASE, SECRET, GID = sys.argv[1:4]
driver = browser()


def scan(label):
    axe = Axe(driver)
    axe.inject()
    results = axe.run()
    bad = [v for v in results["violations"] if v.get("impact") in ("serious", "critical")]
    details = "; ".join(f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:4]}" for v in bad)
    check(not bad, f"axe finds no serious or critical violation: {label} ({details})")
    minor = [f"{v['id']} ({v['impact']})" for v in results["violations"] if v not in bad]
    if minor:
        print("  minor:", ", ".join(minor), flush=True)


try:
    check(open_dashboard(driver, BASE, SECRET), "the dashboard refreshes")
    check(wait(lambda: row(driver, GID) is not None), "the download has a row")
    check(wait(lambda: press(driver, GID, "details")), "its details open")
    wait(lambda: driver.find_element("id", "details-heading").text != "Details")
    # The hosts panel open, with the host the downloads came from, for every scan below.
    driver.execute_script("document.getElementById('hosts-toggle').click();")
    check(wait(lambda: driver.execute_script("return document.querySelectorAll('#host-rows tr').length") > 0),
          "the hosts panel opens with a row")
    scan("light, 1200 px, details and hosts open")
    check(driver.execute_script(
        "return getComputedStyle(document.getElementById('details')).transitionDuration;") != "0s",
        "without it, the panel fades in")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    scan("dark, 1200 px, details open")
    driver.set_window_size(360, 800)
    scan("dark, 360 px")
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "light"},
                                         {"name": "prefers-reduced-motion", "value": "reduce"}]})
    scan("light, 360 px, reduced motion")
    check(driver.execute_script(
        "return getComputedStyle(document.getElementById('details')).transitionDuration;") == "0s",
        "with reduced motion asked for, nothing moves (no transition)")
    driver.set_window_size(1200, 900)
    driver.execute_script("document.getElementById('help-button').click();")
    scan("the shortcut dialog")
    driver.execute_script("document.getElementById('help-dialog').close();")

    names = driver.execute_script(
        "return Array.from(document.querySelectorAll('button, input, select, textarea'))"
        ".filter(e => e.offsetParent !== null).map(e => e.getAttribute('aria-label') || e.textContent || e.id);")
    gid_named = [n for n in names if re.search(r"\b[0-9a-f]{16}\b", n or "")]
    check(not gid_named, f"no control is named by a GID ({gid_named[:3]})")

    # Every visible control is reached with Tab.
    driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    reached = set()
    for _ in range(400):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        key = driver.execute_script(
            "const e = document.activeElement; e.dataset.tabbed = '1';"
            " return e === document.body ? null : (e.id || (e.dataset.action || '') + ':' + (e.dataset.gid || ''));")
        if key:
            reached.add(key)
    missed = driver.execute_script(
        "return Array.from(document.querySelectorAll('button, input, select, textarea, a[href]'))"
        ".filter(e => e.offsetParent !== null && !e.disabled && !e.dataset.tabbed && !e.closest('dialog'))"
        ".map(e => e.id || e.dataset.action + ':' + (e.dataset.gid || ''));")
    check(not missed, f"every visible control is reachable with Tab ({len(reached)} reached; missed {missed[:5]})")
finally:
    driver.quit()

finish("dashboard accessibility checks")
