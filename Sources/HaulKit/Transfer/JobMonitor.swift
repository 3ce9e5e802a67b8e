import Foundation
import Logging

/// Runs beside a job's receive loop: publishes progress a few times a second and takes checkpoints.
///
/// A checkpoint first `fdatasync`s the part file and only then commits the byte count, so the database never
/// claims bytes that are not on disk; a checkpoint whose generation was superseded (the file was cut back in the
/// meantime) is discarded by the store. A failed sync is never swallowed: the kernel reports a lost write-back once,
/// so the download fails, and the record stops trusting any byte the last good checkpoint did not claim.
/// Each tick also tells the download's ``Retrier`` how many bytes are on disk (progress from any connection), and
/// the ``HostGate`` that the download's host serves when bytes came.
struct JobMonitor: Sendable {
    let id: DownloadID
    let state: TransferState
    let environment: JobEnvironment
    let retrier: Retrier

    /// Ticks at once, then every progress interval until cancelled (it is started once the job has run an interval:
    /// see ``MonitorLauncher``).
    func run() async {
        let settings = environment.settings
        let clock = settings.tickClock
        let stopwatch = Stopwatch(clock)
        var gauge = SpeedGauge()
        var lastCheckpoint = Duration.zero
        var lastProgress: DownloadProgress?
        var committed: (generation: Int64, bytes: Int64)?
        var lastTransferred: Int64 = 0
        var lastSpaceCheck = Duration.zero
        while !Task.isCancelled {
            let now = stopwatch.elapsed
            let (transferred, source) = state.update { ($0.transferred, $0.source) }
            gauge.record(bytes: transferred, at: now.inSeconds)
            let contiguous = state.current.board?.plan.contiguousBytes
            state.update {
                $0.bytesPerSecond = gauge.bytesPerSecond
                $0.smoothedBytesPerSecond = gauge.smoothedBytesPerSecond
                if let contiguous { $0.written = contiguous }
            }
            let progress = state.progress
            retrier.observe(bytes: progress.receivedBytes)
            if transferred > lastTransferred, let source {
                // Bytes came since the last tick: the host serves, whatever other requests to it meet.
                environment.session.noteProgress(from: source)
            }
            lastTransferred = transferred
            // Nothing to say until the size is known or bytes arrive.
            let moved = progress.expectedBytes != nil || progress.receivedBytes > 0
            if moved, progress != lastProgress {
                environment.events.yield(id, .progress(progress))
                lastProgress = progress
            }
            if now - lastCheckpoint >= settings.checkpointInterval {
                let values = state.current
                if committed?.generation != values.generation || committed?.bytes != values.received {
                    await checkpoint()
                    committed = (values.generation, values.received)
                }
                lastCheckpoint = now
            }
            if now - lastSpaceCheck >= settings.freeSpace.checkInterval, let path = state.current.file?.path {
                // Below the floor while running (something else filled the file system): the next write stops the
                // attempt, and the job waits for space.
                lastSpaceCheck = now
                let shortage = settings.freeSpace.shortage(at: path, remaining: 0)
                state.update { $0.spaceShortage = shortage.map { DownloadError.waitingForSpace($0) } }
            }
            try? await clock.sleep(for: settings.progressInterval)
        }
    }

    /// Syncs the part file off the cooperative threads (a sync can take seconds), then records the synced length.
    ///
    /// A failed sync fails the download (``TransferState/Values/failure``) and marks the record's bytes beyond its
    /// last checkpoint untrusted; a failed commit only leaves the record claiming fewer bytes, and is logged.
    func checkpoint() async {
        let values = state.current
        guard let file = values.file, values.received > 0, values.failure == nil else { return }
        // Read the plan before syncing: every byte it claims was written before the sync started.
        let plan = values.board?.plan
        let store = environment.store
        let id = id
        let injected = environment.settings.faults.checkpointSyncErrno
        do {
            try await onBlockingPool {
                if let code = injected?() {
                    throw DownloadError.fileSystem(errno: code, path: file.path, operation: "sync")
                }
                try file.sync()
            }
        } catch {
            let failure = DownloadError.mapping(error, stallTimeout: environment.settings.stallTimeout)
            state.update { $0.failure = $0.failure ?? failure }
            // What the page cache held may never reach the disk: from now on only the last checkpoint is trusted.
            try? await store.distrustUnsyncedBytes(id)
            environment.settings.logger.error(
                "sync failed; the download stops", metadata: ["download": "\(id)", "error": "\(failure)"])
            return
        }
        do {
            // The store runs its I/O where it runs it: the commit is simply awaited.
            try await store.checkpoint(
                id, generation: values.generation, durableBytes: plan?.contiguousBytes ?? values.written,
                segments: plan?.segments, bootID: BootIdentity.current)
        } catch {
            environment.settings.logger.warning(
                "checkpoint not recorded", metadata: ["download": "\(id)", "error": "\(error)"])
        }
    }
}
