/// The dashboard's script: aria2's JSON-RPC over the daemon's WebSocket (with `haul.subscribe` for progress), HTTP
/// polling while the socket is down, and a list rendered a page at a time so 10,000 downloads stay quick.
enum DashboardScript {
    static let javascript = #"""
        "use strict";
        const PAGE = 100;
        const KEYS = ["gid", "status", "totalLength", "completedLength", "downloadSpeed", "connections", "errorMessage",
          "files"];
        const ui = {};
        let secret = null, socket = null, nextId = 1, pending = new Map(), downloads = [], byGid = new Map();
        let page = 0, refreshTimer = null, refreshing = false, reconnectDelay = 1000, removing = null;
        const speeds = [];
        window.haul = { firstRender: null, refreshes: 0 };

        function $(id) { return document.getElementById(id); }

        function bytes(n) {
          n = Number(n) || 0;
          const units = ["B", "KB", "MB", "GB", "TB"];
          let i = 0;
          while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
          return (i === 0 ? n.toFixed(0) : n.toFixed(n < 10 ? 2 : 1)) + " " + units[i];
        }

        function duration(seconds) {
          if (!isFinite(seconds) || seconds < 0) return "–";
          if (seconds < 60) return Math.round(seconds) + " s";
          if (seconds < 3600) return Math.floor(seconds / 60) + " min " + Math.round(seconds % 60) + " s";
          return Math.floor(seconds / 3600) + " h " + Math.round((seconds % 3600) / 60) + " min";
        }

