import AsyncHTTPClient
import NIOCore

/// Streams one response body into the part file (or a held body, or a stream's consumer, ``StreamSink``): compares the re-fetched overlap with the disk, writes at
/// increasing offsets, applies the speed limits and drops a response that falls below the lowest speed.
///
/// The one body-writing loop, shared by one-connection and segment transfers; what the bytes mean (a contiguous
/// prefix, or a segment of a plan) is the caller's `wrote` callback.
struct BodyWriter: Sendable {
    /// How a body ended.
    enum Ending: Sendable, Equatable {
        /// The body ended; `received` counts every body byte including the compared overlap.
        case ended(position: Int64, received: Int64)
        /// There was no more room (`wrote` returned 0) while the body still had bytes.
        case full(position: Int64)
        /// The bytes before the resume point differ from the disk.
        case mismatch
    }

    /// The part file, or the memory of a small file held whole.
    let sink: any BodySink
    let state: TransferState
    let limiter: RateLimiter
    let globalLimiter: RateLimiter
    let hostLimiter: RateLimiter?
    let settings: EngineSettings
    /// Times the lowest-speed window (the settings' clock).
    let stopwatch: Stopwatch
    /// Started once the download has run a progress interval (see ``MonitorLauncher``); nil for a stream, which
    /// has no record to checkpoint.
    let monitor: MonitorLauncher?
    /// Ends a body that brings nothing for the stall timeout.
    let watchdog: StallWatchdog

    /// Most bytes written by one call, so a segment's plan is updated at least this often.
    static let largestWrite = 64 * 1024

    /// Writes `body`, whose first byte is at `start`; its first `overlap` bytes are only compared with the disk.
    ///
    /// - Parameters:
    ///   - room: how many bytes may be written from the first position after the overlap.
    ///   - wrote: called after each write with its byte count and the position after it; returns the room left, or
    ///     throws to stop (a write-back failure).
    /// - Throws: ``DownloadError/stalled(seconds:)`` when no byte came for the stall timeout (``StallWatchdog``).
    func write(
        _ body: HTTPClientResponse.Body, from start: Int64, overlap: Int64, room: Int64,
        wrote: @Sendable (_ count: Int, _ position: Int64) throws -> Int64
    ) async throws -> Ending {
        // With tasks on the event loops (`TaskPlacement`), a small body held in memory stays on its loop; one that
        // goes to disk, possibly gigabytes, leaves it, so that the loop reads while the file is written.
        func watched() async throws -> Ending {
            try await watchdog.watch { stall in
                try await receive(body, from: start, overlap: overlap, room: room, stall: stall, wrote: wrote)
            }
        }
        if sink is HeldBody || !TaskPlacement.tasksRunOnEventLoops { return try await watched() }
        return try await withTaskExecutorPreference(TaskPlacement.offLoop) { try await watched() }
    }

    private func receive(
        _ body: HTTPClientResponse.Body, from start: Int64, overlap: Int64, room: Int64, stall: StallWatchdog.Watch,
        wrote: (_ count: Int, _ position: Int64) throws -> Int64
    ) async throws -> Ending {
        var position = start
        var received: Int64 = 0
        var room = room
        var check = try OverlapCheck(sink: sink, offset: start, count: Int(overlap))
        var watch = settings.lowestSpeed.map {
            LowSpeedWatch(minimum: $0, window: settings.lowSpeedWindow, start: stopwatch.elapsed)
        }
        var parts = body.makeAsyncIterator()
        while true {
            stall.waiting()
            guard var chunk = try await parts.next() else { break }
            stall.busy()
            received += Int64(chunk.readableBytes)
            let now = stopwatch.elapsed
            monitor?.startIfDue(elapsed: now)
            if watch?.record(chunk.readableBytes, at: now) == true, let watch {
                throw DownloadError.tooSlow(bytesPerSecond: watch.minimum, window: watch.window)
            }
            if check.remaining > 0 {
                guard let count = check.consume(&chunk) else { return .mismatch }
                position += Int64(count)
                state.update { $0.transferred += Int64(count) }
            }
            while chunk.readableBytes > 0 {
                guard room > 0 else { return .full(position: position) }
                let count = min(chunk.readableBytes, Int(min(room, Int64(Self.largestWrite))))
                if sink.waitsOnConsumer {
                    let started = stopwatch.elapsed
                    try sink.write(chunk.readSlice(length: count)!, at: position)
                    watch?.exclude(stopwatch.elapsed - started)
                } else {
                    try sink.write(chunk.readSlice(length: count)!, at: position)
                }
                position += Int64(count)
                room = try wrote(count, position)
                let pause = max(
                    limiter.delay(for: count), globalLimiter.delay(for: count), hostLimiter?.delay(for: count) ?? .zero)
                if pause > .zero {
                    let asleep = stopwatch.elapsed
                    try await settings.tickClock.sleep(for: pause)
                    // All the sleep took, a late wake-up on a busy machine included: none of it is the server's.
                    watch?.exclude(stopwatch.elapsed - asleep)
                }
            }
        }
        return .ended(position: position, received: received)
    }
}
