import Foundation
import HaulKit
import Observation

/// Draws a ``DownloadListModel``'s rows as a table, again whenever Observation says they changed. On a terminal the
/// table is redrawn in place, at most four times a second; otherwise a line is printed for each change of state as
/// it happens (a process killed a moment later has said it), and the table once at the end.
@MainActor
final class LiveTable {
    let model: DownloadListModel
    private let inPlace = isatty(1) == 1
    private var drawnLines = 0
    private var states: [DownloadID: DownloadState] = [:]
    private var stopped = false

    init(model: DownloadListModel) { self.model = model }

    func start() { watch() }

    /// Draws the last table and stops watching.
    func stop() {
        stopped = true
        draw(final: true)
    }

    /// Draws, then asks to be told of the next change of what it drew.
    private func watch() {
        guard !stopped else { return }
        withObservationTracking {
            draw(final: false)
        } onChange: { [weak self] in
            // Called before the change is made: drawn from a task, which runs once it is.
            Task { @MainActor in
                if self?.inPlace == true { try? await Task.sleep(for: .milliseconds(250)) }
                self?.watch()
            }
        }
    }

    private func draw(final: Bool) {
        let rows = model.rows
        if !inPlace {
            var lines = ""
            for row in rows where states[row.id] != row.state {
                states[row.id] = row.state
                lines += "#\(row.id.rawValue) \(row.name) \(row.state.rawValue)\n"
            }
            if final { lines += Self.table(rows) }
            FileHandle.standardOutput.write(Data(lines.utf8))
            return
        }
        let text = Self.table(rows)
        var output = String(repeating: "\u{1B}[1A\u{1B}[2K", count: drawnLines)
        output += text
        drawnLines = text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
        FileHandle.standardOutput.write(Data(output.utf8))
    }

    /// The rows as text: id, name, state, progress bar and percentage, size, speed, time left.
    static func table(_ rows: [DownloadListModel.Row]) -> String {
        var lines = [pad(["ID", "NAME", "STATE", "PROGRESS", "SIZE", "SPEED", "LEFT"])]
        for row in rows {
            let fraction = row.fraction ?? 0
            let filled = Int((fraction * 20).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 20 - filled)
            let percent = row.fraction.map { String(format: "%5.1f%%", $0 * 100) } ?? "    ?"
            let size = "\(bytes(row.receivedBytes))/\(row.totalBytes.map(bytes) ?? "?")"
            let speed = row.bytesPerSecond > 0 ? bytes(Int64(row.bytesPerSecond)) + "/s" : ""
            let left = row.estimatedTimeRemaining.map { "\($0.components.seconds)s" } ?? ""
            let state = row.error.map { "\(row.state.rawValue): \($0.summary)" } ?? row.state.rawValue
            lines.append(pad(["\(row.id.rawValue)", row.name, state, "\(bar) \(percent)", size, speed, left]))
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func pad(_ cells: [String]) -> String {
        let widths = [4, 24, 12, 28, 19, 11, 6]
        return zip(cells, widths).map { cell, width in
            cell.count >= width
                ? String(cell.prefix(width - 1)) + " " : cell.padding(toLength: width, withPad: " ", startingAt: 0)
        }.joined()
    }

    private static func bytes(_ count: Int64) -> String { ByteCount.binary(count) }
}
