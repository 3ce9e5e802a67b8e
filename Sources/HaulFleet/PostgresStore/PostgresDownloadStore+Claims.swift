import Foundation
import HaulKit
import PostgresNIO

/// Leases: which worker runs which download, and how many of its host's connections it holds.
extension PostgresDownloadStore {
    // MARK: - Claims

    /// The lease's length as SQL.
    private var interval: String { "interval '\(Int(leaseTimeout.inSeconds * 1000)) milliseconds'" }

    /// Takes the lease, and a share of the host's connections: the lease records how many this worker may open
    /// (`leaseConnections`), and the live leases on one host never add up to more than `share.limit`. One round trip:
    /// the function `haul_download_take_shares` (migration v5) locks the row, then the host (an advisory lock, so two
    /// workers never both take the last connection), then counts the host's connections in a statement of its own
    /// (a fresh snapshot, so it sees every claim committed before the lock was taken).
    nonisolated(nonsending) func claim(_ id: DownloadID, share: HostShare, viewToken: Int?) async -> ClaimOutcome {
        await claim([(id, share)], viewToken: viewToken)[0]
    }

    var claimsTogether: Bool { true }

    /// One round trip for all: `haul_download_take_shares` (migration v5) takes them in order, counting each host's
    /// live connections once (under its advisory lock, as a single claim does) and adding what it grants.
    nonisolated(nonsending) func claim(
        _ requests: [(id: DownloadID, share: HostShare)], viewToken: Int?
    ) async -> [ClaimOutcome] {
        guard !requests.isEmpty else { return [] }
        var values: [StoredValue] = [.text(owner), .integer(Int64(leaseTimeout.inSeconds * 1000))]
        // Four arrays, one element per download each: ids, hosts, connections wanted, limits.
        var arrays: [[String]] = [[], [], [], []]
        for request in requests {
            for (index, value) in [
                StoredValue.integer(request.id.rawValue), .text(request.share.host),
                .integer(Int64(max(1, request.share.wanted))), .integer(Int64(request.share.limit)),
            ].enumerated() {
                values.append(value)
                arrays[index].append("$\(values.count)")
            }
        }
        let types = ["BIGINT", "TEXT", "BIGINT", "BIGINT"]
        let arguments = zip(arrays, types).map { "ARRAY[\($0.joined(separator: ", "))]::\($1)[]" }
        let granted =
            (try? await run(
                "SELECT \(Self.table)_take_shares($1, $2, \(arguments.joined(separator: ", ")))", values, inOrder: false
            ).rows.first).flatMap { row in
                (try? row?.makeRandomAccess()[0].decode([Int64].self))?.map { Optional(Int($0)) }
            }
        // The database unreachable: refused, and the next tick tries again.
        guard let granted, granted.count == requests.count else {
            return Array(repeating: .refused, count: requests.count)
        }
        return zip(requests, granted).map { request, result in
            switch result {
            case nil: return .refused
            case let count? where count < 0: return .refused
            case 0: return .hostBusy
            case let count?:
                held.withLock { _ = $0.insert(request.id) }
                return .granted(connections: count)
            }
        }
    }

    /// `haul_download_take_share` (migration v3) for a download this worker holds: as many of `share.wanted` connections
    /// as the host has left, never fewer than its lease has; 1 when the database cannot be reached.
    nonisolated(nonsending) func widenClaim(_ id: DownloadID, share: HostShare) async -> Int {
        let rows = try? await run(
            "SELECT \(Self.table)_take_share($1, $2, $3, $4, $5, $6, false)",
            [
                .integer(id.rawValue), .text(owner), .text(share.host), .integer(Int64(max(1, share.wanted))),
                .integer(Int64(share.limit)), .integer(Int64(leaseTimeout.inSeconds * 1000)),
            ], inOrder: false
        ).rows
        let granted = rows?.first.flatMap { try? $0.makeRandomAccess()[0].decode(Int64.self) }.map { Int($0) }
        return max(1, granted ?? 1)
    }

