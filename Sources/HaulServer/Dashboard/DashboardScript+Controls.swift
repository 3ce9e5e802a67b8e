extension DashboardScript {
    /// What a person does: the row and bulk actions (retry as aria2's clients do it: `addUri` with the failed
    /// download's URIs and options, then `removeDownloadResult`), the queue moves (`changePosition`), adding, the
    /// keyboard shortcuts and their help dialog, signing in; and the start.
    static let controls = #"""
        // MARK: actions

        // Retries a failed download as AriaNg does: its URIs and options, added again (a new GID), then its result
        // removed. Resolves to the new GID.
        function retry(gid) {
          return multicall([["aria2.tellStatus", [gid, ["files"]]], ["aria2.getOption", [gid]]]).then(function (results) {
            if (results[0] instanceof Error) throw results[0];
            if (results[1] instanceof Error) throw results[1];
            const uris = [];
            results[0].files[0].uris.forEach(function (u) { if (uris.indexOf(u.uri) < 0) uris.push(u.uri); });
            return call("aria2.addUri", [uris, results[1]]).then(function (added) {
              return call("aria2.removeDownloadResult", [gid]).catch(function () {}).then(function () { return added; });
            });
          });
        }

        function nameOf(gid) {
          const row = state.rows.get(gid);
          return row && row.data ? row.data.name : gid;
        }

        function move(gid, how) {
          const params = { top: [0, "POS_SET"], up: [-1, "POS_CUR"], down: [1, "POS_CUR"], bottom: [0, "POS_END"] }[how];
          return call("aria2.changePosition", [gid].concat(params)).then(function (position) {
            announce(nameOf(gid) + " is now number " + (position + 1) + " in the queue");
            refresh();
          }, report);
        }

        function rowAction(action, gid) {
          const name = nameOf(gid);
          if (action === "pause") return call("aria2.pause", [gid]).then(function () { announce("Paused " + name); refresh(); }, report);
          if (action === "resume") return call("aria2.unpause", [gid]).then(function () { announce("Resumed " + name); refresh(); }, report);
          if (action === "retry") {
            const hadFocus = currentGid() === gid;
            return retry(gid).then(function (added) {
              state.selected.delete(gid);
              if (state.details === gid) state.details = added;
              if (hadFocus) state.focusGid = added;
              announce("Retrying " + name);
              refresh();
            }, report);
          }
          if (action === "up" || action === "down" || action === "top" || action === "bottom") return move(gid, action);
          if (action === "remove") return askRemove([gid]);
          if (action === "details") return state.details === gid ? closeDetails() : openDetails(gid, false);
        }

        // Runs one method over the selected downloads in one request; says how many it did.
        function bulk(method, verb, extra) {
          const gids = Array.from(state.selected);
          return multicall(gids.map(function (gid) { return [method, [gid].concat(extra || [])]; })).then(function (results) {
            const done = results.filter(function (r) { return !(r instanceof Error); }).length;
            announce(verb + " " + done + " of " + gids.length + " selected");
            refresh();
          }, report);
        }

        function bulkRetry() {
          const gids = Array.from(state.selected).filter(function (gid) {
            const row = state.rows.get(gid);
            return !row || !row.data || row.data.status === "error";
          });
          return Promise.all(gids.map(function (gid) { return retry(gid).then(function () { state.selected.delete(gid); return true; }, function () { return false; }); }))
            .then(function (results) {
              announce("Retrying " + results.filter(Boolean).length + " of " + gids.length);
              refresh();
            });
        }

        function askRemove(gids) {
          state.removing = gids;
          setText($("remove-question"), gids.length === 1 ? "Remove " + nameOf(gids[0]) + "?" : "Remove " + gids.length + " downloads?");
          $("remove-file").checked = false;
          ui.removeDialog.showModal();
        }

        function act(event) {
          const target = event.target.closest("[data-action]");
          if (!target || target.disabled) return;
          const action = target.dataset.action, gid = target.dataset.gid;
          if (target.closest("tr[data-gid]")) state.current = target.closest("tr[data-gid]").dataset.gid;
          if (action === "select") { toggleSelected(gid, target.checked); return; }
          if (gid) { rowAction(action, gid); markCurrent(); return; }
          if (target.closest("#details") && state.details) { rowAction(action, state.details); return; }
          if (action === "pause-all") call("aria2.pauseAll").then(refresh, report);
          else if (action === "resume-all") call("aria2.unpauseAll").then(refresh, report);
          else if (action === "bulk-pause") bulk("aria2.pause", "Paused");
          else if (action === "bulk-resume") bulk("aria2.unpause", "Resumed");
          else if (action === "bulk-retry") bulkRetry();
          else if (action === "bulk-remove") askRemove(Array.from(state.selected));
          else if (action === "bulk-clear") { state.selected.clear(); renderRows(state.lastPage ? state.lastPage.downloads : []); }
        }

        function add(event) {
          event.preventDefault();
          const lines = $("add-urls").value.split("\n").map(function (line) { return line.trim(); })
            .filter(function (line) { return line.length > 0; });
          const options = {};
          const connections = $("add-connections").value;
          if (connections) { options.split = connections; options["max-connection-per-server"] = connections; }
          if ($("add-checksum").value.trim()) options.checksum = $("add-checksum").value.trim();
          if ($("add-dir").value.trim()) options.dir = $("add-dir").value.trim();
          if ($("add-paused").checked) options.pause = "true";
          Promise.all(lines.map(function (line) { return call("aria2.addUri", [line.split(/\s+/), options]); }))
            .then(function () { $("add-urls").value = ""; announce("Added " + lines.length); refresh(); }, report);
        }

        // MARK: keyboard

        const SHORTCUTS = [
          ["?", "Show this list"], ["/", "Search"], ["n", "Add downloads"], ["j", "Next row"], ["k", "Previous row"],
          ["o", "Open or close the row's details"], ["x", "Select or unselect the row"], ["A", "Select every row on the page"],
          ["Esc", "Clear the selection, close the details"], ["p", "Pause or resume the row (or the selection)"],
          ["r", "Retry the failed row (or the selection)"], ["Delete", "Remove the row (or the selection)"],
          ["u", "Move the row up the queue"], ["d", "Move the row down the queue"], ["t", "Move the row to the top"],
          ["b", "Move the row to the bottom"], ["]", "Next page"], ["[", "Previous page"],
          ["h", "Open or close the hosts panel"],
        ];

        function keyboard(event) {
          if (event.ctrlKey || event.metaKey || event.altKey) return;
          const target = event.target;
          const typing = target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) &&
            !(target.type === "checkbox");
          if (typing) {
            if (event.key === "Escape" && target.id === "search" && target.value) { target.value = ""; queryChanged(); }
            return;
          }
          if (document.querySelector("dialog[open]")) return;
          const gid = currentGid();
          const row = gid ? state.rows.get(gid) : null;
          const gids = state.selected.size ? Array.from(state.selected) : (gid ? [gid] : []);
          let handled = true;
          switch (event.key) {
            case "?": ui.helpDialog.showModal(); break;
            case "/": ui.search.focus(); break;
            case "n": $("add-urls").focus(); break;
            case "j": case "k": {
              if (!state.order.length) break;
              const index = state.order.indexOf(gid);
              const next = event.key === "j" ? Math.min(index + 1, state.order.length - 1) : Math.max(index - 1, 0);
              focusRow(state.order[index < 0 ? 0 : next]);
              break;
            }
            case "o": if (gid) rowAction("details", gid); break;
            case "x": if (gid) toggleSelected(gid); break;
            case "A":
              state.order.forEach(function (g) { state.selected.add(g); });
              if (state.lastPage) renderRows(state.lastPage.downloads);
              break;
            case "Escape":
              if (state.selected.size) { state.selected.clear(); if (state.lastPage) renderRows(state.lastPage.downloads); }
              else if (state.details) closeDetails();
              break;
            case "p":
              if (state.selected.size) bulk(row && row.data && row.data.status === "paused" ? "aria2.unpause" : "aria2.pause", "Done");
              else if (row && row.data) rowAction(row.data.state === "paused" || row.data.state === "interrupted" ? "resume" : "pause", gid);
              break;
            case "r": if (state.selected.size) bulkRetry(); else if (gid) rowAction("retry", gid); break;
            case "Delete": if (gids.length) askRemove(gids); break;
            case "u": if (gid) move(gid, "up"); break;
            case "d": if (gid) move(gid, "down"); break;
            case "t": if (gid) move(gid, "top"); break;
            case "b": if (gid) move(gid, "bottom"); break;
            case "]": if (!ui.next.disabled) { state.page++; refresh(); } break;
            case "[": if (!ui.previous.disabled) { state.page = Math.max(0, state.page - 1); refresh(); } break;
            case "h": toggleHosts(); ui.hostsToggle.focus(); break;
            default: handled = false;
          }
          if (handled) event.preventDefault();
        }

        function fillShortcuts() {
          const body = $("shortcut-rows");
          SHORTCUTS.forEach(function (entry) {
            const tr = document.createElement("tr");
            const key = document.createElement("td");
            const kbd = document.createElement("kbd");
            kbd.textContent = entry[0];
            key.appendChild(kbd);
            const what = document.createElement("td");
            what.textContent = entry[1];
            tr.append(key, what);
            body.appendChild(tr);
          });
        }

        // MARK: start

        let searchTimer = null;
        function queryChanged() {
          state.page = 0;
          clearTimeout(searchTimer);
          searchTimer = setTimeout(refresh, 150);
        }

        function askForSecret(message) {
          state.secret = null;
          sessionStorage.removeItem("haul.secret");
          state.rows.forEach(function (row) { row.tr.remove(); });
          state.rows.clear();
          state.order = [];
          state.hostRows.forEach(function (row) { row.tr.remove(); });
          state.hostRows.clear();
          state.hostsAsked = null;
          state.hostsRendered = false;
          ui.app.hidden = true;
          ui.login.hidden = false;
          setConnectionText(message || "Enter the secret to connect.");
          if (state.socket) { const socket = state.socket; state.socket = null; socket.close(); }
        }

        // Moves a secret given in the address (`#secret=…`, never sent to the server) into the tab's storage.
        function takeSecretFromAddress() {
          const match = /(?:^#|&)secret=([^&]*)/.exec(location.hash);
          if (!match) return false;
          sessionStorage.setItem("haul.secret", decodeURIComponent(match[1]));
          history.replaceState(null, "", location.pathname);
          return true;
        }

        function start(given) {
          state.secret = given;
          sessionStorage.setItem("haul.secret", given);
          ui.login.hidden = true;
          ui.app.hidden = false;
          setConnection("connecting");
          refresh();
          if (!state.socket) connect();
        }

        document.addEventListener("DOMContentLoaded", function () {
          ["rows", "filter", "search", "sort", "descending", "totals", "connection", "empty", "bulk", "details", "announce"]
            .forEach(function (id) { ui[id] = $(id); });
          ui.chart = $("speed-chart"); ui.speedNow = $("speed-now"); ui.disk = $("disk"); ui.pageLabel = $("page-label");
          ui.app = $("app"); ui.login = $("login"); ui.removeDialog = $("remove-dialog"); ui.helpDialog = $("help-dialog");
          ui.previous = $("previous-page"); ui.next = $("next-page"); ui.selectPage = $("select-page");
          ui.selectionCount = $("selection-count"); ui.listHeading = $("list-heading");
          ui.detailsHeading = $("details-heading"); ui.detailsGone = $("details-gone"); ui.detailsBody = $("details-body");
          ui.detailsSpark = $("d-spark"); ui.detailsSparkCaption = $("d-spark-caption");
          ui.d = { state: $("d-state"), progress: $("d-progress"), speed: $("d-speed"), eta: $("d-eta"),
            connections: $("d-connections"), file: $("d-file"), added: $("d-added"), finished: $("d-finished"),
            sources: $("d-sources"), errorSection: $("d-error-section"), error: $("d-error"), suggestion: $("d-suggestion"),
            digest: $("d-digest"), history: $("d-history"), limit: $("d-limit"), limitForm: $("d-limit-form"),
            connectionsInput: $("d-connections-input"), connectionsForm: $("d-connections-form"),
            positionRow: $("d-position-row"), position: $("d-position"), options: $("d-options"),
            moreSection: $("d-more-section"), more: $("d-more") };
          ui.hostsToggle = $("hosts-toggle"); ui.hostsBody = $("hosts-body"); ui.hostsTable = $("hosts-table");
          ui.hostRows = $("host-rows"); ui.hostsEmpty = $("hosts-empty"); ui.hostsStatus = $("hosts-status");
          ui.hostsMore = $("hosts-more");
          fillShortcuts();
          takeSecretFromAddress();
          window.addEventListener("hashchange", function () { if (takeSecretFromAddress()) start(sessionStorage.getItem("haul.secret")); });
          document.body.addEventListener("click", act);
          document.addEventListener("keydown", keyboard);
          document.addEventListener("focusin", function (event) {
            const tr = event.target.closest && event.target.closest("tr[data-gid]");
            if (tr && tr.dataset.gid !== state.current) { state.current = tr.dataset.gid; markCurrent(); }
          });
          $("add-form").addEventListener("submit", add);
          $("login-form").addEventListener("submit", function (event) { event.preventDefault(); start($("secret-input").value); });
          $("limit-form").addEventListener("submit", function (event) {
            event.preventDefault();
            call("aria2.changeGlobalOption", [{ "max-overall-download-limit": $("limit").value.trim() || "0" }])
              .then(function () { announce("Changed the total speed limit"); refresh(); }, report);
          });
          $("d-limit-form").addEventListener("submit", function (event) {
            event.preventDefault();
            setDetailsOption("max-download-limit", ui.d.limit.value.trim() || "0");
          });
          $("d-connections-form").addEventListener("submit", function (event) {
            event.preventDefault();
            setDetailsOption("split", ui.d.connectionsInput.value.trim());
          });
          $("details-close").addEventListener("click", closeDetails);
          ui.hostsToggle.addEventListener("click", function () { toggleHosts(); });
          let hostsWereOpen = false;
          try { hostsWereOpen = localStorage.getItem("haul.hostsOpen") === "true"; } catch (e) {}
          if (hostsWereOpen) toggleHosts(true);
          $("help-button").addEventListener("click", function () { ui.helpDialog.showModal(); });
          ui.search.addEventListener("input", queryChanged);
          [ui.filter, ui.sort, ui.descending].forEach(function (n) { n.addEventListener("change", queryChanged); });
          ui.selectPage.addEventListener("change", function () {
            state.order.forEach(function (gid) { if (ui.selectPage.checked) state.selected.add(gid); else state.selected.delete(gid); });
            renderRows(state.lastPage ? state.lastPage.downloads : []);
          });
          ui.previous.addEventListener("click", function () { state.page = Math.max(0, state.page - 1); refresh(); });
          ui.next.addEventListener("click", function () { state.page++; refresh(); });
          ui.removeDialog.addEventListener("close", function () {
            const gids = state.removing;
            state.removing = [];
            if (ui.removeDialog.returnValue !== "remove" || !gids.length) return;
            const deleteFile = $("remove-file").checked;
            multicall(gids.map(function (gid) { return ["haul.remove", [gid, deleteFile]]; })).then(function (results) {
              gids.forEach(function (gid) { state.selected.delete(gid); if (state.details === gid) closeDetails(); });
              announce("Removed " + results.filter(function (r) { return !(r instanceof Error); }).length + " of " + gids.length);
              refresh();
            }, report);
          });
          window.addEventListener("resize", function () { if (state.lastPage) drawSpeedChart(state.lastPage.speedHistory || []); });
          const stored = sessionStorage.getItem("haul.secret");
          if (stored) start(stored); else askForSecret();
        });
        """#
}
