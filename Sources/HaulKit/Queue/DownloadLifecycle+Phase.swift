extension DownloadLifecycle {
    /// Where a download stands, as this manager sees it.
    enum Phase: Equatable, Sendable {
        /// Waiting for a slot (in the run queue when this manager runs it).
        case queued
        /// A job of this manager runs it; `stopping` says why it was asked to stop, once it was.
        case runningHere(stopping: StopReason?)
        /// Recorded `queued` or `running`, but another owner holds its claim (or, after shutdown, the next owner
        /// will continue it). Taken over when the claim is released, if this manager would run it.
        case runningElsewhere(recorded: DownloadState)
        case paused
        case completed
        case failed
        /// Its foreground command ended before it finished: nothing starts it until it is resumed or added again
        /// through its command.
        case interrupted

        /// The state shown and stored for the download.
        var state: DownloadState {
            switch self {
            case .queued: .queued
            case .runningHere: .running
            case .runningElsewhere(let recorded): recorded
            case .paused: .paused
            case .completed: .completed
            case .failed: .failed
            case .interrupted: .interrupted
            }
        }

        /// The phase a download recorded in `state` has when nobody here runs it.
        init(recorded state: DownloadState) {
            switch state {
            case .queued: self = .queued
            case .running: self = .runningElsewhere(recorded: .running)
            case .paused: self = .paused
            case .completed: self = .completed
            case .failed: self = .failed
            case .interrupted: self = .interrupted
            }
        }
    }
}
