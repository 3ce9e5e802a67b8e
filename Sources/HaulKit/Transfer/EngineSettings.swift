import Foundation
import Logging

/// The engine settings a job runs with, taken from the manager's configuration.
struct EngineSettings: Sendable {
    var retry: RetryPolicy
    var stallTimeout: Duration
    /// Bytes re-fetched before a resume point and compared with the disk.
    var resumeOverlap: Int64
    var checkpointInterval: Duration
    var progressInterval: Duration
    var userAgent: String
    /// Where a download added without a destination goes (in a shared queue, this worker's directory).
    var downloadDirectory: URL
    /// The clock that times retry delays (a mock clock in tests).
    var clock: any Clock<Duration>
    /// The clock that paces progress, checkpoints and the speed limits (a mock clock in tests).
    var tickClock: any Clock<Duration>
    var logger: Logger
    var maxConnectionsPerHost: Int
    var minimumSegmentSize: Int64
    /// A new file of at most this many bytes is received whole into memory and written by the finishing group
    /// (``HeldBody``): no commit and no part file of its own before it is complete.
    var heldBodyLimit: Int64 = 256 * 1024
    /// A response slower than this (bytes per second) over ``lowSpeedWindow`` is dropped and resumed; nil for never.
    var lowestSpeed: Int64?
    var lowSpeedWindow: Duration
    /// How much room downloads leave on their file systems, and how they wait for it.
    var freeSpace: FreeSpacePolicy
    /// Failures injected by tests at points no real fault reaches deterministically.
    var faults: FaultInjection
}
