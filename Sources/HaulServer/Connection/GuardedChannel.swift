import HummingbirdCore
import Logging
import NIOCore

/// A server child channel with a ``ConnectionGuard`` in front of the HTTP parser of `Base` (Hummingbird's HTTP/1
/// with WebSocket upgrade): the framework adds its own handlers only once a request head arrived, too late for a
/// connection that never sends one.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let limits: HaulDaemon.ConnectionLimits
    let counter: ConnectionCounter

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        do {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuard(limits: limits, counter: counter), position: .first)
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
