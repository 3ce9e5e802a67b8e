import Foundation
import Synchronization

extension DownloadManager {
    /// A Foundation `Progress` that follows download `id`, for `ProgressView`, `UIProgressView` or a parent
    /// `Progress` (URLSession's `task.progress`).
    ///
    /// Its units are bytes: ``DownloadProgress/receivedBytes`` of ``DownloadProgress/expectedBytes``
    /// (`totalUnitCount` is -1 while the size is unknown), with the speed and the time left in its `userInfo`
    /// (`throughputKey`, `estimatedTimeRemainingKey`) and the file in `fileURL` (`fileURLKey`). It is paused while the
    /// download is paused, failed or interrupted, back to 0 when the download starts over, finished when it
    /// completes, and cancelled when it is removed.
    ///
    /// It controls the download too: its `pause()` pauses it, `resume()` resumes it (or tries a failed one again), and
    /// `cancel()` cancels it (``cancel(_:)``: the partial data is deleted; a completed file stays).
    ///
    /// It follows the download until the download completes or is removed, or the progress is cancelled. Foundation
    /// calls its handlers on a queue of its own; the updates come from the manager's tasks, a few a second at most
    /// (``Configuration/progressInterval``).
    public func progress(for id: DownloadID) async throws(DownloadError) -> Progress {
        guard let snapshot = await snapshot(id) else { throw .unknownDownload(id) }
        let progress = Progress(totalUnitCount: snapshot.totalBytes ?? -1)
        progress.kind = .file
        // Through `userInfo`, where Apple's `fileOperationKind` and `fileURL` keep them too (Linux's Foundation has only
        // the keys).
        progress.setUserInfoObject(Progress.FileOperationKind.downloading, forKey: .fileOperationKindKey)
        progress.setUserInfoObject(snapshot.file, forKey: .fileURLKey)
        progress.isCancellable = true
        progress.isPausable = true
        ProgressLink.apply(snapshot.progress, to: progress)
        if snapshot.state == .completed {
            ProgressLink.finish(progress, file: snapshot.file)
            return progress
        }
        // Before the handlers: a paused download's progress starts paused, without asking the manager for anything.
        if [.paused, .failed, .interrupted].contains(snapshot.state) { progress.pause() }
        let link = ProgressLink(id: id, progress: progress)
        link.follow(observeEvents { [link] event in link.receive(event) })
        progress.pausingHandler = { [weak self, link] in
            guard !link.isMirrored(pause: true) else { return }
            Task { await self?.pauseFromProgress(id) }
        }
        progress.resumingHandler = { [weak self, link] in
            guard !link.isMirrored(pause: false) else { return }
            Task { await self?.resumeFromProgress(id) }
        }
        progress.cancellationHandler = { [weak self, link] in
            link.stop()
            Task { await self?.cancelFromProgress(id) }
        }
        return progress
    }

    /// A `Progress` was paused: the download is, unless it is no longer queued or running.
    private func pauseFromProgress(_ id: DownloadID) async {
        guard let state = await state(of: id), state == .queued || state == .running else { return }
        try? await pause(id)
    }

    /// A `Progress` was resumed: so is the download, if it was paused, failed or interrupted.
    private func resumeFromProgress(_ id: DownloadID) async {
        guard let state = await state(of: id), state == .paused || state == .failed || state == .interrupted else {
            return
        }
        try? await resume(id)
    }

    /// A `Progress` was cancelled: the download is cancelled, unless it completed meanwhile.
    private func cancelFromProgress(_ id: DownloadID) async {
        guard let state = await state(of: id), state != .completed else { return }
        try? await cancel(id)
    }
}

/// Keeps a `Progress` in step with one download's events (``DownloadManager/progress(for:)``).
final class ProgressLink: Sendable {
    let id: DownloadID
    let progress: Progress
    private let observation = Mutex<EventObservation?>(nil)
    private let stopped = Atomic<Bool>(false)
    /// The pauses and resumes ``mirror(pause:)`` made whose handler calls have not come yet.
    private let mirrored = Mutex<(pauses: Int, resumes: Int)>((0, 0))

    init(id: DownloadID, progress: Progress) {
        self.id = id
        self.progress = progress
    }

    /// Keeps `observation` to cancel it when the download ends or the progress is cancelled.
    func follow(_ observation: EventObservation) {
        self.observation.withLock { $0 = observation }
        if stopped.load(ordering: .acquiring) { observation.cancel() }
    }

    /// Stops following the download.
    func stop() {
        stopped.store(true, ordering: .releasing)
        observation.withLock { $0 }?.cancel()
    }

    func receive(_ event: DownloadEvent) {
        guard event.id == id, !stopped.load(ordering: .acquiring) else { return }
        switch event.change {
        case .progress(let update):
            Self.apply(update, to: progress)
        case .restarted:
            progress.completedUnitCount = 0
        case .status(.paused), .status(.failed), .status(.interrupted):
            // Paused in Foundation's terms: its `resume()` continues (or retries) the download.
            if !progress.isPaused { mirror(pause: true) }
        case .status(.queued), .status(.running):
            if progress.isPaused { mirror(pause: false) }
        case .status(.completed(let file)):
            stop()
            Self.finish(progress, file: file)
        case .status(.removed):
            stop()
            if !progress.isCancelled { progress.cancel() }
        case .added, .retrying, .mirrorDropped, .fileChanged, .verified, .waitingForSpace, .connections:
            break
        }
    }

    /// Pauses or resumes the progress to show the download's state. Its handlers pass a user's pause or resume on to
    /// the manager; this one comes from the manager, so the handler call it causes (Foundation makes it later, on a
    /// queue of its own) is counted here and skipped (``isMirrored(pause:)``). Passed on, a `paused` delivered after
    /// the user had resumed would pause the download again.
    private func mirror(pause: Bool) {
        mirrored.withLock { if pause { $0.pauses += 1 } else { $0.resumes += 1 } }
        if pause { progress.pause() } else { progress.resume() }
    }

    /// Whether a handler call comes from ``mirror(pause:)`` (counted once).
    func isMirrored(pause: Bool) -> Bool {
        mirrored.withLock { counts in
            if pause, counts.pauses > 0 {
                counts.pauses -= 1
                return true
            }
            if !pause, counts.resumes > 0 {
                counts.resumes -= 1
                return true
            }
            return false
        }
    }

    /// Bytes, speed and time left from `update`.
    static func apply(_ update: DownloadProgress, to progress: Progress) {
        if let expected = update.expectedBytes, expected != progress.totalUnitCount {
            progress.totalUnitCount = expected
        }
        progress.completedUnitCount = update.receivedBytes
        progress.setUserInfoObject(Int(update.bytesPerSecond), forKey: .throughputKey)
        progress.setUserInfoObject(
            update.estimatedTimeRemaining.map { $0.inSeconds } as Double?, forKey: .estimatedTimeRemainingKey)
    }

    /// Marks `progress` finished: every unit done (the file's size; an empty file counts one unit, so that
    /// `isFinished` holds).
    static func finish(_ progress: Progress, file: URL?) {
        var size = max(0, progress.completedUnitCount)
        if let file, case .regularFile(let bytes) = FileSystem.entry(at: file.path) { size = bytes }
        progress.setUserInfoObject(file, forKey: .fileURLKey)
        progress.totalUnitCount = max(1, size)
        progress.completedUnitCount = max(1, size)
        progress.setUserInfoObject(nil, forKey: .estimatedTimeRemainingKey)
    }
}
