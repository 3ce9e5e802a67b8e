/// The dashboard's page, embedded in the binary (nothing is fetched from elsewhere); its style is
/// ``DashboardStyle``, its script ``DashboardScript``. The details panel and the dialogs are in the page from the
/// start and filled in by the script, so that every update changes text, never structure the keyboard is in.
enum DashboardPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>Haul</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/dashboard.css">
        <script src="/dashboard.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#list-heading">Skip to the downloads</a>
        <header>
          <div class="masthead">
            <h1>Haul</h1>
            <p id="connection" role="status">Not connected</p>
            <button type="button" id="help-button" aria-keyshortcuts="?">Keyboard shortcuts</button>
          </div>
          <div class="summary">
            <div>
              <p id="totals">–</p>
              <p id="speed-now"></p>
              <p id="disk"></p>
            </div>
            <figure class="chart">
              <canvas id="speed-chart" role="img" aria-label="Total download speed over the last 5 minutes"></canvas>
              <figcaption>Total download speed, last 5 minutes</figcaption>
            </figure>
          </div>
        </header>
        <section id="login" hidden aria-labelledby="login-heading">
          <h2 id="login-heading">Connect</h2>
          <form id="login-form">
            <label for="secret-input">RPC secret (printed by <code>haul serve</code>)</label>
            <input id="secret-input" type="password" autocomplete="off" required>
            <button type="submit">Connect</button>
          </form>
        </section>
        <main id="app" hidden>
          <div class="main-column">
          <section aria-labelledby="add-heading">
            <h2 id="add-heading">Add downloads</h2>
            <form id="add-form">
              <label for="add-urls">URLs, one a line (more URLs of the same file on one line, separated by spaces, are mirrors)</label>
              <textarea id="add-urls" data-test="add-url" rows="2" required aria-keyshortcuts="n"></textarea>
              <div class="row">
                <label>Connections <input id="add-connections" type="number" min="1" max="32" value="4"></label>
                <label>Checksum <input id="add-checksum" placeholder="sha-256=…"></label>
                <label>Sub-directory <input id="add-dir" placeholder="optional"></label>
                <label class="check"><input id="add-paused" type="checkbox"> Add paused</label>
                <button type="submit" data-action="add">Add</button>
              </div>
            </form>
          </section>
          <section aria-labelledby="list-heading" class="list">
            <h2 id="list-heading" tabindex="-1">Downloads</h2>
            <div class="row toolbar">
              <label>Search <input id="search" type="search" placeholder="name or URL" aria-keyshortcuts="/"></label>
              <label>Show <select id="filter">
                <option value="all">all</option><option value="running">running</option>
                <option value="queued">queued</option><option value="paused">paused</option>
                <option value="completed">completed</option><option value="failed">failed</option>
                <option value="interrupted">interrupted</option><option value="removed">removed</option>
              </select></label>
              <label>Sort <select id="sort">
                <option value="queue">queue order</option><option value="name">name</option>
                <option value="size">size</option><option value="progress">progress</option>
                <option value="speed">speed</option><option value="added">added</option>
              </select></label>
              <label class="check"><input type="checkbox" id="descending"> Reverse</label>
            </div>
            <div class="row toolbar">
              <button type="button" data-action="pause-all">Pause all</button>
              <button type="button" data-action="resume-all">Resume all</button>
              <form id="limit-form" class="inline">
                <label>Total speed limit <input id="limit" placeholder="e.g. 2M; 0 = none" size="10"></label>
                <button type="submit">Set</button>
              </form>
            </div>
            <div class="row toolbar bulk" id="bulk" role="group" aria-label="Selected downloads">
              <span id="selection-count">No download selected</span>
              <button type="button" data-action="bulk-pause" disabled>Pause selected</button>
              <button type="button" data-action="bulk-resume" disabled>Resume selected</button>
              <button type="button" data-action="bulk-retry" disabled>Retry selected</button>
              <button type="button" data-action="bulk-remove" disabled>Remove selected</button>
              <button type="button" data-action="bulk-clear" disabled>Clear selection</button>
            </div>
            <table>
              <caption class="visually-hidden">Downloads: name, state, progress, speed, time left, connections and actions</caption>
              <thead><tr>
                <th scope="col" class="select"><input type="checkbox" id="select-page" aria-label="Select every download on this page"></th>
                <th scope="col" class="name">Name and state</th><th scope="col" class="progress">Progress</th>
                <th scope="col" class="wide num">Speed</th><th scope="col" class="wide num">Time left</th>
                <th scope="col" class="wide num">Conn.</th><th scope="col" class="actions">Actions</th>
              </tr></thead>
              <tbody id="rows"></tbody>
            </table>
            <p id="empty" hidden>No downloads here.</p>
            <nav class="row pager" aria-label="Pages">
              <button type="button" id="previous-page" aria-keyshortcuts="[">Previous page</button>
              <span id="page-label"></span>
              <button type="button" id="next-page" aria-keyshortcuts="]">Next page</button>
            </nav>
          </section>
          <section aria-labelledby="hosts-heading" class="hosts">
            <h2 id="hosts-heading"><button type="button" id="hosts-toggle" class="disclosure" aria-expanded="false" aria-controls="hosts-body" aria-keyshortcuts="h">Hosts</button></h2>
            <div id="hosts-body" hidden>
              <p id="hosts-status" class="muted"></p>
              <p id="hosts-empty" hidden>No host has been contacted yet.</p>
              <table id="hosts-table" class="hosts-table" hidden>
                <caption>Politeness per host: the request rate in force, the connection cap, the requests sent, any hold and the last throttle; throttled hosts first</caption>
                <thead><tr>
                  <th scope="col" class="host">Host</th><th scope="col" class="state">State</th>
                  <th scope="col" class="wide num">Rate limit</th><th scope="col" class="wide num">Connection cap</th>
                  <th scope="col" class="wide num">Requests</th><th scope="col" class="num hold">Hold left</th>
                  <th scope="col" class="throttle">Last throttle and why</th>
                </tr></thead>
                <tbody id="host-rows"></tbody>
              </table>
              <p id="hosts-more" class="muted" hidden>More hosts than these were contacted: <code>haul.getHosts</code> answers them all.</p>
            </div>
          </section>
          </div>
          <aside id="details" hidden aria-labelledby="details-heading" tabindex="-1">
            <div class="details-head">
              <h2 id="details-heading">Details</h2>
              <button type="button" id="details-close">Close details</button>
            </div>
            <p id="details-gone" hidden>This download is no longer there.</p>
            <div id="details-body">
              <dl class="facts">
                <dt>State</dt><dd id="d-state"></dd>
                <dt>Progress</dt><dd id="d-progress"></dd>
                <dt>Speed</dt><dd id="d-speed"></dd>
                <dt>Time left</dt><dd id="d-eta"></dd>
                <dt>Connections</dt><dd id="d-connections"></dd>
                <dt>File</dt><dd id="d-file" class="path"></dd>
                <dt>Added</dt><dd id="d-added"></dd>
                <dt>Finished</dt><dd id="d-finished"></dd>
              </dl>
              <figure class="spark">
                <canvas id="d-spark" role="img" aria-label="Speed of this download over the last 2 minutes"></canvas>
                <figcaption id="d-spark-caption">Speed, last 2 minutes</figcaption>
              </figure>
              <h3>Sources</h3>
              <table class="sources">
                <thead><tr><th scope="col">URL</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Served</th></tr></thead>
                <tbody id="d-sources"></tbody>
              </table>
              <div id="d-error-section" hidden>
                <h3>Error</h3>
                <p id="d-error" class="error"></p>
                <p id="d-suggestion"></p>
              </div>
              <h3>Digest</h3>
              <dl class="facts" id="d-digest"></dl>
              <h3>History</h3>
              <ol id="d-history" class="history"></ol>
              <h3>Options</h3>
              <form id="d-limit-form" class="row">
                <label>Speed limit <input id="d-limit" size="10" placeholder="e.g. 500K; 0 = none"></label>
                <button type="submit">Set limit</button>
              </form>
              <form id="d-connections-form" class="row">
                <label>Connections <input id="d-connections-input" type="number" min="1" max="32"></label>
                <button type="submit">Set connections</button>
              </form>
              <div class="row" id="d-position-row" role="group" aria-labelledby="d-position">
                <span id="d-position"></span>
                <button type="button" data-action="top">Move to top</button>
                <button type="button" data-action="up">Move up</button>
                <button type="button" data-action="down">Move down</button>
                <button type="button" data-action="bottom">Move to bottom</button>
              </div>
              <dl class="facts" id="d-options"></dl>
              <div id="d-more-section" hidden>
                <h3>More from aria2's status</h3>
                <dl class="facts" id="d-more"></dl>
              </div>
            </div>
          </aside>
          <p id="announce" class="visually-hidden" aria-live="polite"></p>
        </main>
        <dialog id="remove-dialog" aria-labelledby="remove-question">
          <form method="dialog">
            <p id="remove-question">Remove this download?</p>
            <label><input type="checkbox" id="remove-file"> Also delete the file</label>
            <div class="row"><button value="cancel">Cancel</button><button value="remove" id="remove-confirm">Remove</button></div>
          </form>
        </dialog>
        <dialog id="help-dialog" aria-labelledby="help-heading">
          <h2 id="help-heading">Keyboard shortcuts</h2>
          <p>They act on the row that has the focus, or on the selected rows.</p>
          <table class="shortcuts">
            <thead><tr><th scope="col">Key</th><th scope="col">Action</th></tr></thead>
            <tbody id="shortcut-rows"></tbody>
          </table>
          <form method="dialog"><button id="help-close">Close</button></form>
        </dialog>
        </body>
        </html>
        """#
}
