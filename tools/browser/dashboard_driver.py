"""What the dashboard's browser checks share: headless Chromium through selenium, the daemon's RPC over HTTP, waiting,
and one line per check (ok: / FAIL:), with an exit status that says whether all passed."""
import json
import os
import sys
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message, flush=True)
    else:
        print("ok:", message, flush=True)
    return condition


def finish(name):
    print(f"{name}:", "passed" if not failures else f"{len(failures)} failed", flush=True)
    sys.exit(1 if failures else 0)


class Daemon:
    """The daemon's RPC over HTTP."""

    def __init__(self, base, secret):
        self.base, self.secret = base, secret

    def call(self, method, *params, timeout=10):
        body = json.dumps({"jsonrpc": "2.0", "id": "c", "method": method, "params": ["token:" + self.secret, *params]})
        request = urllib.request.Request(self.base + "/jsonrpc", data=body.encode(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            return json.loads(error.read())

    def result(self, method, *params):
        answer = self.call(method, *params)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def status(self, gid):
        answer = self.call("aria2.tellStatus", gid, ["status"])
        return answer.get("result", {}).get("status") or answer.get("error", {}).get("message")


def wait(predicate, timeout=15, interval=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return True
        except Exception:
            pass
        time.sleep(interval)
    return False


def browser(width=1200, height=900, performance_log=False):
    options = Options()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}"]:
        options.add_argument(argument)
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    logs = {"browser": "ALL"}
    if performance_log:
        logs["performance"] = "ALL"
    options.set_capability("goog:loggingPrefs", logs)
    return webdriver.Chrome(options=options, service=Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")))


def open_dashboard(driver, base, secret):
    driver.get(base + "/#secret=" + secret)
    return wait(lambda: driver.execute_script("return window.haul && window.haul.refreshes > 0"), timeout=20)


def row(driver, gid):
    found = driver.find_elements(By.CSS_SELECTOR, f'tr[data-gid="{gid}"]')
    return found[0] if found else None


def gids(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#rows tr[data-gid]')).map(r => r.dataset.gid);")


def attribute(driver, gid, name):
    """A row's attribute, read in the page in one step."""
    return driver.execute_script(
        "const r = document.querySelector('tr[data-gid=\"' + arguments[0] + '\"]');"
        " return r ? r.getAttribute(arguments[1]) : null;", gid, name)


def press(driver, gid, action):
    """Clicks a row's visible button, found and clicked in the page in one step; False if it is not there."""
    return driver.execute_script(
        "const b = document.querySelector('tr[data-gid=\"' + arguments[0] + '\"] [data-action=\"' + arguments[1] + '\"]');"
        " if (!b || b.hidden) return false; b.click(); return true;", gid, action)


def refreshes(driver):
    return driver.execute_script("return window.haul.refreshes")


def severe_console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
