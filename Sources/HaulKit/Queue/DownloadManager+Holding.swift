extension DownloadManager {
    /// Holds every download (`true`), or lets them run again (`false`): a pause schedule's window
    /// (``DownloadSchedule``). While held nothing starts; downloads running here go back to the queue (still
    /// `queued`, their partial data kept) and start again, in their order, when released. Paused downloads stay
    /// paused either way. Returns once the running jobs have stopped.
    public func holdDownloads(_ held: Bool) async {
        if held {
            await performAndWait(lifecycle.hold())
        } else if lifecycle.isHeld {
            lifecycle.release()
            await schedule()
        }
    }

    /// Whether downloads are held (``holdDownloads(_:)``).
    public var isHoldingDownloads: Bool { lifecycle.isHeld }
}
