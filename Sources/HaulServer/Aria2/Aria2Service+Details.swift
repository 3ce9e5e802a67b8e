import Foundation
import HaulKit

/// `haul.details(gid)`: one download in full for the dashboard's details panel.
extension Aria2Service {
    /// `{gid, status, state, name, url, file, dir, sizes and speeds, reason, sources, error, history, options, digest,
    /// times, speeds, aria2}`: `sources` are the download's URL and mirrors with what is known of each (aria2's keys
    /// of each URI besides, when `tellStatus` has more); `history` is what happened to it since the daemon started;
    /// `speeds` its speed in each of the last 120 seconds; `aria2` its whole `tellStatus` object, so that keys added
    /// there show without a change here.
    func details(_ params: Parameters) async throws(RPCError) -> JSONValue {
        let (gid, snapshot, status) = try await described(params.gid(0))
        let kept = removed[gid]
        let waiting = await manager.ids(in: [.queued, .paused], order: .queue)
        let position = waiting.firstIndex(of: snapshot.id)
        guard case .object(var fields) = row(snapshot, status: status, position: position, retriedAs: kept?.retriedAs)
        else { return .null }
        let aria2 = Aria2Status.object(snapshot, gid: gid, statusName: status, keys: [], downloadDirectory: jail.root)
        fields["aria2"] = aria2
        fields["dir"] = .string(Aria2Status.directory(of: snapshot, downloadDirectory: jail.root))
        if let file = snapshot.file { fields["file"] = .string(file.path) }
        if let final = snapshot.finalURL, final != snapshot.url { fields["finalURL"] = .string(final.absoluteString) }
        fields["sources"] = .array(sources(snapshot, aria2: aria2))
        if let error = snapshot.lastError, snapshot.state != .completed {
            var described: [String: JSONValue] = [
                "message": .string(error.summary), "suggestion": .string(error.suggestion),
                "code": .integer(Int64(error.code.rawValue)), "errorCode": .string(Aria2Status.errorCode(error)),
                "transient": .bool(error.isTransient),
            ]
            if let http = error.httpStatus { described["httpStatus"] = .integer(Int64(http)) }
            fields["error"] = .object(described)
        }
        fields["history"] = .array(
            activity.history(of: snapshot.id).map {
                ["at": .string(Self.timestamp($0.at)), "text": .string($0.text)]
            })
        fields["options"] = options(snapshot, position: position)
        if let digest = digest(snapshot) { fields["digest"] = digest }
        if let change = snapshot.fileChange { fields["fileChange"] = .string(change) }
        if let owner = snapshot.owner { fields["owner"] = .string(owner) }
        fields["createdAt"] = .string(Self.timestamp(snapshot.createdAt))
        if let started = snapshot.startedAt { fields["startedAt"] = .string(Self.timestamp(started)) }
        if let completed = snapshot.completedAt { fields["completedAt"] = .string(Self.timestamp(completed)) }
        fields["speeds"] = .array(activity.speeds(of: snapshot.id).map { .integer($0) })
        return .object(fields)
    }

    /// The download's URL and mirrors: aria2's URI objects, with the role of each and whether it was dropped.
    private func sources(_ snapshot: DownloadSnapshot, aria2: JSONValue) -> [JSONValue] {
        let dropped = activity.droppedMirrors(of: snapshot.id)
        let described = aria2["files"]?.arrayValue?.first?["uris"]?.arrayValue ?? []
        let urls = [snapshot.url] + snapshot.options.mirrors
        return urls.enumerated().map { index, url in
            let uri = url.absoluteString
            var fields = described.first { $0["uri"]?.stringValue == uri }?.objectValue ?? ["uri": .string(uri)]
            fields["role"] = .string(index == 0 ? "download URL" : "mirror")
            if let reason = dropped[uri] {
                fields["status"] = "dropped"
                fields["note"] = .string(reason)
            }
            return .object(fields)
        }
    }

    /// The options the panel shows, and edits where aria2 lets them change.
    private func options(_ snapshot: DownloadSnapshot, position: Int?) -> JSONValue {
        var options: [String: JSONValue] = [
            "max-download-limit": .string(Aria2Options.speedText(snapshot.options.speedLimit)),
            "split": .string(String(snapshot.options.connections)),
            "priority": .integer(Int64(snapshot.options.priority)),
        ]
        if let position { options["position"] = .integer(Int64(position)) }
        if let checksum = snapshot.options.checksum { options["checksum"] = .string(checksum.description) }
        if !snapshot.options.headers.isEmpty {
            options["header"] = .array(snapshot.options.headers.map { .string($0.description) })
        }
        if let credentials = snapshot.options.credentials { options["login"] = .string(credentials.description) }
        return .object(options)
    }

    /// The file's digest and what vouches for it; nil before it completed.
    private func digest(_ snapshot: DownloadSnapshot) -> JSONValue? {
        guard snapshot.state == .completed else {
            return snapshot.options.checksum.map { ["expected": .string($0.description)] }
        }
        var fields: [String: JSONValue] = [:]
        if let sha256 = snapshot.sha256 { fields["sha256"] = .string(sha256) }
        if let verification = snapshot.verification {
            if let checksum = snapshot.options.checksum { fields["expected"] = .string(checksum.description) }
            fields["verifiedBy"] = .string(verification.description)
        } else if let checksum = snapshot.options.checksum {
            fields["expected"] = .string(checksum.description)
            fields["verifiedBy"] = .string(
                "the \(checksum.algorithm.rawValue) given when it was added: the whole file matched it before it "
                    + "was put in place")
        } else if snapshot.sha256 != nil {
            fields["verifiedBy"] = .string(
                "no digest was given; Haul recorded the SHA-256 of the bytes it wrote (haul verify compares)")
        }
        if let change = snapshot.fileChange {
            fields["warning"] = .string("the file \(change)")
        }
        return fields.isEmpty ? nil : .object(fields)
    }

    static func timestamp(_ date: Date) -> String {
        date.formatted(.iso8601)
    }
}
