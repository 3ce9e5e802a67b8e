import CoreMetrics
import Foundation
import HaulKit
import Logging

/// Delivers the events of an ``EventOutbox``: runs the hooks and POSTs the webhooks, in order per download and
/// target, at most ``EventSettings/maxConcurrentHooks`` hooks and ``EventSettings/maxConcurrentWebhooks`` requests
/// at once, never in a download's way (it has its own task, and the outbox is written by the store's trigger).
///
/// A row is settled (deleted) only after its delivery: a hook that ran (whatever its exit status, as aria2; one that
/// timed out or could not start is logged), a webhook answered 2xx. A failed webhook is tried again after
/// ``DeliveryBackoff`` until its horizon, then dropped with an error in the log.
package actor EventDispatcher {
    private let outbox: any EventOutbox
    private let settings: EventSettings
    private let logger: Logger
    private let hooks: HookRunner
    private let webhooks: WebhookSender
    /// The outbox's targets this dispatcher delivers to.
    private let targets: [String]
    private let webhookURLs: [String: URL]
    /// Rows being delivered now, and their tasks.
    private var inFlight: [Int64: Task<Void, Never>] = [:]
    private var hooksRunning = 0
    private var requestsInFlight = 0
    private var loop: Task<Void, Never>?
    /// How often the outbox is looked at while nothing is being delivered.
    package var pollInterval: Duration = .milliseconds(200)

    package init(outbox: any EventOutbox, settings: EventSettings, logger: Logger) {
        self.outbox = outbox
        self.settings = settings
        self.logger = logger
        hooks = HookRunner(timeout: settings.hookTimeout, logger: logger)
        webhooks = WebhookSender(secret: settings.webhookSecret, timeout: settings.webhookTimeout)
        targets = settings.targets.map(\.name)
        webhookURLs = Dictionary(
            settings.webhooks.map { (EventSettings.webhookTarget($0), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// How long a shared outbox's rows stay leased to this worker: longer than any delivery can take (a hook's time
    /// limit counts only where there are hooks).
    package nonisolated var lease: Duration {
        (settings.hooks.isEmpty ? settings.webhookTimeout : max(settings.hookTimeout, settings.webhookTimeout))
            + .seconds(5)
    }

    /// Starts delivering, until ``stop()``.
    package func start() {
        guard loop == nil else { return }
        loop = Task { [weak self] in
            let clock = ContinuousClock()
            var depthRecorded: ContinuousClock.Instant?
            while !Task.isCancelled, let self {
                await self.deliverDue()
                if depthRecorded.map({ $0.duration(to: clock.now) >= Self.depthInterval }) ?? true {
                    await self.recordDepth()
                    depthRecorded = clock.now
                }
                try? await Task.sleep(for: await self.pollInterval)
            }
        }
    }

    /// How often the outbox's depth is counted for the metrics (`haul_outbox_depth`).
    static let depthInterval: Duration = .seconds(5)

    /// Records how many events wait in the outbox (all targets, all workers), as the gauge `haul_outbox_depth` of the
    /// process's metrics backend (the metrics are made at each use: a backend bootstrapped after ``start()`` counts).
    private nonisolated func recordDepth() async {
        guard let depth = try? await outbox.depth() else { return }
        Gauge(label: "haul_outbox_depth").record(depth)
    }

    /// Delivers until the outbox holds nothing for this dispatcher's targets (including rows another worker leased,
    /// which come back when its lease ends) and nothing is in flight, or `deadline` passed: what is left stays in
    /// the outbox for the next process. For commands that end: `haul get`, `haul run`.
    package func drain(within deadline: Duration) async {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while clock.now < end {
            await deliverDue()
            if inFlight.isEmpty, (try? await outbox.pending(targets: targets)) ?? 0 == 0 { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// How long a command that ends waits for its events (``drain(within:)``): a lease, and 5 s.
    package nonisolated var drainTime: Duration { lease + .seconds(5) }

    /// Stops delivering: the loop ends, deliveries under way are cancelled (a hook is killed), their rows stay, and a
    /// shared outbox's leases are given up.
    package func stop() async {
        loop?.cancel()
        await loop?.value
        loop = nil
        let running = Array(inFlight.values)
        for task in running { task.cancel() }
        for task in running { await task.value }
        await outbox.close()
    }

    /// Starts the deliveries of the rows due now that a free slot can take; returns how many it started.
    @discardableResult
    private func deliverDue() async -> Int {
        let free = (settings.maxConcurrentHooks - hooksRunning) + (settings.maxConcurrentWebhooks - requestsInFlight)
        guard free > 0 else { return 0 }
        let due: [OutboxEvent]
        do {
            due = try await outbox.dueEvents(
                targets: targets, limit: 64, lease: lease, excluding: Set(inFlight.keys))
        } catch {
            logger.warning("cannot read the event outbox", metadata: ["error": "\(error)"])
            return 0
        }
        var started = 0
        for event in due {
            if event.target == EventSettings.hookTarget {
                guard hooksRunning < settings.maxConcurrentHooks else { continue }
                hooksRunning += 1
            } else {
                guard requestsInFlight < settings.maxConcurrentWebhooks else { continue }
                requestsInFlight += 1
            }
            started += 1
            let sequence = event.sequence
            inFlight[sequence] = Task { [weak self] in
                guard let self else { return }
                let result = await self.deliver(event)
                await self.finished(event, result)
            }
        }
        return started
    }

    /// Delivers one row; nil when it is done with (delivered, or not worth another try), else why it failed.
    private nonisolated func deliver(_ event: OutboxEvent) async -> String? {
        if event.target == EventSettings.hookTarget {
            guard let command = settings.command(for: event.kind) else { return nil }
            let outcome = await hooks.run(command, for: event)
            // A hook that a stop cancelled runs again after the restart.
            return outcome == .timedOut && Task.isCancelled ? "stopped" : nil
        }
        guard let url = webhookURLs[event.target] else { return nil }
        do {
            try await webhooks.send(event, to: url, attempt: event.attempts + 1)
            logger.info(
                "webhook delivered",
                metadata: ["event": "\(event.kind.rawValue)", "download": "\(event.downloadID)", "url": "\(url)"])
            return nil
        } catch {
            return error.description
        }
    }

    /// Settles or postpones `event`'s row, then frees its slot: a row counts as in flight until its outcome is
    /// written, so this worker never takes it again meanwhile, and a worker killed at any moment has at most
    /// ``EventSettings/maxConcurrentHooks`` + ``EventSettings/maxConcurrentWebhooks`` rows delivered and not settled
    /// (the only ones delivered twice).
    private func finished(_ event: OutboxEvent, _ failure: String?) async {
        await record(event, failure)
        inFlight[event.sequence] = nil
        if event.target == EventSettings.hookTarget { hooksRunning -= 1 } else { requestsInFlight -= 1 }
    }

    private func record(_ event: OutboxEvent, _ failure: String?) async {
        do {
            guard let failure else { return try await outbox.settle(event.sequence) }
            // Stopped (shutting down): the row stays as it is, for the next process.
            if Task.isCancelled || failure == "stopped" { return }
            let attempts = event.attempts + 1
            let next = Date().addingTimeInterval(
                settings.backoff.delay(afterAttempts: attempts, jitter: Double.random(in: 0..<1)).seconds)
            let metadata: Logger.Metadata = [
                "event": "\(event.kind.rawValue)", "download": "\(event.downloadID)", "target": "\(event.target)",
                "attempts": "\(attempts)", "error": "\(failure)",
            ]
            Counter(label: "haul_outbox_delivery_failures_total", dimensions: [("receiver", "webhook")]).increment()
            if settings.backoff.givesUp(created: event.createdAt, next: next) {
                logger.error("event dropped: its receiver failed for longer than the retry horizon", metadata: metadata)
                try await outbox.settle(event.sequence)
            } else {
                logger.warning("webhook failed; it is tried again", metadata: metadata)
                try await outbox.postpone(event.sequence, attempts: attempts, next: next, reason: failure)
            }
        } catch {
            logger.warning("cannot update the event outbox", metadata: ["error": "\(error)"])
        }
    }
}
