extension PartFile {
    /// How long ``continuing(_:)`` asks again for a lock that is held: a child process being started (a hook, or any
    /// `posix_spawn` of the program embedding Haul) holds a copy of every descriptor until it runs its program, and
    /// with it, for a moment, the lock of a part file that was just closed.
    static let lockWait = Duration.seconds(1)

    /// Opens the part file of an earlier run (``Mode/continueExisting``); while its lock is held, opens it again
    /// after 2 ms, then twice as long each time up to 100 ms, for at most ``lockWait`` (or until the task is
    /// cancelled), and then refuses with ``DownloadError/Code/destinationInUse``. Each try opens the path anew, so a
    /// file replaced in between is the one opened: callers trust only the size the opened file has.
    static func continuing(_ path: String) async throws(DownloadError) -> PartFile {
        let start = ContinuousClock.now
        var wait = Duration.milliseconds(2)
        while true {
            do {
                return try PartFile(path: path, mode: .continueExisting)
            } catch {
                guard error.code == .destinationInUse, start.duration(to: .now) + wait <= lockWait else { throw error }
                try? await Task.sleep(for: wait)
                if Task.isCancelled { throw error }
                wait = min(wait * 2, .milliseconds(100))
            }
        }
    }
}
