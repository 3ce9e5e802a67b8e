extension DashboardScript {
    /// The details panel: one download in full from `haul.details`, refreshed with the list; its options editable
    /// where aria2 lets them change (speed limit, connections, position). Keys of `tellStatus` the panel does not know
    /// are listed as they are, so that what later versions report shows without a change here.
    static let details = #"""
        // MARK: details

        // tellStatus keys shown elsewhere in the panel (or meaningless for HTTP downloads).
        const KNOWN_STATUS_KEYS = ["gid", "status", "totalLength", "completedLength", "uploadLength", "downloadSpeed",
          "uploadSpeed", "connections", "numSeeders", "pieceLength", "numPieces", "dir", "files", "errorCode",
          "errorMessage", "bitfield", "following", "followedBy", "belongsTo", "seeder", "infoHash", "bittorrent"];
        // Keys of a source's aria2 URI object shown in their own columns.
        const KNOWN_URI_KEYS = ["uri", "status", "role", "note"];

        function openDetails(gid, focus) {
          const previous = state.details;
          state.details = gid;
          state.detailsData = null;
          if (previous !== gid) { ui.detailsSpark.dataset.samples = ""; }
          show(ui.details, true);
          ui.app.classList.add("with-details");
          state.rows.forEach(function (row) { if (row.data) updateRow(row, row.data); });
          call("haul.details", [gid]).then(function (data) {
            if (state.details === gid) showDetails(data);
            if (focus) ui.details.focus();
            watchVisible();
          }, report);
        }

        function closeDetails() {
          const gid = state.details;
          state.details = null;
          state.detailsData = null;
          show(ui.details, false);
          ui.app.classList.remove("with-details");
          state.rows.forEach(function (row) { if (row.data) updateRow(row, row.data); });
          if (gid && state.rows.has(gid)) focusRow(gid); else ui.listHeading.focus();
        }

        function fact(list, term, value) {
          const dt = document.createElement("dt");
          dt.textContent = term;
          const dd = document.createElement("dd");
          dd.textContent = value;
          list.append(dt, dd);
        }

        // Rebuilds `node`'s children with `build` only when `key` (what they show) changed.
        function rebuild(node, key, build) {
          if (node.dataset.key === key) return;
          node.dataset.key = key;
          node.replaceChildren();
          build(node);
        }

        function updateDetailsProgress(d) {
          setText(ui.d.progress, progressText(d));
          const active = d.status === "active";
          setText(ui.d.speed, active ? rate(d.downloadSpeed) : "–");
          setText(ui.d.eta, active && d.eta !== undefined ? duration(Number(d.eta)) : "–");
          setText(ui.d.connections, active ? d.connections : "–");
        }

        function showDetails(d) {
          show(ui.detailsGone, !d);
          show(ui.detailsBody, !!d);
          if (!d) return;
          state.detailsData = d;
          setText(ui.detailsHeading, d.name);
          setText(ui.d.state, stateLine(d));
          updateDetailsProgress(d);
          setText(ui.d.file, d.file || "not named yet (in " + d.dir + ")");
          setText(ui.d.added, when(d.createdAt) + (d.startedAt ? ", started " + when(d.startedAt) : ""));
          setText(ui.d.finished, d.completedAt ? when(d.completedAt) : "–");
          drawSparkline(d.speeds || []);
          rebuild(ui.d.sources, JSON.stringify(d.sources), function (body) {
            d.sources.forEach(function (source) {
              const tr = document.createElement("tr");
              const served = Object.keys(source).filter(function (key) { return KNOWN_URI_KEYS.indexOf(key) < 0; })
                .map(function (key) {
                  const value = source[key];
                  return /length|bytes/i.test(key) && isFinite(Number(value)) ? bytes(value) : key + ": " + value;
                });
              [source.uri, source.role, source.status + (source.note ? " (" + source.note + ")" : ""),
                served.length ? served.join(", ") : "not reported"].forEach(function (text) {
                const td = document.createElement("td");
                td.textContent = text;
                tr.appendChild(td);
              });
              body.appendChild(tr);
            });
          });
          show(ui.d.errorSection, !!d.error);
          if (d.error) {
            setText(ui.d.error, d.error.message + " (Haul code " + d.error.code + ", aria2 error " + d.error.errorCode +
              (d.error.httpStatus ? ", HTTP " + d.error.httpStatus : "") + ")");
            setText(ui.d.suggestion, d.error.suggestion);
          }
          rebuild(ui.d.digest, JSON.stringify(d.digest || null), function (list) {
            const digest = d.digest || {};
            if (digest.sha256) fact(list, "SHA-256", digest.sha256);
            if (digest.expected) fact(list, "Expected", digest.expected);
            if (digest.verifiedBy) fact(list, "Verified by", digest.verifiedBy);
            if (digest.warning) fact(list, "Warning", digest.warning);
            if (!d.digest) fact(list, "Digest", d.status === "complete" ? "none recorded" : "known once it completes");
          });
          rebuild(ui.d.history, JSON.stringify(d.history), function (list) {
            if (!d.history.length) {
              const li = document.createElement("li");
              li.textContent = "Nothing happened to it since the daemon started.";
              list.appendChild(li);
            }
            d.history.forEach(function (entry) {
              const li = document.createElement("li");
              const time = document.createElement("time");
              time.dateTime = entry.at;
              time.textContent = new Date(entry.at).toLocaleTimeString();
              li.append(time, document.createTextNode(entry.text));
              list.appendChild(li);
            });
          });
          const options = d.options || {};
          if (document.activeElement !== ui.d.limit) {
            const limit = Number(options["max-download-limit"]);
            ui.d.limit.value = limit > 0 ? limitText(limit) : "0";
          }
          if (document.activeElement !== ui.d.connectionsInput) ui.d.connectionsInput.value = options.split || "";
          const editable = d.state !== "completed" && d.status !== "removed" && d.status !== "error";
          ui.d.limitForm.querySelectorAll("input, button").forEach(function (n) { n.disabled = !editable; });
          ui.d.connectionsForm.querySelectorAll("input, button").forEach(function (n) { n.disabled = !editable; });
          const waiting = d.position !== undefined;
          show(ui.d.positionRow, waiting);
          if (waiting) setText(ui.d.position, "Number " + (d.position + 1) + " in the queue");
          rebuild(ui.d.options, JSON.stringify(options), function (list) {
            fact(list, "Priority", options.priority);
            if (options.checksum) fact(list, "Checksum", options.checksum);
            if (options.login) fact(list, "Login", options.login);
            (options.header || []).forEach(function (header) { fact(list, "Header", header); });
          });
          const more = Object.keys(d.aria2 || {}).filter(function (key) { return KNOWN_STATUS_KEYS.indexOf(key) < 0; });
          show(ui.d.moreSection, more.length > 0);
          rebuild(ui.d.more, JSON.stringify(more.map(function (key) { return [key, d.aria2[key]]; })), function (list) {
            more.forEach(function (key) {
              const value = d.aria2[key];
              fact(list, key, typeof value === "string" ? value : JSON.stringify(value));
            });
          });
        }

        // A limit as aria2 takes it back: 500K, 2M, or bytes.
        function limitText(n) {
          if (n % 1048576 === 0) return n / 1048576 + "M";
          if (n % 1024 === 0) return n / 1024 + "K";
          return String(n);
        }

        function setDetailsOption(name, value) {
          const gid = state.details;
          const options = {};
          options[name] = value;
          return call("aria2.changeOption", [gid, options]).then(function () {
            announce("Changed " + (name === "split" ? "connections" : "the speed limit") + " of " +
              (state.detailsData ? state.detailsData.name : gid));
            refresh();
          }, report);
        }
        """#
}
