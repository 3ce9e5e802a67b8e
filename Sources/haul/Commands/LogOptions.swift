import ArgumentParser
import HaulKit
import Logging

/// How much a command tells about its work, on standard error: shared by `get`, `run` and `serve`.
struct LogOptions: ParsableArguments {
    @Flag(
        name: .shortAndLong,
        help: "Also print each request, response, retry and decision (on standard error; implies plain output).")
    var verbose = false

    @Flag(help: "Print what -v prints and every header sent and received (credentials and cookies masked).")
    var debug = false

    /// The level asked for, or nil for Haul's usual lines only.
    var level: Logger.Level? { debug ? .trace : verbose ? .debug : nil }

    /// A logger writing to standard error at the level asked for, else at `usual` (nil: it discards everything).
    func logger(label: String, usual: Logger.Level? = nil) -> Logger {
        guard let level = level ?? usual else {
            return Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
        }
        var logger = Logger(label: label, factory: { StreamLogHandler.standardError(label: $0) })
        logger.logLevel = level
        return logger
    }
}
