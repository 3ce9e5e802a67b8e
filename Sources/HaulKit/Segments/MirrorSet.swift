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
        /// It took over from the download's URL, which failed: it is the download's source now, not a mirror.
        case source
    }

    /// Where a connection fetches from.
    enum Source: Sendable, Equatable {
        /// The download's own URL (its ``RequestTarget``).
        case primary
        /// Mirror `index`, at `url`; `needsCheck` when this connection must check it before fetching.
        case mirror(index: Int, url: String, needsCheck: Bool)
    }

    /// The mirrors' URLs: those given, then those the primary named (`Link: <…>; rel=duplicate`, ``add(_:)``).
    private let urlList: Mutex<[String]>
    private var urls: [String] { urlList.withLock { $0 } }
    private let statuses: Mutex<[Status]>
    /// Confirmed bytes each mirror wrote into the part file in this generation of it.
    private let served: Mutex<[Int64]>
    /// Bytes the download's own source wrote, by URL (the added URL, or a mirror that took over from it).
    private let sources = Mutex<[String: Int64]>([:])
    /// Which URL wrote which bytes, to fetch a bad piece again from another source.
    private let written = Mutex<[(range: Range<Int64>, url: String)]>([])

    /// No mirrors: one set shared by every download without any (nothing in it ever changes).
    static let empty = MirrorSet(urls: [])

    init(urls: [String]) {
        urlList = Mutex(urls)
        statuses = Mutex(Array(repeating: .unchecked, count: urls.count))
        served = Mutex(Array(repeating: 0, count: urls.count))
    }

    var isEmpty: Bool { urls.isEmpty }

    /// Adds mirrors the download's own source named (RFC 6249's `Link: <…>; rel=duplicate`), skipping those known;
    /// returns those added. They are checked and confirmed as any mirror. Never on ``empty``.
    @discardableResult
    func add(_ more: [String]) -> [String] {
        guard self !== Self.empty else { return [] }
        // Lock order: statuses, then the URLs or the counts (as everywhere else).
        return statuses.withLock { statuses in
            let fresh = urlList.withLock { list in
                var fresh: [String] = []
                for url in more where !list.contains(url) && !fresh.contains(url) { fresh.append(url) }
                list += fresh
                return fresh
            }
            served.withLock { $0 += Array(repeating: 0, count: fresh.count) }
            statuses += Array(repeating: .unchecked, count: fresh.count)
            return fresh
        }
    }

    /// The source for connection `index`: connection 0 and every connection beyond the live sources use the
    /// primary; the others are spread over the mirrors still live. A mirror another connection is checking is
    /// skipped until it is admitted.
    func source(for index: Int) -> Source {
        statuses.withLock { statuses in
            let live = statuses.indices.filter {
                switch statuses[$0] {
                case .dropped, .source: return false
                case .unchecked, .checking, .admitted: return true
                }
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
            case .dropped, .source: return .primary
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
            switch statuses[index] {
            case .dropped, .source: return false
            case .unchecked, .checking, .admitted:
                statuses[index] = .dropped(reason: reason)
                return true
            }
        }
    }

    /// The download's URL failed: the first mirror still live becomes the download's source (no longer a mirror).
    /// Nil when none is left.
    func takeOver() -> (index: Int, url: String)? {
        statuses.withLock { statuses in
            let next = statuses.indices.first {
                switch statuses[$0] {
                case .dropped, .source: false
                case .unchecked, .checking, .admitted: true
                }
            }
            guard let next else { return nil }
            statuses[next] = .source
            return (next, urls[next])
        }
    }

    /// Counts the bytes of `range`, written from the download's own source at `url` (the added URL, or a mirror
    /// that took over).
    func credit(_ range: Range<Int64>, to url: String) {
        // The shared empty set counts nothing: a download without mirrors has one source.
        guard !range.isEmpty, !urls.isEmpty else { return }
        sources.withLock { $0[url, default: 0] += Int64(range.count) }
        written.withLock { $0.append((range, url)) }
    }

    /// The bytes of the part file (since it was last cut back to 0) by the URL that served them: the download's own
    /// source and each mirror, in the order first credited.
    var servedBytes: [(url: String, bytes: Int64)] {
        let own = sources.withLock { $0 }
        let mirrors = served.withLock { served in served.indices.map { (urls[$0], served[$0]) } }
        var merged: [String: Int64] = own
        for (url, bytes) in mirrors where bytes > 0 { merged[url, default: 0] += bytes }
        return merged.filter { $0.value > 0 }.sorted { $0.value > $1.value }.map { ($0.key, $0.value) }
    }

    /// Counts the bytes of `range` mirror `index` wrote and the primary confirmed.
    func confirmed(_ range: Range<Int64>, by index: Int) {
        served.withLock { $0[index] += Int64(range.count) }
        written.withLock { $0.append((range, urls[index])) }
    }

    /// The URLs that wrote bytes of `range` (since the part file was last cut back to 0).
    func servers(of range: Range<Int64>) -> Set<String> {
        written.withLock { written in Set(written.filter { $0.range.overlaps(range) }.map(\.url)) }
    }

    /// The mirrors not dropped, by index and URL.
    var live: [(index: Int, url: String)] {
        statuses.withLock { statuses in
            statuses.indices.compactMap { index in
                switch statuses[index] {
                case .dropped, .source: nil
                case .unchecked, .checking, .admitted: (index, urls[index])
                }
            }
        }
    }

    /// The mirrors whose bytes are in the part file (since it was last cut back to 0).
    var contributors: [(index: Int, url: String)] {
        served.withLock { served in served.indices.filter { served[$0] > 0 }.map { ($0, urls[$0]) } }
    }

    /// The part file was cut back to 0: no mirror's bytes are in it any more.
    func forgetServedBytes() {
        served.withLock { $0 = Array(repeating: 0, count: $0.count) }
        sources.withLock { $0 = [:] }
        written.withLock { $0 = [] }
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
