import Foundation
import Synchronization

/// Applies a speed-limit schedule and a pause schedule (``DownloadSchedule``) to a manager at their boundaries:
/// `--limit-rate-schedule` and `--pause-schedule` of `haul serve` and `haul run`.
///
/// At start and at each boundary it sets the global speed limit (``DownloadManager/setGlobalSpeedLimit(_:)``) and
/// holds or releases the downloads (``DownloadManager/holdDownloads(_:)``); between boundaries it changes nothing, so
/// a change made meanwhile (`aria2.changeGlobalOption`) holds until the next boundary. Time is read from ``now``
/// (wall-clock, for the local time of the week) and waited on ``clock``, at most a minute at a time, so a changed
/// system time or time zone is noticed within a minute. Tests give a fixed calendar, a mock clock and a `now` that
/// follows it.
public struct ScheduleRunner: Sendable {
    /// The global speed limit by the time of the week (nil in a value: no limit).
    public var rates: DownloadSchedule<Int64?>?
    /// When downloads are held (true) by the time of the week.
    public var pauses: DownloadSchedule<Bool>?
    /// Whose time zone the rules' hours are in. Default: the system's, following its changes.
    public var calendar = Calendar.autoupdatingCurrent
    /// The wall-clock time now.
    public var now: @Sendable () -> Date = { Date() }
    /// What the runner sleeps on between boundaries.
    public var clock: any Clock<Duration> = ContinuousClock()
    /// The longest single sleep: the time is read again after it.
    public var longestSleep: Duration = .seconds(60)

    /// What the schedules say now, for a header or a status line.
    public struct Status: Sendable, Equatable {
        /// The limit the rate schedule set at its last boundary (nil: none, or no rate schedule).
        public var limit: Int64?
        /// Whether the pause schedule holds the downloads now.
        public var held: Bool
        /// When either schedule changes next.
        public var nextChange: Date?
    }

    /// What was applied last, shared by the copies of the runner (the daemon's and the dashboard's).
    private final class Applied: Sendable {
        let status = Mutex<Status?>(nil)
    }

    private let applied = Applied()

    public init(rates: DownloadSchedule<Int64?>? = nil, pauses: DownloadSchedule<Bool>? = nil) {
        self.rates = rates
        self.pauses = pauses
    }

    /// Whether any schedule is set.
    public var isEmpty: Bool { rates == nil && pauses == nil }

    /// What was applied last (nil before the first application).
    public var status: Status? { applied.status.withLock { $0 } }

    /// The next moment either schedule changes after `date`.
    public func nextChange(after date: Date) -> Date? {
        [rates?.nextChange(after: date, in: calendar), pauses?.nextChange(after: date, in: calendar)]
            .compactMap { $0 }.min()
    }

    /// Applies the values of `date` to `manager`.
    public func apply(at date: Date, to manager: DownloadManager) async {
        var status = Status(limit: nil, held: false, nextChange: nextChange(after: date))
        if let rates {
            let limit = rates.value(at: date, in: calendar)
            status.limit = limit
            try? await manager.setGlobalSpeedLimit(limit)
        }
        if let pauses {
            status.held = pauses.value(at: date, in: calendar)
            await manager.holdDownloads(status.held)
        }
        applied.status.withLock { $0 = status }
    }

    /// Applies the schedules now and at every boundary until the task is cancelled.
    public func run(on manager: DownloadManager) async {
        guard !isEmpty else { return }
        var date = now()
        await apply(at: date, to: manager)
        var boundary = nextChange(after: date)
        while !Task.isCancelled {
            let wait = boundary.map { Duration.milliseconds(Int64(($0.timeIntervalSince(date) * 1000).rounded(.up))) }
            do {
                try await clock.sleep(for: max(.milliseconds(1), min(wait ?? longestSleep, longestSleep)))
            } catch {
                return
            }
            date = now()
            guard let due = boundary, date >= due else {
                // Woken before the boundary (the longest sleep): look again, change nothing.
                if boundary == nil { boundary = nextChange(after: date) }
                continue
            }
            await apply(at: date, to: manager)
            boundary = nextChange(after: date)
        }
    }
}
