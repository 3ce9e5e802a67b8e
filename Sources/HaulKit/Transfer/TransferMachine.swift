import Foundation

/// One download's run as a value: after each attempt, failure and wait, which step comes next.
///
/// ```
/// attempt ──completed──────────────────────────────▶ finish ──▶ (done)
///    │                                                  └──rejected (checksum failed with mirrors' bytes)──▶ wait
///    │ ├───wrote bytes, the body ended early───────▶ attempt
///    │ ├───brought nothing, failed, restart from 0──▶ wait ──▶ attempt
///    │ ├───budget spent, or a final error──────────▶ failed
///    │ └───no room (below the floor, ENOSPC)───────▶ waitForSpace ──room again──▶ attempt
///    └─────cancelled (pause, remove, shutdown)─────▶ stopped
/// ```
///
/// An attempt is one request on one connection, or, once the file is split, a run of every connection of the plan
/// (``SegmentedTransfer``), whose failures go through the same ``Retrier``: one retry component and one body writer
/// for both paths. Whether a failure is worth retrying is ``DownloadError/isTransient`` alone, decided in the wait.
/// Events that do not apply to the current step (any event after `failed` or `stopped`) change nothing.
struct TransferMachine: Sendable {
    /// How one attempt ended, when it did not throw.
    enum AttemptResult: Sendable {
        case completed
        /// The whole body of a small new file arrived into memory (``HeldBody``); `fresh`: its name was reserved in
        /// this run. The finishing group writes it.
        case held(HeldBody, fresh: Bool)
        /// ``ExistingFilePolicy/keep`` (or `-N`, the server's copy not newer) keeps the file already at the name:
        /// the download completes with it, fetching nothing.
        case keptExistingFile
        /// The body ended cleanly before the end of the file (a server that sends shorter ranges, or a bounded
        /// range of a file whose size is unknown); `wrote` says whether it brought any byte.
        case incomplete(wrote: Bool)
        /// The partial data was discarded; fetch again from byte 0.
        case refetch(RestartReason, detail: String)
        /// One of several connections found the run's retry budget spent: `error` ends the run (no room on the
        /// disk is waited out). The job lets another source take over first (``tookOver()``).
        case gaveUp(DownloadError)
    }

    enum Step: Sendable {
        /// Send a request (or run the plan's connections); the first of a resumed run compares an overlap.
        case attempt(verifyingOverlap: Bool)
        /// Wait through the retry budget before the next attempt (or give up).
        case wait(Retrier.Setback)
        /// Wait, without a slot, until the file system has room (``FreeSpacePolicy``): `reason` is the error that
        /// said there was none (a write's `ENOSPC`, or the floor).
        case waitForSpace(DownloadError)
        /// Verify, sync and move the complete file into place; `contents` says what there is to put there.
        case finish(Finishing)
        case failed(DownloadError)
        case stopped

        var isFinal: Bool {
            switch self {
            case .failed, .stopped: true
            case .attempt, .wait, .waitForSpace, .finish: false
            }
        }
    }

    /// What a ``Step/finish`` puts in place: the part file, a body held in memory (only valid until finishing takes
    /// it: a rejected or failed finish fetches again), or nothing, the file already there being kept.
    enum Finishing: Sendable {
        case partFile
        case held(HeldBody, fresh: Bool)
        case keptExistingFile
    }

    /// What this run has learnt about the server and was granted by its owner: valid in every step, from the
    /// answer that taught it to the end of the run.
    struct Terms: Sendable, Equatable {
        /// False once a server mishandled ranges (or the body is decoded): requests ask for the whole file.
        var rangesUsable = true
        /// False once a `200` replaced a multi-connection plan (or the size is unknown, or the body is decoded): the
        /// rest of the run uses one connection.
        var segmentsAllowed = true
        /// The connections to the host granted for a split, once asked (``DownloadJob/grantedConnections()``).
        var connectionGrant: Int?
        /// The encoding the server applies unasked, once seen: later attempts go straight to the decoding client.
        var unrequestedEncoding: String?
        /// The generation of the request target the last one-connection request used (a refusal that means an
        /// expired URL refreshes it from there).
        var requestedGeneration = 0
    }

