import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// Runs one download to its end: requests, validates, streams to the part file, retries, resumes, verifies,
/// and moves the finished file into place. Owned by one task; shares only its ``TransferState``.
///
/// Its ``TransferMachine`` decides (the next step, what the run has learnt, when the record is written); the job
/// performs. This file is the loop; each concern it calls is a file of its own beside it: `+Attempt` (one request),
/// `+PartFile` (the part-file keeper), `+Naming`, `+HeldBody`, `+Segments`, `+Finishing`, `+Verification`,
/// `+Pieces`, `+Resuming`, `+Space`, `+Sources`, `+Decoding`, and `+Saving` (the one place the record is written).
/// It reaches its manager only through its environment's ``JobHost``.
///
/// See `docs/resume-and-durability.md` for the rules this type implements, `docs/state-machine.md` for the machine.
struct DownloadJob {
    /// How a run of the job ended.
    enum Outcome: Sendable {
        /// Its file is at the record's destination.
        case completed(DownloadRecord)
        case failed(DownloadRecord, DownloadError)
        /// Cancelled (pause, remove, shutdown); the partial data is checkpointed.
        case stopped(DownloadRecord)
        /// Its complete body, held in memory, is for the owner to hand to the finishing queue (this request), which
        /// tells the host's ``FinishingReceiver`` how it ended (``FinishingQueue/handOff(_:to:)``): the download's
        /// end is the owner's to record then. It holds no connection.
        case handedOff(FinishingQueue.Request)

        var record: DownloadRecord {
            switch self {
            case .completed(let record), .failed(let record, _), .stopped(let record): record
            case .handedOff(let request): request.record
            }
        }
    }

    typealias AttemptResult = TransferMachine.AttemptResult

    var record: DownloadRecord
    let state: TransferState
    let limiter: RateLimiter
    /// The limiter of the download's host (unlimited unless a limit is set); nil without a host.
    let hostLimiter: RateLimiter?
    /// The host its connections count against (the manager's key for it).
    let host: String
    let environment: JobEnvironment
    /// The run as a value: its step, what it learnt of the server, what the file must match, whether it holds its
    /// slot. Every decision of the loop is the machine's; the job performs it.
    var machine = TransferMachine(resuming: false)
    /// The plan while the download runs over several connections.
    var board: SegmentBoard? { state.current.board }
    /// The failure policy of this run, shared with every connection and the monitor.
    let retrier: Retrier
    /// How it gives its slot away while its host makes it wait.
    let slot: SlotYield
    let stopwatch: Stopwatch
    /// Starts the progress and checkpoint monitor once the job runs long enough to need it.
    let monitorLauncher: MonitorLauncher
    /// Where requests go: the added URL, or a fresh one after it expired.
    let target: RequestTarget
    /// The other URLs of the file, and which of them still serve it in this run.
    let mirrors: MirrorSet
    /// Hashes the part file behind the writer: the SHA-256 every completed file keeps, and the checksum the file
    /// must match (see ``startFollower()``).
    var follower: Task<[DigestAlgorithm: String], any Error>?
    /// What the server stated about the file and each response's bytes, and what the follower found.
    let ledger: DigestLedger
    /// Why an earlier job of this download, which handed its small file off, had it back unfinished: this job
    /// starts by waiting that failure out as a retry, without a slot, and waits for its own file.
    let handedOverAfter: (any Error)?
    /// The URL the last response came from, as text (as ``TransferRecord/finalURL`` keeps it) and as the session
    /// parsed it; nil before the first response.
    var lastResponseURL: (text: String, url: URL)?
    /// The identity (`device:inode`) of the file at the destination when the job began, if it is the download's own
    /// (``ownFileAtStart()``): the one file there it may replace whatever its options (see ``replacing``).
    var ownFile: String?

    init(
        record: DownloadRecord, state: TransferState, limiter: RateLimiter, host: String, hostLimiter: RateLimiter?,
        environment: JobEnvironment, handedOverAfter: (any Error)? = nil
    ) {
        self.record = record
        self.handedOverAfter = handedOverAfter
        self.state = state
        self.limiter = limiter
        self.host = host
        self.hostLimiter = hostLimiter
        self.environment = environment
        target = RequestTarget(
            id: record.downloadID, url: record.url, host: host, provider: environment.urlProvider)
        // A set of its own even without mirrors: the download's URL may name some (`Link: rel=duplicate`).
        mirrors = MirrorSet(urls: record.options.mirrors.map(\.absoluteString))
        ledger = DigestLedger(verifies: record.options.serverDigests.verifies)
        slot = SlotYield(of: record.downloadID, from: environment.host)
        retrier = Retrier(
            id: record.downloadID, settings: environment.settings, events: environment.events, target: target,
            slot: slot, startingWith: 0)
        stopwatch = Stopwatch(environment.settings.clock)
        var logger = environment.settings.logger
        logger[metadataKey: "download"] = "\(record.downloadID)"
        self.logger = logger
        monitorLauncher = MonitorLauncher(
            JobMonitor(id: record.downloadID, state: state, environment: environment, retrier: retrier),
            after: environment.settings.progressInterval)
    }

    var id: DownloadID { record.downloadID }

    var settings: EngineSettings { environment.settings }
    /// The engine's logger, tagged with the download (made once: tagging copies the handler's metadata).
    let logger: Logger

    // MARK: - Run

