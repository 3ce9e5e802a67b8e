import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A real HTTP/1.1 server on `127.0.0.1:<random port>` inside the test process, serving ``TestContent`` with
/// strong ETags and Last-Modified, recording every request, and misbehaving on demand.
///
/// Requests are parsed by NIO; responses are written as raw bytes, so a fault can break HTTP anywhere: cut a body
/// short, stall, lie in `Content-Range`, end a chunked body without its last chunk, or die inside the headers.
public final class TestOrigin: Sendable {
    /// How a resource asks for credentials.
    public enum Authentication: Sendable {
        case basic(user: String, password: String)
        /// RFC 7616 Digest with `qop=auth` (or without, RFC 2069 style), the algorithm as named in the challenge.
        case digest(user: String, password: String, algorithm: String = "MD5", qop: Bool = true)
    }

    /// Misbehaviour, switchable while the origin runs.
    public struct Faults: Sendable {
        /// Answer range requests with 200 and the whole file.
        public var ignoresRange = false
        /// Close the connection after this many body bytes, for the next `cutTimes` responses.
        public var cutAfter: Int?
        public var cutTimes = Int.max
        /// How long a `cutAfter` cut waits after its last byte before it closes, as a connection that drops after its
        /// bytes arrived. AsyncHTTPClient discards bytes it has read but not yet handed to the consumer when the close
        /// comes in the same read, so an immediate close would make the resume point depend on scheduling.
        public var cutLinger: Duration = .milliseconds(250)
        /// Stop sending after this many body bytes for `stallDuration`, for the next `stallTimes` responses.
        public var stallAfter: Int?
        public var stallDuration: Duration = .seconds(3600)
        public var stallTimes = Int.max
        /// Added to the first byte position in `Content-Range` (a server that sends the wrong range).
        public var contentRangeShift = 0
        /// Responses served before the real ones, one per request: status and headers, empty body.
        public var scripted: [(status: Int, headers: [(String, String)])] = []
        /// Send this many bytes of the status line and headers, then close.
        public var dieInHeadersAfter: Int?
        /// Replace the Content-Length header with this raw text (e.g. "12, 13" or "abc").
        public var rawContentLength: String?
        /// Bytes per second per response; nil for unthrottled. A response that fell behind (a busy machine) catches
        /// up by at most a quarter second's worth, as a real link that cannot send faster than its rate.
        public var bytesPerSecond: Int?
        /// Change to this version after this many body bytes of the next response were sent (once).
        public var changeVersionAfter: (bytes: Int, version: Int)?
        /// Answer 503 to a request that arrives while this many responses are already being sent (a server that
        /// refuses extra connections).
        public var refuseAbove: Int?
        /// Close each response after a number of body bytes in this range, different for each request (a flaky
        /// proxy); applies to every response.
        public var cutEachWithin: ClosedRange<Int>?
        /// Send a new ETag and Last-Modified with every response, same bytes (a load balancer whose nodes disagree).
        public var rotatesValidators = false
        /// After this many body bytes, send the rest at `bytesPerSecond` in small writes (a trickle that never
        /// stalls long enough for a read timeout), for the next `trickleTimes` responses.
        public var trickle: (after: Int, bytesPerSecond: Int)?
        public var trickleTimes = Int.max
        /// Every response stops at this byte of the file (not of the response) for `stallDuration`, then closes:
        /// a resume from there gets nothing more.
        public var stallAtByte: Int?
        /// Every response is closed at this byte of the file: a resume from there gets nothing more.
        public var cutAtByte: Int?
        /// Answer ranges with `Content-Range: bytes a-b/*` (a server that does not tell the size).
        public var hidesTotal = false

        public init() {}
    }

    /// One request as the origin saw it.
    public struct Request: Sendable {
        public var path: String
        /// The request target as sent: the path and the query.
        public var target: String = ""
        public var headers: [(String, String)]
        /// Which connection (1, 2, …) carried it.
        public var connection: Int
        /// The IP address the connection came from (a proxy's when one was used).
        public var peer: String?
        public var status: Int = 0
        /// Body bytes written for it.
        public var bodyBytesSent = 0

        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        public var range: String? { header("Range") }
        public var ifRange: String? { header("If-Range") }
    }

