import Foundation
import HaulKit

/// Who is told of state changes, and how: the hooks (aria2's `--on-download-*`) and the webhooks.
package struct EventSettings: Sendable {
    /// The command of each kind of event (an executable's path, or a name looked up in `PATH`, as aria2 takes it).
    package var hooks: [OutboxEventKind: String] = [:]
    /// The URLs each event is POSTed to.
    package var webhooks: [URL] = []
    /// Signs each webhook's body (HMAC-SHA256, `X-Haul-Signature: sha256=HEX`); nil: unsigned.
    package var webhookSecret: String?
    /// A hook still running after this long is killed (SIGTERM to its process group, SIGKILL 2 s later).
    package var hookTimeout: Duration = .seconds(60)
    /// Hooks running at once, at most; more wait in the outbox.
    package var maxConcurrentHooks = 4
    /// A webhook request that has not been answered in this long failed (and is tried again).
    package var webhookTimeout: Duration = .seconds(10)
    /// Webhook requests in flight at once, at most.
    package var maxConcurrentWebhooks = 8
    /// When a failed webhook is tried again, and for how long.
    package var backoff = DeliveryBackoff()

    package init() {}

    /// Whether there is anything to tell anyone: without hooks and webhooks, no outbox is kept.
    package var isEmpty: Bool { hooks.isEmpty && webhooks.isEmpty }

    /// The outbox target of the hooks.
    package static let hookTarget = "hook"

    /// The outbox target of a webhook URL.
    package static func webhookTarget(_ url: URL) -> String { "webhook " + url.absoluteString }

    /// The kinds the hooks take: those with a command, and, as aria2 does, a completion or an error when only a stop
    /// hook is given (``command(for:)``).
    package var hookKinds: Set<OutboxEventKind> {
        var kinds = Set(hooks.keys)
        if hooks[.stop] != nil { kinds.formUnion([.complete, .error]) }
        return kinds
    }

    /// The command run for `kind`: its own, else, for a completion or an error, the stop hook (aria2: "if they are
    /// specified, command specified in this option is not executed").
    package func command(for kind: OutboxEventKind) -> String? {
        if let own = hooks[kind] { return own }
        return kind == .complete || kind == .error ? hooks[.stop] : nil
    }

    /// The outbox's targets: the hooks (if any), then each webhook, which takes every kind.
    package var targets: [EventTarget] {
        var targets: [EventTarget] = []
        if !hooks.isEmpty { targets.append(EventTarget(name: Self.hookTarget, kinds: hookKinds)) }
        for url in webhooks {
            targets.append(EventTarget(name: Self.webhookTarget(url), kinds: Set(OutboxEventKind.allCases)))
        }
        return targets
    }

    /// The hook options under aria2's names, as `aria2.getGlobalOption` answers them.
    package var aria2Options: [String: String] {
        var options: [String: String] = [:]
        for (kind, command) in hooks { options["on-download-\(kind.rawValue)"] = command }
        return options
    }
}
