/// Everything a job needs from its manager.
struct JobEnvironment: Sendable {
    let session: HTTPSession
    let store: DownloadStore
    let events: EventHub
    let settings: EngineSettings
    let globalLimiter: RateLimiter
    /// Moves complete files into place, many at a time.
    let finishing: FinishingQueue
    /// Asks the manager for a free path for `name` in `directory` and records it for the download.
    let reserveDestination:
        @Sendable (_ id: DownloadID, _ directory: String, _ name: String) async throws(DownloadError) -> String
}
