/// The dashboard's style sheet: light and dark, down to 360 px wide, still when the system asks for reduced motion.
/// Colours keep WCAG AA contrast (4.5:1 for text) on both backgrounds.
enum DashboardStyle {
    static let css = #"""
        :root { color-scheme: light dark; --fg: #1d1d1f; --bg: #fff; --panel: #f5f6f8; --muted: #55575c;
          --bar: #1a62c4; --line: #c9ccd1; --error: #b3261e; --ok: #1b6e35; --selected: #e3edfc; --focus: #1a62c4;
          font-family: system-ui, sans-serif; line-height: 1.35; }
        @media (prefers-color-scheme: dark) {
          :root { --fg: #ececec; --bg: #161618; --panel: #1f2024; --muted: #b4b6bb; --bar: #6ea8ff; --line: #3d3f45;
            --error: #ff8a80; --ok: #7ad38f; --selected: #1d2b45; --focus: #8cbcff; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; padding: 0 1rem 2rem; color: var(--fg); background: var(--bg); }
        .skip { position: absolute; left: -100vw; }
        .skip:focus { left: .5rem; top: .5rem; background: var(--bg); padding: .3rem; z-index: 2; }
        header { display: flex; flex-direction: column; gap: .3rem; }
        .masthead { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; }
        .summary { display: flex; flex-wrap: wrap; align-items: flex-start; gap: .5rem 1.5rem; }
        .summary > div { flex: 1 1 14rem; min-width: 0; }
        .summary p { margin: .15rem 0; }
        h1 { font-size: 1.4rem; margin: .6rem 0; } h2 { font-size: 1.1rem; } h3 { font-size: 1rem; margin: 1rem 0 .3rem; }
        #connection { margin: 0; color: var(--muted); flex: 1; }
        #connection[data-state="live"] { color: var(--ok); }
        #connection[data-state="offline"] { color: var(--error); }
        #totals { font-weight: 600; }
        #speed-now, #disk { color: var(--muted); }
        figure { margin: 0; }
        figcaption { color: var(--muted); font-size: .85em; }
        .chart { flex: 1 1 22rem; max-width: 36rem; min-width: 0; }
        #speed-chart { display: block; width: 100%; height: 140px; }
        .spark canvas { display: block; width: 100%; max-width: 22rem; height: 48px; }
        .row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .4rem 0; }
        .inline { display: inline-flex; flex-wrap: wrap; gap: .3rem; align-items: center; }
        label.check { display: inline-flex; gap: .3rem; align-items: center; }
        textarea { width: 100%; }
        input, select, textarea, button { font: inherit; color: inherit; background: var(--bg);
          border: 1px solid var(--line); border-radius: 4px; padding: .2rem .4rem; max-width: 100%; }
        button { cursor: pointer; background: var(--panel); }
        button:disabled { cursor: default; opacity: .6; }
        :focus-visible { outline: 2px solid var(--focus); outline-offset: 1px; }
        button.link { border: 0; background: none; padding: 0; text-align: left; font-weight: 600; color: var(--fg);
          max-width: 100%; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; display: block; }
        button.link:hover { text-decoration: underline; }
        table { width: 100%; border-collapse: collapse; table-layout: fixed; }
        th, td { text-align: left; padding: .3rem; border-bottom: 1px solid var(--line); overflow: hidden;
          text-overflow: ellipsis; vertical-align: top; }
        th.select, td.select { width: 2.2rem; }
        th.progress { width: 24%; } th.wide { width: 6.5rem; } th.wide + th.wide + th.wide { width: 4.5rem; }
        th.actions { width: 12.5rem; }
        .num { text-align: right; white-space: nowrap; }
        td.actions { overflow: visible; }
        td.actions button { margin: 0 .25rem .25rem 0; padding: .1rem .35rem; }
        tr[data-selected="true"] { background: var(--selected); }
        tr.current td:first-child { box-shadow: inset 3px 0 0 var(--bar); }
        .reason { color: var(--muted); font-size: .85em; white-space: normal; }
        tr[data-status="error"] .reason { color: var(--error); }
        .done, .narrow { font-size: .85em; color: var(--muted); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
        progress { width: 100%; accent-color: var(--bar); height: .8rem; }
        .error { color: var(--error); white-space: normal; }
        .bulk { padding: .3rem .5rem; background: var(--panel); border-radius: 4px; }
        #details { margin-top: 1rem; padding: .5rem 1rem 1rem; background: var(--panel); border: 1px solid var(--line);
          border-radius: 6px; transition: opacity .15s ease-out; }
        .details-head { display: flex; align-items: center; justify-content: space-between; gap: .5rem; }
        .details-head h2 { overflow-wrap: anywhere; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; margin: .3rem 0; }
        dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        .path { font-family: ui-monospace, monospace; font-size: .9em; }
        table.sources td { white-space: normal; overflow-wrap: anywhere; font-size: .9em; }
        table.sources th:nth-child(2) { width: 5.5rem; } table.sources th:nth-child(3) { width: 4.5rem; }
        table.sources th:nth-child(4) { width: 5.5rem; }
        ol.history { margin: .2rem 0; padding-left: 1.4rem; font-size: .9em; }
        ol.history time { color: var(--muted); margin-right: .4rem; }
        dialog { color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: 6px;
          max-width: min(34rem, 92vw); }
        dialog::backdrop { background: rgb(0 0 0 / 40%); }
        table.shortcuts td:first-child { white-space: nowrap; width: 7rem; }
        kbd { font-family: ui-monospace, monospace; border: 1px solid var(--line); border-radius: 3px; padding: 0 .3rem; }
        .visually-hidden { position: absolute; clip: rect(0 0 0 0); width: 1px; height: 1px; overflow: hidden;
          white-space: nowrap; }
        tr.flash td { animation: flash .6s ease-out; }
        @keyframes flash { from { background: var(--selected); } to { background: transparent; } }
        .list, .hosts { container-type: inline-size; }
        .hosts { margin-top: 1rem; }
        .muted { color: var(--muted); }
        button.disclosure { border: 0; background: none; padding: 0; font-weight: 600; color: var(--fg); }
        button.disclosure::before { content: "▸ " / ""; }
        button.disclosure[aria-expanded="true"]::before { content: "▾ " / ""; }
        table.hosts-table caption { text-align: left; color: var(--muted); font-size: .85em; padding: .2rem 0; }
        #hosts-table th.host { width: 20%; } #hosts-table th.wide { width: 6rem; } #hosts-table th.hold { width: 4.8rem; }
        #hosts-table th.throttle { width: 25%; }
        #hosts-table thead th { white-space: normal; text-overflow: clip; vertical-align: bottom; }
        table.hosts-table th[scope="row"], table.hosts-table td { white-space: normal; overflow-wrap: anywhere; }
        table.hosts-table tr[data-throttled="true"] th { box-shadow: inset 3px 0 0 var(--error); }
        .badge { display: inline-block; font-weight: 600; font-size: .85em; padding: 0 .3rem; border: 1px solid var(--line);
          border-radius: 3px; }
        tr[data-throttled="true"] .badge { color: var(--error); border-color: currentColor; }
        table.hosts-table .narrow { white-space: normal; }
        .narrow { display: none; }
        @container (max-width: 56rem) {
          .wide { display: none; } .narrow { display: block; } th.progress { width: 30%; }
        }
        @media (min-width: 1100px) {
          main.with-details { display: grid; grid-template-columns: minmax(0, 1fr) 26rem; gap: 0 1.2rem; align-items: start; }
          #details { position: sticky; top: .5rem; max-height: calc(100vh - 1rem); overflow: auto; }
        }
        @media (max-width: 700px) {
          body { padding: 0 .4rem 1rem; } .wide { display: none; } .narrow { display: block; }
          th.progress { width: 28%; } th.actions { width: 5.6rem; } #hosts-table th.host { width: 30%; }
          td.actions button { display: block; width: 100%; margin: 0 0 .2rem; }
          th, td { padding: .25rem .15rem; font-size: .9em; }
          .chart { flex-basis: 100%; }
        }
        @media (prefers-reduced-motion: reduce) {
          *, *::before, *::after { animation: none !important; transition: none !important; scroll-behavior: auto !important; }
        }
        """#
}
