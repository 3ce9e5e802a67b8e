import Foundation
import Synchronization

/// Everything a job needs from its manager. One per manager, shared by all its jobs (what differs per download, the
/// job holds itself). A class: the job and its helpers each keep it, and a copy of a struct this size is a retain of
/// every field.
final class JobEnvironment: Sendable {
    let session: HTTPSession
    let store: DownloadStore
    let events: EventHub
    let settings: EngineSettings
    let globalLimiter: RateLimiter
    /// Asks for `wanted` connections to `host` for download `id` (its claim holds one): returns how many it may
    /// open, its share of the per-host limit (which a shared queue holds across its workers).
    let widenClaim: @Sendable (_ id: DownloadID, _ host: String, _ wanted: Int) async -> Int
    /// Asked for a fresh URL when one expires; nil fails the download instead.
    let urlProvider: URLProvider?
    /// Moves complete files into place, many at a time.
    let finishing: FinishingQueue
    /// Writes the record a new part file needs first, together with other jobs' at the same moment.
    let recorder: TransferRecorder
    /// Gives the slot of download `id` to the next queued download while its complete file is finished (it holds
    /// no connection then); the manager may keep it in the slot (see ``DownloadLifecycle/finishingStarted(_:holding:)``).
    /// `heldBytes`: the size of its body held in memory, nil for an open part file.
    let finishingStarts: @Sendable (_ id: DownloadID, _ heldBytes: Int64?) async -> Void
    /// Returns once download `id` has a slot again, before it connects after its finishing failed.
    let slotNeeded: @Sendable (_ id: DownloadID) async -> Void
    /// Download `id` waits for room on its file system (`shortage`), or has room again (nil): the manager gives its
    /// slot to the next download and shows the reason (``DownloadLifecycle/spaceRanOut(_:)``). After nil, the job
    /// asks for a slot with ``slotNeeded`` before it connects.
    let spaceWait: @Sendable (_ id: DownloadID, _ shortage: FreeSpaceShortage?) async -> Void
    /// Gives the slot of download `id` to another host's download while `host` makes it wait `wait` (a `Retry-After`,
    /// the host's request budget); returns whether it was given. ``slotNeeded`` takes one back.
    let hostWaitStarts: @Sendable (_ id: DownloadID, _ host: String, _ wait: Duration) async -> Bool
    /// Asks the manager for a free path for `name` in `directory` and records it for the download; with
    /// `replacing`, a file already there (that no other download writes) counts as free. `journal`: the download may
    /// keep a segment journal beside its part file (see ``DestinationReservations``).
    let reserveDestination:
        @Sendable (_ id: DownloadID, _ directory: String, _ name: String, _ replacing: Bool, _ journal: Bool)
            async throws(DownloadError) -> String

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
        session: HTTPSession, store: DownloadStore, events: EventHub, settings: EngineSettings,
        globalLimiter: RateLimiter,
        widenClaim: @escaping @Sendable (_ id: DownloadID, _ host: String, _ wanted: Int) async -> Int,
        urlProvider: URLProvider?, finishing: FinishingQueue, recorder: TransferRecorder,
        finishingStarts: @escaping @Sendable (_ id: DownloadID, _ heldBytes: Int64?) async -> Void,
        slotNeeded: @escaping @Sendable (_ id: DownloadID) async -> Void,
        spaceWait: @escaping @Sendable (_ id: DownloadID, _ shortage: FreeSpaceShortage?) async -> Void,
        hostWaitStarts: @escaping @Sendable (_ id: DownloadID, _ host: String, _ wait: Duration) async -> Bool,
        reserveDestination:
            @escaping @Sendable (
                _ id: DownloadID, _ directory: String, _ name: String, _ replacing: Bool, _ journal: Bool
            )
            async throws(DownloadError) -> String
    ) {
        self.session = session
        self.store = store
        self.events = events
        self.settings = settings
        self.globalLimiter = globalLimiter
        self.widenClaim = widenClaim
        self.urlProvider = urlProvider
        self.finishing = finishing
        self.recorder = recorder
        self.finishingStarts = finishingStarts
        self.slotNeeded = slotNeeded
        self.spaceWait = spaceWait
        self.hostWaitStarts = hostWaitStarts
        self.reserveDestination = reserveDestination
    }
}
