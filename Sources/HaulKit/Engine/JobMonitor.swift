import Foundation
import Logging

/// Runs beside a job's receive loop: publishes progress a few times a second and takes checkpoints.
///
/// A checkpoint first `fdatasync`s the part file and only then commits the byte count, so the database never
/// claims bytes that are not on disk; a checkpoint whose generation was superseded (the file was cut back in the
/// meantime) is discarded by the store.
struct JobMonitor: Sendable {
    let id: DownloadID
    let state: TransferState
    let environment: JobEnvironment

    func run() async {
        let settings = environment.settings
        let start = ContinuousClock.now
        var gauge = SpeedGauge()
        var lastCheckpoint = start
        var lastProgress: DownloadProgress?
        var committed: (generation: Int64, bytes: Int64)?
        while !Task.isCancelled {
            try? await Task.sleep(for: settings.progressInterval)
            let now = ContinuousClock.now
            let elapsed = start.duration(to: now)
            gauge.record(
                bytes: state.current.transferred,
                at: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
            let contiguous = state.current.board?.plan.contiguousBytes
            state.update {
                $0.bytesPerSecond = gauge.bytesPerSecond
                if let contiguous { $0.written = contiguous }
            }
            let progress = state.progress
            // Nothing to say until the size is known or bytes arrive.
            let moved = progress.expectedBytes != nil || progress.receivedBytes > 0
            if moved, progress != lastProgress {
                environment.events.yield(id, .progress(progress))
                lastProgress = progress
            }
            if lastCheckpoint.duration(to: now) >= settings.checkpointInterval {
                let values = state.current
                if committed?.generation != values.generation || committed?.bytes != values.received {
                    await checkpoint()
                    committed = (values.generation, values.received)
                }
                lastCheckpoint = now
            }
        }
    }

    /// Syncs the part file and records the synced length, off the cooperative threads (a sync can take seconds).
    /// Errors are logged: the receive loop reports I/O errors.
    func checkpoint() async {
        let values = state.current
        guard let file = values.file, values.received > 0 else { return }
        // Read the plan before syncing: every byte it claims was written before the sync started.
        let plan = values.board?.plan
        let store = environment.store
        let id = id
        do {
            try await onBlockingThread {
                try file.sync()
                try store.checkpoint(
                    id, generation: values.generation, durableBytes: plan?.contiguousBytes ?? values.written,
                    segments: plan?.segments, bootID: BootIdentity.current)
            }
        } catch {
            environment.settings.logger.warning(
                "checkpoint failed", metadata: ["download": "\(id)", "error": "\(error)"])
        }
    }
}
