import Foundation
import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Haul's own methods for the dashboard: one page of downloads with everything the page's header shows
/// (`haul.page`), and one download in full (`haul.details`). A page costs what it shows: 10,000 downloads answer 100
/// rows, and only a search or a sort by a download's values reads them all.
extension Aria2Service {
    /// Haul's methods besides aria2's, or `methodNotFound`.
    func haulCall(_ method: String, _ params: Parameters) async throws(RPCError) -> JSONValue {
        switch method {
        case "haul.page": return try await page(params)
        case "haul.details": return try await details(params)
        case "haul.getHosts": return try await hosts(params)
        default: throw .methodNotFound
        }
    }

    /// One listed download: a live one, or a result the service keeps after a removal or a retry.
    private enum Listed {
        case download(DownloadID)
        case kept(GID)
    }

    /// `haul.page(query)`: `{total, offset, downloads: [row], counts, downloadSpeed, speedHistory, freeBytes,
    /// directory, speedLimit}`. `counts` are by Haul's states, as `haul list` has them, and `removed`.
    func page(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let query = try PageQuery(params.values.first)
        let waitingIDs = await manager.ids(in: [.queued, .paused], order: .queue)
        var listed = await listing(query)
        var snapshots: [DownloadID: DownloadSnapshot] = [:]
        if !query.search.isEmpty || ![.queue, .added].contains(query.sort) {
            // Only a search or a sort by the downloads' values reads every candidate.
            let ids = listed.compactMap { if case .download(let id) = $0 { id } else { nil } }
            for snapshot in await manager.snapshots(of: ids) { snapshots[snapshot.id] = snapshot }
            listed = listed.filter { entry in
                guard let snapshot = self.snapshot(of: entry, in: snapshots) else { return false }
                return query.matches(Self.name(of: snapshot), snapshot.url.absoluteString)
            }
            if query.sort != .queue && query.sort != .added {
                listed = sorted(listed, by: query.sort, snapshots)
            }
        }
        if query.descending { listed.reverse() }
        let slice =
            query.offset < listed.count
            ? Array(listed[query.offset..<min(listed.count, query.offset + query.count)]) : []
        let missing = slice.compactMap { entry -> DownloadID? in
            if case .download(let id) = entry, snapshots[id] == nil { id } else { nil }
        }
        for snapshot in await manager.snapshots(of: missing) { snapshots[snapshot.id] = snapshot }
        let positions = Dictionary(uniqueKeysWithValues: waitingIDs.enumerated().map { ($1, $0) })
        let rows: [JSONValue] = slice.compactMap { entry in
            switch entry {
            case .download(let id):
                return snapshots[id].map { row($0, status: Aria2Status.name(of: $0.state), position: positions[id]) }
            case .kept(let gid):
                return removed[gid].map {
                    row($0.snapshot, status: $0.statusName, position: nil, retriedAs: $0.retriedAs)
                }
            }
        }
        var counts: [String: JSONValue] = [:]
        for state in DownloadState.allCases {
            counts[state.rawValue] = .integer(Int64(await manager.count(in: [state])))
        }
        counts["removed"] = .integer(Int64(removed.values.count { $0.statusName == "removed" }))
        let speed = await manager.snapshots(in: [.running]).reduce(Int64(0)) { $0 + Int64($1.progress.bytesPerSecond) }
        var answer: [String: JSONValue] = [
            "total": .integer(Int64(listed.count)), "offset": .integer(Int64(query.offset)), "downloads": .array(rows),
            "counts": .object(counts), "downloadSpeed": .string(String(speed)),
            "speedHistory": .array(activity.totalSpeeds().map { .integer($0) }),
            "directory": .string(jail.root.path),
            "speedLimit": .string(Aria2Options.speedText(await manager.globalSpeedLimit)),
        ]
        if let free = Self.freeBytes(jail.root.path) { answer["freeBytes"] = .string(String(free)) }
        if let note = scheduleNote() { answer["schedule"] = .string(note) }
        return .object(answer)
    }

    /// The downloads the query's states take, in queue order (or the order they were added).
    private func listing(_ query: PageQuery) async -> [Listed] {
        let states = query.downloadStates
        var listed: [Listed] = []
        if query.sort == .added {
            listed = await manager.ids(in: states).map(Listed.download)
        } else {
            if states.contains(.running) {
                listed += await manager.ids(in: [.running], order: .added).map(Listed.download)
            }
            let waiting = states.intersection([.queued, .paused, .interrupted])
            if !waiting.isEmpty { listed += await manager.ids(in: waiting, order: .queue).map(Listed.download) }
            let finished = states.intersection([.completed, .failed])
            if !finished.isEmpty {
                listed += await manager.ids(in: finished, order: .finished).reversed().map(Listed.download)
            }
        }
        let kept = removed.filter { query.includes($0.value.statusName == "removed" ? "removed" : "failed") }
        listed += kept.sorted { $0.value.at > $1.value.at }.map { Listed.kept($0.key) }
        return listed
    }

    private func snapshot(of entry: Listed, in snapshots: [DownloadID: DownloadSnapshot]) -> DownloadSnapshot? {
        switch entry {
        case .download(let id): snapshots[id]
        case .kept(let gid): removed[gid]?.snapshot
        }
    }

