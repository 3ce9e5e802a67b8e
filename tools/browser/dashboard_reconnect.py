#!/usr/bin/env python3
"""The socket cut: the dashboard is open, the daemon is stopped (SIGTERM) and started again on the same port; the page
must say it lost the daemon, and come back by itself within 15 s of the restart (the socket open again, a download
added after the restart on screen) without a reload. Exit status 0 when every check passes.

usage: dashboard_reconnect.py BASE_URL SECRET DAEMON_PID ADD_URL RESTART_COMMAND...
"""
import os
import signal
import socket
import subprocess
import sys
import time

from dashboard_driver import Daemon, browser, check, finish, open_dashboard, row, wait

BASE, SECRET, PID, ADD_URL = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
RESTART = sys.argv[5:]
PORT = int(BASE.rsplit(":", 1)[1])
daemon = Daemon(BASE, SECRET)
driver = browser()
restarted = None


def listening():
    with socket.socket() as probe:
        probe.settimeout(0.5)
        return probe.connect_ex(("127.0.0.1", PORT)) == 0


try:
    check(open_dashboard(driver, BASE, SECRET), "the dashboard refreshes")
    check(wait(lambda: driver.execute_script("return window.haul.socketOpen")), "the socket is open")
    driver.execute_script("window.notReloaded = true;")

    os.kill(PID, signal.SIGTERM)
    check(wait(lambda: not listening(), timeout=30), "the daemon stopped")
    check(wait(lambda: not driver.execute_script("return window.haul.socketOpen")), "the page sees the socket close")
    check(wait(lambda: driver.execute_script("return window.haul.connection") != "live"),
          "the page says it is not live")
    time.sleep(2)

    started = time.time()
    restarted = subprocess.Popen(RESTART, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    check(wait(listening, timeout=15), "the daemon listens again")
    gid = None
    deadline = time.time() + 10
    while gid is None and time.time() < deadline:
        try:
            gid = daemon.result("aria2.addUri", [ADD_URL], {"pause": "true"})
        except Exception:
            time.sleep(0.1)
    check(gid is not None, "a download is added after the restart")
    recovered = wait(lambda: driver.execute_script("return window.haul.socketOpen") and row(driver, gid) is not None
                     and driver.execute_script("return window.haul.connection") == "live",
                     timeout=max(0.1, 15 - (time.time() - started)))
    seconds = time.time() - started
    print(f"recovered_seconds {seconds:.1f}", flush=True)
    check(recovered, f"the page recovers by itself within 15 s of the restart ({seconds:.1f} s)")
    check(driver.execute_script("return window.notReloaded === true"), "without a reload")
finally:
    driver.quit()
    if restarted:
        restarted.send_signal(signal.SIGTERM)
        try:
            restarted.wait(timeout=30)
        except subprocess.TimeoutExpired:
            restarted.kill()

finish("dashboard reconnect checks")
