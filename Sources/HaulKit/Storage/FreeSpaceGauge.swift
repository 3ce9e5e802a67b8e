import Synchronization

/// The check made before each attempt of a download (``FreeSpacePolicy/shortage(at:remaining:)``), with one reading
/// of a directory's file system shared by the downloads that start in it within ``lifetime``: a queue of small files
/// read the file system (`statvfs`, and a `stat` to find the directory) once per file.
///
/// A shared reading only ever says there is room: each download checked against it draws what it still has to write
/// from it, so the downloads started on one reading together fit above the floor as that reading showed it. A
/// reading that shows a shortage is never kept: a download waiting for space, and the next one to start, read the file
/// system again. What other programs write meanwhile is seen at the next reading, at most ``lifetime`` later; a
/// running download checks again every ``FreeSpacePolicy/checkInterval``, and a write that finds no room is never
/// taken for a success.
final class FreeSpaceGauge: Sendable {
    let policy: FreeSpacePolicy
    private let readings = Mutex<[String: Shared]>([:])

    /// How long a reading that showed room is shared.
    static let lifetime: Duration = .milliseconds(100)
    /// Directories whose readings are kept at once (a daemon may save into many).
    static let limit = 64

    private struct Shared {
        var reading: FreeSpaceReading
        var takenAt: ContinuousClock.Instant
        /// What the downloads checked against it still had to write.
        var drawn: Int64
    }

    init(_ policy: FreeSpacePolicy) { self.policy = policy }

    /// Why a download in `directory` (which may not exist yet: the nearest directory above it that does is read) that
    /// still has to write `remaining` bytes (0 when unknown) must wait; nil when there is room, or when the file
    /// system cannot be read (a real write then says whether there is). The state database's file system
    /// (``FreeSpacePolicy/stateDirectory``) must have room too, above its own floor.
    func shortage(in directory: String, remaining: Int64) -> FreeSpaceShortage? {
        let now = ContinuousClock.now
        if let shortage = check(directory, remaining: max(0, remaining), floor: policy.floor(of:), at: now) {
            return shortage
        }
        guard let state = policy.stateDirectory, state != directory else { return nil }
        return check(state, remaining: 0, floor: policy.stateFloor(of:), at: now)
    }

    /// ``shortage(in:remaining:)`` of one directory's file system, above the floor `floor` gives for its reading, as
    /// of `now`.
    private func check(
        _ directory: String, remaining: Int64, floor: (FreeSpaceReading) -> Int64, at now: ContinuousClock.Instant
    ) -> FreeSpaceShortage? {
        let shared = readings.withLock { readings -> Bool in
            guard var shared = readings[directory], shared.takenAt.duration(to: now) < Self.lifetime else {
                return false
            }
            let left = shared.reading.availableBytes - shared.drawn - remaining
            guard left >= floor(shared.reading) else { return false }
            shared.drawn += remaining
            readings[directory] = shared
            return true
        }
        if shared { return nil }
        guard let (reading, path) = read(directory) else { return nil }
        if let shortage = policy.shortage(reading: reading, at: path, remaining: remaining, floor: floor(reading)) {
            readings.withLock { $0[directory] = nil }
            return shortage
        }
        readings.withLock { readings in
            if readings[directory] == nil, readings.count >= Self.limit { readings.removeAll(keepingCapacity: true) }
            readings[directory] = Shared(reading: reading, takenAt: now, drawn: remaining)
        }
        return nil
    }

    /// The reading of `directory`'s file system, and the path read: `directory`, or the nearest directory above it
    /// that exists. Nil when no file system can be read.
    func read(_ directory: String) -> (FreeSpaceReading, path: String)? {
        if let reading = policy.probe(directory) { return (reading, directory) }
        let existing = Self.nearestExisting(directory)
        guard existing != directory, let reading = policy.probe(existing) else { return nil }
        return (reading, existing)
    }

    /// `path` or the nearest directory above it that exists ("/" at the end).
    static func nearestExisting(_ path: String) -> String {
        var path = path
        while !path.isEmpty, path != "/", FileSystem.entry(at: path) == .none {
            path = FileSystem.parent(of: path)
        }
        return path.isEmpty ? "/" : path
    }
}
