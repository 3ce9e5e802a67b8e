#!/usr/bin/env python3
"""The dashboard's queue work in headless Chromium, checked as a person would use it and over RPC: focus kept on a
button across ten refreshes (and its name from the file); the details panel of a mirrored, verified download; retry
of a failed download (a new GID, as aria2's clients do it); reordering the queue by button and by shortcut; a bulk
pause of three selected rows; search by name and by URL; binary units. Exit status 0 when every check passes.
Environment: HAUL_SCREENSHOT=path.png saves the README's screenshot (the details of the mirrored download open).

usage: dashboard_queue.py BASE_URL SECRET SCENARIO_JSON
SCENARIO_JSON: {"running", "mirrored", "mirror", "sha256", "failed", "failedURL", "waiting": [3], "bulk": [3]}
"""
import json
import os
import sys
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from dashboard_driver import (Daemon, attribute, browser, check, finish, gids, open_dashboard, press, refreshes,
                              row, severe_console_errors, wait)

BASE, SECRET = sys.argv[1:3]
scenario = json.loads(sys.argv[3])
daemon = Daemon(BASE, SECRET)
driver = browser()


def waiting_order():
    return [entry["gid"] for entry in daemon.result("aria2.tellWaiting", 0, 100, ["gid"])]


def name_of(gid):
    return driver.execute_script(
        "const r = document.querySelector('tr[data-gid=\"' + arguments[0] + '\"] button.link');"
        " return r ? r.textContent : null;", gid)


