import AsyncHTTPClient
import Foundation

/// Splitting the file over several connections, and going back to one.
extension DownloadJob {
    /// The connections this download would use: its option, within the per-host limit.
    var connectionsAllowed: Int {
        guard machine.terms.segmentsAllowed else { return 1 }
        return max(1, min(record.options.connections, settings.maxConnectionsPerHost))
    }

    /// The connections it may open now: asked for (once) when it splits, as other downloads (and, in a shared queue,
    /// other workers) may hold the host's connections.
    mutating func grantedConnections() async -> Int {
        if let grant = machine.terms.connectionGrant { return grant }
        // `-x auto` starts with one connection, and its tuner asks for more while they pay.
        let wanted = record.options.adaptiveConnections ? 1 : connectionsAllowed
        var granted = 1
        if connectionsAllowed > 1, wanted > 1 {
            granted = max(1, min(wanted, await environment.host.widenClaim(id, host: host, wanted: wanted)))
        }
        machine.connectionsGranted(granted)
        return granted
    }

    /// Splits the rest of the file among connections: records the plan, then preallocates.
    ///
    /// The order matters: a part file preallocated to its full size is zero-filled, and only a recorded plan says
    /// which of its bytes are real. A crash between the two leaves a plan and a short file, which the next run
    /// extends; the other order would leave a full-size file that looks complete.
    mutating func startSegments(total: Int64, done: Int64) async throws(DownloadError) -> SegmentBoard {
        guard let file = state.current.file, let journalPath = record.journalPath else {
            throw .internalError("download \(id) has no part file to split")
        }
        // The plan claims the `done` prefix: make it durable first.
        try file.sync()
        let connections = await grantedConnections()
        let planner = SegmentPlanner(
            total: total, done: done, connections: connections, minimumSize: settings.minimumSegmentSize)
        let board = SegmentBoard(
            planner: planner, journal: try SegmentJournal(path: journalPath), generation: record.transfer.generation)
        state.update {
            $0.board = board
            $0.received = done
        }
        record.transfer.segments = planner.segments
        record.transfer.durableBytes = done
        record.transfer.bootID = BootIdentity.current
        record.updatedAt = Date()
        try await perform(machine.recordChanged(.planned))
        try file.preallocate(total)
        CrashPoint.reach(CrashPoint.afterPreallocation)
        return board
    }

    /// Runs the connections until the plan is done; restarts from byte 0 if any of them saw another version.
    mutating func runSegmented(
        _ board: SegmentBoard, opening: SegmentedTransfer.Opening?
    ) async throws
        -> AttemptResult
    {
        guard let file = state.current.file, let validator = record.transfer.validator,
            let total = record.transfer.totalBytes
        else {
            throw DownloadError.internalError("download \(id) lost its plan")
        }
        // Each connection counts itself while it transfers; the monitor follows the plan.
        state.update { $0.activeConnections = 0 }
        followPartFile()
        monitorLauncher.start()
        let connections = await grantedConnections()
        let transfer = SegmentedTransfer(
            id: id, target: target, mirrors: mirrors, validator: validator, policy: record.options.onResourceChange,
            profile: requestProfile,
            writer: writer(file), board: board, state: state, retrier: retrier, environment: environment,
            connections: connections, ledger: ledger, logger: logger,
            adaptive: record.options.adaptiveConnections && connectionsAllowed > 1
                ? SegmentedTransfer.Adaptive(
                    maximum: connectionsAllowed,
                    allowed: { [environment, id, host] wanted in
                        await environment.host.widenClaim(id, host: host, wanted: wanted)
                    })
                : nil)
        switch try await transfer.run(opening: opening) {
        case .noSegmentLeft:
            break
        case .gaveUp(let error):
            return .gaveUp(error)
        case .restart(let restart):
            logger.info("restarting", metadata: ["reason": "\(restart.reason)", "detail": "\(restart.detail)"])
            if restart.reason == .rangeMismatch { machine.rangesRefused() }
            guard let replacement = restart.replacement else {
                try await rewind(to: 0, because: restart.reason)
                return .refetch(restart.reason, detail: restart.detail)
            }
            // A whole new copy is already arriving: write it from byte 0 on this one connection.
            try retrier.countRestart(restart.reason, detail: restart.detail, bytes: state.current.received)
            try await rewind(to: 0, because: restart.reason)
            machine.splitRefused()
            return try await receiveNewCopy(
                replacement.response, head: replacement.head, validator: replacement.validator)
        }
        guard board.plan.isComplete else {
            throw DownloadError.networkFailure("every connection stopped before the file was complete")
        }
        state.update {
            $0.written = total
            $0.received = total
        }
        return .completed
    }

    /// Closes the plan and deletes its journal (the part file is being cut back).
    mutating func dropSegments() throws(DownloadError) {
        if let journal = closeSegments() { try FileSystem.removeFile(journal) }
    }

    /// Closes the plan, leaving its journal on disk; returns the journal's path (to delete once the complete file is
    /// in place).
    mutating func closeSegments() -> String? {
        board?.close()
        state.update { $0.board = nil }
        record.transfer.segments = nil
        return record.journalPath
    }
}
