import Foundation
import Logging

extension DownloadManager {
    /// How a manager stores, schedules and fetches its downloads. Every property has a sensible default.
    public struct Configuration: Sendable {
        /// Where files go when `add` is given no destination or a relative one. Default: the current directory.
        public var downloadDirectory: URL
        /// The state database. Default `$XDG_DATA_HOME/haul/haul.sqlite`, else `~/.local/share/haul/haul.sqlite`.
        public var databaseURL: URL
        /// Where downloads are recorded: ``DownloadStoreFactory/sqlite``, the SQLite database at ``databaseURL``
        /// (the default), or another backend (HaulFleet's `.sharedQueue(…)`: a PostgreSQL queue many workers share).
        public var store = DownloadStoreFactory.sqlite
        /// Downloads that transfer at once. Default 4. One whose file is complete and only being synced and put in
        /// place gives its slot to the next (it still shows `running`): up to four per slot (at most 64) with a part
        /// file, and up to sixteen per slot (at most 256, holding at most 16 MiB) with a small body held in memory.
        public var maxConcurrentDownloads: Int = 4
        /// Connections to one host, across all downloads (with a shared ``store``, across every worker). Default 8.
        public var maxConnectionsPerHost: Int = 8
        /// Longest wait for a connection. Default 30 s.
        public var connectTimeout: Duration = .seconds(30)
        /// A response that brings no bytes for this long while they are waited for is dropped and resumed (time held
        /// back by a speed limit does not count). Default 30 s.
        public var stallTimeout: Duration = .seconds(30)
        /// How failures are retried, and when a download gives up (attempts and time without progress, restarts).
        public var retry = RetryPolicy()
        /// A response slower than this many bytes per second over ``lowSpeedWindow`` is dropped and resumed on a
        /// fresh connection; nil never drops one. Default 1 KiB/s.
        public var lowestSpeed: Int64? = 1024
        /// The window over which ``lowestSpeed`` is measured. Default 30 s.
        public var lowSpeedWindow: Duration = .seconds(30)
        /// A cap on the total speed of all downloads in bytes per second; nil for none.
        public var globalSpeedLimit: Int64?
        /// Caps in bytes per second on all downloads from one host together, by host name as written in the URLs
        /// (any case; the port does not matter). Connections per host are capped by ``maxConnectionsPerHost``.
        public var hostSpeedLimits: [String: Int64] = [:]
        /// How much room downloads leave on their file systems, and how they wait for it (`--min-free-space`):
        /// a download that would go below the floor, or that finds no room to write, waits until there is.
        public var freeSpace = FreeSpacePolicy()
        /// How often requests may go to one host (`--max-requests-per-host`, `--wait`, `--random-wait`): every
        /// download of the host takes its requests from one schedule (with a shared ``store``, the fleet's). A
        /// download's ``DownloadOptions/requestPacing`` may make its own requests stricter. Default nil: no fixed rate
        /// (a host's `RateLimit-Policy` and its throttles still pace it; see `docs/politeness.md`).
        public var requestPacing: RequestPacing?
        /// The proxies requests go through (nil: every request goes directly). ``ProxySettings/fromEnvironment(_:)``
        /// reads them as curl does.
        public var proxy: ProxySettings?
        /// Connect over this IP version only; nil uses whichever works (both are tried). Default nil.
        public var addressFamily: AddressFamily?
        /// Which HTTPS servers are trusted (the system's roots plus any given), and the client certificate to show.
        public var tls = TLSSettings.standard
        /// Logins per host, used when a server asks for credentials and the download has none of its own (only for
        /// the added URL's origin unless its ``RedirectPolicy`` trusts others; a `default` entry likewise).
        public var netrc: Netrc?
        /// Cookies sent with matching requests and updated from responses; nil sends none. Save the jar when done.
        public var cookies: CookieJar?
        /// Asked for a fresh URL when a download's URL is refused with 401, 403 or 410 (a signed URL that expired);
        /// the download continues from its bytes on disk when the fresh URL serves the same file. Nil: such a
        /// refusal fails the download. At most ``RetryPolicy/maxURLRefreshes`` in a row without progress.
        public var urlProvider: URLProvider?
        /// Sent as `User-Agent` unless a download sets its own.
        public var userAgent = "Haul/\(HaulVersion.current)"
        /// Where the engine logs; silent by default. Messages are static, with the download id as metadata.
        public var logger = Logger(label: "haul", factory: { _ in SwiftLogNoOpLogHandler() })
        /// Whether downloads left queued or running in the database start as soon as the manager opens. When false
        /// they wait, still `queued`, for ``DownloadManager/resume(_:)-(DownloadID)`` or ``DownloadManager/resumeAll()`` (a tool
        /// that inspects the database or fetches only its own URLs). Downloads added later always start. Default true.
        public var resumesStoredDownloads = true
        /// Whether the downloads added or resumed through this manager are its own, as a foreground command's (`haul
        /// get`): no other manager starts them, and those it leaves unfinished when it shuts down (or when its process
        /// dies) become ``DownloadState/interrupted`` until they are resumed or added again through an owning
        /// manager. Default false: they belong to the queue, which any manager that runs downloads works through.
        public var ownsItsDownloads = false
        /// How the owner of its downloads is named when ``ownsItsDownloads`` (with the process id). Default "haul".
        public var ownerLabel = "haul"
        /// Whether the completed downloads (the history) are read into memory when the manager opens. When false
        /// only the unfinished ones are, and a completed one is read from the database when it is asked for (by id,
        /// by state, or when its URL is added again): a command that works on a few downloads costs the same with
        /// 100,000 finished ones in its state. Every query answers the same either way. Default true.
        public var keepsHistoryInMemory = true
        /// Whether this manager runs downloads. When false it only reads and edits the database: `add` queues,
        /// `pause` and `remove` take effect in the process that runs the download (a CLI's `list` or `pause` next to
        /// a running `haul run`). Default true.
        public var runsDownloads = true
        /// How often a manager that runs downloads looks for changes other processes made to the database (a
        /// download paused, resumed, removed or added elsewhere). Default 1 s.
        public var externalChangeInterval: Duration = .seconds(1)
        /// The smallest part a multi-connection download is split into. Default 1 MiB (at least 128 KiB).
        public var minimumSegmentSize: Int64 = 1 << 20
        /// Bytes re-fetched before a resume point and compared with the disk. Default 64 KiB.
        public var resumeOverlap: Int64 = 64 * 1024
        /// How often written data is synced and the synced length recorded. Default 1 s.
        public var checkpointInterval: Duration = .seconds(1)
        /// How often progress is published per download. Default 250 ms.
        public var progressInterval: Duration = .milliseconds(250)
        /// The clock that times retry delays, the time without progress and the lowest-speed window; tests pass a
        /// mock clock.
        public var clock: any Clock<Duration> = ContinuousClock()
        /// The clock that paces the periodic work: progress reports and checkpoints, the speed limits, and the look
        /// at changes from other processes; tests pass a mock clock to drive them without sleeping.
        public var tickClock: any Clock<Duration> = ContinuousClock()
        /// Failures injected by tests.
        var faults = FaultInjection()
        /// Who is told of state changes (hooks, webhooks): when any, each change one of them takes is written to the
        /// store's outbox in the transaction of the change (``DownloadManager/eventOutbox``). Default none: nothing
        /// is recorded.
        package var eventTargets: [EventTarget] = []
        /// The hook options by aria2's names (`on-download-complete`, …) and their commands, as
        /// `aria2.getGlobalOption` answers them.
        package var hookOptions: [String: String] = [:]