    /// One statement for all (a lease's column alone: nobody is notified), on the data connection, so it never
    /// takes the rows' locks in another order than a group's write running at the same time.
    nonisolated(nonsending) func connectionsDone(_ ids: [DownloadID]) async {
        guard !ids.isEmpty else { return }
        for chunk in Self.idChunks(ids) {
            _ = try? await run(
                """
                UPDATE \(Self.table) SET leaseConnections = 0
                WHERE id IN (\(SQLDialect.postgres.parameters(chunk.count, from: 2))) AND leaseOwner = $1
                """, [.text(owner)] + chunk)
        }
    }

    /// No round trip for a download this worker does not hold (its completion gave the lease up already).
    nonisolated(nonsending) func release(_ id: DownloadID) async {
        guard held.withLock({ $0.remove(id) }) != nil else { return }
        _ = try? await run(
            """
            UPDATE \(Self.table) SET leaseOwner = NULL, leaseExpires = NULL, leaseHost = NULL, leaseConnections = NULL
            WHERE id = $1 AND leaseOwner = $2
            """, [.integer(id.rawValue), .text(owner)], inOrder: false)
    }

    nonisolated(nonsending) func claimedElsewhere(_ ids: [DownloadID]) async -> Set<DownloadID> {
        var claimed: Set<DownloadID> = []
        for chunk in Self.idChunks(ids) {
            let rows = try? await run(
                """
                SELECT id FROM \(Self.table)
                WHERE id IN (\(SQLDialect.postgres.parameters(chunk.count, from: 2))) AND leaseOwner IS NOT NULL
                    AND leaseOwner <> $1 AND leaseExpires >= now()
                """, [.text(owner)] + chunk
            ).rows
            for row in rows ?? [] {
                if let id = try? row.makeRandomAccess()[0].decode(Int64.self) {
                    claimed.insert(DownloadID(rawValue: id))
                }
            }
        }
        return claimed
    }

    nonisolated(nonsending) func claimHolders() async throws(DownloadError) -> [DownloadID: String] {
        var holders: [DownloadID: String] = [:]
        for row in try await run(
            "SELECT id, leaseOwner FROM \(Self.table) WHERE leaseOwner IS NOT NULL AND leaseExpires >= now()"
        ).rows {
            let cells = row.makeRandomAccess()
            guard let id = try? cells[0].decode(Int64.self), let owner = try? cells[1].decode(String.self) else {
                continue
            }
            holders[DownloadID(rawValue: id)] = owner
        }
        return holders
    }

    /// Stops renewing this worker's leases: they run out after ``leaseTimeout`` (what a worker that dies does).
    func stopRenewingLeases() {
        heartbeat.withLock { $0?.cancel() }
    }

    /// The downloads whose lease this worker lost (it ran out and another worker took it), since the last call.
    nonisolated(nonsending) func lostClaims() async -> Set<DownloadID> {
        lost.withLock { lost in
            defer { lost = [] }
            return lost
        }
    }

    /// Renews the leases this worker holds; the ones another worker took meanwhile are lost. Not in the turn of the
    /// reads and writes: the heartbeat waits behind no write.
    nonisolated(nonsending) func renewLeases() async {
        let mine = held.withLock { $0 }
        guard !mine.isEmpty else { return }
        // The database unreachable: the leases run out, and the next renewal tells.
        guard
            let rows = try? await run(
                "UPDATE \(Self.table) SET leaseExpires = now() + \(interval) WHERE leaseOwner = $1 RETURNING id",
                [.text(owner)], inOrder: false
            ).rows
        else { return }
        let renewed = Set(
            rows.compactMap { try? $0.makeRandomAccess()[0].decode(Int64.self) }.map(DownloadID.init(rawValue:)))
        // Only the ones still held: a download released meanwhile (its completion gave the lease up) is not lost.
        let gone = held.withLock { held in
            let gone = mine.subtracting(renewed).intersection(held)
            held.subtract(gone)
            return gone
        }
        guard !gone.isEmpty else { return }
        lost.withLock { $0.formUnion(gone) }
        logger.warning("leases lost to another worker", metadata: ["downloads": "\(gone.map(\.rawValue).sorted())"])
    }
}