    private func sorted(
        _ listed: [Listed], by sort: PageQuery.Sort, _ snapshots: [DownloadID: DownloadSnapshot]
    )
        -> [Listed]
    {
        let keyed = listed.compactMap { entry in snapshot(of: entry, in: snapshots).map { (entry, $0) } }
        func before(_ a: DownloadSnapshot, _ b: DownloadSnapshot) -> Bool {
            switch sort {
            case .name:
                let order = Self.name(of: a).localizedStandardCompare(Self.name(of: b))
                return order == .orderedSame ? a.id < b.id : order == .orderedAscending
            case .size: return (a.totalBytes ?? -1, a.id.rawValue) < (b.totalBytes ?? -1, b.id.rawValue)
            case .progress: return (a.fraction ?? -1, a.id.rawValue) < (b.fraction ?? -1, b.id.rawValue)
            case .speed:
                return (Self.speed(of: a), a.id.rawValue) < (Self.speed(of: b), b.id.rawValue)
            case .queue, .added: return a.id < b.id
            }
        }
        return keyed.sorted { before($0.1, $1.1) }.map(\.0)
    }

    // MARK: - Rows

    /// A download as the dashboard's list shows it.
    func row(_ snapshot: DownloadSnapshot, status: String, position: Int?, retriedAs: GID? = nil) -> JSONValue {
        let total = snapshot.totalBytes ?? (snapshot.state == .completed ? snapshot.receivedBytes : 0)
        let completed = snapshot.state == .completed ? total : snapshot.receivedBytes
        let running = status == "active"
        var fields: [String: JSONValue] = [
            "gid": .string(GID(snapshot.id).description), "status": .string(status),
            "state": .string(Self.stateName(snapshot, status: status)), "name": .string(Self.name(of: snapshot)),
            "url": .string(snapshot.url.absoluteString), "totalLength": .string(String(total)),
            "completedLength": .string(String(completed)),
            "downloadSpeed": .string(String(running ? Self.speed(of: snapshot) : 0)),
            "connections": .string(String(running ? snapshot.progress.activeConnections : 0)),
            "reason": .string(Self.reason(snapshot, status: status, position: position, retriedAs: retriedAs)),
        ]
        if running, let eta = snapshot.progress.estimatedTimeRemaining {
            fields["eta"] = .string(String(eta.components.seconds))
        }
        if let position { fields["position"] = .integer(Int64(position)) }
        return .object(fields)
    }

    /// Haul's name for the state (`haul list`'s), `removed` for a removed result.
    static func stateName(_ snapshot: DownloadSnapshot, status: String) -> String {
        switch status {
        case "removed": "removed"
        case "error": DownloadState.failed.rawValue
        default: snapshot.state.rawValue
        }
    }

    /// The file's name, else the URL's last part.
    static func name(of snapshot: DownloadSnapshot) -> String {
        if let file = snapshot.file { return file.lastPathComponent }
        let last = snapshot.url.lastPathComponent
        return last.isEmpty || last == "/" ? snapshot.url.absoluteString : last
    }

    static func speed(of snapshot: DownloadSnapshot) -> Int64 {
        snapshot.state == .running ? Int64(snapshot.progress.bytesPerSecond) : 0
    }

    /// Why a download is where it is, in a few words; empty when its state says it all.
    static func reason(_ snapshot: DownloadSnapshot, status: String, position: Int?, retriedAs: GID? = nil) -> String {
        if let retriedAs { return "retried as \(retriedAs)" }
        if status == "removed" { return "removed; its partial data was deleted" }
        switch snapshot.state {
        case .running:
            // "waiting for space: …": its file system has no room; it goes on by itself.
            if snapshot.isWaitingForSpace { return snapshot.lastError?.summary ?? "waiting for space" }
            if let error = snapshot.lastError { return "retrying: \(error.summary)" }
            if snapshot.progress.activeConnections == 0, snapshot.progress.bytesPerSecond == 0 { return "connecting" }
            if let limit = snapshot.options.speedLimit { return "limited to \(binary(limit))/s" }
            return ""
        case .queued:
            let place = position.map { $0 == 0 ? "next to start" : "\($0) ahead in the queue" } ?? "waiting"
            return snapshot.lastError.map { "\(place); last try: \($0.summary)" } ?? place
        case .paused: return snapshot.receivedBytes > 0 ? "resumes from \(binary(snapshot.receivedBytes))" : ""
        case .interrupted: return "\(snapshot.owner ?? "its command") ended first"
        case .failed: return snapshot.lastError?.summary ?? "failed"
        case .completed: return snapshot.fileChange.map { "the file \($0)" } ?? ""
        }
    }

    /// A size in binary units, as the command line prints it: `1.5 MiB`.
    static func binary(_ bytes: Int64) -> String { ByteCount.binary(bytes) }

    /// Bytes free for the user in the file system that holds `path`.
    static func freeBytes(_ path: String) -> Int64? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        return Int64(stats.f_bavail) * Int64(stats.f_frsize)
    }
}

extension Aria2Service {
    /// What the schedules do now, for the dashboard's header: "paused by schedule until Mon 18:00", "limit 2 MiB/s
    /// by schedule until 18:00"; nil without schedules.
    func scheduleNote() -> String? {
        guard let schedule, let status = schedule.status else { return nil }
        let until = status.nextChange.map { date -> String in
            let format = DateFormatter()
            format.locale = Locale(identifier: "en_US_POSIX")
            format.timeZone = schedule.calendar.timeZone
            format.dateFormat = Calendar.current.isDate(date, inSameDayAs: Date()) ? "HH:mm" : "EEE HH:mm"
            return " until " + format.string(from: date)
        }
        if status.held { return "paused by schedule" + (until ?? "") }
        if schedule.rates != nil {
            let limit = status.limit.map { "limit \(Self.binary($0))/s" } ?? "no limit"
            return "\(limit) by schedule" + (until ?? "")
        }
        return "downloads run by schedule" + (until ?? "")
    }
}
