/// The dashboard's script: aria2's JSON-RPC and Haul's `haul.page`/`haul.details` over the daemon's WebSocket (with
/// `haul.subscribe` for the progress of the rows on screen), HTTP polling while the socket is down and a reconnection
/// that never gives up. Rows are updated in place, keyed by GID, so focus, selection and scroll survive every update.
///
/// One script in parts, each a file: the core here (calls, connection, refresh), then
/// ``DashboardScript/rows``, ``DashboardScript/details``, ``DashboardScript/charts``, ``DashboardScript/hosts`` and
/// ``DashboardScript/controls``.
enum DashboardScript {
    static let javascript = [core, rows, details, charts, hosts, controls].joined(separator: "\n")

    static let core = #"""
        "use strict";
        const PAGE_SIZE = 100;
        const ui = {};
        const state = {
          secret: null, socket: null, nextId: 1, pending: new Map(), reconnectDelay: 500, reconnectTimer: null,
          rows: new Map(), order: [], selected: new Set(), page: 0, total: 0, current: null,
          refreshTimer: null, refreshing: false, refreshAgain: false, soonTimer: null, watched: null,
          details: null, detailsData: null, removing: [], focusGid: null, lastPage: null,
          hostRows: new Map(), hostsAsked: null, hostsLoading: false, hostsRendered: false,
        };
        // What the tests and the benchmark read: when the first rows were on screen, how many refreshes ran (of the
        // page, of the hosts panel), whether the socket is open.
        window.haul = { firstRender: null, refreshes: 0, hostRefreshes: 0, socketOpen: false, connection: "connecting" };

        function $(id) { return document.getElementById(id); }

        // Sizes in binary units, as the command line prints them.
        function bytes(n) {
          n = Number(n) || 0;
          const units = ["B", "KiB", "MiB", "GiB", "TiB"];
          let i = 0;
          while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
          return i === 0 ? Math.round(n) + " B" : n.toFixed(1) + " " + units[i];
        }

        function rate(n) { return bytes(n) + "/s"; }

        // A time left as the command line shows it: 17 s, 4 m 05 s, 2 h 10 m.
        function duration(seconds) {
          if (!isFinite(seconds) || seconds < 0) return "–";
          const total = Math.ceil(seconds);
          if (total < 60) return total + " s";
          const pad = function (n) { return (n < 10 ? "0" : "") + n; };
          if (total < 3600) return Math.floor(total / 60) + " m " + pad(total % 60) + " s";
          if (total < 360000) return Math.floor(total / 3600) + " h " + pad(Math.floor(total % 3600 / 60)) + " m";
          return "> 99 h";
        }

        function when(iso) {
          if (!iso) return "–";
          const date = new Date(iso);
          return isNaN(date) ? iso : date.toLocaleString();
        }

        function setText(node, text) {
          text = text === undefined || text === null ? "" : String(text);
          if (node.textContent !== text) node.textContent = text;
        }

        function setAttribute(node, name, value) {
          if (value === null) { if (node.hasAttribute(name)) node.removeAttribute(name); return; }
          if (node.getAttribute(name) !== value) node.setAttribute(name, value);
        }

        function show(node, visible) { if (node.hidden === visible) node.hidden = !visible; }

        function announce(text) { setText(ui.announce, ""); setTimeout(function () { setText(ui.announce, text); }, 50); }

        function report(error) { announce("Error: " + error.message); setConnectionText(error.message); }

        // MARK: calls

