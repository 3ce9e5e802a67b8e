/// A handler receiving a manager's events (``DownloadManager/observeEvents(_:)``); it receives them until
/// ``cancel()`` or the manager's shutdown.
public final class EventObservation: Sendable {
    private let hub: EventHub
    private let token: Int

    init(hub: EventHub, token: Int) {
        self.hub = hub
        self.token = token
    }

    /// Stops the events; one being delivered on another task may still arrive. Cancelling twice does nothing.
    public func cancel() { hub.unsubscribe(token) }
}
