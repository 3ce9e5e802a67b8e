import Foundation
import HaulKit
import Logging
import Subprocess

#if canImport(System)
import System
#else
import SystemPackage
#endif

/// Runs one hook as aria2 does: the command with the GID, the number of files and the first file's path as
/// arguments, and, beyond aria2, the event in `HAUL_*` environment variables. Its output goes to the log, line by
/// line; after ``EventSettings/hookTimeout`` its process group is sent SIGTERM, then SIGKILL 2 s later.
package struct HookRunner: Sendable {
    package var timeout: Duration
    package var logger: Logger

    package init(timeout: Duration, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    /// How a hook ended.
    package enum Outcome: Equatable, Sendable {
        /// It exited with `status` (0: success), or was ended by `signal`.
        case exited(status: Int32)
        case signalled(Int32)
        /// It ran past the time limit and was killed.
        case timedOut
        /// It could not be started (no such command, not executable): `reason`.
        case notStarted(String)
    }

    /// The arguments aria2 passes: GID, number of files (1, or 0 before the download has a file), first file.
    package static func arguments(_ event: OutboxEvent) -> [String] {
        [EventPayload.gid(event.downloadID), event.file == nil ? "0" : "1", event.file ?? ""]
    }

    /// The environment variables added (those whose value is unknown are removed, not inherited).
    package static func environment(_ event: OutboxEvent) -> [String: String?] {
        [
            "HAUL_EVENT": event.kind.rawValue,
            "HAUL_EVENT_ID": event.eventID,
            "HAUL_ID": String(event.downloadID.rawValue),
            "HAUL_GID": EventPayload.gid(event.downloadID),
            "HAUL_URL": event.url,
            "HAUL_FILE": event.file,
            "HAUL_SIZE": event.size.map(String.init),
            "HAUL_SHA256": event.sha256,
            "HAUL_ERROR_CODE": event.errorCode.map(String.init),
            "HAUL_ERROR": event.error,
        ]
    }

    /// Runs `command` for `event` and waits for it (at most the time limit, and the 2 s of its teardown).
    package func run(_ command: String, for event: OutboxEvent) async -> Outcome {
        let executable: Executable = command.contains("/") ? .path(FilePath(command)) : .name(command)
        var overrides: [Environment.Key: String?] = [:]
        for (key, value) in Self.environment(event) {
            // `updateValue`: a nil value is kept, and removes the variable from the hook's environment.
            overrides.updateValue(value, forKey: Environment.Key(stringLiteral: key))
        }
        var options = PlatformOptions()
        // Its own session, so that the teardown reaches whatever it started too.
        options.createSession = true
        options.teardownSequence = [.gracefulShutDown(toProcessGroup: true, allowedDurationToNextStep: .seconds(2))]
        var metadata: Logger.Metadata = [
            "hook": "\(command)", "event": "\(event.kind.rawValue)", "download": "\(event.downloadID)",
        ]
        let lineMetadata = metadata
        let logger = logger
        let timeout = timeout
        let task = Task { () -> Outcome in
            do {
                let result = try await Subprocess.run(
                    executable, arguments: Arguments(Self.arguments(event)),
                    environment: .inherit.updating(overrides), platformOptions: options, input: .none,
                    output: .sequence, error: .combinedWithOutput
                ) { execution in
                    for try await line in execution.standardOutput.strings() {
                        logger.info("hook output", metadata: lineMetadata.merging(["line": "\(line)"]) { $1 })
                    }
                }
                switch result.terminationStatus {
                case .exited(let code): return .exited(status: code)
                case .signaled(let signal): return .signalled(signal)
                }
            } catch {
                return Task.isCancelled ? .timedOut : .notStarted("\(error)")
            }
        }
        let watchdog = Task {
            try await Task.sleep(for: timeout)
            task.cancel()
        }
        // A cancelled caller (the daemon stopping) ends the hook as the time limit does.
        var outcome = await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        watchdog.cancel()
        if task.isCancelled { outcome = .timedOut }
        metadata["outcome"] = "\(outcome)"
        switch outcome {
        case .exited(status: 0): logger.info("hook ran", metadata: metadata)
        case .exited, .signalled: logger.warning("hook failed", metadata: metadata)
        case .timedOut: logger.error("hook killed after its time limit (--hook-timeout)", metadata: metadata)
        case .notStarted: logger.error("hook could not be started", metadata: metadata)
        }
        return outcome
    }
}
