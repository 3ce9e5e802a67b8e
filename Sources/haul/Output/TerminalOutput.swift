import Foundation
import HaulKit

/// Live progress on a terminal: one line per running download and a total line, redrawn in place at most ten
/// times a second in a single write (no flicker); finished downloads scroll up above the bars; a summary at the end.
final class TerminalOutput: SessionOutput {
    private var drawnLines = 0
    private var dirty = true
    private var messages: [String] = []
    private var errors: [String] = []
    private let startedAt = ContinuousClock.now
    private let width: () -> Int

    init(width: @escaping () -> Int = { Console.width }) { self.width = width }

    func changed(_ entry: TransferEntry, by change: DownloadEvent.Change, in table: TransferTable) {
        dirty = true
        switch change {
        case .status(.failed(let error)):
            errors.append(PlainOutput.failure(of: entry, error))
        case .status(.completed), .restarted, .status(.paused), .status(.removed), .waitingForSpace:
            if let line = PlainOutput.line(for: entry, change) { messages.append(Self.stripPrefix(line)) }
        default:
            break
        }
    }

    func tick(_ table: TransferTable) {
        guard dirty else { return }
        dirty = false
        redraw(table)
    }

    func finish(_ table: TransferTable, outcome: SessionOutcome) {
        redraw(table)
        Console.status(eraseBars())
        Console.status(
            Self.summary(of: table.all, width: width(), elapsed: ContinuousClock.now.seconds(since: startedAt)))
        if outcome.interrupted { Console.error("interrupted; \(outcome.resumeHint) to resume") }
    }

    private func redraw(_ table: TransferTable) {
        if !errors.isEmpty {
            Console.status(eraseBars())
            for error in errors { Console.error(error) }
            errors.removeAll()
        }
        // Overwrite in place (each line cleared to its end, leftovers below cleared last): nothing is blanked first.
        var frame = drawnLines > 0 ? "\r\u{1B}[\(drawnLines)A" : "\r"
        for message in messages { frame += message + "\u{1B}[K\n" }
        messages.removeAll()
        let lines = Self.bars(for: table, width: width())
        for line in lines { frame += line + "\u{1B}[K\n" }
        frame += "\u{1B}[J"
        drawnLines = lines.count
        Console.status(frame)
    }

    /// Moves the cursor back to the first bar line and clears from there down.
    private func eraseBars() -> String {
        defer { drawnLines = 0 }
        return drawnLines > 0 ? "\r\u{1B}[\(drawnLines)A\u{1B}[J" : "\r"
    }

    private static func stripPrefix(_ line: String) -> String {
        line.hasPrefix("haul: ") ? String(line.dropFirst(6)) : line
    }

    // MARK: - Layout (pure, so it can be tested)

    /// The bar lines: one per running download, then the total.
    static func bars(for table: TransferTable, width: Int) -> [String] {
        // The table keeps its counts and totals: a redraw visits the running downloads only.
        let running = table.running
        var lines = running.map {
            line(
                name: $0.name, received: $0.received, expected: $0.expected, speed: $0.bytesPerSecond,
                smoothedSpeed: $0.smoothedBytesPerSecond, connections: $0.connections, width: width)
        }
        let counts = table.counts
        var parts = ["\(counts[.running] ?? 0) running"]
        if let queued = counts[.queued], queued > 0 { parts.append("\(queued) queued") }
        if let paused = counts[.paused], paused > 0 { parts.append("\(paused) paused") }
        let waiting = running.count { $0.waitingForSpace != nil }
        if waiting > 0 { parts.append("\(waiting) waiting for space") }
        parts.append("\(counts[.completed] ?? 0) done")
        if let failed = counts[.failed], failed > 0 { parts.append("\(failed) failed") }
        if table.removedCount > 0 { parts.append("\(table.removedCount) removed") }
        // Failed downloads count for nothing; a size still unknown makes the total unknown.
        let received = table.received
        let expected = table.expected
        let speed = running.reduce(0) { $0 + $1.bytesPerSecond }
        let smoothedSpeed = running.reduce(0) { $0 + $1.smoothedBytesPerSecond }
        lines.append(
            line(
                name: "Total", received: received, expected: expected, speed: speed, smoothedSpeed: smoothedSpeed,
                connections: 0, width: width, note: "(" + parts.joined(separator: ", ") + ")"))
        return lines
    }

    /// `name  42% [=====>     ] 12.3 MiB/100.0 MiB  5.2 MiB/s  ETA 17 s`, shortened to fit `width`; the time left
    /// is estimated from `smoothedSpeed` (else `speed`), and shown only while bytes move.
    static func line(
        name: String, received: Int64, expected: Int64?, speed: Double, smoothedSpeed: Double = 0, connections: Int,
        width: Int, note: String? = nil
    ) -> String {
        let usable = max(20, width - 1)  // Never the last column: some terminals wrap there.
        let fraction = expected.flatMap { $0 > 0 ? min(1, Double(received) / Double($0)) : nil }
        let percent = fraction.map { String(format: "%3d%%", Int(($0 * 100).rounded(.down))) } ?? "    "
        let sizes = expected.map { "\(ByteFormat.size(received))/\(ByteFormat.size($0))" } ?? ByteFormat.size(received)
        var tail = "  \(sizes)  \(ByteFormat.rate(speed))"
        if let expected, speed > 0, expected > received {
            tail +=
                "  ETA \(ByteFormat.clock(Double(expected - received) / (smoothedSpeed > 0 ? smoothedSpeed : speed)))"
        }
        if connections > 1 { tail += "  x\(connections)" }
        if let note { tail += "  " + note }
        let nameColumns = min(max(12, usable / 4), max(8, usable - tail.count - 18))
        let shownName = fit(name, to: nameColumns)
        let barColumns = usable - nameColumns - 1 - percent.count - 3 - tail.count
        var text = shownName + " " + percent
        if barColumns >= 8 {
            let inner = barColumns
            let filled = fraction.map { Int((Double(inner) * $0).rounded(.down)) } ?? 0
            let bar = String(repeating: "=", count: filled) + (filled < inner && fraction != nil ? ">" : "")
            text += " [" + bar.padding(toLength: inner, withPad: " ", startingAt: 0) + "]"
        }
        text += tail
        return fit(text, to: usable, pad: false)
    }