    mutating func run() async -> Outcome {
        let outcome = await runAttempts()

        follower?.cancel()
        _ = await follower?.result
        await monitorLauncher.stop()
        switch outcome {
        case .completed, .handedOff:
            break
        case .failed, .stopped:
            // Checkpoint what is there, so a resume starts from all of it (never after a failed sync: then only
            // what the last good checkpoint recorded is trusted).
            await monitorLauncher.checkpoint()
            state.current.file?.close()
        }
        board?.close()
        state.update {
            $0.file = nil
            $0.activeConnections = 0
            $0.bytesPerSecond = 0
        }
        var final = outcome.record
        switch outcome {
        case .completed, .handedOff:
            // The last word on its size, even when the monitor never ticked (a small file), and on what it was
            // verified against. A handed-off file's come before it is in place (its bytes are all counted and
            // checked; if placing them fails, the download goes on and says so again), and before its status, which
            // comes from its owner once its finishing group has placed it.
            environment.events.yield(id, .progress(state.progress))
            if let verification = final.fingerprint?.verification {
                // Its sources are worked out only if someone listens.
                let total = state.current.total ?? state.current.written
                environment.events.yield(id, .verified(verification, sources: sourceBytes(total: total)))
            }
        case .failed, .stopped:
            if let refreshed = try? await environment.store.fetch(id) {
                // Pick up the checkpointed byte count.
                final.transfer.durableBytes = refreshed.transfer.durableBytes
                final.transfer.bootID = refreshed.transfer.bootID
                final.transfer.segments = refreshed.transfer.segments
            }
        }
        switch outcome {
        case .completed: return .completed(final)
        case .failed(_, let error): return .failed(final, error)
        case .stopped: return .stopped(final)
        case .handedOff: return outcome
        }
    }

    /// Runs the ``TransferMachine``: performs each step it names and feeds it how the step ended. Nothing here is
    /// decided by a thrown error: an attempt's, a wait's and a finish's ways of ending are results, and a thrown
    /// error is a failure (the machine decides whether it is waited out, retried or final) or a cancellation.
    mutating func runAttempts() async -> Outcome {
        do {
            if try await prepare() { return .completed(record) }
        } catch {
            return .failed(record, error)
        }
        retrier.observe(bytes: state.current.received)
        machine.prepared(resuming: state.current.written > 0 && board == nil)
        if let handedOverAfter {
            // Its finishing failed while it held no slot: waited out as any failed finishing is, then a slot first.
            machine.slotGivenAway()
            machine.failed(handedOverAfter, cancelled: false)
        }
        while true {
            switch machine.step {
            case .attempt(let verifyingOverlap):
                if !machine.holdsSlot {
                    // Its finishing failed: it connects again only with a slot.
                    await environment.host.slotNeeded(id)
                    machine.slotTaken()
                }
                if Task.isCancelled {
                    machine.cancelled()
                    continue
                }
                if let shortage = spaceShortage() {
                    machine.spaceRanOut(.waitingForSpace(shortage))
                    continue
                }
                do {
                    let result = try await attempt(verifyingOverlap: verifyingOverlap)
                    if case .gaveUp(let error) = result, error.code != .diskFull, await takeOver(after: error) {
                        // A connection of this download spent the shared budget, and another source goes on.
                        machine.tookOver()
                        continue
                    }
                    machine.attemptEnded(result, missing: missingBytes)
                } catch {
                    logger.debug("attempt failed", metadata: ["error": "\(error)"])
                    machine.failed(error, cancelled: Task.isCancelled || error is CancellationError)
                }
            case .wait(let setback):
                monitorLauncher.start()
                do {
                    let verdict = try await retrier.wait(
                        after: setback, bytes: state.current.received, requestedWith: machine.terms.requestedGeneration)
                    switch verdict {
                    case .again:
                        machine.waited()
                    case .gaveUp(let error):
                        // Another source may take over from the one that failed (the wait is then over).
                        if await takeOver(after: error) { machine.tookOver() } else { machine.gaveUp(error) }
                    }
                } catch {
                    machine.cancelled()
                }
            case .waitForSpace(let reason):
                switch await waitForSpace(after: reason) {
                case .room: machine.spaceFound()
                case .cancelled: machine.cancelled()
                case .gaveUp(let error): machine.gaveUp(error)
                }
            case .finish(.keptExistingFile):
                // The file already there is the download's: nothing to verify or move. Its name was found now (a
                // directory's download), so it is written with the job's columns: the manager records the rest.
                do {
                    try await perform(machine.recordChanged(.keptExisting))
                } catch {
                    return .failed(record, error)
                }
                return .completed(record)
            case .finish(let contents):
                do {
                    if let failure = state.failure { throw failure }
                    // The record is taken once `finish` has made it `completed`, so the manager need not write it again.
                    switch try await finish(contents) {
                    case .refetch(let reason, let detail):
                        machine.finishRejected(reason, detail: detail)
                        continue
                    case .handOff(let request):
                        return .handedOff(request)
                    case .completed:
                        return .completed(record)
                    }
                } catch {
                    machine.failed(error, cancelled: Task.isCancelled || error is CancellationError)
                }
            case .failed(let error):
                return .failed(record, error)
            case .stopped:
                return .stopped(record)
            }
        }
    }

    /// Bytes still missing, for messages (0 when the size is unknown).
    var missingBytes: Int64 {
        let values = state.current
        return max(0, (values.total ?? values.received) - values.received)
    }
}