        public init(
            downloadDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            databaseURL: URL = Configuration.defaultDatabaseURL
        ) {
            self.downloadDirectory = downloadDirectory
            self.databaseURL = databaseURL
        }

        /// `$XDG_DATA_HOME/haul/haul.sqlite`, else `~/.local/share/haul/haul.sqlite`.
        public static var defaultDatabaseURL: URL {
            let environment = ProcessInfo.processInfo.environment
            let base: URL
            if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
                base = URL(fileURLWithPath: data)
            } else {
                base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
            }
            return base.appendingPathComponent("haul/haul.sqlite")
        }

        var engineSettings: EngineSettings {
            EngineSettings(
                retry: retry, stallTimeout: stallTimeout, resumeOverlap: resumeOverlap,
                checkpointInterval: checkpointInterval, progressInterval: progressInterval, userAgent: userAgent,
                downloadDirectory: downloadDirectory.standardizedFileURL, clock: clock, tickClock: tickClock,
                logger: logger, maxConnectionsPerHost: maxConnectionsPerHost,
                minimumSegmentSize: max(128 * 1024, minimumSegmentSize), lowestSpeed: lowestSpeed,
                lowSpeedWindow: lowSpeedWindow, freeSpace: freeSpace, faults: faults)
        }
    }
}
