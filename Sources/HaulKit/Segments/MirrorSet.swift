import Synchronization

/// The other URLs of one file that a multi-connection download spreads its segments over, and what is known of
/// each: not yet checked, being checked, admitted, or dropped (with why, for the log and the snapshot).
///
/// A mirror is admitted once it served bytes the part file already holds, identical, and the same length as the
/// file; it is dropped on any failure or difference, for the rest of the run, and its segments go to the other
/// sources. Connection 0 always uses the download's own URL, which establishes what the file is. Each range a
/// mirror writes counts only once the primary confirmed both its ends (``SegmentedTransfer``); the set counts the
/// confirmed bytes per mirror, so a whole-file checksum that fails knows whether mirrors took part.
final class MirrorSet: Sendable {
    enum Status: Sendable, Equatable {
        case unchecked
        case checking
        case admitted
        case dropped(reason: String)
    }

    /// Where a connection fetches from.
    enum Source: Sendable, Equatable {
        /// The download's own URL (its ``RequestTarget``).
        case primary
        /// Mirror `index`, at `url`; `needsCheck` when this connection must check it before fetching.
        case mirror(index: Int, url: String, needsCheck: Bool)
    }

    private let urls: [String]
    private let statuses: Mutex<[Status]>
    /// Confirmed bytes each mirror wrote into the part file in this generation of it.
    private let served: Mutex<[Int64]>

    /// No mirrors: one set shared by every download without any (nothing in it ever changes).
    static let empty = MirrorSet(urls: [])

    init(urls: [String]) {
        self.urls = urls
        statuses = Mutex(Array(repeating: .unchecked, count: urls.count))
        served = Mutex(Array(repeating: 0, count: urls.count))
    }

    var isEmpty: Bool { urls.isEmpty }

    /// The source for connection `index`: connection 0 and every connection beyond the live sources use the
    /// primary; the others are spread over the mirrors still live. A mirror another connection is checking is
    /// skipped until it is admitted.
    func source(for index: Int) -> Source {
        statuses.withLock { statuses in
            let live = statuses.indices.filter {
                if case .dropped = statuses[$0] { return false }
                return true
            }
            guard index > 0, !live.isEmpty else { return .primary }
            let slot = (index - 1) % (live.count + 1)
            guard slot < live.count else { return .primary }
            let chosen = live[slot]
            switch statuses[chosen] {
            case .unchecked:
                statuses[chosen] = .checking
                return .mirror(index: chosen, url: urls[chosen], needsCheck: true)
            case .checking: return .primary
            case .admitted: return .mirror(index: chosen, url: urls[chosen], needsCheck: false)
            case .dropped: return .primary
            }
        }
    }

    func admit(_ index: Int) {
        statuses.withLock { if $0[index] == .checking { $0[index] = .admitted } }
    }

    /// Drops mirror `index`; returns whether it was live (so the reason is logged once).
    @discardableResult
    func drop(_ index: Int, reason: String) -> Bool {
        statuses.withLock { statuses in
            if case .dropped = statuses[index] { return false }
            statuses[index] = .dropped(reason: reason)
            return true
        }
    }

    /// Counts `bytes` mirror `index` wrote and the primary confirmed.
    func confirmed(_ bytes: Int64, by index: Int) {
        served.withLock { $0[index] += bytes }
    }

    /// The mirrors whose bytes are in the part file (since it was last cut back to 0).
    var contributors: [(index: Int, url: String)] {
        served.withLock { served in served.indices.filter { served[$0] > 0 }.map { ($0, urls[$0]) } }
    }

    /// The part file was cut back to 0: no mirror's bytes are in it any more.
    func forgetServedBytes() {
        served.withLock { $0 = Array(repeating: 0, count: $0.count) }
    }

    /// The mirrors dropped so far and why.
    var dropped: [(url: String, reason: String)] {
        statuses.withLock { statuses in
            statuses.indices.compactMap { index in
                guard case .dropped(let reason) = statuses[index] else { return nil }
                return (urls[index], reason)
            }
        }
    }

    func status(_ index: Int) -> Status { statuses.withLock { $0[index] } }
}