    private enum Route: Sendable {
        case resource(Resource)
        case redirect(to: String, status: Int, headers: [(String, String)])
        case status(Int, reason: String?)
    }

    private struct State {
        var routes: [String: Route] = [:]
        var faults = Faults()
        var requests: [Request] = []
        var connections = 0
        var activeConnections = 0
        var peakConnections = 0
        var activeResponses = 0
        var peakResponses = 0
        /// Bumped by ``dropOpenResponses()``: a body whose response began before stops.
        var dropGeneration = 0
        /// The address each connection came from, by number.
        var peers: [Int: String] = [:]
        /// The connections open now, by number: closed under their responses by a ``stop()`` that would wait too long.
        var open: [Int: any Channel] = [:]
    }

    /// Closes every response body under way (after the bytes already written), as a network that drops them.
    public func dropOpenResponses() {
        state.withLock { $0.dropGeneration += 1 }
    }

    private let state = Mutex(State())
    /// Refuses requests above a rate, and records when each arrived (`TestOrigin+RequestLimit.swift`).
    public let requestLimit = TestOriginRequestLimit()
    /// The Digest nonce this origin hands out; a test may rotate it to see a stale nonce answered.
    let nonceState = Mutex("4f1c2b3a9e")
    var nonce: String { nonceState.withLock { $0 } }
    private let channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, Never>, Never>
    private let serverTask = Mutex<Task<Void, Never>?>(nil)
    public let port: Int

    /// Set by ``stop()`` before the listening socket closes: a connection accepted from then on is closed at once,
    /// never wrapped for an accept loop that is ending (NIO traps on an async channel nobody finishes).
    private let stopping: StopFlag

    /// `http`, or `https` for an origin started with TLS.
    public let scheme: String

    private init(
        channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, Never>, Never>, stopping: StopFlag,
        scheme: String
    ) {
        self.channel = channel
        self.stopping = stopping
        self.scheme = scheme
        self.port = channel.channel.localAddress?.port ?? 0
    }

