import Foundation

extension DownloadJob {
    /// How a wait for space ended.
    enum SpaceWaitEnding {
        /// There is room again, and the job has a slot: attempt again.
        case room
        /// The job was cancelled (pause, remove, shutdown) while it waited.
        case cancelled
        /// It waited ``FreeSpacePolicy/maximumWait`` in vain, or its part file lost bytes to a failed sync.
        case gaveUp(DownloadError)
    }

    /// A path on the file system the download writes to: its destination's directory once named, else the download
    /// directory (or the nearest existing directory above it).
    var spacePath: String {
        var path =
            record.destinationPath.map { ($0 as NSString).deletingLastPathComponent } ?? settings.downloadDirectory.path
        while !path.isEmpty, path != "/", FileSystem.entry(at: path) == .none {
            path = (path as NSString).deletingLastPathComponent
        }
        return path.isEmpty ? "/" : path
    }

    /// Bytes the download still has to write; 0 while its size is unknown.
    var remainingBytes: Int64 {
        let values = state.current
        guard let total = values.total else { return 0 }
        return max(0, total - values.received)
    }

    /// Why the download may not go on now: its file system has less room than the floor plus what it still has to
    /// write. Nil when there is room (or the file system cannot be read).
    func spaceShortage() -> FreeSpaceShortage? {
        settings.freeSpace.shortage(at: spacePath, remaining: remainingBytes)
    }

    /// Waits, without a slot, until the file system has room for the rest of the download above the floor, looking
    /// every ``FreeSpacePolicy/checkInterval`` on the tick clock; then asks for a slot again. `reason` is what said
    /// there was no room (the floor, or a write's `ENOSPC`).
    mutating func waitForSpace(after reason: DownloadError) async -> SpaceWaitEnding {
        // A sync that failed voids the bytes after the last checkpoint: that is a failure, not a wait.
        if let failure = state.failure { return .gaveUp(failure) }
        let policy = settings.freeSpace
        let path = spacePath
        let remaining = remainingBytes
        // A write found no room although the file system may report some (blocks taken since, a quota): show what
        // it reports, and look again after an interval.
        let reading = policy.probe(path) ?? FreeSpaceReading(availableBytes: 0, totalBytes: 0)
        var shortage =
            spaceShortage()
            ?? FreeSpaceShortage(
                path: path, neededBytes: policy.floor(of: reading) + remaining, availableBytes: reading.availableBytes,
                floorBytes: policy.floor(of: reading))
        logger.info("waiting for space", metadata: ["reason": "\(reason.summary)"])
        await environment.host.spaceWait(id, shortage)
        let waited = Stopwatch(settings.tickClock)
        while true {
            do {
                try await settings.tickClock.sleep(for: policy.checkInterval)
            } catch {
                return .cancelled
            }
            if Task.isCancelled { return .cancelled }
            if let now = spaceShortage() {
                if let longest = policy.maximumWait, waited.elapsed >= longest {
                    return .gaveUp(.diskFull(path: path))
                }
                if now != shortage {
                    shortage = now
                    await environment.host.spaceWait(id, now)
                }
                continue
            }
            state.update { $0.spaceShortage = nil }
            await environment.host.spaceWait(id, nil)
            await environment.host.slotNeeded(id)
            return .room
        }
    }
}
