import ArgumentParser
import Foundation
import HaulKit

/// `--min-free-space` and how long a download waits for room: shared by `haul get`, `haul run` and `haul serve`
/// (docs/service.md, "Free space").
struct SpaceOptions: ParsableArguments {
    @Option(
        name: .customLong("min-free-space"),
        help: ArgumentHelp(
            "Free space to leave on the destination's file system, e.g. 2G (0: none; default: 1 GiB or 5% of the "
                + "file system, whichever is smaller). A download that would go below it, or finds the disk full, "
                + "waits for space.", valueName: "SIZE"))
    var minFreeSpace: String?

    @Option(
        name: .customLong("space-wait"),
        help: ArgumentHelp(
            "Longest wait for space before a download fails with 'no space left' (0: until there is room; default: "
                + "600 for get, 0 for run and serve).", valueName: "SECONDS"))
    var spaceWait: Double?

    @Option(
        name: .customLong("space-check-interval"),
        help: ArgumentHelp(
            "How often free space is looked at (seconds, default 5).", valueName: "SECONDS",
            visibility: .hidden))
    var checkInterval: Double = 5

    func validate() throws {
        if let minFreeSpace, Self.size(minFreeSpace) == nil {
            throw ValidationError("--min-free-space '\(minFreeSpace)' is not a size like 0, 500M or 2G")
        }
        if let spaceWait, spaceWait != 0 {
            try TransferOptions.checkSeconds(spaceWait, "--space-wait", minimum: 1)
        }
        try TransferOptions.checkSeconds(checkInterval, "--space-check-interval", minimum: 0.05)
    }

    /// A size, or 0.
    static func size(_ text: String) -> Int64? {
        text.trimmingCharacters(in: .whitespaces) == "0" ? 0 : ByteFormat.parse(text)
    }

    /// Sets the configuration's free-space policy; `defaultWait` is the command's longest wait in seconds (0: until
    /// there is room).
    func apply(to configuration: inout DownloadManager.Configuration, defaultWait: Double) {
        configuration.freeSpace.minimumFreeBytes = minFreeSpace.flatMap(Self.size)
        let wait = spaceWait ?? defaultWait
        configuration.freeSpace.maximumWait = wait == 0 ? nil : .milliseconds(Int64(wait * 1000))
        configuration.freeSpace.checkInterval = .milliseconds(Int64(checkInterval * 1000))
    }
}
