extension DashboardScript {
    /// The hosts panel: each host's politeness state from `haul.getHosts` (the request rate in force, the connection
    /// cap, the requests sent, the hold, the last throttle and why), the hosts that need attention first. Closed by
    /// default; while open (and the tab visible) it is read on the dashboard's tick, at most once every 2 s. Rows are
    /// keyed by host and updated in place; every value from the daemon (host names, reasons: what servers said) goes
    /// in as text.
    static let hosts = #"""
        // MARK: hosts

        // The hosts the panel shows (it asks for one more, to know whether there are others).
        const HOSTS_SHOWN = 100;
        // The least time between two readings of the hosts.
        const HOSTS_INTERVAL = 2000;

        function hostsOpen() { return ui.hostsToggle.getAttribute("aria-expanded") === "true"; }

        function toggleHosts(open) {
          if (open === undefined) open = !hostsOpen();
          setAttribute(ui.hostsToggle, "aria-expanded", open ? "true" : "false");
          show(ui.hostsBody, open);
          try { localStorage.setItem("haul.hostsOpen", open ? "true" : "false"); } catch (e) {}
          if (open) refreshHosts();
        }

        // On the dashboard's tick: reads the hosts while the panel is open and the tab visible, at most once every
        // HOSTS_INTERVAL, one reading at a time.
        function refreshHosts() {
          if (!state.secret || !hostsOpen() || document.hidden || state.hostsLoading) return;
          const now = performance.now();
          if (state.hostsAsked !== null && now - state.hostsAsked < HOSTS_INTERVAL) return;
          state.hostsAsked = now;
          state.hostsLoading = true;
          call("haul.getHosts", [HOSTS_SHOWN + 1]).then(function (hosts) {
            window.haul.hostRefreshes++;
            renderHosts(hosts);
          }, function (error) {
            setText(ui.hostsStatus, "The hosts could not be read: " + error.message);
          }).finally(function () { state.hostsLoading = false; });
        }

        // A host is throttled while a throttle's hold or backoff is in force.
        function hostHeld(h) { return Number(h.heldFor) > 0; }
        function hostBackedOff(h) { return h.backoffRate !== null && h.backoffRate !== undefined ||
          h.connectionCap !== null && h.connectionCap !== undefined; }
        function hostThrottled(h) { return hostHeld(h) || hostBackedOff(h); }

        function requestRate(n) {
          n = Number(n);
          return (n >= 10 ? String(Math.round(n)) : n.toFixed(n >= 1 ? 1 : 2)) + "/s";
        }

        // A time of today as the clock shows it; an older one with its date.
        function recently(iso) {
          const date = new Date(iso);
          if (isNaN(date)) return iso;
          return date.toDateString() === new Date().toDateString() ? date.toLocaleTimeString() : date.toLocaleString();
        }

        function hostState(h) {
          if (hostHeld(h)) return ["Throttled", "held: no request for " + duration(Number(h.heldFor))];
          if (hostBackedOff(h)) return ["Throttled", "backed off, recovering"];
          if (h.policyRate !== null && h.policyRate !== undefined) return ["Limited", "by its policy, " + requestRate(h.policyRate)];
          return ["OK", h.lastThrottle ? "recovered" : "never throttled"];
        }

        function makeHostRow(host) {
          const row = { host: host, cells: {} };
          const tr = document.createElement("tr");
          row.tr = tr;
          const name = document.createElement("th");
          name.scope = "row";
          name.className = "host";
          name.textContent = host;
          tr.appendChild(name);
          const stateCell = document.createElement("td");
          row.badge = document.createElement("span");
          row.badge.className = "badge";
          row.detail = document.createElement("div");
          row.detail.className = "reason";
          // The limit and the connections, in this cell when the table is too narrow for their columns.
          row.narrow = document.createElement("div");
          row.narrow.className = "narrow";
          stateCell.append(row.badge, row.detail, row.narrow);
          tr.appendChild(stateCell);
          [["limit", "wide num"], ["connections", "wide num"], ["requests", "wide num"], ["hold", "num"]].forEach(function (entry) {
            const td = document.createElement("td");
            td.className = entry[1];
            row.cells[entry[0]] = td;
            tr.appendChild(td);
          });
          const last = document.createElement("td");
          last.className = "throttle";
          row.time = document.createElement("time");
          row.reason = document.createElement("div");
          row.reason.className = "reason";
          last.append(row.time, row.reason);
          tr.appendChild(last);
          return row;
        }

