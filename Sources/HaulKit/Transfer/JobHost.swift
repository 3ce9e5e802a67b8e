/// Where a running download's events go: its owner's subscribers. The manager's event hub is one; a job, its
/// ``Retrier`` and its connections only ever see this protocol, so the transfer code names nothing of the queue.
protocol DownloadEventSink: Sendable {
    /// Reports `change` of download `id`; `change` is made only if someone listens.
    func yield(_ id: DownloadID, _ change: @autoclosure () -> DownloadEvent.Change)
}

/// What a job asks of its owner, the one way it reaches it: slots, claims, names, and its events. The manager
/// conforms through an adapter in `Queue/`; the job holds it in its ``JobEnvironment``, beside the shared resources
/// (session, store, settings, limiter).
///
/// Every wait the owner makes a job take here is bounded by the owner's own rules (a slot is granted or the job is
/// stopped; the job's task is cancelled on pause, removal and shutdown).
///
/// It also lends the job its slot (``SlotLender``).
protocol JobHost: DownloadEventSink, SlotLender {
    /// Asks for `wanted` connections to `host` for download `id` (its claim holds one): returns how many it may
    /// open, its share of the per-host limit (which a shared queue holds across its workers).
    func widenClaim(_ id: DownloadID, host: String, wanted: Int) async -> Int

    /// Gives the slot of download `id` to the next queued download while its complete file is finished (it holds
    /// no connection then); the owner may keep it in the slot. `heldBytes`: the size of its body held in memory,
    /// nil for an open part file.
    func finishingStarts(_ id: DownloadID, holding heldBytes: Int64?) async

    /// Download `id` waits for room on its file system (`shortage`), or has room again (nil): the owner gives its
    /// slot to the next download and shows the reason. After nil, the job asks for a slot with
    /// ``SlotLender/slotNeeded(_:)`` before it connects.
    func spaceWait(_ id: DownloadID, _ shortage: FreeSpaceShortage?) async

    /// Where the finishing queue tells how the small files that jobs ended with (``DownloadJob/Outcome/handedOff(_:)``)
    /// ended, once the owner has handed them to it (``FinishingQueue/handOff(_:to:)``); nil: the owner takes no such
    /// file, and every job waits for its file to be in place.
    var finishingReceiver: (any FinishingReceiver)? { get }

    /// A free path for `name` in `directory`, recorded for download `id`; with `replacing`, a file already there
    /// (that no other download writes) counts as free. `journal`: the download may keep a segment journal beside
    /// its part file.
    func reserveDestination(
        _ id: DownloadID, in directory: String, name: String, replacing: Bool, journal: Bool
    ) async throws(DownloadError) -> String
}
