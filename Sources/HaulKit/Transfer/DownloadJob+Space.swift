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

    /// The directory the download writes to: its destination's once named, else the download directory. It may not
    /// exist yet (``FreeSpaceGauge`` then reads the nearest one above it).
    var spaceDirectory: String {
        record.destinationPath.map(FileSystem.parent(of:)) ?? environment.path(of: settings.downloadDirectory)
    }

    /// Bytes the download still has to write; 0 while its size is unknown.
    var remainingBytes: Int64 {
        let values = state.current
        guard let total = values.total else { return 0 }
        return max(0, total - values.received)
    }

    /// Why the download may not go on now: its file system has less room than the floor plus what it still has to
    /// write. Nil when there is room (or the file system cannot be read). A reading that showed room a moment ago for
    /// another download in the directory may answer (see ``FreeSpaceGauge``).
    func spaceShortage() -> FreeSpaceShortage? {
        environment.freeSpace.shortage(in: spaceDirectory, remaining: remainingBytes)
    }

    /// Waits, without a slot, until the file system has room for the rest of the download above the floor, looking
    /// every ``FreeSpacePolicy/checkInterval`` on the tick clock; then asks for a slot again. `reason` is what said
    /// there was no room (the floor, or a write's `ENOSPC`).
    mutating func waitForSpace(after reason: DownloadError) async -> SpaceWaitEnding {
        // A sync that failed voids the bytes after the last checkpoint: that is a failure, not a wait.
        if let failure = state.failure { return .gaveUp(failure) }
        let policy = settings.freeSpace
        let path = FreeSpaceGauge.nearestExisting(spaceDirectory)
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
                    // The file system that is short: the destination's, or the state database's.
                    return .gaveUp(.diskFull(path: now.path))
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
