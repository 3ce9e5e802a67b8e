import Foundation

/// Claims: those of a round's starts made together, and the next downloads claimed ahead.
extension DownloadManager {
    /// The claims of the downloads `actions` start, made together (a store across a network answers them in one
    /// round trip), except those that ``start(_:claimed:)`` settles without the store. A store that
    /// ``DownloadStore/claimsAhead`` also claims, in the same call, the downloads next in the queue (up to one per
    /// slot): their starts then ask the store nothing.
    func claimTogether(_ actions: [DownloadLifecycle.Action]) async -> [DownloadID: ClaimOutcome] {
        var outcomes: [DownloadID: ClaimOutcome] = [:]
        var requests: [(id: DownloadID, share: HostShare)] = []
        for case .start(let id) in actions {
            guard let record = records[id], !record.isDamaged else { continue }
            if let ahead = takeClaimAhead(id) {
                outcomes[id] = ahead
                continue
            }
            let host = hostKey(of: record)
            if busyHosts.contains(host) { continue }
            requests.append((id, HostShare(host: host, wanted: 1, limit: configuration.maxConnectionsPerHost)))
        }
        let ahead = store.claimsAhead && !requests.isEmpty ? nextToClaimAhead() : []
        guard requests.count + ahead.count > 1 else { return outcomes }
        // The starts were taken out of the queue: none of them is among the next ones.
        let answers = await store.claim(requests + ahead, viewToken: viewToken)
        for (request, outcome) in zip(requests, answers) { outcomes[request.id] = outcome }
        for (request, outcome) in zip(ahead, answers.dropFirst(requests.count)) {
            guard case .granted = outcome else { continue }
            switch lifecycle.phase(of: request.id) {
            case .queued?: claimedAhead[request.id] = (outcome, .now)
            // Started meanwhile (its start claimed it again, and holds it now).
            case .runningHere?: break
            default: await store.release(request.id)
            }
        }
        return outcomes
    }

    /// The queued downloads to claim ahead: the next ones, up to one per slot in all, not held back by a busy host.
    private func nextToClaimAhead() -> [(id: DownloadID, share: HostShare)] {
        let room = configuration.maxConcurrentDownloads - claimedAhead.count
        guard room > 0 else { return [] }
        var ahead: [(id: DownloadID, share: HostShare)] = []
        for id in lifecycle.nextQueued(configuration.maxConcurrentDownloads) where ahead.count < room {
            guard claimedAhead[id] == nil, let record = records[id], !record.isDamaged else { continue }
            let host = hostKey(of: record)
            guard !busyHosts.contains(host), heldHosts[host] == nil else { continue }
            ahead.append((id, HostShare(host: host, wanted: 1, limit: configuration.maxConnectionsPerHost)))
        }
        return ahead
    }

    /// How long a claim taken ahead stands in for the start's own: its state was read when it was taken, and another
    /// process may pause or remove the download after that (seen only at the next look at the store). Past this, the
    /// start claims again (the lock is held already; the state is read again).
    static let claimAheadLifetime = Duration.milliseconds(100)

    /// The claim taken ahead for `id`, if it is recent enough to stand in for the start's own (it is taken out either
    /// way; a lock it holds stays held for the start's own claim).
    func takeClaimAhead(_ id: DownloadID) -> ClaimOutcome? {
        guard let ahead = claimedAhead.removeValue(forKey: id), ahead.at.duration(to: .now) <= Self.claimAheadLifetime
        else { return nil }
        return ahead.outcome
    }

    /// Gives back the claims taken ahead and not used (once a tick, and at shutdown), so that another process can
    /// take those downloads.
    func releaseClaimsAhead() async {
        let held = claimedAhead
        claimedAhead = [:]
        for id in held.keys.sorted() {
            // A start takes its download out of the claims ahead, so none runs; kept if one somehow does.
            if case .runningHere? = lifecycle.phase(of: id) { continue }
            await store.release(id)
        }
    }
}
