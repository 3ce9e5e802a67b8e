import Foundation
import HaulKit

/// aria2's RPC methods over a ``DownloadManager``: what aria2p, AriaNg and other aria2 clients call.
///
/// Haul's states map onto aria2's (running → active, queued → waiting, failed → error, completed → complete).
/// aria2 keeps a removed download's result until it is purged; so does the service, in memory (the download itself
/// is gone from Haul's database at once). Every method answers with the manager's state after it took effect: once
/// `pauseAll` returns, no download reads as active.
public actor Aria2Service {
    /// aria2's version as reported by `getVersion` (clients compare it); Haul's own version is reported beside it.
    public static let aria2Version = "1.37.0"

    /// Every method `system.listMethods` reports.
    public static let methods = [
        "aria2.addUri", "aria2.addTorrent", "aria2.addMetalink", "aria2.remove", "aria2.forceRemove", "aria2.pause",
        "aria2.pauseAll", "aria2.forcePause", "aria2.forcePauseAll", "aria2.unpause", "aria2.unpauseAll",
        "aria2.tellStatus", "aria2.getUris", "aria2.getFiles", "aria2.getPeers", "aria2.getServers",
        "aria2.tellActive", "aria2.tellWaiting", "aria2.tellStopped", "aria2.changePosition", "aria2.changeUri",
        "aria2.getOption", "aria2.changeOption", "aria2.getGlobalOption", "aria2.changeGlobalOption",
        "aria2.getGlobalStat", "aria2.purgeDownloadResult", "aria2.removeDownloadResult", "aria2.getVersion",
        "aria2.getSessionInfo", "aria2.shutdown", "aria2.forceShutdown", "aria2.saveSession", "system.multicall",
        "system.listMethods", "system.listNotifications", "haul.subscribe", "haul.remove", "haul.page", "haul.details",
        "haul.getHosts",
    ]

    /// Every notification `system.listNotifications` reports.
    public static let notifications = [
        "aria2.onDownloadStart", "aria2.onDownloadPause", "aria2.onDownloadStop", "aria2.onDownloadComplete",
        "aria2.onDownloadError", "aria2.onBtDownloadComplete",
    ]

    let manager: DownloadManager
    let jail: DownloadDirectoryJail
    let sessionID: String
    /// Asked to stop the daemon (`shutdown`, `forceShutdown`); called once the answer is on its way.
    let requestShutdown: @Sendable () -> Void
    /// Downloads removed through RPC: aria2 reports them `removed` until the result is purged; and failed downloads
    /// retried by adding them again, reported `error` until their result is removed (`Aria2Service+Retry.swift`).
    var removed: [GID: RemovedResult] = [:]
    /// Each download's recent history and speeds, for the dashboard.
    let activity = ActivityLog()
    /// The daemon's schedules, whose state the dashboard's header shows; nil without any.
    let schedule: ScheduleRunner?

    struct RemovedResult {
        var snapshot: DownloadSnapshot
        var at: Date
        /// aria2's status for it: `removed`, or `error` for a failed download that was retried.
        var statusName = "removed"
        /// The download that retried it.
        var retriedAs: GID?
    }

    public init(
        manager: DownloadManager, downloadDirectory: URL, requestShutdown: @escaping @Sendable () -> Void,
        schedule: ScheduleRunner? = nil
    ) {
        self.schedule = schedule
        self.manager = manager
        jail = DownloadDirectoryJail(root: downloadDirectory)
        sessionID = (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        self.requestShutdown = requestShutdown
    }

    /// Calls `method` with `params` (without the token).
    public func call(_ method: String, _ params: [JSONValue]) async throws(RPCError) -> JSONValue {
        let params = Parameters(params)
        switch method {
        case "aria2.addUri": return try await addUri(params)
        case "aria2.addMetalink": return try await addMetalink(params)
        case "aria2.addTorrent":
            throw .failed("Haul downloads over HTTP and HTTPS only: BitTorrent is not supported")
        case "aria2.remove", "aria2.forceRemove": return try await remove(params)
        case "aria2.pause", "aria2.forcePause": return try await pause(params)
        case "aria2.pauseAll", "aria2.forcePauseAll":
            await manager.pauseAll()
            return "OK"
        case "aria2.unpause": return try await unpause(params)
        case "aria2.unpauseAll":
            try? await manager.resume(await manager.ids(in: [.paused]))
            return "OK"
        case "aria2.tellStatus": return try await tellStatus(params)
        case "aria2.getUris": return .array(Aria2Status.uris(try await snapshot(params.gid(0))))
        case "aria2.getFiles": return try await getFiles(params)
        case "aria2.getPeers": return .array([])
        case "aria2.getServers": return try await getServers(params)
        case "aria2.tellActive": return try await tellActive(params)
        case "aria2.tellWaiting": return try await tellWaiting(params)
        case "aria2.tellStopped": return try await tellStopped(params)
        case "aria2.changePosition": return try await changePosition(params)
        case "aria2.changeUri": return try await changeUri(params)
        case "aria2.getOption": return try await getOption(params)
        case "aria2.changeOption": return try await changeOption(params)
        case "aria2.getGlobalOption": return await globalOptions()
        case "aria2.changeGlobalOption": return try await changeGlobalOption(params)
        case "aria2.getGlobalStat": return await globalStat()
        case "aria2.purgeDownloadResult": return await purgeDownloadResults()
        case "aria2.removeDownloadResult": return try await removeDownloadResult(params)
        case "aria2.getVersion":
            return [
                "version": .string(Self.aria2Version), "haulVersion": .string(HaulVersion.current),
                "enabledFeatures": ["GZip", "HTTPS", "Message Digest"],
            ]
        case "aria2.getSessionInfo": return ["sessionId": .string(sessionID)]
        case "aria2.shutdown", "aria2.forceShutdown":
            requestShutdown()
            return "OK"
        case "aria2.saveSession":
            // Every change is in the state database the moment it happens.
            return "OK"
        case "system.listMethods": return .array(Self.methods.map(JSONValue.string))
        case "system.listNotifications": return .array(Self.notifications.map(JSONValue.string))
        case "haul.subscribe": throw .failed("haul.subscribe needs a WebSocket session at /jsonrpc")
        case "haul.remove": return try await removeAnything(params)
        default: return try await haulCall(method, params)
        }
    }

    /// Runs a manager call, turning its error into aria2's.
    func managing(_ body: () async throws(DownloadError) -> Void) async throws(RPCError) {
        do {
            try await body()
        } catch {
            throw .failed(error.summary)
        }
    }

    /// The download parameter `index` names: a whole GID (looked up directly) or a unique prefix.
    func gid(_ params: Parameters, _ index: Int) async throws(RPCError) -> GID {
        try await described(params.gid(index)).gid
    }

    // MARK: - Adding

    private func addUri(_ params: Parameters) async throws(RPCError) -> JSONValue {
        guard let uris = params.values.first?.arrayValue?.compactMap(\.stringValue), !uris.isEmpty else {
            throw .failed("addUri expects a non-empty array of URIs")
        }
        // aria2's way: every URI of the array is the same file; the first is the download's URL, the others mirrors.
        var urls: [URL] = []
        for uri in uris {
            guard let url = URL(string: uri) else { throw .failed("'\(uri)' is not a URL") }
            if !urls.contains(url) { urls.append(url) }
        }
        let url = urls[0]
        let given = params.values.count > 1 ? (params.values[1].objectValue ?? [:]) : [:]
        var options = DownloadOptions(mirrors: Array(urls.dropFirst()))
        var directory: String?
        var out: String?
        var startPaused = false
        var split: Int?
        var perServer: Int?
        var httpUser: String?
        var httpPassword: String?
        for (name, value) in given {
            if name == "header" {
                options.headers += try Aria2Options.headers(value)
                continue
            }
            let text = try Aria2Options.text(value, option: name)
            switch name {
            case "dir": directory = text
            case "out": out = text
            case "split": split = try Aria2Options.integer(text, option: name, in: 1...32)
            case "max-connection-per-server": perServer = try Aria2Options.integer(text, option: name, in: 1...32)
            case "max-download-limit": options.speedLimit = try Aria2Options.speed(text, option: name)
            case "checksum": options.checksum = try Aria2Options.checksum(text)
            case "pause": startPaused = try Aria2Options.boolean(text, option: name)
            case "http-user": httpUser = text
            case "http-passwd": httpPassword = text
            default:
                // Options Haul has no use for (BitTorrent, FTP, allocation…) are accepted and ignored, as clients
                // send their whole option set.
                continue
            }
        }
        Aria2Options.setConnections(&options, split: split, perServer: perServer)
        if let httpUser { options.credentials = Credentials(user: httpUser, password: httpPassword ?? "") }
        let folder = try jail.directory(directory)
        let destination: DownloadDestination =
            if let out { .file(try jail.file(out, in: folder)) } else { .directory(folder) }
        let retried = try await retireFailed(url, destination, options: &options)
        var added: DownloadID?
        try await managing { () async throws(DownloadError) in
            // Added paused in one step: a small file cannot complete between an add and a pause.
            added = try await manager.add(url, to: destination, options: options, paused: startPaused)
        }
        guard let id = added else { throw .failed("the download could not be added") }
        if let retried { removed[retried]?.retriedAs = GID(id) }
        if let position = params.integer(2) {
            _ = try await move(GID(id), to: Int(position))
        }
        return .string(GID(id).description)
    }

    /// `changeUri(gid, fileIndex, delUris, addUris[, position])`: edits the mirrors; the download's own URL stays
    /// (it identifies the download). Returns `[deleted, added]`.
    private func changeUri(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let snapshot = try await snapshot(params.gid(0))
        guard params.values.count >= 4, let removing = params.values[2].arrayValue?.compactMap(\.stringValue),
            let adding = params.values[3].arrayValue?.compactMap(\.stringValue)
        else { throw .failed("changeUri expects gid, fileIndex, delUris and addUris") }
        guard params.integer(1) == 1 else { throw .failed("a Haul download has one file: its index is 1") }
        var mirrors = snapshot.options.mirrors
        var deleted = 0
        for uri in removing {
            if uri == snapshot.url.absoluteString {
                throw .failed("the download's own URL cannot be removed; remove the download instead")
            }
            // aria2 removes one occurrence per listed URI.
            if let index = mirrors.firstIndex(where: { $0.absoluteString == uri }) {
                mirrors.remove(at: index)
                deleted += 1
            }
        }
        var fresh: [URL] = []
        for uri in adding {
            guard let url = URL(string: uri) else { throw .failed("'\(uri)' is not a URL") }
            if url != snapshot.url, !mirrors.contains(url), !fresh.contains(url) { fresh.append(url) }
        }
        let position = params.values.count > 4 ? params.integer(4).map { max(0, min(Int($0), mirrors.count)) } : nil
        mirrors.insert(contentsOf: fresh, at: position ?? mirrors.count)
        let id = snapshot.id
        try await managing { () async throws(DownloadError) in try await manager.setMirrors(mirrors, for: id) }
        return .array([.integer(Int64(deleted)), .integer(Int64(fresh.count))])
    }

    // MARK: - Control

    private func remove(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let gid = try await gid(params, 0)
        guard let snapshot = await manager.snapshot(gid.id), snapshot.state != .completed, snapshot.state != .failed
        else {
            throw .failed("Active Download not found for GID#\(gid)")
        }
        try await managing { () async throws(DownloadError) in try await manager.remove(gid.id) }
        removed[gid] = RemovedResult(snapshot: snapshot, at: Date())
        return .string(gid.description)
    }

    /// `haul.remove(gid, deleteFile)`: removes a download in any state, in one call. A running, waiting or paused one
    /// is removed as by `remove` (its partial data deleted); a finished or failed one is forgotten, its file deleted
    /// too when `deleteFile` is true, which is refused for a file whose real path is outside the download directory
    /// (one a command added elsewhere); a removed result is purged.
    private func removeAnything(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let (gid, snapshot, status) = try await described(params.gid(0))
        let deleteFile: Bool
        switch params.values.count > 1 ? params.values[1] : .bool(false) {
        case .bool(let flag): deleteFile = flag
        case .string(let text): deleteFile = try Aria2Options.boolean(text, option: "deleteFile")
        default: throw .failed("haul.remove's second parameter (deleteFile) must be true or false")
        }
        if deleteFile, status == "complete" || status == "error", let file = snapshot.file, !jail.holds(file) {
            throw .failed(
                "\(file.path) is outside the download directory \(jail.root.path): over RPC Haul deletes only files "
                    + "inside it (remove the download with deleteFile false)")
        }
        guard try await forgetResult(gid, snapshot, status, deletingFile: deleteFile) else {
            return try await remove(params)
        }
        return "OK"
    }

    private func pause(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let gid = try await gid(params, 0)
        guard let state = await manager.state(of: gid.id), state == .running || state == .queued else {
            throw .failed("GID#\(gid) cannot be paused now")
        }
        try await managing { () async throws(DownloadError) in try await manager.pause(gid.id) }
        return .string(gid.description)
    }

    private func unpause(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let gid = try await gid(params, 0)
        guard await manager.state(of: gid.id) == .paused else { throw .failed("GID#\(gid) cannot be unpaused now") }
        try await managing { () async throws(DownloadError) in try await manager.resume(gid.id) }
        return .string(gid.description)
    }

    private func changePosition(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let gid = try await gid(params, 0)
        guard let offset = params.integer(1) else { throw .failed("changePosition expects a position") }
        let waiting = await manager.ids(in: [.queued, .paused], order: .queue)
        guard let current = waiting.firstIndex(of: gid.id) else {
            throw .failed("GID#\(gid) not found in the waiting queue.")
        }
        let target: Int
        switch params.string(2) {
        case "POS_SET": target = Int(offset)
        case "POS_CUR": target = current + Int(offset)
        case "POS_END": target = waiting.count - 1 + Int(offset)
        default: throw .failed("changePosition's third parameter must be POS_SET, POS_CUR or POS_END")
        }
        return .integer(Int64(try await move(gid, to: target)))
    }

    /// Moves a waiting download to `position` in the waiting list (clamped) by choosing its priority; returns the
    /// position it reached.
    func move(_ gid: GID, to position: Int) async throws(RPCError) -> Int {
        var order = await waitingOrder()
        guard let index = order.firstIndex(where: { $0.id == gid.id }) else { return 0 }
        let moving = order.remove(at: index)
        let target = max(0, min(position, order.count))
        let before = target > 0 ? order[target - 1] : nil
        let after = target < order.count ? order[target] : nil
        // Queue order: higher priority first, then lower id. Find a priority that lands between the neighbours.
        func fits(_ priority: Int) -> Bool {
            let afterBefore = before.map { priority < $0.priority || (priority == $0.priority && gid.id > $0.id) }
            let beforeAfter = after.map { priority > $0.priority || (priority == $0.priority && gid.id < $0.id) }
            return (afterBefore ?? true) && (beforeAfter ?? true)
        }
        let candidates =
            [after?.priority, after.map { $0.priority + 1 }, before?.priority, before.map { $0.priority - 1 }]
            .compactMap { $0 } + [moving.priority]
        do {
            if let priority = candidates.first(where: fits) {
                try await manager.setPriority(priority, for: gid.id)
            } else {
                // No single priority fits between equal neighbours: number the whole waiting list.
                order.insert(moving, at: target)
                for (rank, entry) in order.enumerated() {
                    try await manager.setPriority(order.count - rank, for: entry.id)
                }
            }
        } catch {
            throw .failed(error.summary)
        }
        return await manager.ids(in: [.queued, .paused], order: .queue).firstIndex(of: gid.id) ?? target
    }

    // MARK: - Options

    private func getOption(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let snapshot = try await snapshot(params.gid(0))
        var options: [String: JSONValue] = [
            "dir": .string(Aria2Status.directory(of: snapshot, downloadDirectory: jail.root)),
            "split": .string(String(snapshot.options.connections)),
            "max-connection-per-server": .string(String(snapshot.options.connections)),
            "max-download-limit": .string(Aria2Options.speedText(snapshot.options.speedLimit)),
        ]
        if let file = snapshot.file { options["out"] = .string(file.lastPathComponent) }
        if let checksum = snapshot.options.checksum { options["checksum"] = .string(checksum.description) }
        if let credentials = snapshot.options.credentials {
            options["http-user"] = .string(credentials.user)
            options["http-passwd"] = .string("***")
        }
        if !snapshot.options.headers.isEmpty {
            options["header"] = .array(snapshot.options.headers.map { .string("\($0.name): \($0.displayValue)") })
        }
        return .object(options)
    }

    private func changeOption(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let gid = try await gid(params, 0)
        let changes = params.values.count > 1 ? (params.values[1].objectValue ?? [:]) : [:]
        for (name, value) in changes {
            let text = try Aria2Options.text(value, option: name)
            switch name {
            case "max-download-limit":
                let limit = try Aria2Options.speed(text, option: name)
                try await managing { () async throws(DownloadError) in
                    try await manager.setSpeedLimit(limit, for: gid.id)
                }
            case "split", "max-connection-per-server":
                let count = try Aria2Options.integer(text, option: name, in: 1...32)
                try await managing { () async throws(DownloadError) in
                    try await manager.setConnections(count, for: gid.id)
                }
            default:
                throw .failed("\(name) option cannot be changed in Haul (max-download-limit and split can)")
            }
        }
        return "OK"
    }

    private func globalOptions() async -> JSONValue {
        let configuration = manager.configuration
        var options: [String: JSONValue] = [
            "dir": .string(jail.root.path),
            "max-concurrent-downloads": .string(String(await manager.maxConcurrentDownloads)),
            "max-overall-download-limit": .string(Aria2Options.speedText(await manager.globalSpeedLimit)),
            "max-connection-per-server": .string(String(configuration.maxConnectionsPerHost)),
            "split": "1",
            "user-agent": .string(configuration.userAgent),
            "continue": "true",
        ]
        // The hooks, under aria2's names (`on-download-complete`, …), as given.
        for (name, command) in configuration.hookOptions { options[name] = .string(command) }
        return .object(options)
    }

    private func changeGlobalOption(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let changes = params.values.first?.objectValue ?? [:]
        for (name, value) in changes {
            let text = try Aria2Options.text(value, option: name)
            switch name {
            case "max-overall-download-limit":
                let limit = try Aria2Options.speed(text, option: name)
                try await managing { () async throws(DownloadError) in try await manager.setGlobalSpeedLimit(limit) }
            case "max-concurrent-downloads":
                let count = try Aria2Options.integer(text, option: name, in: 1...1000)
                try await managing { () async throws(DownloadError) in
                    try await manager.setMaxConcurrentDownloads(count)
                }
            default:
                throw .failed(
                    "\(name) option cannot be changed in Haul (max-overall-download-limit and max-concurrent-downloads "
                        + "can)")
            }
        }
        return "OK"
    }
}

/// The positional parameters of a call.
struct Parameters {
    let values: [JSONValue]

    init(_ values: [JSONValue]) { self.values = values }

    func string(_ index: Int) -> String? {
        index < values.count ? values[index].stringValue : nil
    }

    func integer(_ index: Int) -> Int64? {
        guard index < values.count else { return nil }
        if let number = values[index].integerValue { return number }
        return values[index].stringValue.flatMap { Int64($0) }
    }

    /// The GID text at `index`.
    func gid(_ index: Int) throws(RPCError) -> String {
        guard let text = string(index) else { throw .failed("a GID is expected as parameter \(index + 1)") }
        return text
    }

    /// The `keys` filter at `index` (empty: every key).
    func keys(_ index: Int) -> [String] {
        index < values.count ? (values[index].arrayValue ?? []).compactMap(\.stringValue) : []
    }
}