        function updateHostRow(row, h) {
          const throttled = hostThrottled(h);
          setAttribute(row.tr, "data-throttled", throttled ? "true" : "false");
          setAttribute(row.tr, "data-held", hostHeld(h) ? "true" : "false");
          const described = hostState(h);
          setText(row.badge, described[0]);
          setText(row.detail, described[1]);
          const limit = h.requestLimit !== null && h.requestLimit !== undefined ? requestRate(h.requestLimit) : "none";
          const cap = h.connectionCap !== null && h.connectionCap !== undefined ? String(h.connectionCap) : "no cap";
          setText(row.cells.limit, limit);
          setText(row.cells.connections, cap);
          setText(row.cells.requests, String(h.requests));
          setText(row.cells.hold, hostHeld(h) ? duration(Number(h.heldFor)) : "–");
          setText(row.narrow, "limit " + limit + " · connections " + cap + " · " + h.requests + " requests");
          if (h.lastThrottle) {
            setAttribute(row.time, "datetime", h.lastThrottle);
            setText(row.time, recently(h.lastThrottle));
            setText(row.reason, (h.reason || "reason not known") + (h.throttles > 1 ? " · " + h.throttles + " throttles" : ""));
          } else {
            setAttribute(row.time, "datetime", null);
            setText(row.time, "never");
            setText(row.reason, "");
          }
        }

        function renderHosts(list) {
          const more = list.length > HOSTS_SHOWN;
          if (more) list = list.slice(0, HOSTS_SHOWN);
          const seen = new Set();
          // New throttles are said once, in one message a reading (not those already there at the first reading).
          const newly = [];
          const wanted = list.map(function (h) {
            let row = state.hostRows.get(h.host);
            if (!row) { row = makeHostRow(h.host); state.hostRows.set(h.host, row); }
            const before = row.throttles !== undefined ? row.throttles : (state.hostsRendered ? 0 : h.throttles);
            if (h.throttles > before) {
              newly.push(h.host + " (" + (h.reason || "reason not known") + ")");
            }
            row.throttles = h.throttles;
            updateHostRow(row, h);
            seen.add(h.host);
            return row.tr;
          });
          state.hostRows.forEach(function (row, host) {
            if (!seen.has(host)) { row.tr.remove(); state.hostRows.delete(host); }
          });
          let cursor = ui.hostRows.firstElementChild;
          wanted.forEach(function (tr) {
            if (tr === cursor) cursor = cursor.nextElementSibling; else ui.hostRows.insertBefore(tr, cursor);
          });
          state.hostsRendered = true;
          if (newly.length) {
            announce((newly.length === 1 ? "Host throttled: " : newly.length + " hosts throttled: ") +
              newly.slice(0, 3).join(", ") + (newly.length > 3 ? "…" : ""));
          }
          show(ui.hostsEmpty, list.length === 0);
          show(ui.hostsTable, list.length > 0);
          show(ui.hostsMore, more);
          const throttled = list.filter(hostThrottled).length;
          setText(ui.hostsStatus, list.length === 0 ? "Updated " + new Date().toLocaleTimeString() + "." :
            (more ? "The first " + HOSTS_SHOWN + " hosts" : list.length + (list.length === 1 ? " host" : " hosts")) +
            ", " + throttled + " throttled now; updated " + new Date().toLocaleTimeString() + ".");
        }
        """#
}