    /// What the file must be compared with: set before the first attempt, void once the file is fetched from 0.
    struct Expectations: Sendable, Equatable {
        /// The modification time of the file a ``ExistingFilePolicy/replaceIfNewer`` download may replace: asked
        /// with `If-Modified-Since`, and compared with the answer's `Last-Modified`.
        var existingModified: Date?
        /// The SHA-256 the file must have: that of the file completed before, when this run resumes from what is
        /// left of it (a completed file cut short by the user).
        var sha256: String?
    }

    private(set) var step: Step
    private(set) var terms = Terms()
    private(set) var expectations = Expectations()
    /// False once the job gave its slot away when its finishing started: if finishing fails, it asks for a slot
    /// again before the next attempt connects. (A wait for space or for its host takes one back itself.)
    private(set) var holdsSlot = true

    /// Starts with an attempt; `resuming` when bytes are already on disk (its overlap is compared).
    init(resuming: Bool) {
        step = .attempt(verifyingOverlap: resuming)
    }

    /// The part file was checked before the first request (``DownloadJob/prepare()``): the first attempt compares
    /// an overlap when bytes are on disk. Only before the first attempt ended.
    mutating func prepared(resuming: Bool) {
        guard case .attempt = step else { return }
        step = .attempt(verifyingOverlap: resuming)
    }

    /// The run resumes what is left of a file completed before, whose SHA-256 was `sha256`: it must end as the same
    /// file.
    mutating func resumingCompletedFile(sha256: String?) { expectations.sha256 = sha256 }

    /// `-N`: the file at the destination, modified at `modified`, is replaced only by a newer copy.
    mutating func comparingWithExisting(modified: Date?) { expectations.existingModified = modified }

    // MARK: - What the run learns

    /// A server answered a range with the wrong bytes, or the body is decoded: no more ranges this run.
    mutating func rangesRefused() { terms.rangesUsable = false }

    /// The file cannot be split any more this run (a `200` replaced the plan, or the size is unknown).
    mutating func splitRefused() { terms.segmentsAllowed = false }

    /// The server applies `encoding` unasked: the body is decoded, from byte 0, on one connection, without ranges.
    mutating func encodingSeen(_ encoding: String) {
        terms.unrequestedEncoding = encoding
        terms.rangesUsable = false
        terms.segmentsAllowed = false
    }

    /// The owner granted `count` connections for a split (asked once a run).
    mutating func connectionsGranted(_ count: Int) { terms.connectionGrant = count }

    /// A one-connection request went to the target's `generation`.
    mutating func requested(generation: Int) { terms.requestedGeneration = generation }

    /// The part file was cut back to byte 0: what the bytes on disk had to match no longer applies (the
    /// `If-Modified-Since` stays: it is about the file at the destination, not the part file).
    mutating func fetchingFromStart() { expectations.sha256 = nil }

    // MARK: - What the record must say

    /// A change of the job's record that the store must hold before the job goes on.
    enum RecordChange: Sendable, Equatable {
        /// The destination and validators of a part file about to be created (nothing on disk may be nobody's).
        case newPartFile
        /// The part file was cut back (a new generation; `toStart`: to byte 0).
        case rewound(toStart: Bool)
        /// The size of the file, learnt from an answer after the part file was made.
        case sizeLearnt
        /// A multi-connection plan, before the part file is preallocated.
        case planned
        /// What a resumed part file holds: its trusted bytes (or restored plan) and this boot.
        case partFileTrusted
        /// Part data that cannot be trusted was dropped (or a rename left undone cannot be finished).
        case partDataDropped
        /// A file already at the destination is kept as the download's (its name and size, found now).
        case keptExisting
        /// The destination was renamed to a free name (``ExistingFilePolicy/rename``).
        case renamed
    }