        // `system.multicall` takes no token of its own: each of its calls carries one.
        function call(method, params) {
          const token = method === "system.multicall" ? [] : ["token:" + state.secret];
          const body = { jsonrpc: "2.0", id: String(state.nextId++), method: method, params: token.concat(params || []) };
          const socket = state.socket;
          if (socket && socket.readyState === WebSocket.OPEN) {
            return new Promise(function (resolve, reject) {
              const timer = setTimeout(function () {
                if (state.pending.delete(body.id)) reject(new Error("no answer from the daemon"));
              }, 15000);
              state.pending.set(body.id, { resolve: resolve, reject: reject, timer: timer });
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

        // Several calls in one request; each result is its value, or an Error.
        function multicall(calls) {
          const list = calls.map(function (entry) {
            return { methodName: entry[0], params: ["token:" + state.secret].concat(entry[1] || []) };
          });
          return call("system.multicall", [list]).then(function (results) {
            return results.map(function (result) {
              return Array.isArray(result) ? result[0] : new Error(result.message || "failed");
            });
          });
        }

        // MARK: connection

        function setConnection(mode) {
          window.haul.connection = mode;
          const text = { live: "Live", polling: "Reconnecting… (polling meanwhile)", offline: "Daemon unreachable, retrying…",
            connecting: "Connecting…" }[mode] || mode;
          setAttribute(ui.connection, "data-state", mode);
          setText(ui.connection, text);
        }

        function setConnectionText(text) { setText(ui.connection, text); }

        function connect() {
          state.reconnectTimer = null;
          if (!state.secret || state.socket) return;
          const scheme = location.protocol === "https:" ? "wss://" : "ws://";
          let socket;
          try {
            socket = new WebSocket(scheme + location.host + "/jsonrpc");
          } catch (error) {
            scheduleReconnect();
            return;
          }
          state.socket = socket;
          socket.onopen = function () {
            state.reconnectDelay = 500;
            window.haul.socketOpen = true;
            state.watched = null;
            setConnection("live");
            refresh();
          };
          socket.onmessage = function (message) {
            let data;
            try { data = JSON.parse(message.data); } catch (e) { return; }
            if (data.id !== undefined && state.pending.has(data.id)) {
              const waiter = state.pending.get(data.id);
              state.pending.delete(data.id);
              clearTimeout(waiter.timer);
              if (data.error) waiter.reject(new Error(data.error.message)); else waiter.resolve(data.result);
            } else if (data.method === "haul.onDownloadProgress") {
              progress(data.params[0]);
            } else if (data.method) {
              soon();
            }
          };
          socket.onclose = function () {
            if (state.socket !== socket) return;
            state.socket = null;
            window.haul.socketOpen = false;
            state.pending.forEach(function (waiter) { clearTimeout(waiter.timer); waiter.reject(new Error("the connection closed")); });
            state.pending.clear();
            if (!state.secret) return;
            setConnection("polling");
            scheduleReconnect();
            // HTTP polling carries on while the socket is down.
            scheduleRefresh(200);
          };
          socket.onerror = function () {};
        }

        function scheduleReconnect() {
          if (state.reconnectTimer) return;
          state.reconnectTimer = setTimeout(connect, state.reconnectDelay);
          state.reconnectDelay = Math.min(state.reconnectDelay * 2, 4000);
        }

        // MARK: refresh

        function scheduleRefresh(delay) {
          clearTimeout(state.refreshTimer);
          state.refreshTimer = setTimeout(refresh, delay);
        }

        // A refresh soon after a notification, at most one every 400 ms however many arrive.
        function soon() {
          if (state.soonTimer) return;
          state.soonTimer = setTimeout(function () { state.soonTimer = null; refresh(); }, 400);
        }

        function pageQuery() {
          const filter = ui.filter.value;
          return { states: filter === "all" ? [] : [filter], search: ui.search.value.trim(), sort: ui.sort.value,
            descending: ui.descending.checked, offset: state.page * PAGE_SIZE, count: PAGE_SIZE };
        }

        function refresh() {
          if (!state.secret) return;
          if (state.refreshing) { state.refreshAgain = true; return; }
          state.refreshing = true;
          clearTimeout(state.refreshTimer);
          refreshHosts();
          const query = pageQuery();
          const asked = JSON.stringify(query);
          const calls = [call("haul.page", [query])];
          const detailsGid = state.details;
          if (detailsGid) calls.push(call("haul.details", [detailsGid]).catch(function () { return null; }));
          Promise.all(calls).then(function (results) {
            if (asked !== JSON.stringify(pageQuery())) { state.refreshAgain = true; return; }
            const answer = results[0];
            if (answer.total > 0 && query.offset >= answer.total) {
              state.page = Math.max(0, Math.ceil(answer.total / PAGE_SIZE) - 1);
              state.refreshAgain = true;
              return;
            }
            applyPage(answer);
            if (detailsGid && detailsGid === state.details) showDetails(results[1]);
            if (window.haul.connection !== "live" || !state.socket) setConnection(state.socket ? "live" : "polling");
            window.haul.refreshes++;
          }).catch(function (error) {
            if (/Unauthorized/.test(error.message)) { askForSecret("That secret was not accepted."); return; }
            setConnection("offline");
          }).finally(function () {
            state.refreshing = false;
            if (!state.secret) return;
            if (state.refreshAgain) { state.refreshAgain = false; refresh(); return; }
            scheduleRefresh(state.socket ? 2000 : 1000);
          });
        }

        function applyPage(answer) {
          state.lastPage = answer;
          state.total = answer.total;
          renderRows(answer.downloads);
          renderTotals(answer);
          drawSpeedChart(answer.speedHistory || []);
          renderPager();
          watchVisible();
          if (window.haul.firstRender === null && answer.downloads.length > 0) window.haul.firstRender = performance.now();
        }

        // Asks the daemon for the progress of the rows on screen only.
        function watchVisible() {
          if (!state.socket || state.socket.readyState !== WebSocket.OPEN) return;
          const gids = state.order.slice();
          if (state.details && gids.indexOf(state.details) < 0) gids.push(state.details);
          const key = gids.join(",");
          if (key === state.watched) return;
          state.watched = key;
          call("haul.subscribe", [gids]).catch(function () { state.watched = null; });
        }

        function progress(event) {
          const row = state.rows.get(event.gid);
          if (row && row.data && row.data.status === "active") {
            const data = Object.assign({}, row.data, {
              completedLength: event.completedLength, totalLength: event.totalLength,
              downloadSpeed: event.downloadSpeed, connections: event.connections, eta: event.eta,
            });
            updateRow(row, data);
          }
          if (event.gid === state.details && state.detailsData) {
            updateDetailsProgress(Object.assign({}, state.detailsData, event));
          }
        }
        """#
}
