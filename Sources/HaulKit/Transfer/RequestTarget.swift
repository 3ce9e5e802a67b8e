import Foundation
import Synchronization

/// The URL a download's requests go to now: the one it was added with, or a fresh one the manager's
/// ``URLProvider`` gave when that was refused. Shared by every connection of the download, so one expiry seen by
/// several connections asks the provider once.
///
/// Read under a lock, not through an actor: every request reads it, and a hop to an actor and back for each was two
/// task switches per small download.
final class RequestTarget: Sendable {
    /// Refusals that mean "this URL no longer works" rather than "you may not have this file".
    static let expiryStatuses: Set<Int> = [401, 403, 410]

    private struct State {
        var url: String
        var generation = 0
        var home: String?
        /// The provider's answer being awaited, shared by every connection whose request was refused meanwhile.
        var refreshing: Task<Bool, Never>?
    }

    private let id: DownloadID
    private let added: String
    /// The added URL's host, lowercased: the host a `Retry-After` holds.
    let host: String
    private let provider: URLProvider?
    private let state: Mutex<State>

    /// `host`: the added URL's host, lowercased (``URLHost/lowercased(in:)``), as its owner keys it.
    init(id: DownloadID, url: String, host: String, provider: URLProvider?) {
        self.id = id
        self.added = url
        self.host = host
        self.provider = provider
        state = Mutex(State(url: url))
    }

    /// Whether a refusal can be answered with a fresh URL.
    var canRefresh: Bool { provider != nil }

    /// Another source of the file (a mirror) takes over from the URL that failed: every request goes to `url` from
    /// now on, and its generation is a new one. Credentials and custom headers still go only to the added URL's
    /// origin.
    func takeOver(by url: String) {
        state.withLock { state in
            state.home = state.home ?? added
            state.url = url
            state.generation += 1
        }
    }

    /// The URL to request, its generation (pass it to ``refresh(from:status:)`` if the request is refused) and its
    /// home: the URL whose origin credentials and custom headers go to once another source took over from the added
    /// URL (``takeOver(by:)``), nil while requests go to the added URL (or a fresh one from the provider). Read
    /// together: a takeover between two reads could pair a mirror's URL with no home, and send the origin's
    /// credentials to the mirror.
    var current: (url: String, generation: Int, home: String?) {
        state.withLock { ($0.url, $0.generation, $0.home) }
    }

    /// What ``refresh(from:status:)`` did.
    enum Refresh: Sendable, Equatable {
        /// The provider was asked and gave a fresh URL.
        case replaced
        /// Another connection already got one (or is getting it): no new question to the provider.
        case replacedElsewhere
        /// No fresh URL.
        case unavailable
    }

    /// Replaces the URL of `generation`, refused with `status`, by a fresh one; the provider is asked once per
    /// expiry, however many connections saw it. The fresh URL is in place before any of them returns; a mirror that
    /// took over while the provider was asked keeps the requests (its generation is newer).
    func refresh(from generation: Int, status: Int) async -> Refresh {
        guard let provider else { return .unavailable }
        enum Step {
            case unavailable
            case replacedElsewhere
            case join(Task<Bool, Never>)
            case ask(Task<Bool, Never>)
        }
        let step = state.withLock { state -> Step in
            if generation < state.generation { return .replacedElsewhere }
            if let refreshing = state.refreshing { return .join(refreshing) }
            guard let addedURL = URL(string: added) else { return .unavailable }
            let asked = state.generation
            let request = URLRefresh(
                id: id, url: addedURL, refusedURL: URL(string: state.url) ?? addedURL, status: status)
            // The caller's provider may block: never on an event loop. The answer is put in place by the task
            // itself, so whoever awaits it finds it there.
            let task = Task(executorPreference: TaskPlacement.offLoop) { [self] () -> Bool in
                let answer = await provider(request)
                let fresh = answer.flatMap { url -> URL? in
                    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                        url.host != nil
                    else { return nil }
                    return url
                }
                return self.state.withLock { state in
                    state.refreshing = nil
                    // A mirror took over meanwhile (``takeOver(by:)``): its URL stands, the answer is dropped.
                    guard state.generation == asked else { return true }
                    guard let fresh else { return false }
                    state.url = fresh.absoluteString
                    state.generation += 1
                    return true
                }
            }
            state.refreshing = task
            return .ask(task)
        }
        switch step {
        case .unavailable: return .unavailable
        case .replacedElsewhere: return .replacedElsewhere
        case .join(let task): return await task.value ? .replacedElsewhere : .unavailable
        case .ask(let task): return await task.value ? .replaced : .unavailable
        }
    }
}
