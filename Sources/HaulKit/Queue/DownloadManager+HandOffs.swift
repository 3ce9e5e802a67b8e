import Foundation

/// Small downloads whose jobs handed their complete bodies off to the finishing queue and ended
/// (``FinishingQueue/handOff(_:to:)``): their ends come a group at a time, and a failed finishing is given back to a
/// job of its own.
extension DownloadManager {
    /// The job of `id` ended with its complete body held in memory (`request`): the body goes to the finishing
    /// queue, and the download's slot to the next queued download (as when a job starts finishing), unless it keeps
    /// it (see ``DownloadLifecycle/finishingStarted(_:holding:)``). Handed off from here, so that its end, which
    /// comes to this actor too, always comes after.
    func jobHandedOff(_ id: DownloadID, _ request: FinishingQueue.Request) async {
        let givesSlot = lifecycle.finishingStarted(id, holding: request.record.transfer.totalBytes)
        guard let receiver = jobEnvironment.host.finishingReceiver else {
            // Never so (a job hands off only to a host that receives): the download ends rather than waiting on.
            return await jobEnded(
                id, .failed(request.record, .internalError("a small file was handed off with nowhere to report")))
        }
        finishing.handOff(request, to: receiver)
        if givesSlot { await slotGivenBack(id) }
    }

    /// The finishing of downloads whose jobs handed their files off is over: each ends as its job would have ended
    /// after waiting for its file, and the next downloads are scheduled once for all of them.
    func handOffsEnded(_ ends: [FinishingQueue.HandOffEnd]) async {
        var hosts: Set<String> = []
        for end in ends {
            let id = end.record.downloadID
            guard let job = jobs[id] else {
                configuration.logger.error("a handed-off download ended with no job", metadata: ["download": "\(id)"])
                continue
            }
            if let failure = end.failure {
                await handOver(id, job: job, ended: end.record, after: failure)
                continue
            }
            if let host = await endJob(id, .completed(end.record)) { hosts.insert(host) }
        }
        guard !hosts.isEmpty else { return }
        // Their connections were given back when their finishing started; downloads held back for these hosts may
        // take them.
        releaseHeldBack(freeing: hosts)
        await schedule()
    }

    /// The finishing of a handed-off download failed. Nothing the queue committed for it is trusted (as when a
    /// job's own finishing throws): it goes on as a job of its own, which waits the failure out as a retry, then
    /// asks for a slot before it connects. Stopped meanwhile (paused, removed, shut down), it ends stopped.
    private func handOver(
        _ id: DownloadID, job: RunningJob, ended: DownloadRecord, after failure: any Error
    ) async {
        configuration.logger.debug(
            "a small file's finishing failed; its download goes on as a job",
            metadata: ["download": "\(id)", "error": "\(failure)"])
        // Nothing of its part data is trusted, and recorded so before anything else (no job runs it meanwhile): the
        // next run must not take a file at the destination for one this placement may have put there.
        func untrusted(_ base: DownloadRecord) -> DownloadRecord {
            var record = base
            record.destinationPath = ended.destinationPath
            record.transfer = ended.transfer
            record.transfer.hasPartData = false
            record.transfer.durableBytes = 0
            record.fingerprint = nil
            return record
        }
        try? await store.saveTransfer(untrusted(records[id] ?? ended))
        // As it is after the write (a pause, or new options, may have come meanwhile).
        let record = untrusted(records[id] ?? ended)
        guard case .runningHere(stopping: nil) = lifecycle.phase(of: id) else {
            return await jobEnded(id, .stopped(record))
        }
        records[id] = record
        let state = TransferState(.init(written: 0, total: record.transfer.totalBytes))
        let task = runJob(
            record, state: state, limiter: job.limiter, host: hostKey(of: record), recordingRunning: false,
            handedOverAfter: failure)
        var running = RunningJob(task: task, state: state, limiter: job.limiter)
        running.runningRecorded = job.runningRecorded
        jobs[id] = running
    }
}
