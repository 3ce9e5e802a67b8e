/// An order to list downloads in.
public enum DownloadOrder: Sendable {
    /// Oldest first.
    case added
    /// The order queued downloads start in: higher priority first, then oldest first.
    case queue
    /// The order they ended in (completion, or the last change for a failed download), earliest first.
    case finished
}
