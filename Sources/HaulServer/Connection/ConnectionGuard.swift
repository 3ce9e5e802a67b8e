import NIOCore

/// The first handler of every connection, before the HTTP parser: it counts the connection against the daemon's
/// limit (503 beyond it), refuses an over-long request line (414) or head (431) before the parser buffers it, and
/// closes a connection whose first request head is not complete within the header timeout (408 if part of it came;
/// silently if nothing did). Once the head is complete it only passes bytes on: later requests on the connection are
/// bounded by the parser's own limits and the framework's idle timeout, and a WebSocket by its frame limits.
///
/// Runs on the connection's event loop, as every channel handler does.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case starting
        case readingHead(RequestHeadScanner)
        case passing
        case refused
    }

    private let limits: HaulDaemon.ConnectionLimits
    private let counter: ConnectionCounter
    private var state = State.starting
    private var admitted = false
    private var timer: Scheduled<Void>?
    /// How long a refused connection is kept to let the client read the answer before it is closed for good.
    static let linger = TimeAmount.seconds(2)

    init(limits: HaulDaemon.ConnectionLimits, counter: ConnectionCounter) {
        self.limits = limits
        self.counter = counter
    }

    func handlerAdded(context: ChannelHandlerContext) {
        // Added to a connection already active: started once it is set up (whichever comes first of this and
        // channelActive starts it).
        if context.channel.isActive {
            context.eventLoop.assumeIsolated().execute { self.start(context) }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state {
        case .starting, .passing:
            context.fireChannelRead(data)
        case .refused:
            // What a refused client still sends is dropped until the connection closes.
            return
        case .readingHead(var scanner):
            let verdict = unwrapInboundIn(data).withUnsafeReadableBytes { scanner.scan($0) }
            switch verdict {
            case .incomplete:
                state = .readingHead(scanner)
                context.fireChannelRead(data)
            case .complete:
                state = .passing
                timer?.cancel()
                timer = nil
                context.fireChannelRead(data)
            case .requestLineTooLong:
                refuse(context, "414 URI Too Long")
            case .headTooLarge:
                refuse(context, "431 Request Header Fields Too Large")
            }
        }
    }

    private func start(_ context: ChannelHandlerContext) {
        guard case .starting = state else { return }
        guard counter.admit() else {
            refuse(context, "503 Service Unavailable")
            return
        }
        admitted = true
        state = .readingHead(RequestHeadScanner(maxRequestLine: limits.requestLineBytes, maxHead: limits.headBytes))
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.timeAmount(limits.headerTimeout)) {
            self.timedOut(context)
        }
    }

    private func timedOut(_ context: ChannelHandlerContext) {
        timer = nil
        guard case .readingHead(let scanner) = state else { return }
        if scanner.hasStarted {
            refuse(context, "408 Request Timeout")
        } else {
            state = .refused
            context.close(promise: nil)
        }
    }

    /// Answers `status` (code and reason) with no body and closes: the output at once, the connection once the client
    /// closed too or after ``linger`` (closing with unread input would reset the connection and lose the answer).
    private func refuse(_ context: ChannelHandlerContext, _ status: String) {
        state = .refused
        timer?.cancel()
        let text = "HTTP/1.1 \(status)\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: text)))
            .assumeIsolated().whenComplete { _ in context.close(mode: .output, promise: nil) }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: Self.linger) {
            self.timer = nil
            context.close(promise: nil)
        }
    }

    /// Ends the connection's count and timer (once).
    private func finish() {
        timer?.cancel()
        timer = nil
        if admitted {
            admitted = false
            counter.release()
        }
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
