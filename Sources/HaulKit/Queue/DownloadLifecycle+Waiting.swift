extension DownloadLifecycle {
    /// Downloads another owner runs that this manager takes over when their claim is released.
    var watchedElsewhere: [DownloadID] { runningElsewhere.filter(wouldRun).sorted() }

    /// Whether another process runs (or ran last this manager knew) any download.
    var anyRunningElsewhere: Bool {
        entries.contains { if case .runningElsewhere = $0.value.phase { true } else { false } }
    }

    /// Downloads another process runs (or ran last this manager knew), whether or not this one would take them over.
    var runningElsewhere: [DownloadID] {
        entries.compactMap { id, entry in
            guard case .runningElsewhere = entry.phase else { return nil }
            return id
        }
    }

    /// A job here found no room on its file system: it waits for space without its slot, which
    /// ``schedule(holdingBack:)`` gives to the next queued download; it asks for one again with ``slotNeeded(_:)``
    /// once there is room. Returns whether it gave its slot (not when it is stopping, finishing, or waiting already).
    mutating func spaceRanOut(_ id: DownloadID) -> Bool {
        guard case .runningHere(stopping: nil) = entries[id]?.phase, !finishingHere.contains(id),
            !waitingForSpace.contains(id)
        else { return false }
        waitingForSpace.insert(id)
        return true
    }

    /// Holds every download (a pause schedule's window): nothing starts until ``release()``, and the jobs running
    /// here stop (``StopReason/hold``) and go back to the queue, in their place, their partial data kept. Jobs that
    /// finish their complete file are let finish.
    mutating func hold() -> [Action] {
        guard !isHeld, !isShutDown else { return [] }
        isHeld = true
        let running = entries.compactMap { id, entry -> DownloadID? in
            guard case .runningHere(stopping: nil) = entry.phase, !finishingHere.contains(id) else { return nil }
            return id
        }
        return running.sorted().map { id in
            set(id, .runningHere(stopping: .hold))
            return .stop(id, .hold)
        }
    }

    /// Ends ``hold()``: the next ``schedule(holdingBack:)`` starts queued downloads again.
    mutating func release() {
        isHeld = false
    }
}
