import ArgumentParser
import Foundation
import HaulKit
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul get`: download in the foreground; run it again to resume.
struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download URLs in the foreground and exit when all are done.",
        discussion: """
            Running the same command again resumes where it stopped, after Ctrl-C, a lost connection or a crash.

            Examples:
              haul get https://example.com/big.iso
              haul get -o debian.iso --checksum sha256=9f86d0… https://example.com/debian.iso
              haul get -d downloads -j 8 -i urls.txt
              haul get --limit-rate 2M -H 'Authorization: Bearer TOKEN' https://example.com/private.tar
            """)

    @Argument(help: "http:// or https:// URLs to download.")
    var urls: [String] = []

    @Option(name: .shortAndLong, help: ArgumentHelp("Write to FILE (one URL only).", valueName: "FILE"))
    var output: String?

    @Option(name: [.customShort("d"), .customLong("dir")], help: ArgumentHelp("Directory for the files (default: current).", valueName: "DIR"))
    var directory: String?

    @Option(
        name: [.customShort("i"), .customLong("input-file")],
        help: ArgumentHelp("Read URLs from FILE: one per line, '#' comments, optional 'out=NAME' after the URL.", valueName: "FILE"))
    var inputFile: String?

    @Option(name: [.customShort("j"), .customLong("jobs")], help: "Downloads at once.")
    var jobs: Int = 4

    @Option(
        name: [.customShort("x"), .customLong("connections")],
        help: "Connections per download (1-32), used when the server supports ranges.")
    var connections: Int = 4

    @Option(help: ArgumentHelp("Expected digest, sha256=HEX, sha1=HEX or md5=HEX (one URL only).", valueName: "ALGO=HEX"))
    var checksum: String?

    @Option(name: .customLong("limit-rate"), help: ArgumentHelp("Total speed limit, e.g. 500K, 2M, 1G (bytes per second).", valueName: "RATE"))
    var limitRate: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: ArgumentHelp("Extra request header 'Name: value' (repeatable).", valueName: "HEADER"))
    var headers: [String] = []

    @Option(help: "Attempts in a row without progress before a download fails.")
    var retries: Int = 10

    @Option(help: ArgumentHelp("Seconds without data before a connection is dropped and resumed.", valueName: "SECONDS"))
    var timeout: Double = 30

    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    @OptionGroup var state: StateOptions

    func validate() throws {
        let requests = try plannedDownloads()
        if requests.isEmpty { throw ValidationError("give at least one URL, or -i FILE") }
        if output != nil, requests.count != 1 { throw ValidationError("-o/--output takes exactly one URL") }
        if checksum != nil, requests.count != 1 { throw ValidationError("--checksum takes exactly one URL") }
        if jobs < 1 { throw ValidationError("-j/--jobs must be at least 1") }
        if !(1...32).contains(connections) { throw ValidationError("-x/--connections must be 1 to 32") }
        if retries < 1 { throw ValidationError("--retries must be at least 1") }
        if !(timeout > 0) { throw ValidationError("--timeout must be a positive number of seconds") }
        if let limitRate, ByteFormat.parse(limitRate) == nil {
            throw ValidationError("--limit-rate '\(limitRate)' is not a rate like 500K, 2M or 1G")
        }
        _ = try options()
    }

    /// The URLs with their destinations, from the arguments and the input file.
    func plannedDownloads() throws -> [(url: URL, destination: DownloadDestination?)] {
        var lines: [(String, String?)] = urls.map { ($0, output) }
        if let inputFile {
            guard let text = try? String(contentsOfFile: inputFile, encoding: .utf8) else {
                throw ValidationError("cannot read the input file \(inputFile)")
            }
            for line in text.split(whereSeparator: \.isNewline) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                let words = trimmed.split(separator: " ", omittingEmptySubsequences: true)
                let out = words.dropFirst().first { $0.hasPrefix("out=") }.map { String($0.dropFirst(4)) }
                lines.append((String(words[0]), out))
            }
        }
        let base = directory.map { URL(fileURLWithPath: $0) }
        return try lines.map { text, out in
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                url.host?.isEmpty == false
            else {
                throw ValidationError("'\(text)' is not an http:// or https:// URL")
            }
            if let out {
                let file = out.hasPrefix("/") || base == nil ? URL(fileURLWithPath: out) : base!.appendingPathComponent(out)
                return (url, .file(file))
            }
            return (url, base.map { .directory($0) })
        }
    }

    func options() throws -> DownloadOptions {
        var options = DownloadOptions(connections: connections)
        do {
            options.checksum = try checksum.map { try Checksum(parsing: $0) }
            options.headers = try headers.map { try HTTPHeaderField(parsing: $0) }
        } catch {
            throw ValidationError((error as? DownloadError)?.summary ?? "\(error)")
        }
        return options
    }

    func run() async throws {
        var configuration = DownloadManager.Configuration(databaseURL: state.databaseURL)
        configuration.maxConcurrentDownloads = jobs
        configuration.maxConnectionsPerHost = max(8, connections)
        configuration.retry.maxAttempts = retries
        configuration.stallTimeout = .milliseconds(Int64(timeout * 1000))
        configuration.resumesStoredDownloads = false
        configuration.globalSpeedLimit = limitRate.flatMap(ByteFormat.parse)
        let manager: DownloadManager
        do {
            manager = try await DownloadManager(configuration: configuration)
        } catch {
            printError(error.description)
            throw ExitStatus.fileSystem
        }
        let interruption = Interruption(manager: manager, quiet: quiet)
        interruption.install()

        let planned = try plannedDownloads()
        let options = try options()
        let ids: [DownloadID]
        do {
            ids = try await manager.add(contentsOf: planned.map { ($0.url, $0.destination, options) })
        } catch {
            printError(error.description)
            throw ExitStatus.forFailures([error])
        }
        let reporter = PlainReporter(quiet: quiet)
        let events = await manager.events()
        let reporting = Task { await reporter.report(events, of: Set(ids), manager: manager) }

        var failures: [DownloadError] = []
        for id in ids {
            do {
                _ = try await manager.wait(for: id)
            } catch {
                failures.append(error)
            }
        }
        await manager.shutdown()
        await reporting.value
        // Interrupted: the waits ended because the manager shut down, not because downloads failed.
        if interruption.happened { throw ExitStatus.interrupted }
        throw ExitStatus.forFailures(failures)
    }
}

/// Ctrl-C and SIGTERM: checkpoint and stop cleanly, say how to resume, exit 130. A second signal exits at once
/// (still safe: every byte written is kept, and the next run verifies the tail).
final class Interruption: Sendable {
    let manager: DownloadManager
    let quiet: Bool
    private let signals = Atomic<Int>(0)

    /// True once a SIGINT or SIGTERM arrived.
    var happened: Bool { signals.load(ordering: .relaxed) > 0 }
    private nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    private static let queue = DispatchQueue(label: "haul.signals")

    init(manager: DownloadManager, quiet: Bool) {
        self.manager = manager
        self.quiet = quiet
    }

    func install() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: Self.queue)
            source.setEventHandler { [self, manager] in
                if self.signals.add(1, ordering: .relaxed).newValue > 1 { exit(ExitStatus.interrupted.rawValue) }
                FileHandle.standardError.write(
                    Data("\nhaul: interrupted; run the same command again to resume\n".utf8))
                Task {
                    await manager.shutdown()
                    exit(ExitStatus.interrupted.rawValue)
                }
            }
            source.resume()
            Self.queue.sync { Self.sources.append(source) }
        }
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data("haul: \(message)\n".utf8))
}