    /// `text` cut (with `…`) or padded to exactly `columns` characters.
    static func fit(_ text: String, to columns: Int, pad: Bool = true) -> String {
        if text.count > columns { return String(text.prefix(max(0, columns - 1))) + "…" }
        return pad ? text.padding(toLength: columns, withPad: " ", startingAt: 0) : text
    }

    /// The end-of-session table: per file its size, time, average speed and result.
    static func summary(of entries: [TransferEntry], width: Int, elapsed: Double, listedDone: Int = 20) -> String {
        guard !entries.isEmpty else { return "" }
        let removed = entries.filter(\.removed)
        let failed = entries.filter { $0.state == .failed && !$0.removed }
        let done = entries.filter { $0.state == .completed }
        let other = entries.filter { $0.state != .failed && $0.state != .completed && !$0.removed }
        let shown = Array(done.prefix(listedDone)) + failed + other + removed
        let nameColumns = min(40, max(12, shown.map(\.name.count).max() ?? 12))
        var text =
            "\n"
            + fit(
                "  ID  " + fit("FILE", to: nameColumns) + "        SIZE      TIME     AVG SPEED  RESULT", to: width - 1,
                pad: false) + "\n"
        for entry in shown {
            let size = entry.state == .completed || entry.received > 0 ? ByteFormat.size(entry.received) : "-"
            let measured = !entry.wasAlreadyComplete && entry.state != .failed
            let time = measured ? entry.seconds.map { ByteFormat.duration($0) } ?? "-" : "-"
            let speed = measured ? entry.averageBytesPerSecond.map(ByteFormat.rate) ?? "-" : "-"
            let result: String
            switch entry.state {
            case _ where entry.removed: result = "removed by another haul command"
            case .completed:
                result =
                    (entry.wasAlreadyComplete ? "already complete" : "done")
                    + (entry.verification.map { ", \($0)" } ?? "")
            case .failed: result = "failed: " + (entry.error?.summary ?? "unknown error")
            case .paused: result = "paused"
            case .interrupted: result = "interrupted"
            case .queued, .running: result = "not finished"
            }
            let row =
                String(entry.id.rawValue).leftPadded(to: 4) + "  " + fit(entry.name, to: nameColumns) + "  "
                + size.leftPadded(to: 10) + "  " + time.leftPadded(to: 8) + "  " + speed.leftPadded(to: 12) + "  "
                + result
            text += fit(row, to: width - 1, pad: false) + "\n"
        }
        if done.count > listedDone { text += "  … and \(done.count - listedDone) more done\n" }
        let bytes = entries.reduce(Int64(0)) { $0 + $1.transferred }
        var totals = "\(entries.count) download\(entries.count == 1 ? "" : "s"): \(done.count) done"
        if !failed.isEmpty { totals += ", \(failed.count) failed" }
        if !other.isEmpty { totals += ", \(other.count) not finished" }
        if !removed.isEmpty { totals += ", \(removed.count) removed" }
        totals += "; \(ByteFormat.size(bytes)) fetched in \(ByteFormat.duration(elapsed))"
        if elapsed > 0 { totals += " (\(ByteFormat.rate(Double(bytes) / elapsed)))" }
        return text + totals + "\n"
    }
}

extension String {
    /// Spaces before, to at least `columns` characters; never cut.
    func leftPadded(to columns: Int) -> String {
        var padded = ""
        padded.append(self, rightAlignedIn: columns)
        return padded
    }

    /// Spaces after, to at least `columns` characters; never cut.
    func rightPadded(to columns: Int) -> String {
        var padded = ""
        padded.append(self, leftAlignedIn: columns)
        return padded
    }

    /// Appends `text` after spaces, to at least `columns` characters; never cut. No intermediate strings (for
    /// long listings).
    mutating func append(_ text: String, rightAlignedIn columns: Int) {
        appendSpaces(columns - text.count)
        append(text)
    }

    /// Appends `text` and then spaces, to at least `columns` characters; never cut.
    mutating func append(_ text: String, leftAlignedIn columns: Int) {
        append(text)
        appendSpaces(columns - text.count)
    }

    /// Appends `count` spaces, up to 32 in one append (one space at a time was a tenth of `haul list`'s CPU for
    /// 100,000 rows).
    private mutating func appendSpaces(_ count: Int) {
        var left = count
        while left > 0 {
            let run = Swift.min(left, Self.paddings.count - 1)
            append(Self.paddings[run])
            left -= run
        }
    }

    /// `paddings[n]` is `n` spaces.
    private static let paddings = (0...32).map { String(repeating: " ", count: $0) }
}
