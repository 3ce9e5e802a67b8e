extension DashboardScript {
    /// The list: one row per download, made once and then updated in place (text and attributes only change when
    /// they differ); rows are moved, never rebuilt, so the focused control and the selection stay.
    static let rows = #"""
        // MARK: rows

        const ROW_BUTTONS = [
          ["pause", "Pause"], ["resume", "Resume"], ["retry", "Retry"], ["up", "Move up"], ["down", "Move down"],
          ["remove", "Remove"],
        ];

        function makeRow(gid) {
          const row = { gid: gid, data: null, buttons: {} };
          const tr = document.createElement("tr");
          tr.dataset.gid = gid;
          row.tr = tr;
          const selectCell = document.createElement("td");
          selectCell.className = "select";
          row.select = document.createElement("input");
          row.select.type = "checkbox";
          row.select.dataset.action = "select";
          row.select.dataset.gid = gid;
          selectCell.appendChild(row.select);
          const nameCell = document.createElement("td");
          nameCell.className = "name";
          row.name = document.createElement("button");
          row.name.type = "button";
          row.name.className = "link";
          row.name.dataset.action = "details";
          row.name.dataset.gid = gid;
          row.reason = document.createElement("div");
          row.reason.className = "reason";
          nameCell.append(row.name, row.reason);
          const progressCell = document.createElement("td");
          progressCell.className = "progress";
          row.bar = document.createElement("progress");
          row.done = document.createElement("div");
          row.done.className = "done";
          // The speed and time left, under the bar when the list is too narrow for their columns.
          row.rate = document.createElement("div");
          row.rate.className = "narrow";
          progressCell.append(row.bar, row.done, row.rate);
          row.speed = document.createElement("td");
          row.speed.className = "wide num";
          row.eta = document.createElement("td");
          row.eta.className = "wide num";
          row.connections = document.createElement("td");
          row.connections.className = "wide num";
          const actions = document.createElement("td");
          actions.className = "actions";
          ROW_BUTTONS.forEach(function (entry) {
            const b = document.createElement("button");
            b.type = "button";
            b.dataset.action = entry[0];
            b.dataset.gid = gid;
            b.textContent = entry[1];
            b.hidden = true;
            row.buttons[entry[0]] = b;
            actions.appendChild(b);
          });
          tr.append(selectCell, nameCell, progressCell, row.speed, row.eta, row.connections, actions);
          return row;
        }

        // "42% · 12.3 MiB of 100.0 MiB"
        function progressText(d) {
          const total = Number(d.totalLength), done = Number(d.completedLength);
          if (total > 0) return Math.floor(done / total * 100) + "% · " + bytes(done) + " of " + bytes(total);
          return done > 0 ? bytes(done) : (d.status === "complete" ? "100%" : "size not known yet");
        }

        function stateLine(d) { return d.reason ? d.state + " · " + d.reason : d.state; }

        function updateRow(row, d) {
          row.data = d;
          const name = d.name;
          setAttribute(row.tr, "data-status", d.status);
          setAttribute(row.tr, "data-state", d.state);
          const selected = state.selected.has(d.gid);
          setAttribute(row.tr, "data-selected", selected ? "true" : "false");
          if (row.select.checked !== selected) row.select.checked = selected;
          setAttribute(row.select, "aria-label", "Select " + name);
          setText(row.name, name);
          setAttribute(row.name, "title", d.url);
          setAttribute(row.name, "aria-expanded", state.details === d.gid ? "true" : "false");
          setAttribute(row.name, "aria-controls", "details");
          setText(row.reason, stateLine(d));
          const total = Number(d.totalLength), done = Number(d.completedLength);
          if (total > 0) {
            if (row.bar.max !== total) row.bar.max = total;
            if (row.bar.value !== Math.min(done, total)) row.bar.value = Math.min(done, total);
          } else if (d.status === "complete") {
            row.bar.max = 1; row.bar.value = 1;
          } else if (d.status === "active") {
            if (row.bar.hasAttribute("value")) row.bar.removeAttribute("value");
          } else if (!row.bar.hasAttribute("value") || row.bar.value !== 0) {
            // Without a value a progress bar moves as if busy: a paused or failed download is not.
            row.bar.value = 0;
          }
          setAttribute(row.bar, "aria-label", "Progress of " + name);
          setText(row.done, progressText(d));
          const active = d.status === "active";
          const speed = Number(d.downloadSpeed);
          setText(row.speed, active ? rate(speed) : "");
          setText(row.eta, active && d.eta !== undefined ? duration(Number(d.eta)) : "");
          setText(row.connections, active ? d.connections : "");
          setText(row.rate, active ? rate(speed) + (d.eta !== undefined ? " · " + duration(Number(d.eta)) + " left" : "") : "");
          const waiting = d.position !== undefined;
          const failed = d.status === "error" && d.state === "failed" && !/^retried as/.test(d.reason);
          const visible = {
            pause: d.state === "running" || d.state === "queued",
            resume: d.state === "paused" || d.state === "interrupted",
            retry: failed, up: waiting && d.position > 0, down: waiting, remove: true,
          };
          const labels = { pause: "Pause ", resume: "Resume ", retry: "Retry ", remove: "Remove " };
          ROW_BUTTONS.forEach(function (entry) {
            const b = row.buttons[entry[0]];
            if (entry[0] === "up") setAttribute(b, "aria-label", "Move " + name + " up");
            else if (entry[0] === "down") setAttribute(b, "aria-label", "Move " + name + " down");
            else setAttribute(b, "aria-label", labels[entry[0]] + name);
            show(b, visible[entry[0]]);
          });
        }

        function renderRows(list) {
          const focused = document.activeElement;
          const focusedRow = focused && focused.closest ? focused.closest("tr[data-gid]") : null;
          const focusedIndex = focusedRow ? state.order.indexOf(focusedRow.dataset.gid) : -1;
          const seen = new Set();
          const wanted = list.map(function (d) {
            let row = state.rows.get(d.gid);
            if (!row) { row = makeRow(d.gid); state.rows.set(d.gid, row); }
            updateRow(row, d);
            seen.add(d.gid);
            return row.tr;
          });
          state.rows.forEach(function (row, gid) {
            if (!seen.has(gid)) { row.tr.remove(); state.rows.delete(gid); }
          });
          let cursor = ui.rows.firstElementChild;
          wanted.forEach(function (tr) {
            if (tr === cursor) cursor = cursor.nextElementSibling; else ui.rows.insertBefore(tr, cursor);
          });
          state.order = list.map(function (d) { return d.gid; });
          show(ui.empty, list.length === 0);
          // A moved row lost the focus on the way: it gets it back. A row that left the page hands it to its
          // neighbour.
          if (state.focusGid && state.rows.has(state.focusGid)) {
            focusRow(state.focusGid);
            state.focusGid = null;
          } else if (focused && focused !== document.activeElement) {
            if (focused.isConnected) {
              focused.focus({ preventScroll: true });
            } else if (focusedIndex >= 0) {
              const next = state.order[Math.min(focusedIndex, state.order.length - 1)];
              if (next) focusRow(next); else ui.listHeading.focus();
            }
          }
          markCurrent();
          renderSelection();
        }

        // Focuses the first control of a row that can take it.
        function focusRow(gid) {
          const row = state.rows.get(gid);
          if (!row) return;
          row.name.focus();
          state.current = gid;
          markCurrent();
        }

        function markCurrent() {
          state.rows.forEach(function (row, gid) {
            const current = gid === state.current;
            if (row.tr.classList.contains("current") !== current) row.tr.classList.toggle("current", current);
          });
        }

        function currentGid() {
          const focused = document.activeElement;
          const tr = focused && focused.closest ? focused.closest("tr[data-gid]") : null;
          if (tr) return tr.dataset.gid;
          return state.rows.has(state.current) ? state.current : null;
        }

        function renderSelection() {
          const count = state.selected.size;
          setText(ui.selectionCount, count === 0 ? "No download selected" : count + " selected");
          ui.bulk.querySelectorAll("button").forEach(function (b) { b.disabled = count === 0; });
          const onPage = state.order.length > 0 && state.order.every(function (gid) { return state.selected.has(gid); });
          if (ui.selectPage.checked !== onPage) ui.selectPage.checked = onPage;
        }

        function toggleSelected(gid, selected) {
          if (selected === undefined) selected = !state.selected.has(gid);
          if (selected) state.selected.add(gid); else state.selected.delete(gid);
          const row = state.rows.get(gid);
          if (row && row.data) updateRow(row, row.data);
          renderSelection();
        }

        // The header: counts by state as `haul list` has them, the speed, the free space.
        function renderTotals(answer) {
          const c = answer.counts || {};
          const parts = [(c.running || 0) + " running", (c.queued || 0) + " queued", (c.paused || 0) + " paused",
            (c.completed || 0) + " completed", (c.failed || 0) + " failed"];
          if (c.interrupted) parts.push(c.interrupted + " interrupted");
          if (c.removed) parts.push(c.removed + " removed");
          setText(ui.totals, parts.join(" · "));
          const limit = Number(answer.speedLimit);
          setText(ui.speedNow, "Speed " + rate(answer.downloadSpeed) + (limit > 0 ? " (limit " + rate(limit) + ")" : "")
            + (answer.schedule ? " · " + answer.schedule : ""));
          setText(ui.disk, answer.freeBytes !== undefined
            ? bytes(answer.freeBytes) + " free in " + answer.directory : "Free space in " + answer.directory + " unknown");
          const title = "Haul — " + (c.running || 0) + " running, " + rate(answer.downloadSpeed);
          if (document.title !== title) document.title = title;
        }

        function renderPager() {
          const pages = Math.max(1, Math.ceil(state.total / PAGE_SIZE));
          setText(ui.pageLabel, "Page " + (state.page + 1) + " of " + pages + " (" + state.total + " downloads)");
          const first = state.page === 0, last = state.page >= pages - 1;
          if (ui.previous.disabled !== first) ui.previous.disabled = first;
          if (ui.next.disabled !== last) ui.next.disabled = last;
        }
        """#
}
