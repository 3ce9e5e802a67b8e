extension DashboardScript {
    /// The pictures: the total speed over the last five minutes with labelled axes (speed in binary units, minutes
    /// ago), and a sparkline of one download's speed in the details panel. Both are canvases with a text alternative
    /// that says what they show in numbers.
    static let charts = #"""
        // MARK: charts

        // A round top for the axis, in the unit the label will use: 1, 2 or 5 times a power of ten of it.
        function niceMax(value) {
          let unit = 1;
          while (value >= unit * 1024 && unit < Math.pow(1024, 4)) unit *= 1024;
          const scaled = value / unit;
          const step = Math.pow(10, Math.floor(Math.log10(Math.max(scaled, 1))));
          const nice = [1, 2, 5, 10].map(function (m) { return m * step; }).find(function (n) { return n >= scaled; });
          return (nice || 10 * step) * unit;
        }

        function axisRate(n) {
          const units = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"];
          let i = 0;
          while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
          return (Number.isInteger(n) ? n : n.toFixed(1)) + " " + units[i];
        }

        function colours() {
          const styles = getComputedStyle(document.documentElement);
          const read = function (name, fallback) { return styles.getPropertyValue(name).trim() || fallback; };
          return { fg: read("--fg", "#1d1d1f"), muted: read("--muted", "#55575c"), line: read("--line", "#c9ccd1"),
            bar: read("--bar", "#1a62c4") };
        }

        // Sizes a canvas's bitmap to its box and the screen's pixel ratio; returns its context in CSS pixels.
        function prepare(canvas) {
          const ratio = window.devicePixelRatio || 1;
          const width = canvas.clientWidth || 300, height = canvas.clientHeight || 100;
          if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
            canvas.width = Math.round(width * ratio);
            canvas.height = Math.round(height * ratio);
          }
          const context = canvas.getContext("2d");
          if (!context) return null;
          context.setTransform(ratio, 0, 0, ratio, 0, 0);
          context.clearRect(0, 0, width, height);
          return { context: context, width: width, height: height };
        }

        function summary(samples) {
          const now = samples.length ? samples[samples.length - 1] : 0;
          const peak = Math.max.apply(null, samples.concat([0]));
          const average = samples.length ? samples.reduce(function (a, b) { return a + b; }, 0) / samples.length : 0;
          return { now: now, peak: peak, average: average };
        }

        function drawSpeedChart(samples) {
          const s = summary(samples);
          setAttribute(ui.chart, "aria-label", "Total download speed over the last " + Math.round(samples.length / 60) +
            " minutes: now " + rate(s.now) + ", peak " + rate(s.peak) + ", average " + rate(s.average));
          if (ui.chart.offsetParent === null) return;
          const canvas = prepare(ui.chart);
          if (!canvas) return;
          const g = canvas.context, c = colours();
          const left = 84, right = 8, top = 8, bottom = 30;
          const plotWidth = canvas.width - left - right, plotHeight = canvas.height - top - bottom;
          const max = niceMax(Math.max(s.peak, 1));
          g.font = "11px system-ui, sans-serif";
          g.lineWidth = 1;
          // The speed axis: 0, half and the top, labelled in binary units.
          g.textAlign = "right";
          g.textBaseline = "middle";
          [0, 0.5, 1].forEach(function (fraction) {
            const y = top + plotHeight * (1 - fraction);
            g.strokeStyle = c.line;
            g.beginPath(); g.moveTo(left, Math.round(y) + 0.5); g.lineTo(left + plotWidth, Math.round(y) + 0.5); g.stroke();
            g.fillStyle = c.muted;
            g.fillText(axisRate(max * fraction), left - 6, y);
          });
          // The time axis: a tick a minute, in minutes ago.
          const seconds = Math.max(samples.length, 60);
          g.textAlign = "center";
          g.textBaseline = "top";
          for (let ago = 0; ago <= seconds; ago += 60) {
            const x = left + plotWidth * (1 - ago / seconds);
            g.strokeStyle = c.line;
            g.beginPath(); g.moveTo(Math.round(x) + 0.5, top + plotHeight); g.lineTo(Math.round(x) + 0.5, top + plotHeight + 4); g.stroke();
            g.fillStyle = c.muted;
            g.fillText(ago === 0 ? "now" : "−" + ago / 60 + " min", Math.min(Math.max(x, left + 14), left + plotWidth - 12), top + plotHeight + 6);
          }
          g.fillText("time (minutes ago)", left + plotWidth / 2, top + plotHeight + 18);
          g.save();
          g.translate(8, top + plotHeight / 2);
          g.rotate(-Math.PI / 2);
          g.textBaseline = "middle";
          g.fillText("speed", 0, 0);
          g.restore();
          if (!samples.length) return;
          g.strokeStyle = c.bar;
          g.lineWidth = 1.5;
          g.beginPath();
          samples.forEach(function (value, index) {
            const x = left + plotWidth * (index + 1 - samples.length + seconds) / seconds;
            const y = top + plotHeight * (1 - value / max);
            if (index === 0) g.moveTo(x, y); else g.lineTo(x, y);
          });
          g.stroke();
        }

        function drawSparkline(samples) {
          const s = summary(samples);
          const text = "Speed, last 2 minutes: now " + rate(s.now) + ", peak " + rate(s.peak);
          setText(ui.detailsSparkCaption, text);
          setAttribute(ui.detailsSpark, "aria-label", text);
          const canvas = prepare(ui.detailsSpark);
          if (!canvas) return;
          const g = canvas.context, c = colours();
          const max = Math.max(s.peak, 1);
          g.strokeStyle = c.line;
          g.beginPath(); g.moveTo(0, canvas.height - 0.5); g.lineTo(canvas.width, canvas.height - 0.5); g.stroke();
          if (!samples.length) return;
          g.strokeStyle = c.bar;
          g.lineWidth = 1.5;
          g.beginPath();
          samples.forEach(function (value, index) {
            const x = samples.length === 1 ? canvas.width : canvas.width * index / (samples.length - 1);
            const y = canvas.height - 2 - (canvas.height - 4) * value / max;
            if (index === 0) g.moveTo(x, y); else g.lineTo(x, y);
          });
          g.stroke();
        }
        """#
}