    /// Starts an origin on a free port of 127.0.0.1, or on `port` (one a stopped origin had); with `tls`, it speaks
    /// HTTPS (see ``TestCertificates``).
    public static func start(tls: TLSConfiguration? = nil, port: Int = 0) async throws -> TestOrigin {
        let stopping = StopFlag()
        let context = try tls.map { try NIOSSLContext(configuration: $0) }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: "127.0.0.1", port: port) {
                (channel: any Channel) -> EventLoopFuture<NIOAsyncChannel<HTTPServerRequestPart, Never>> in
                if stopping.isSet {
                    return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
                }
                return channel.eventLoop.makeCompletedFuture {
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
                    // Responses are written to the channel itself: no outbound writer, which NIO traps on if a
                    // connection accepted as the origin stops is dropped unserved (swift-nio#2637).
                    return try NIOAsyncChannel<HTTPServerRequestPart, Never>(
                        wrappingChannelSynchronously: channel)
                }
            }
        let origin = TestOrigin(channel: channel, stopping: stopping, scheme: tls == nil ? "http" : "https")
        origin.serverTask.withLock { $0 = Task { await origin.acceptConnections() } }
        return origin
    }

    /// Stops accepting, closes the listening socket and ends every connection.
    ///
    /// The accept loop is not cancelled from outside: it drains the connections accepted before the close, then
    /// cancels the responses still running. A response waiting to write to a client that stopped reading does not end
    /// by cancellation: after 5 s, the connections still open are closed under their responses.
    public func stop() async {
        stopping.set()
        try? await channel.channel.close()
        guard let task = serverTask.withLock({ $0 }) else { return }
        let closer = Task {
            try await Task.sleep(for: .seconds(5))
            for connection in self.state.withLock({ Array($0.open.values) }) { connection.close(promise: nil) }
        }
        await task.value
        closer.cancel()
    }

    // MARK: - Set-up

    public func url(_ path: String) -> URL { URL(string: "\(scheme)://127.0.0.1:\(port)\(path)")! }

    /// Serves `resource` at `path`.
    @discardableResult
    public func serve(_ path: String, _ resource: Resource) -> URL {
        state.withLock { $0.routes[path] = .resource(resource) }
        return url(path)
    }

    /// Serves a file of `size` bytes at `path`.
    @discardableResult
    public func serve(_ path: String, size: Int) -> URL { serve(path, Resource(size: size)) }

    /// Changes the resource at `path`.
    public func updateResource(_ path: String, _ change: (inout Resource) -> Void) {
        state.withLock { state in
            guard case .resource(var resource) = state.routes[path] else { return }
            change(&resource)
            state.routes[path] = .resource(resource)
        }
    }

    /// Redirects `path` to `target` with `status`, adding `headers` (a `Set-Cookie`, say) to the response.
    public func redirect(_ path: String, to target: String, status: Int = 302, headers: [(String, String)] = []) {
        state.withLock { $0.routes[path] = .redirect(to: target, status: status, headers: headers) }
    }

    /// Answers every request to `path` with `status` and an empty body; `reason` replaces the standard reason
    /// phrase (raw: a test may put anything in it).
    public func respond(_ path: String, status: Int, reason: String? = nil) {
        state.withLock { $0.routes[path] = .status(status, reason: reason) }
    }

    /// Changes the faults; applies to requests that arrive afterwards.
    /// Paces bodies at `bytesPerSecond` and stops the next response at `byte` (the ones after it are whole): a test
    /// that acts on a download under way (a kill, a pause, a removal) meets it under way even when it acts late on a
    /// busy machine, never a finished one.
    public func holdFirstResponse(at byte: Int, bytesPerSecond: Int = 1024 * 1024) {
        setFaults {
            $0.bytesPerSecond = bytesPerSecond
            $0.stallAfter = byte
            $0.stallTimes = 1
        }
    }

    public func setFaults(_ change: (inout Faults) -> Void) {
        state.withLock { change(&$0.faults) }
    }

    // MARK: - What happened

    /// Every request so far, in arrival order.
    public var requests: [Request] { state.withLock { $0.requests } }
    /// Requests to `path`.
    public func requests(to path: String) -> [Request] { requests.filter { $0.path == path } }
    /// Body bytes sent for `path` in all responses.
    public func bodyBytesSent(to path: String) -> Int { requests(to: path).reduce(0) { $0 + $1.bodyBytesSent } }
    /// Connections accepted so far, and the most open at once.
    public var connectionCount: Int { state.withLock { $0.connections } }
    public var peakConnections: Int { state.withLock { $0.peakConnections } }
    /// The most responses for resources (not scripted or refused ones) that were being served at once.
    public var peakResponses: Int { state.withLock { $0.peakResponses } }

    // MARK: - Serving

    private func acceptConnections() async {
        do {
            try await channel.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    // Closed by stop(): the connections still open are cancelled (a stalled response sleeps long).
                    defer { group.cancelAll() }
                    for try await connection in inbound {
                        let number = state.withLock { state -> Int in
                            state.connections += 1
                            state.activeConnections += 1
                            state.peakConnections = max(state.peakConnections, state.activeConnections)
                            return state.connections
                        }
                        group.addTask {
                            await self.serve(connection, number: number)
                            self.state.withLock { $0.activeConnections -= 1 }
                        }
                    }
                }
            }
        } catch {
            // Closed by stop().
        }
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, Never>, number: Int) async {
        let channel = connection.channel
        let peer = channel.remoteAddress?.ipAddress
        state.withLock {
            $0.peers[number] = peer
            $0.open[number] = channel
        }
        defer { state.withLock { $0.open[number] = nil } }
        // Write straight to the channel and wait for each write, so a cut delivers exactly what was counted
        // (closing drops writes that are only queued).
        let write: @Sendable (ByteBuffer) async throws -> Void = { try await channel.writeAndFlush($0) }
        try? await connection.executeThenClose { inbound, _ in
            var parts = inbound.makeAsyncIterator()
            var head: HTTPRequestHead?
            while let part = try await parts.next() {
                switch part {
                case .head(let requestHead): head = requestHead
                case .body: break
                case .end:
                    guard let requestHead = head else { return }
                    let keepOpen = try await respond(to: requestHead, connection: number, write: write)
                    if !keepOpen {
                        // Half-close: the client still receives every byte written, then end-of-stream (a plain
                        // close can reach it as a reset that discards what it had not read yet).
                        try? await channel.close(mode: .output)
                        while try await parts.next() != nil {}
                        return
                    }
                }
            }
        }
    }

    /// Writes one response; returns false when the connection must close.
    private func respond(
        to head: HTTPRequestHead, connection: Int, write: @Sendable (ByteBuffer) async throws -> Void
    ) async throws -> Bool {
        let path = String(head.uri.split(separator: "?", maxSplits: 1).first ?? "")
        let headers = head.headers.map { ($0.name, $0.value) }
        let (route, scripted, faults, index, counted) = state.withLock { state in
            var scripted = state.faults.scripted.isEmpty ? nil : state.faults.scripted.removeFirst()
            if scripted == nil { scripted = requestLimit.admit() }
            if scripted == nil, let cap = state.faults.refuseAbove, state.activeResponses >= cap {
                scripted = (503, [("Retry-After", "1")])
            }
            // A resource response counts as active from here, so the check above and this count are one step.
            var counted = false
            if scripted == nil, case .resource = state.routes[path] {
                state.activeResponses += 1
                state.peakResponses = max(state.peakResponses, state.activeResponses)
                counted = true
            }
            state.requests.append(
                Request(
                    path: path, target: head.uri, headers: headers, connection: connection,
                    peer: state.peers[connection]))
            let faults = state.faults
            if faults.cutAfter != nil, state.faults.cutTimes > 0, scripted == nil { state.faults.cutTimes -= 1 }
            if faults.stallAfter != nil, state.faults.stallTimes > 0, scripted == nil { state.faults.stallTimes -= 1 }
            if faults.trickle != nil, state.faults.trickleTimes > 0, scripted == nil { state.faults.trickleTimes -= 1 }
            return (state.routes[path], scripted, faults, state.requests.count - 1, counted)
        }
        let slot = ResponseSlot(origin: self, held: counted)
        defer { slot.release() }
        let allocator = ByteBufferAllocator()

        func sendHead(_ status: Int, _ fields: [(String, String)], reason: String? = nil) async throws -> Bool {
            var text = "HTTP/1.1 \(status) \(reason ?? HTTPResponseStatus(statusCode: status).reasonPhrase)\r\n"
            for (name, value) in fields { text += "\(name): \(value)\r\n" }
            text += "\r\n"
            state.withLock { $0.requests[index].status = status }
            if let limit = faults.dieInHeadersAfter, scripted == nil {
                try await write(allocator.buffer(string: String(text.utf8.prefix(limit))!))
                return false
            }
            try await write(allocator.buffer(string: text))
            return true
        }

        if let scripted {
            return try await sendHead(scripted.status, scripted.headers + [("Content-Length", "0")])
        }
        switch route {
        case nil:
            return try await sendHead(404, [("Content-Length", "0")])
        case .status(let status, let reason):
            return try await sendHead(status, [("Content-Length", "0")], reason: reason)
        case .redirect(let target, let status, let headers):
            return try await sendHead(status, [("Location", target), ("Content-Length", "0")] + headers)
        case .resource(let resource):
            if let required = resource.authentication, !Self.authorizes(head, required, nonce: nonce) {
                return try await sendHead(
                    401,
                    [
                        ("WWW-Authenticate", Self.challenge(for: required, nonce: nonce, request: head)),
                        ("Content-Length", "0"),
                    ])
            }
            if let tokens = resource.validTokens {
                let query = URLComponents(string: head.uri)?.queryItems ?? []
                guard let token = query.first(where: { $0.name == "token" })?.value, tokens.contains(token) else {
                    return try await sendHead(403, [("Content-Length", "0")], reason: "Request has expired")
                }
            }
            if let cookie = resource.requiredCookie,
                !head.headers["Cookie"].contains(where: {
                    $0.split(separator: ";").contains { $0.trimmingCharacters(in: .whitespaces) == cookie }
                })
            {
                return try await sendHead(403, [("Content-Length", "0")])
            }
            return try await serveResource(
                resource, path: path, request: head, faults: faults, index: index, slot: slot, sendHead: sendHead,
                write: write)
        }
    }

    private func serveResource(
        _ resource: Resource, path: String, request: HTTPRequestHead, faults: Faults, index: Int, slot: ResponseSlot,
        sendHead: (Int, [(String, String)], String?) async throws -> Bool,
        write: @Sendable (ByteBuffer) async throws -> Void
    ) async throws -> Bool {
        let dropGeneration = state.withLock { $0.dropGeneration }
        var fields: [(String, String)] = [("Accept-Ranges", "bytes")]
        var resource = resource
        if faults.rotatesValidators {
            // Same bytes, new validators: as if every response came from another node.
            resource.fixedValidators = false
            resource.version += 1000 + index
        }
        if resource.sendsValidators {
            fields.append(("ETag", resource.etag))
            fields.append(("Last-Modified", resource.lastModified))
        }
        if faults.rotatesValidators { resource.version -= 1000 + index }
        if let disposition = resource.contentDisposition { fields.append(("Content-Disposition", disposition)) }
        if let encoding = resource.contentEncoding { fields.append(("Content-Encoding", encoding)) }
        if resource.gzipped { fields.append(("Content-Encoding", "gzip")) }
        fields += resource.headers
        if resource.sendsValidators, request.headers.first(name: "If-Modified-Since") == resource.lastModified {
            // Not modified since: nginx's exact match, before any range.
            return try await sendHead(304, fields + [("Content-Length", "0")], nil)
        }
        let gzipBody =
            resource.body ?? (resource.gzipped ? TestContent.gzip(size: resource.size, version: resource.version) : nil)
        let size = gzipBody?.count ?? resource.size
        let zeroFrom = resource.size - resource.zeroTail

        // Range handling (single ranges, as download managers send).
        var start = 0
        var end = resource.size - 1
        var status = 200
        end = size - 1
        if let range = request.headers.first(name: "Range"), !faults.ignoresRange,
            let parsed = Self.parseRange(range, size: size)
        {
            let ifRange = request.headers.first(name: "If-Range")
            let validatorHolds =
                ifRange == nil
                || (!faults.rotatesValidators && (ifRange == resource.etag || ifRange == resource.lastModified))
            if validatorHolds {
                let total = faults.hidesTotal ? "*" : String(size)
                guard parsed.start < size else {
                    return try await sendHead(
                        416, fields + [("Content-Range", "bytes */\(total)"), ("Content-Length", "0")], nil)
                }
                start = parsed.start
                end = min(parsed.end ?? size - 1, size - 1)
                status = 206
                fields.append(("Content-Range", "bytes \(start + faults.contentRangeShift)-\(end)/\(total)"))
            }
        }
        let length = max(0, end - start + 1)
        fields += resource.digestFields(first: start, last: end, version: resource.version)
        if resource.chunked {
            fields.append(("Transfer-Encoding", "chunked"))
        } else {
            fields.append(("Content-Length", faults.rawContentLength ?? String(length)))
        }
        guard try await sendHead(status, fields, nil) else { return false }

        // Body.
        let chunkSize = 16 * 1024
        var sent = 0
        var version = resource.version
        var began = ContinuousClock.now
        var buffer = ByteBufferAllocator().buffer(capacity: chunkSize + 32)
        let cutEach = faults.cutEachWithin.map { range in
            range.lowerBound + (index &* 7919) % max(1, range.count)
        }
        var trickleStarted: ContinuousClock.Instant?
        while sent < length {
            if let cut = faults.cutAfter, faults.cutTimes > 0, sent >= cut {
                try await Task.sleep(for: faults.cutLinger)
                return false
            }
            if let cutEach, sent >= cutEach { return false }
            if state.withLock({ $0.dropGeneration }) != dropGeneration { return false }
            if let cut = faults.cutAtByte, start + sent >= cut { return false }
            if let stall = faults.stallAtByte, start + sent >= stall {
                try await Task.sleep(for: faults.stallDuration)
                return false
            }
            if let stall = faults.stallAfter, faults.stallTimes > 0, sent >= stall {
                try await Task.sleep(for: faults.stallDuration)
                return false
            }
            if let change = faults.changeVersionAfter, sent >= change.bytes, version != change.version {
                version = change.version
                updateResource(path) { $0.version = change.version }
                setFaults { $0.changeVersionAfter = nil }
            }
            var count = min(chunkSize, length - sent)
            if let cut = faults.cutAfter, faults.cutTimes > 0 { count = min(count, cut - sent) }
            if let cutEach { count = min(count, cutEach - sent) }
            if let cut = faults.cutAtByte, cut > start + sent { count = min(count, cut - start - sent) }
            if let stall = faults.stallAtByte, stall > start + sent { count = min(count, stall - start - sent) }
            if let trickle = faults.trickle, faults.trickleTimes > 0, sent >= trickle.after {
                // Small writes at the trickle rate, each well within any read timeout.
                let started = trickleStarted ?? ContinuousClock.now
                trickleStarted = started
                count = min(count, max(1, trickle.bytesPerSecond / 8))
                let due = Duration.seconds(Double(sent - trickle.after) / Double(trickle.bytesPerSecond))
                let elapsed = started.duration(to: .now)
                if due > elapsed {
                    try await Task.sleep(for: due - elapsed)
                } else if elapsed - due > .milliseconds(250) {
                    trickleStarted = started + (elapsed - due - .milliseconds(250))  // never a burst
                }
            } else if let trickle = faults.trickle, faults.trickleTimes > 0 {
                count = min(count, trickle.after - sent)
            }
            if let stall = faults.stallAfter, faults.stallTimes > 0 { count = min(count, max(1, stall - sent)) }
            if let change = faults.changeVersionAfter, change.bytes > sent { count = min(count, change.bytes - sent) }
            buffer.clear()
            if resource.chunked { buffer.writeString(String(count, radix: 16) + "\r\n") }
            buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { raw in
                let target = UnsafeMutableRawBufferPointer(rebasing: raw.prefix(count))
                let offset = start + sent
                if let gzipBody {
                    gzipBody.withUnsafeBytes {
                        target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
                    }
                } else {
                    TestContent.fill(target, offset: offset, version: version)
                    if let corrupted = resource.corrupted,
                        case (let low, let high) = (
                            max(offset, corrupted.lowerBound), min(offset + count, corrupted.upperBound)
                        ),
                        low < high
                    {
                        for position in low..<high { target[position - offset] ^= 0x5A }
                    }
                    if offset + count > zeroFrom {
                        let first = max(0, zeroFrom - offset)
                        UnsafeMutableRawBufferPointer(rebasing: target[first...]).initializeMemory(
                            as: UInt8.self, repeating: 0)
                    }
                }
                return count
            }
            if resource.chunked { buffer.writeString("\r\n") }
            // Free the slot before the client can have the last byte (and so send its next request).
            if sent + count == length, !resource.chunked { slot.release() }
            try await write(buffer)
            sent += count
            state.withLock { $0.requests[index].bodyBytesSent += count }
            if let rate = faults.bytesPerSecond {
                let due = Duration.seconds(Double(sent) / Double(rate))
                let elapsed = began.duration(to: .now)
                if due > elapsed {
                    try await Task.sleep(for: due - elapsed)
                } else if elapsed - due > .milliseconds(250) {
                    began += elapsed - due - .milliseconds(250)
                }
            }
        }
        slot.release()
        if resource.chunked { try await write(ByteBufferAllocator().buffer(string: "0\r\n\r\n")) }
        return true
    }

    /// Counts one response as active until released (once).
    final class ResponseSlot: Sendable {
        private let origin: TestOrigin
        private let held: Mutex<Bool>

        init(origin: TestOrigin, held: Bool) {
            self.origin = origin
            self.held = Mutex(held)
        }

        func release() {
            guard
                held.withLock({ held in
                    defer { held = false }
                    return held
                })
            else { return }
            origin.state.withLock { $0.activeResponses -= 1 }
        }
    }
}