try:
    check(open_dashboard(driver, BASE, SECRET), "the dashboard refreshes")
    check(wait(lambda: row(driver, scenario["running"]) is not None), "the running download has a row")

    # Focus on a row's button survives ten refreshes: the row is updated, not rebuilt.
    pause = driver.find_element(By.CSS_SELECTOR, f'tr[data-gid="{scenario["running"]}"] button[data-action="pause"]')
    running_name = name_of(scenario["running"]) or "running.bin"
    check(pause.accessible_name == "Pause " + running_name,
          f"the pause button is named after the file ({pause.accessible_name!r})")
    driver.execute_script("arguments[0].focus();", pause)
    start = refreshes(driver)
    def focused():
        try:
            return driver.execute_script("return document.activeElement === arguments[0];", pause)
        except Exception:
            return False  # the button is gone: its row was rebuilt
    kept = True
    while refreshes(driver) < start + 10:
        if not focused():
            kept = False
            break
        time.sleep(0.1)
    check(kept and focused(), f"focus stays on the pause button across ten refreshes ({refreshes(driver) - start} refreshes)")
    text = driver.find_element(By.ID, "rows").text + driver.find_element(By.ID, "totals").text
    check(" MiB" in text and " MB" not in text and " KB" not in text, "sizes are in binary units, as the CLI")
    check("% ·" in driver.find_element(By.CSS_SELECTOR, f'tr[data-gid="{scenario["running"]}"] .done').text,
          "the running row shows its percentage and bytes done of the total")

    def name_width():
        return driver.execute_script("return document.querySelector('#rows td.name').getBoundingClientRect().width;")
    check(name_width() >= 200, f"names have room at 1200 px ({name_width():.0f} px)")

    # The details panel of a mirrored, verified download.
    check(press(driver, scenario["mirrored"], "details"), "a row's name opens its details")
    check(wait(lambda: driver.find_element(By.ID, "details").is_displayed()
               and driver.find_element(By.ID, "details-heading").text == name_of(scenario["mirrored"])),
          "the details panel shows the download")
    details = driver.find_element(By.ID, "details")
    check(name_width() >= 140, f"names keep room beside the details ({name_width():.0f} px)")
    check(wait(lambda: len(driver.find_elements(By.CSS_SELECTOR, "#d-sources tr")) == 2),
          "the details list both sources")
    sources = [tr.text for tr in driver.find_elements(By.CSS_SELECTOR, "#d-sources tr")]
    check(any(scenario["mirror"] in s and "mirror" in s for s in sources), f"the mirror is listed as one ({sources})")
    check(any("download URL" in s for s in sources), "the download's own URL is listed")
    digest = driver.find_element(By.ID, "d-digest").text
    check(scenario["sha256"] in digest, "the digest is shown")
    check("Verified by" in digest and "sha" in digest.lower(), f"what verified it is said ({digest!r})")
    check(driver.find_element(By.ID, "d-file").text.endswith("/" + name_of(scenario["mirrored"])),
          "the file's path is shown")
    check("completed" in driver.find_element(By.ID, "d-history").text, "the history says it completed")
    check("Checksum" in driver.find_element(By.ID, "d-options").text, "the options show the checksum given")
    if os.environ.get("HAUL_SCREENSHOT"):
        # The README's picture: the list with the details of the mirrored download open.
        driver.set_window_size(1440, 1100)
        driver.execute_script("window.scrollTo(0, 0);")
        time.sleep(3)
        driver.save_screenshot(os.environ["HAUL_SCREENSHOT"])
        driver.set_window_size(1200, 900)
    driver.find_element(By.ID, "details-close").click()
    check(wait(lambda: not details.is_displayed()), "the details close")

    # Retry a failed download, as aria2's clients do: a new download, a new GID, the failed result gone.
    failed = scenario["failed"]
    check(wait(lambda: attribute(driver, failed, "data-status") == "error"), "the failed download's row says so")
    check(press(driver, failed, "retry"), "the failed row has a retry button")
    check(wait(lambda: daemon.status(failed) != "error"), "the failed result is removed after the retry")

    def retried():
        for method, params in (("aria2.tellActive", []), ("aria2.tellWaiting", [0, 100]), ("aria2.tellStopped", [0, 100])):
            for entry in daemon.result(method, *params, ["gid", "status", "files"]):
                uris = [u["uri"] for f in entry.get("files", []) for u in f.get("uris", [])]
                if scenario["failedURL"] in uris and entry["gid"] != failed:
                    return entry
        return None
    check(wait(lambda: retried() is not None), "the retry started a download with a new GID")
    check(wait(lambda: retried()["status"] == "complete", timeout=30), "the retried download completes")
    check(wait(lambda: row(driver, retried()["gid"]) is not None and row(driver, failed) is None),
          "the page shows the new download in place of the failed one")

    # Reorder the waiting queue: a button, then a shortcut.
    first, second, third = scenario["waiting"]
    check(waiting_order()[-3:] == [first, second, third], "three downloads wait in order")
    check(wait(lambda: press(driver, third, "up")), "a waiting row has a move-up button")
    check(wait(lambda: waiting_order()[-3:] == [first, third, second]), "move up moves it up the queue")
    check(wait(lambda: gids(driver).index(third) < gids(driver).index(second)), "the page shows the new order")
    driver.execute_script(
        "document.querySelector('tr[data-gid=\"' + arguments[0] + '\"] button.link').focus();", second)
    driver.switch_to.active_element.send_keys("t")
    check(wait(lambda: waiting_order()[0] == second), "the t shortcut moves the focused row to the top")
    check(wait(lambda: driver.execute_script(
        "return document.activeElement.closest('tr') && document.activeElement.closest('tr').dataset.gid;") == second),
        "the moved row keeps the focus")

    # Bulk pause of three selected rows.
    for gid in scenario["bulk"]:
        check(wait(lambda: row(driver, gid) is not None), f"row {gid} is shown")
        row(driver, gid).find_element(By.CSS_SELECTOR, 'input[data-action="select"]').click()
    check(wait(lambda: "3 selected" in driver.find_element(By.ID, "selection-count").text), "three rows are selected")
    driver.find_element(By.CSS_SELECTOR, 'button[data-action="bulk-pause"]').click()
    check(wait(lambda: all(daemon.status(g) == "paused" for g in scenario["bulk"])), "pause selected pauses all three")
    check(wait(lambda: all(attribute(driver, g, "data-status") == "paused" for g in scenario["bulk"])),
          "their rows say paused")
    check(all(daemon.status(g) != "paused" for g in [scenario["running"]]), "an unselected download runs on")

    # Search by name, then by URL.
    search = driver.find_element(By.ID, "search")
    search.send_keys(name_of(scenario["mirrored"]))
    check(wait(lambda: gids(driver) == [scenario["mirrored"]]), "a search by name shows only that download")
    search.clear()
    search.send_keys(scenario["failedURL"].split("//")[1])
    check(wait(lambda: gids(driver) == [retried()["gid"]]), "a search by URL finds it")
    search.clear()
    search.send_keys("no such download anywhere")
    check(wait(lambda: gids(driver) == [] and driver.find_element(By.ID, "empty").is_displayed()),
          "a search that matches nothing says so")
    search.clear()
    driver.execute_script("document.getElementById('search').dispatchEvent(new Event('input'));")
    check(wait(lambda: len(gids(driver)) >= 8), "clearing the search shows every download again")

    # The shortcut list.
    driver.execute_script("document.getElementById('list-heading').focus();")
    ActionChains(driver).send_keys("?").perform()
    check(wait(lambda: driver.find_element(By.ID, "help-dialog").get_attribute("open") is not None),
          "? opens the shortcut list")
    check(len(driver.find_elements(By.CSS_SELECTOR, "#shortcut-rows tr")) >= 15, "the list names the shortcuts")
    driver.find_element(By.ID, "help-close").click()

    errors = severe_console_errors(driver)
    check(not errors, f"no console errors ({errors})")
finally:
    driver.quit()

finish("dashboard queue checks")
