import Foundation
import Synchronization

/// Everything a job needs from its manager: the resources every job shares, and its owner (``JobHost``), the one way
/// it reaches the manager. One per manager, shared by all its jobs (what differs per download, the job holds
/// itself). A class: the job and its helpers each keep it, and a copy of a struct this size is a retain of every
/// field.
final class JobEnvironment: Sendable {
    let session: HTTPSession
    let store: DownloadStore
    /// The job's owner: slots, claims, names, and where its events go.
    let host: any JobHost
    let settings: EngineSettings
    let globalLimiter: RateLimiter
    /// Asked for a fresh URL when one expires; nil fails the download instead.
    let urlProvider: URLProvider?
    /// Moves complete files into place, many at a time.
    let finishing: FinishingQueue
    /// Writes the record a new part file needs first, together with other jobs' at the same moment.
    let recorder: TransferRecorder
    /// The free-space check before each attempt, with readings shared by the downloads starting in one directory.
    let freeSpace: FreeSpaceGauge

    /// Where the job's events go (its ``host``).
    var events: any DownloadEventSink { host }

    /// The directory whose path was asked for last, with its path (see ``path(of:)``).
    private let lastDirectory = Mutex<(url: URL, path: String)?>(nil)

    /// The path of `directory`. A file URL works its path out again on every read, and the downloads added together
    /// share their directory: the last one asked for is kept.
    func path(of directory: URL) -> String {
        if let last = lastDirectory.withLock({ $0 }), last.url == directory { return last.path }
        let path = directory.path
        lastDirectory.withLock { $0 = (directory, path) }
        return path
    }

    init(
        session: HTTPSession, store: DownloadStore, host: any JobHost, settings: EngineSettings,
        globalLimiter: RateLimiter, urlProvider: URLProvider?, finishing: FinishingQueue, recorder: TransferRecorder
    ) {
        self.session = session
        self.store = store
        self.host = host
        self.settings = settings
        self.globalLimiter = globalLimiter
        self.urlProvider = urlProvider
        self.finishing = finishing
        self.recorder = recorder
        freeSpace = FreeSpaceGauge(settings.freeSpace)
    }
}