    /// A write of the job's record: what the machine asks of ``DownloadJob/perform(_:)``, the one place the job
    /// writes it.
    enum Save: Sendable, Equatable {
        /// The record's transfer columns, at once.
        case transfer
        /// The record of a new part file, committed with other jobs' at the same moment (``TransferRecorder``).
        case newPartFile
    }

    /// The job's record changed (`change`): returns the write that puts it in the store. A cut back to byte 0
    /// also voids what the bytes on disk had to match.
    mutating func recordChanged(_ change: RecordChange) -> Save {
        switch change {
        case .newPartFile:
            return .newPartFile
        case .rewound(let toStart):
            if toStart { fetchingFromStart() }
            return .transfer
        case .sizeLearnt, .planned, .partFileTrusted, .partDataDropped, .renamed, .keptExisting:
            return .transfer
        }
    }

    /// The job gave its slot away (its finishing started; it waits without one).
    mutating func slotGivenAway() { holdsSlot = false }

    /// The job has a slot again.
    mutating func slotTaken() { holdsSlot = true }

    // MARK: - Steps

    /// An attempt ended without an error; `missing` is how many bytes are still to come (for the message).
    mutating func attemptEnded(_ result: AttemptResult, missing: Int64) {
        guard case .attempt = step else { return }
        switch result {
        case .completed:
            step = .finish(.partFile)
        case .held(let body, let fresh):
            step = .finish(.held(body, fresh: fresh))
        case .keptExistingFile:
            step = .finish(.keptExistingFile)
        case .incomplete(wrote: true):
            step = .attempt(verifyingOverlap: false)
        case .incomplete(wrote: false):
            // An answer that brought nothing waits like a failure: no server is asked again in a tight loop.
            step = .wait(.failure(DownloadError.responseTruncated(received: 0, expected: missing)))
        case .refetch(let reason, let detail):
            step = .wait(.restart(reason, detail: detail))
        case .gaveUp(let error):
            step = error.code == .diskFull ? .waitForSpace(error) : .failed(error)
        }
    }

    /// Finishing found the complete file unusable (a checksum that failed with a mirror's bytes in it): the partial
    /// data was discarded; fetch it again after a wait.
    mutating func finishRejected(_ reason: RestartReason, detail: String) {
        guard case .finish = step else { return }
        step = .wait(.restart(reason, detail: detail))
    }

    /// An attempt, or finishing, threw `error`; `cancelled` when the task was cancelled. A file system with no room
    /// (``DownloadError/Code/diskFull``) is waited out, not retried.
    mutating func failed(_ error: any Error, cancelled: Bool) {
        guard !step.isFinal, !isWaiting else { return }
        if !cancelled, let failure = error as? DownloadError, failure.code == .diskFull {
            step = .waitForSpace(failure)
            return
        }
        step = cancelled ? .stopped : .wait(.failure(error))
    }

    /// Before an attempt (or when a retry budget gave up on it) the file system had no room: wait for it.
    mutating func spaceRanOut(_ reason: DownloadError) {
        guard !step.isFinal else { return }
        step = .waitForSpace(reason)
    }

    /// The file system has room again: attempt again.
    mutating func spaceFound() {
        guard case .waitForSpace = step else { return }
        step = .attempt(verifyingOverlap: false)
    }

    /// The wait is over: attempt again.
    mutating func waited() {
        guard isWaiting else { return }
        step = .attempt(verifyingOverlap: false)
    }

    /// The budget gave up on the download's own source, and a mirror took over: an attempt is made again (from a
    /// wait, at once; an attempt that gave up is made again as it was).
    mutating func tookOver() {
        guard isWaiting else { return }
        step = .attempt(verifyingOverlap: false)
    }

    /// The retry budget is spent (or the error is final): the run fails with `error`.
    mutating func gaveUp(_ error: DownloadError) {
        guard !step.isFinal else { return }
        step = .failed(error)
    }

    /// The task was cancelled: the run stops, its partial data kept.
    mutating func cancelled() {
        guard !step.isFinal else { return }
        step = .stopped
    }

    private var isWaiting: Bool {
        if case .wait = step { true } else { false }
    }
}
