/// Whose each download is, from the owner its record names: the queue's, this manager's, or another foreground
/// command's that is still running or has ended (each owner looked up once).
struct OwnerLiveness {
    /// This manager's owner text (nil when its downloads are the queue's).
    let me: String?
    private var ended: [String: Bool] = [:]

    init(me: String?) { self.me = me }

    /// The ownership of a download recorded `queued` or `running` with `owner`: whether another command that owns it
    /// has ended is looked up (once per owner).
    mutating func ownership(_ owner: String?) -> DownloadLifecycle.Ownership {
        guard let owner, owner != me else { return .queue }
        if let known = ended[owner] { return known ? .gone : .alive }
        let hasEnded = ForegroundOwner(text: owner)?.hasEnded ?? true
        ended[owner] = hasEnded
        return hasEnded ? .gone : .alive
    }

    /// The ownership of a download in any other state: whether it is another command's (never looked up, since it
    /// does not run either way).
    func recorded(_ owner: String?) -> DownloadLifecycle.Ownership {
        guard let owner, owner != me else { return .queue }
        return .gone
    }
}
