/// The dashboard's page: HTML and CSS, embedded in the binary (nothing is fetched from elsewhere).
enum DashboardPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Haul</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/dashboard.css">
        <script src="/dashboard.js" defer></script>
        </head>
        <body>
        <header>
          <h1>Haul</h1>
          <p id="totals" aria-live="polite">Not connected</p>
          <canvas id="speed-chart" width="300" height="40" role="img" aria-label="Total speed over the last minutes"></canvas>
        </header>
        <section id="login" hidden>
          <form id="login-form">
            <label for="secret-input">RPC secret (printed by <code>haul serve</code>)</label>
            <input id="secret-input" type="password" autocomplete="off" required>
            <button type="submit">Connect</button>
          </form>
        </section>
        <main id="app" hidden>
          <section aria-labelledby="add-heading">
            <h2 id="add-heading">Add downloads</h2>
            <form id="add-form">
              <label for="add-urls">URLs, one a line</label>
              <textarea id="add-urls" data-test="add-url" rows="3" required></textarea>
              <div class="row">
                <label>Connections <input id="add-connections" type="number" min="1" max="32" value="4"></label>
                <label>Checksum <input id="add-checksum" placeholder="sha-256=…"></label>
                <label>Sub-directory <input id="add-dir" placeholder="optional"></label>
                <button type="submit" data-action="add">Add</button>
              </div>
            </form>
          </section>
          <section aria-labelledby="list-heading">
            <h2 id="list-heading">Downloads</h2>
            <div class="row toolbar">
              <label>Show <select id="filter">
                <option value="all">all</option><option value="active">active</option>
                <option value="waiting">waiting</option><option value="paused">paused</option>
                <option value="complete">complete</option><option value="error">error</option>
                <option value="removed">removed</option>
              </select></label>
              <button type="button" data-action="pause-all">Pause all</button>
              <button type="button" data-action="resume-all">Resume all</button>
              <form id="limit-form" class="inline">
                <label>Speed limit <input id="limit" placeholder="0 = none, e.g. 2M" size="8"></label>
                <button type="submit">Set</button>
              </form>
            </div>
            <table>
              <thead><tr><th>Name</th><th>Size</th><th>Progress</th><th class="wide">Speed</th><th class="wide">ETA</th>
              <th class="wide">Conn.</th><th>State</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody id="rows"></tbody>
            </table>
            <nav class="row pager" aria-label="Pages">
              <button type="button" id="previous-page">Previous</button>
              <span id="page-label"></span>
              <button type="button" id="next-page">Next</button>
            </nav>
          </section>
        </main>
        <dialog id="remove-dialog">
          <form method="dialog">
            <p id="remove-question">Remove this download?</p>
            <label><input type="checkbox" id="remove-file"> Also delete the file</label>
            <div class="row"><button value="cancel">Cancel</button><button value="remove" id="remove-confirm">Remove</button></div>
          </form>
        </dialog>
        </body>
        </html>
        """#

    static let css = #"""
        :root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fff; --muted: #666; --bar: #2a7de1; --line: #ddd;
          --error: #c62828; font-family: system-ui, sans-serif; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #eee; --bg: #161618; --muted: #aaa; --bar: #4c9aff; --line: #333; --error: #ff6b6b; }
        }
        body { margin: 0; padding: 0 1rem 2rem; color: var(--fg); background: var(--bg); }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; }
        h1 { font-size: 1.4rem; margin: .6rem 0; } h2 { font-size: 1.1rem; }
        #totals { color: var(--muted); margin: 0; flex: 1; }
        #speed-chart { border: 1px solid var(--line); border-radius: 4px; max-width: 45vw; }
        .row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .4rem 0; }
        .inline { display: inline-flex; gap: .3rem; align-items: center; }
        textarea { width: 100%; box-sizing: border-box; }
        input, select, textarea, button { font: inherit; color: inherit; background: transparent;
          border: 1px solid var(--line); border-radius: 4px; padding: .2rem .4rem; }
        button { cursor: pointer; } button:focus-visible, input:focus-visible { outline: 2px solid var(--bar); }
        table { width: 100%; border-collapse: collapse; table-layout: fixed; }
        th, td { text-align: left; padding: .3rem; border-bottom: 1px solid var(--line); overflow: hidden;
          text-overflow: ellipsis; white-space: nowrap; }
        th:first-child { width: 30%; } th:last-child { width: 11rem; }
        td:last-child { overflow: visible; } td:last-child button { margin-right: .3rem; }
        progress { width: 100%; accent-color: var(--bar); }
        .error { color: var(--error); white-space: normal; font-size: .85em; }
        .visually-hidden { position: absolute; clip: rect(0 0 0 0); width: 1px; height: 1px; overflow: hidden; }
        @media (max-width: 600px) {
          body { padding: 0 .4rem 1rem; } .wide { display: none; } th:first-child { width: 35%; }
          th:last-child { width: 5.5rem; } td:last-child button { display: block; margin: 0 0 .2rem; }
          th, td { padding: .25rem .15rem; font-size: .9em; }
        }
        """#
}
