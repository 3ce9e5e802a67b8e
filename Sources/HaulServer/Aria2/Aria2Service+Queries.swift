import Foundation
import HaulKit

extension Aria2Service {
    /// Every GID a client may name: Haul's downloads and the removed results still kept.
    func knownGIDs() async -> [GID] {
        await manager.ids(in: Set(DownloadState.allCases)).map(GID.init) + removed.keys
    }

    /// The download `text` names (a GID or a unique prefix), as a live snapshot or a removed result.
    func snapshot(_ text: String) async throws(RPCError) -> DownloadSnapshot {
        try await described(text).snapshot
    }

    /// The download `text` names with aria2's name for its status.
    func described(_ text: String) async throws(RPCError) -> (gid: GID, snapshot: DownloadSnapshot, status: String) {
        let gid: GID
        if text.count == 16, let number = UInt64(text, radix: 16) {
            // The common case: a whole GID, looked up directly instead of among every known one.
            gid = GID(DownloadID(rawValue: Int64(bitPattern: number)))
        } else {
            gid = try GID.resolve(text, among: await knownGIDs())
        }
        if let live = await manager.snapshot(gid.id) {
            return (gid, live, Aria2Status.name(of: live.state))
        }
        if let result = removed[gid] { return (gid, result.snapshot, result.statusName) }
        throw .failed("GID \(text) is not found")
    }

    func tellStatus(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let (gid, snapshot, status) = try await described(params.gid(0))
        return Aria2Status.object(
            snapshot, gid: gid, statusName: status, keys: params.keys(1), downloadDirectory: jail.root)
    }

    func getFiles(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let snapshot = try await snapshot(params.gid(0))
        let total = snapshot.totalBytes ?? 0
        let completed = snapshot.state == .completed ? total : snapshot.receivedBytes
        return .array([Aria2Status.file(snapshot, total: total, completed: completed)])
    }

    func getServers(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let (gid, snapshot, _) = try await described(params.gid(0))
        guard snapshot.state == .running else { throw .failed("No active download for GID#\(gid)") }
        let server: JSONValue = [
            "uri": .string(snapshot.url.absoluteString),
            "currentUri": .string((snapshot.finalURL ?? snapshot.url).absoluteString),
            "downloadSpeed": .string(String(Int64(snapshot.progress.bytesPerSecond))),
        ]
        return [["index": "1", "servers": [server]]]
    }

    func tellActive(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let keys = params.keys(0)
        let active = await manager.snapshots(in: [.running])
        return .array(active.map { status($0, "active", keys: keys) })
    }

    /// Queued and paused downloads in the order they would start, with their priorities.
    func waitingOrder() async -> [(id: DownloadID, priority: Int)] {
        let ids = await manager.ids(in: [.queued, .paused], order: .queue)
        return await manager.snapshots(of: ids).map { (id: $0.id, priority: $0.options.priority) }
    }

    func tellWaiting(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let ids = await manager.ids(in: [.queued, .paused], order: .queue)
        let page = await manager.snapshots(of: try Self.page(ids, params))
        let keys = params.keys(2)
        return .array(page.map { status($0, Aria2Status.name(of: $0.state), keys: keys) })
    }

    /// Completed and failed downloads in the order they ended, then the removed results in the order they were
    /// removed.
    func tellStopped(_ params: Parameters) async throws(RPCError) -> JSONValue {
        enum Stopped {
            case download(DownloadID)
            case removed(RemovedResult)
        }
        let finished = await manager.ids(in: [.completed, .failed], order: .finished).map(Stopped.download)
        let gone = removed.values.sorted { $0.at < $1.at }.map(Stopped.removed)
        let page = try Self.page(finished + gone, params)
        let ids = page.compactMap { if case .download(let id) = $0 { id } else { nil } }
        var live: [DownloadID: DownloadSnapshot] = [:]
        for snapshot in await manager.snapshots(of: ids) { live[snapshot.id] = snapshot }
        let keys = params.keys(2)
        return .array(
            page.compactMap { entry in
                switch entry {
                case .download(let id): live[id].map { status($0, Aria2Status.name(of: $0.state), keys: keys) }
                case .removed(let result): status(result.snapshot, result.statusName, keys: keys)
                }
            })
    }

    /// aria2's paging: `offset` from the start, or from the end when negative (then in reverse order); `num` items.
    static func page<T>(_ items: [T], _ params: Parameters) throws(RPCError) -> [T] {
        guard let offset = params.integer(0), let count = params.integer(1) else {
            throw .failed("expected an offset and a number of downloads")
        }
        guard count > 0, !items.isEmpty else { return [] }
        if offset >= 0 {
            guard offset < items.count else { return [] }
            return Array(items[Int(offset)..<min(items.count, Int(offset + count))])
        }
        let last = items.count + Int(offset)
        guard last >= 0 else { return [] }
        let first = max(0, last - Int(count) + 1)
        return Array(items[first...last].reversed())
    }

    func status(_ snapshot: DownloadSnapshot, _ statusName: String, keys: [String]) -> JSONValue {
        Aria2Status.object(
            snapshot, gid: GID(snapshot.id), statusName: statusName, keys: keys, downloadDirectory: jail.root)
    }

    func globalStat() async -> JSONValue {
        let active = await manager.snapshots(in: [.running])
        let speed = active.reduce(0) { $0 + Int64($1.progress.bytesPerSecond) }
        let waiting = await manager.count(in: [.queued, .paused])
        let stopped = await manager.count(in: [.completed, .failed]) + removed.count
        return [
            "downloadSpeed": .string(String(speed)), "uploadSpeed": "0",
            "numActive": .string(String(active.count)), "numWaiting": .string(String(waiting)),
            "numStopped": .string(String(stopped)), "numStoppedTotal": .string(String(stopped)),
        ]
    }

    /// Forgets every finished, failed and removed result; completed files stay on disk.
    func purgeDownloadResults() async -> JSONValue {
        try? await manager.remove(await manager.ids(in: [.completed, .failed]), deletingFiles: false)
        removed.removeAll()
        return "OK"
    }

    func removeDownloadResult(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let (gid, snapshot, status) = try await described(params.gid(0))
        guard try await forgetResult(gid, snapshot, status, deletingFile: false) else {
            throw .failed("Could not remove download result of GID#\(gid)")
        }
        return "OK"
    }

    /// Forgets the result of a finished, failed or removed download (a completed file is deleted only with
    /// `deletingFile`); false, changing nothing, for a download still waiting, running or paused.
    func forgetResult(
        _ gid: GID, _ snapshot: DownloadSnapshot, _ status: String, deletingFile: Bool
    )
        async throws(RPCError) -> Bool
    {
        // A kept result (removed, or failed and retried): the download itself is already gone.
        if removed.removeValue(forKey: gid) != nil { return true }
        switch status {
        case "removed":
            removed[gid] = nil
        case "complete", "error":
            try await managing { () async throws(DownloadError) in
                try await manager.remove(snapshot.id, deletingFile: deletingFile)
            }
        default:
            return false
        }
        return true
    }
}
