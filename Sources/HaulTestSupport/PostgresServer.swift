import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private PostgreSQL cluster on 127.0.0.1 (initdb into a temporary directory, its own port, no durability: tests
/// do not survive power loss), as the nginx tests start nginx; ``makeDatabase()`` gives a fresh database of it.
///
/// PostgreSQL refuses to run as root: run as root (CI's containers), the cluster runs as the `postgres` user that
/// Debian's package creates.
public final class PostgresServer: @unchecked Sendable {
    public let port: Int
    public let user = "haul"
    private let directory: URL
    private let bin: URL
    private let asRoot: Bool
    /// The server's options (port, socket directory, settings), to start it again after ``stopServer()``.
    private var options = ""
    private let databases = Atomic<Int>(0)

    /// The directory of `initdb` and `postgres`, if PostgreSQL is installed (`.ci/run` installs it).
    public static var binaries: URL? {
        let roots = ["/usr/lib/postgresql", "/opt/homebrew/opt/postgresql/lib/postgresql"]
        for root in roots {
            guard let versions = try? FileManager.default.contentsOfDirectory(atPath: root) else { continue }
            for version in versions.sorted(by: >) {
                let bin = URL(fileURLWithPath: root).appendingPathComponent(version).appendingPathComponent("bin")
                if FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("initdb").path) {
                    return bin
                }
            }
        }
        return nil
    }

    /// Starts a cluster (about two seconds: initdb, then the server).
    public static func start() async throws -> PostgresServer {
        try await blocking { try PostgresServer() }
    }

    private init() throws {
        guard let bin = Self.binaries else { throw PostgresUnavailable() }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("haul-postgres-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let asRoot = getuid() == 0
        if asRoot { try Self.run("/bin/chown", ["-R", "postgres", directory.path]) }
        let data = directory.appendingPathComponent("data").path
        try Self.run(
            bin.appendingPathComponent("initdb").path,
            ["-D", data, "-A", "trust", "-U", user, "--no-sync", "-E", "UTF8"], asPostgres: asRoot)
        self.bin = bin
        self.asRoot = asRoot
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try LocalPorts.free()
            let options = [
                "-p \(port)", "-k \(directory.path)", "-c listen_addresses=127.0.0.1", "-c fsync=off",
                "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200",
            ].joined(separator: " ")
            do {
                // pg_ctl waits until the server accepts connections.
                try Self.run(
                    bin.appendingPathComponent("pg_ctl").path,
                    ["-D", data, "-o", options, "-l", directory.appendingPathComponent("log").path, "-w", "start"],
                    asPostgres: asRoot)
                self.port = port
                self.options = options
                return
            } catch {
                lastError = error
            }
        }
        throw lastError ?? PostgresUnavailable()
    }

    /// A new, empty database; its URL (`postgres://haul@127.0.0.1:PORT/NAME`).
    public func makeDatabase() async throws -> URL {
        let name = "haul_test_\(getpid())_\(databases.add(1, ordering: .relaxed).newValue)"
        _ = try await blocking { [self] in try sql("CREATE DATABASE \(name)") }
        return URL(string: "postgres://\(user)@127.0.0.1:\(port)/\(name)")!
    }

    /// Runs `statement` with `psql` on database `database`; returns what it printed (unaligned, tuples only).
    @discardableResult
    public func sql(_ statement: String, database: String = "postgres") throws -> String {
        guard let bin = Self.binaries else { throw PostgresUnavailable() }
        let psql =
            FileManager.default.isExecutableFile(atPath: bin.appendingPathComponent("psql").path)
            ? bin.appendingPathComponent("psql").path : "/usr/bin/psql"
        return try Self.run(
            psql, ["-h", "127.0.0.1", "-p", "\(port)", "-U", user, "-d", database, "-A", "-t", "-q", "-c", statement])
    }

    /// Runs `executable` (as the `postgres` user with `asPostgres`) to the end, killed after 3 minutes (a `psql`
    /// waiting on a lock or a stopped server would wait for ever); returns what it printed.
    ///
    /// With `posix_spawn` and `waitpid`, not `Process`: the server `pg_ctl` starts inherits descriptors, and
    /// Foundation's `Process` then never sees its child end.
    @discardableResult
    private static func run(_ executable: String, _ arguments: [String], asPostgres: Bool = false) throws -> String {
        let bounded =
            FileManager.default.isExecutableFile(atPath: "/usr/bin/timeout")
            ? ["/usr/bin/timeout", "-s", "KILL", "180"] : []
        let command =
            bounded
            + (asPostgres
                ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("haul-pg-\(UUID().uuidString)")
        let outputPath = scratch.path + ".out"
        let errorPath = scratch.path + ".err"
        defer {
            unlink(outputPath)
            unlink(errorPath)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // The test process's other descriptors stay here: PostgreSQL counts inherited descriptors against
        // max_files_per_process ("insufficient file descriptors available to start server process" while the other
        // tests hold many sockets), and a server holding a test's socket would keep it open. One that closes between
        // this listing and the spawn is ignored (glibc ignores EBADF for a close action).
        for descriptor in Self.inheritedDescriptors() {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, &argv, environ)
        guard spawned == 0 else {
            throw PostgresUnavailable(reason: "cannot start \(command[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let printed = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let complaint = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        // Exited normally with status 0 (the wait status's low 7 bits: the signal; the next 8: the exit status).
        guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
            throw PostgresUnavailable(
                reason: "\((executable as NSString).lastPathComponent) failed: \(complaint)\(printed)")
        }
        return printed.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The descriptors of this process above standard error (Linux's `/proc/self/fd`; none elsewhere).
    private static func inheritedDescriptors() -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { Int32($0) }.filter { $0 > 2 }
    }

    /// Stops the server (a fast shutdown: clients are disconnected) and keeps its files: ``startServer()`` starts it
    /// again on the same port (a test of what clients do while PostgreSQL is down).
    public func stopServer() async throws {
        _ = try await blocking { [self] in
            try Self.run(
                bin.appendingPathComponent("pg_ctl").path,
                ["-D", directory.appendingPathComponent("data").path, "-m", "fast", "-w", "stop"], asPostgres: asRoot)
        }
    }

    /// Starts the server stopped with ``stopServer()`` again, on the same port; returns once it accepts connections.
    public func startServer() async throws {
        _ = try await blocking { [self] in
            try Self.run(
                bin.appendingPathComponent("pg_ctl").path,
                [
                    "-D", directory.appendingPathComponent("data").path, "-o", options, "-l",
                    directory.appendingPathComponent("log").path, "-w", "start",
                ], asPostgres: asRoot)
        }
    }

    /// Stops the server (an immediate shutdown) and removes its files.
    public func stop() async {
        _ = try? await blocking { [self] in halt() }
    }

    private func halt() {
        _ = try? Self.run(
            bin.appendingPathComponent("pg_ctl").path,
            ["-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop"], asPostgres: asRoot)
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { halt() }
}

/// PostgreSQL is not installed or would not start.
public struct PostgresUnavailable: Error, CustomStringConvertible {
    public var reason = "PostgreSQL is not installed (.ci/run installs it)"
    public var description: String { reason }
}
