import Foundation

/// The URL a download's requests go to now: the one it was added with, or a fresh one the manager's
/// ``URLProvider`` gave when that was refused. Shared by every connection of the download, so one expiry seen by
/// several connections asks the provider once.
actor RequestTarget {
    /// Refusals that mean "this URL no longer works" rather than "you may not have this file".
    static let expiryStatuses: Set<Int> = [401, 403, 410]

    private let id: DownloadID
    private let added: String
    /// The added URL's host, lowercased: the host a `Retry-After` holds.
    nonisolated let host: String
    private let provider: URLProvider?
    private(set) var url: String
    /// Bumped each time the URL is replaced.
    private(set) var generation = 0
    private var refreshing: Task<URL?, Never>?

    init(id: DownloadID, url: String, provider: URLProvider?) {
        self.id = id
        self.added = url
        host = URLHost.lowercased(in: url)
        self.url = url
        self.provider = provider
    }

    /// Whether a refusal can be answered with a fresh URL.
    nonisolated var canRefresh: Bool { provider != nil }

    /// The URL whose origin credentials and custom headers go to, once another source took over from the added URL
    /// (``takeOver(by:)``); nil while requests go to the added URL (or a fresh one from the provider).
    private(set) var home: String?

    /// Another source of the file (a mirror) takes over from the URL that failed: every request goes to `url` from
    /// now on, and its generation is a new one. Credentials and custom headers still go only to the added URL's
    /// origin.
    func takeOver(by url: String) {
        home = home ?? added
        self.url = url
        generation += 1
    }

    /// The URL to request and its generation (pass it to ``refresh(from:status:)`` if the request is refused).
    var current: (url: String, generation: Int) { (url, generation) }

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
    /// expiry, however many connections saw it.
    func refresh(from generation: Int, status: Int) async -> Refresh {
        guard let provider else { return .unavailable }
        if generation < self.generation { return .replacedElsewhere }
        if let refreshing { return await refreshing.value != nil ? .replacedElsewhere : .unavailable }
        guard let addedURL = URL(string: added) else { return .unavailable }
        let request = URLRefresh(id: id, url: addedURL, refusedURL: URL(string: url) ?? addedURL, status: status)
        // The caller's provider may block: never on an event loop.
        let task = Task(executorPreference: TaskPlacement.offLoop) { () -> URL? in
            guard let fresh = await provider(request), let scheme = fresh.scheme?.lowercased(),
                scheme == "http" || scheme == "https", fresh.host != nil
            else { return nil }
            return fresh
        }
        refreshing = task
        let fresh = await task.value
        refreshing = nil
        guard let fresh else { return .unavailable }
        url = fresh.absoluteString
        self.generation += 1
        return .replaced
    }
}
