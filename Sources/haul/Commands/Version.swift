import ArgumentParser
import Foundation
import HaulFleet
import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul version`: what to paste into a bug report: the version, commit and build date (as `--version`), the
/// operating system, and the state database's schema version.
struct Version: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the version, commit, build date, operating system and state database, for bug reports.",
        discussion: """
            The state database is only read: its schema version is how many migrations it has had; this haul \
            writes the version shown as 'known'.

            Examples:
              haul version
              haul version --json
            """)

    @Flag(help: "Print one JSON object.")
    var json = false

    @OptionGroup var state: StateOptions

    func run() async throws {
        let report = VersionReport(build: .current, state: state)
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            Console.out(String(decoding: try encoder.encode(report), as: UTF8.self) + "\n")
        } else {
            Console.out(report.text)
        }
    }
}

/// What `haul version` prints.
struct VersionReport: Encodable {
    var version: String
    var commit: String?
    var buildDate: String?
    var os: OperatingSystem
    var stateDatabase: StateDatabase

    struct OperatingSystem: Encodable {
        /// `PRETTY_NAME` of `/etc/os-release` (Linux), else the system's own description.
        var name: String
        /// The kernel: its name and release (`uname -sr`).
        var kernel: String
        var architecture: String
    }

    struct StateDatabase: Encodable {
        /// The SQLite file, or the shared queue's URL with its password masked.
        var location: String
        /// `sqlite` or `postgres`.
        var kind: String
        /// Migrations the database has had; nil when there is no database yet, or when it was not read (a shared
        /// queue is not connected to for this).
        var schemaVersion: Int?
        /// Migrations this haul knows.
        var knownSchemaVersion: Int
        /// Why the schema version could not be read.
        var error: String?
    }

    init(build: BuildInfo, state: StateOptions) {
        version = build.version
        commit = build.commit
        buildDate = build.date
        os = Self.operatingSystem()
        if let queue = try? state.sharedQueue() {
            stateDatabase = StateDatabase(
                location: StateOptions.masked(queue.url.absoluteString), kind: "postgres",
                knownSchemaVersion: SharedQueue.schemaVersion)
        } else {
            let url = state.databaseURL
            stateDatabase = StateDatabase(
                location: url.path, kind: "sqlite", knownSchemaVersion: HaulVersion.schemaVersion)
            do {
                stateDatabase.schemaVersion = try HaulVersion.schemaVersion(ofDatabaseAt: url)
            } catch {
                stateDatabase.error = error.description
            }
        }
    }

    /// The lines `haul version` prints.
    var text: String {
        let build = BuildInfo(version: version, commit: commit, date: buildDate)
        let schema =
            stateDatabase.schemaVersion.map { "schema version \($0)" }
            ?? stateDatabase.error
            ?? (stateDatabase.kind == "sqlite" ? "not created yet" : "schema not read")
        return """
            \(build.line)
            OS: \(os.name) (\(os.kernel), \(os.architecture))
            State database: \(stateDatabase.location) (\(stateDatabase.kind), \(schema); this haul writes \
            \(stateDatabase.knownSchemaVersion))

            """
    }

    static func operatingSystem() -> OperatingSystem {
        var system = utsname()
        uname(&system)
        func text<T>(_ field: T) -> String {
            withUnsafeBytes(of: field) { bytes in String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self) }
        }
        let kernel = "\(text(system.sysname)) \(text(system.release))"
        return OperatingSystem(name: osReleaseName() ?? kernel, kernel: kernel, architecture: text(system.machine))
    }

    /// `PRETTY_NAME` from `/etc/os-release`, unquoted.
    private static func osReleaseName() -> String? {
        guard let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) else { return nil }
        for line in release.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
            return String(line.dropFirst("PRETTY_NAME=".count)).trimmingCharacters(
                in: CharacterSet(charactersIn: "\"'"))
        }
        return nil
    }
}