        function call(method, params) {
          const body = { jsonrpc: "2.0", id: String(nextId++), method: method, params: ["token:" + secret].concat(params || []) };
          if (socket && socket.readyState === WebSocket.OPEN) {
            return new Promise(function (resolve, reject) {
              pending.set(body.id, { resolve: resolve, reject: reject });
              socket.send(JSON.stringify(body));
            });
          }
          return fetch("/jsonrpc", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) })
            .then(function (response) { return response.json(); })
            .then(function (answer) {
              if (answer.error) throw new Error(answer.error.message);
              return answer.result;
            });
        }

        function connect() {
          const scheme = location.protocol === "https:" ? "wss://" : "ws://";
          socket = new WebSocket(scheme + location.host + "/jsonrpc");
          socket.onopen = function () {
            reconnectDelay = 1000;
            call("haul.subscribe").catch(function () {});
            refresh();
          };
          socket.onmessage = function (message) {
            let data;
            try { data = JSON.parse(message.data); } catch (e) { return; }
            if (data.id !== undefined && pending.has(data.id)) {
              const waiter = pending.get(data.id);
              pending.delete(data.id);
              if (data.error) waiter.reject(new Error(data.error.message)); else waiter.resolve(data.result);
            } else if (data.method === "haul.onDownloadProgress") {
              progress(data.params[0]);
            } else if (data.method) {
              scheduleRefresh(100);
            }
          };
          socket.onclose = function () {
            pending.forEach(function (waiter) { waiter.reject(new Error("the connection closed")); });
            pending.clear();
            socket = null;
            setTimeout(connect, reconnectDelay);
            reconnectDelay = Math.min(reconnectDelay * 2, 10000);
          };
          socket.onerror = function () {};
        }

        function scheduleRefresh(delay) {
          clearTimeout(refreshTimer);
          refreshTimer = setTimeout(refresh, delay);
        }

        function refresh() {
          if (refreshing) { scheduleRefresh(200); return; }
          refreshing = true;
          Promise.all([
            call("aria2.tellActive", [KEYS]),
            call("aria2.tellWaiting", [0, 1000000, KEYS]),
            call("aria2.tellStopped", [0, 1000000, KEYS]),
            call("aria2.getGlobalStat"),
          ]).then(function (results) {
            downloads = results[0].concat(results[1], results[2]);
            byGid = new Map(downloads.map(function (d) { return [d.gid, d]; }));
            speeds.push(Number(results[3].downloadSpeed) || 0);
            if (speeds.length > 300) speeds.shift();
            totals(results[3]);
            render();
            drawChart();
            window.haul.refreshes++;
          }).catch(function (error) {
            if (/Unauthorized/.test(error.message)) { askForSecret("That secret was not accepted."); }
          }).finally(function () {
            refreshing = false;
            if (secret) scheduleRefresh(socket ? 2000 : 1000);
          });
        }

        function progress(event) {
          const d = byGid.get(event.gid);
          if (!d) return;
          d.completedLength = event.completedLength;
          d.totalLength = event.totalLength;
          d.downloadSpeed = event.downloadSpeed;
          d.connections = event.connections;
          const row = ui.rows.querySelector('tr[data-gid="' + event.gid + '"]');
          if (row) row.replaceWith(rowFor(d));
        }

        function name(d) {
          const file = d.files && d.files[0];
          if (file && file.path) return file.path.split("/").pop();
          if (file && file.uris && file.uris[0]) return file.uris[0].uri.split("/").pop() || file.uris[0].uri;
          return d.gid;
        }

        function visible() {
          const filter = ui.filter.value;
          return filter === "all" ? downloads : downloads.filter(function (d) { return d.status === filter; });
        }

        function render() {
          const list = visible();
          const pages = Math.max(1, Math.ceil(list.length / PAGE));
          page = Math.min(page, pages - 1);
          const fragment = document.createDocumentFragment();
          list.slice(page * PAGE, page * PAGE + PAGE).forEach(function (d) { fragment.appendChild(rowFor(d)); });
          ui.rows.replaceChildren(fragment);
          ui.pageLabel.textContent = "Page " + (page + 1) + " of " + pages + " (" + list.length + " downloads)";
          $("previous-page").disabled = page === 0;
          $("next-page").disabled = page >= pages - 1;
          if (window.haul.firstRender === null && downloads.length > 0) window.haul.firstRender = performance.now();
        }

        function cell(text, className) {
          const td = document.createElement("td");
          td.textContent = text;
          if (className) td.className = className;
          return td;
        }

        function button(action, label, gid) {
          const b = document.createElement("button");
          b.type = "button";
          b.dataset.action = action;
          b.dataset.gid = gid;
          b.textContent = label;
          b.setAttribute("aria-label", label + " " + gid);
          return b;
        }

        function rowFor(d) {
          const tr = document.createElement("tr");
          tr.dataset.gid = d.gid;
          tr.dataset.status = d.status;
          const total = Number(d.totalLength), done = Number(d.completedLength), speed = Number(d.downloadSpeed);
          const title = cell(name(d));
          title.title = name(d);
          if (d.status === "error" && d.errorMessage) {
            const error = document.createElement("div");
            error.className = "error";
            error.textContent = d.errorMessage;
            title.appendChild(error);
          }
          tr.appendChild(title);
          tr.appendChild(cell(total > 0 ? bytes(total) : "?"));
          const bar = document.createElement("progress");
          bar.max = total > 0 ? total : 1;
          bar.value = total > 0 ? Math.min(done, total) : (d.status === "complete" ? 1 : 0);
          bar.setAttribute("aria-label", "Progress of " + name(d));
          const progressCell = document.createElement("td");
          progressCell.appendChild(bar);
          tr.appendChild(progressCell);
          tr.appendChild(cell(d.status === "active" ? bytes(speed) + "/s" : "", "wide"));
          tr.appendChild(cell(d.status === "active" && speed > 0 && total > 0 ? duration((total - done) / speed) : "", "wide"));
          tr.appendChild(cell(d.status === "active" ? d.connections : "", "wide"));
          tr.appendChild(cell(d.status));
          const actions = document.createElement("td");
          if (d.status === "active" || d.status === "waiting") actions.appendChild(button("pause", "Pause", d.gid));
          if (d.status === "paused") actions.appendChild(button("resume", "Resume", d.gid));
          actions.appendChild(button("remove", "Remove", d.gid));
          tr.appendChild(actions);
          return tr;
        }

        function totals(stat) {
          const text = stat.numActive + " active · " + stat.numWaiting + " waiting · " + stat.numStopped + " stopped · " +
            bytes(stat.downloadSpeed) + "/s";
          ui.totals.textContent = text;
          document.title = "Haul — " + stat.numActive + " active, " + bytes(stat.downloadSpeed) + "/s";
        }

        function drawChart() {
          const canvas = ui.chart, context = canvas.getContext("2d");
          if (!context) return;
          const max = Math.max.apply(null, speeds.concat([1]));
          context.clearRect(0, 0, canvas.width, canvas.height);
          context.strokeStyle = getComputedStyle(document.documentElement).getPropertyValue("--bar") || "#2a7de1";
          context.beginPath();
          speeds.forEach(function (value, index) {
            const x = canvas.width - (speeds.length - 1 - index);
            const y = canvas.height - 2 - (value / max) * (canvas.height - 4);
            if (index === 0) context.moveTo(x, y); else context.lineTo(x, y);
          });
          context.stroke();
        }

        function act(event) {
          const target = event.target.closest("button[data-action]");
          if (!target) return;
          const gid = target.dataset.gid, action = target.dataset.action;
          if (action === "pause") call("aria2.pause", [gid]).then(refresh, report);
          else if (action === "resume") call("aria2.unpause", [gid]).then(refresh, report);
          else if (action === "remove") {
            removing = gid;
            $("remove-question").textContent = "Remove " + name(byGid.get(gid) || { gid: gid }) + "?";
            $("remove-file").checked = false;
            ui.dialog.showModal();
          } else if (action === "pause-all") call("aria2.pauseAll").then(refresh, report);
          else if (action === "resume-all") call("aria2.unpauseAll").then(refresh, report);
        }

        function report(error) { ui.totals.textContent = "Error: " + error.message; }

        function add(event) {
          event.preventDefault();
          const urls = $("add-urls").value.split("\n").map(function (line) { return line.trim(); })
            .filter(function (line) { return line.length > 0; });
          const options = {};
          const connections = $("add-connections").value;
          if (connections) { options.split = connections; options["max-connection-per-server"] = connections; }
          if ($("add-checksum").value.trim()) options.checksum = $("add-checksum").value.trim();
          if ($("add-dir").value.trim()) options.dir = $("add-dir").value.trim();
          Promise.all(urls.map(function (url) { return call("aria2.addUri", [[url], options]); }))
            .then(function () { $("add-urls").value = ""; refresh(); }, report);
        }

        function askForSecret(message) {
          secret = null;
          sessionStorage.removeItem("haul.secret");
          downloads = [];
          ui.rows.replaceChildren();
          ui.app.hidden = true;
          ui.login.hidden = false;
          ui.totals.textContent = message || "Enter the secret to connect.";
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
          secret = given;
          sessionStorage.setItem("haul.secret", given);
          ui.login.hidden = true;
          ui.app.hidden = false;
          if (!socket) connect(); else refresh();
        }

        document.addEventListener("DOMContentLoaded", function () {
          ui.rows = $("rows"); ui.filter = $("filter"); ui.totals = $("totals"); ui.chart = $("speed-chart");
          ui.pageLabel = $("page-label"); ui.app = $("app"); ui.login = $("login"); ui.dialog = $("remove-dialog");
          takeSecretFromAddress();
          window.addEventListener("hashchange", function () { if (takeSecretFromAddress()) start(sessionStorage.getItem("haul.secret")); });
          document.body.addEventListener("click", act);
          $("add-form").addEventListener("submit", add);
          $("login-form").addEventListener("submit", function (event) {
            event.preventDefault();
            start($("secret-input").value);
          });
          $("limit-form").addEventListener("submit", function (event) {
            event.preventDefault();
            call("aria2.changeGlobalOption", [{ "max-overall-download-limit": $("limit").value.trim() || "0" }])
              .then(refresh, report);
          });
          ui.filter.addEventListener("change", function () { page = 0; render(); });
          $("previous-page").addEventListener("click", function () { page = Math.max(0, page - 1); render(); });
          $("next-page").addEventListener("click", function () { page++; render(); });
          ui.dialog.addEventListener("close", function () {
            if (ui.dialog.returnValue !== "remove" || !removing) return;
            call("haul.remove", [removing, $("remove-file").checked]).then(refresh, report);
            removing = null;
          });
          const stored = sessionStorage.getItem("haul.secret");
          if (stored) start(stored); else askForSecret();
        });
        """#
}
