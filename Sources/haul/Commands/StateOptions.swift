import ArgumentParser
import Foundation
import HaulFleet
import HaulKit

/// Where `haul` keeps its state: the SQLite database of the state directory, or a shared PostgreSQL queue; shared by
/// every command.
struct StateOptions: ParsableArguments {
    @Option(
        name: .customLong("state-dir"),
        help: ArgumentHelp(
            "Directory of the state database (default: $HAUL_STATE_DIR, else $XDG_DATA_HOME/haul, else ~/.local/share/haul).",
            valueName: "DIR"))
    var stateDirectory: String?

    @OptionGroup(title: "Fleet options") var queue: SharedQueueOptions

    /// `--database`.
    var database: String? { queue.database }

    func validate() throws {
        _ = try sharedQueue()
    }

    /// The shared queue asked for, by `--database` or `$HAUL_DATABASE`, with the worker's settings (else the
    /// defaults: a command that runs nothing claims nothing); nil for the embedded database.
    func sharedQueue(
        worker: WorkerOptions? = nil, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> SharedQueue? {
        guard let text = database ?? environment["HAUL_DATABASE"].flatMap({ $0.isEmpty ? nil : $0 }) else {
            return nil
        }
        guard let url = URL(string: text), ["postgres", "postgresql"].contains(url.scheme?.lowercased() ?? ""),
            url.host != nil, url.user != nil
        else {
            throw ValidationError(
                "--database takes a URL like postgres://USER:PASSWORD@HOST:5432/DATABASE, not '\(Self.masked(text))'")
        }
        var queue = SharedQueue(url: url)
        if let worker {
            queue.workerName = worker.workerName ?? SharedQueue.defaultWorkerName
            queue.leaseTimeout = .milliseconds(Int64(worker.leaseTimeout * 1000))
        }
        return queue
    }

    /// `text` with the password of a URL in it masked.
    static func masked(_ text: String) -> String {
        guard var parts = URLComponents(string: text), parts.password != nil else { return text }
        parts.password = "***"
        return parts.string ?? text
    }

    /// A configuration on this state (checked by `validate()`), for a worker with `worker`'s settings.
    func configuration(worker: WorkerOptions? = nil) -> DownloadManager.Configuration {
        var configuration = DownloadManager.Configuration(databaseURL: databaseURL)
        if let queue = try? sharedQueue(worker: worker) { configuration.store = .sharedQueue(queue) }
        return configuration
    }

    /// The state database to use.
    var databaseURL: URL {
        if let stateDirectory { return URL(fileURLWithPath: stateDirectory).appendingPathComponent("haul.sqlite") }
        if let fromEnvironment = ProcessInfo.processInfo.environment["HAUL_STATE_DIR"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment).appendingPathComponent("haul.sqlite")
        }
        return DownloadManager.Configuration.defaultDatabaseURL
    }

    /// A manager that reads and edits the queue but runs nothing (the process running downloads picks up changes).
    func openEditor() async throws -> DownloadManager {
        var configuration = configuration()
        configuration.runsDownloads = false
        configuration.resumesStoredDownloads = false
        // A few downloads are edited (or the history paged through by `list`): finished ones are read when asked for.
        configuration.keepsHistoryInMemory = false
        do {
            return try await DownloadManager(configuration: configuration)
        } catch {
            Console.error(error.description)
            throw ExitStatus.fileSystem
        }
    }
}

/// `--database`: every command reads and edits the queue it names.
struct SharedQueueOptions: ParsableArguments {
    @Option(
        name: .customLong("database"),
        help: ArgumentHelp(
            "A PostgreSQL queue shared by many workers, postgres://USER:PASSWORD@HOST:PORT/DATABASE (?sslmode=require "
                + "for TLS; default: $HAUL_DATABASE, else the state directory's own database).",
            valueName: "URL"))
    var database: String?
}

/// A worker's part in a shared queue: only the commands that run downloads (`get`, `run`, `serve`) have these.
struct WorkerOptions: ParsableArguments {
    @Option(
        name: .customLong("worker-name"),
        help: ArgumentHelp("This worker's name in a shared queue (default: HOST:PID).", valueName: "NAME"))
    var workerName: String?

    @Option(
        name: .customLong("lease-timeout"),
        help: ArgumentHelp(
            "Seconds after which a worker of a shared queue that stopped answering loses its downloads to the others.",
            valueName: "SECONDS"))
    var leaseTimeout: Double = 30

    func validate() throws {
        guard leaseTimeout.isFinite, (3...3600).contains(leaseTimeout) else {
            throw ValidationError("--lease-timeout must be 3 to 3600 seconds, got \(leaseTimeout)")
        }
    }
}

extension DownloadID: ExpressibleByArgument {
    /// `3` or `#3`.
    public init?(argument: String) {
        let digits = argument.hasPrefix("#") ? argument.dropFirst() : Substring(argument)
        guard let value = Int64(digits), value > 0 else { return nil }
        self.init(rawValue: value)
    }
}
