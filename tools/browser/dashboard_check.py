#!/usr/bin/env python3
"""Drives `haul serve`'s dashboard in headless Chromium (selenium, Debian's chromium and chromium-driver) and checks
what a person would: no rows without the secret; rows for running and finished downloads; the running row moving
without a reload; pause, resume and remove from the page taking effect (checked over RPC); URLs added from the page
queued; no console errors. Exit status 0 when every check passes; each failure is printed.

usage: dashboard_check.py BASE_URL SECRET RUNNING_GID FINISHED_GID ADD_URL_1 ADD_URL_2
The README's screenshot comes from dashboard_queue.py (HAUL_SCREENSHOT).
"""
import json
import os
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from dashboard_driver import attribute, check, finish, press, row

BASE, SECRET, RUNNING, FINISHED, ADD_1, ADD_2 = sys.argv[1:7]
def rpc(method, *params):
    body = json.dumps({"jsonrpc": "2.0", "id": "c", "method": method, "params": ["token:" + SECRET, *params]})
    request = urllib.request.Request(BASE + "/jsonrpc", data=body.encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        return json.loads(error.read())


def status(gid):
    answer = rpc("aria2.tellStatus", gid, ["status"])
    return answer.get("result", {}).get("status") or answer.get("error", {}).get("message")


def wait(predicate, timeout=15):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(0.1)
    return False


def rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "tr[data-gid]")


options = Options()
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1200,900"]:
    options.add_argument(argument)
options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
driver = webdriver.Chrome(options=options, service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))
try:
    # No secret: the page asks for it and shows nothing.
    driver.get(BASE + "/")
    time.sleep(1)
    check(len(rows(driver)) == 0, "without the secret no download is shown")
    check(driver.find_element(By.ID, "login").is_displayed(), "without the secret the page asks for it")

    # With the secret from the fragment: rows for the running and the finished download.
    driver.get(BASE + "/#secret=" + SECRET)
    check(wait(lambda: row(driver, RUNNING) and row(driver, FINISHED)), "rows for a running and a finished download")
    check("#secret" not in driver.current_url, "the secret leaves the address bar")
    check(wait(lambda: attribute(driver, FINISHED, "data-status") == "complete"), "the finished row says complete")
    check(wait(lambda: attribute(driver, RUNNING, "data-status") == "active"), "the running row says active")

    # The running row moves without a reload.
    def progress_value():
        return float(driver.execute_script(
            "return document.querySelector('tr[data-gid=\"' + arguments[0] + '\"] progress').value;", RUNNING))
    first = progress_value()
    check(wait(lambda: progress_value() > first), "the running row updates without a reload")

    # Pause and resume from the page, checked over RPC.
    check(wait(lambda: press(driver, RUNNING, "pause")), "the running row has a pause button")
    check(wait(lambda: status(RUNNING) == "paused"), "pause from the page pauses the download")
    check(wait(lambda: attribute(driver, RUNNING, "data-status") == "paused"), "the row shows it paused")
    check(wait(lambda: press(driver, RUNNING, "resume")), "the paused row has a resume button")
    check(wait(lambda: status(RUNNING) in ("active", "waiting")), "resume from the page resumes it")

    # Remove from the page (with the confirmation dialog).
    check(wait(lambda: attribute(driver, RUNNING, "data-status") in ("active", "waiting")), "the row resumed")
    check(wait(lambda: press(driver, RUNNING, "remove")), "the row has a remove button")
    check(wait(lambda: driver.find_element(By.ID, "remove-dialog").get_attribute("open") is not None),
          "removing asks for confirmation")
    driver.find_element(By.ID, "remove-confirm").click()
    check(wait(lambda: status(RUNNING) in ("removed", f"GID {RUNNING} is not found")), "remove from the page removes it")

    # Add two URLs from the page.
    field = driver.find_element(By.CSS_SELECTOR, '[data-test="add-url"]')
    field.send_keys(ADD_1 + "\n" + ADD_2)
    driver.find_element(By.CSS_SELECTOR, 'button[data-action="add"]').click()

    def added_uris():
        uris = set()
        for method, params in (("aria2.tellActive", []), ("aria2.tellWaiting", [0, 100]), ("aria2.tellStopped", [0, 100])):
            for entry in rpc(method, *params, ["files"]).get("result", []):
                for file in entry.get("files", []):
                    uris.update(uri["uri"] for uri in file.get("uris", []))
        return uris
    check(wait(lambda: {ADD_1, ADD_2} <= added_uris()), "URLs added from the page are queued")
    check(wait(lambda: len(rows(driver)) >= 3), "the added downloads appear in the list")

    # Readable on a phone: nothing wider than a 360 px screen.
    driver.set_window_size(360, 800)
    check(wait(lambda: driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth + 1")), "no sideways scrolling at 360 px")

    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    check(not errors, f"no console errors ({errors})")
finally:
    driver.quit()

finish("dashboard checks")
