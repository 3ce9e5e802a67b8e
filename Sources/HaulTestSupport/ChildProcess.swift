import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A built executable of this package run as a child process, its output captured to files.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let outputURL: URL
    private let errorURL: URL

    /// Starts `product` (found next to the test bundle) with `arguments`.
    public convenience init(
        product: String, arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
        standardInput: String? = nil
    ) throws {
        try self.init(
            executable: try Self.locate(product), arguments: arguments, environment: environment,
            currentDirectory: currentDirectory, standardInput: standardInput)
    }

    /// Starts the program at `executable` with `arguments`.
    /// `standardInput`: text the process reads on standard input (else it reads nothing).
    public init(
        executable: URL, arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
        standardInput: String? = nil
    ) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("haul-child-\(UUID().uuidString)")
        outputURL = scratch.appendingPathExtension("out")
        errorURL = scratch.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.executableURL = executable
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.arguments = arguments
        // Never the user's config file (`HAUL_CONFIG` empty: none) unless a test gives one.
        process.environment = ProcessInfo.processInfo.environment.merging(["HAUL_CONFIG": ""]) { $1 }
            .merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        if let standardInput {
            let inputURL = scratch.appendingPathExtension("in")
            try Data(standardInput.utf8).write(to: inputURL)
            process.standardInput = try FileHandle(forReadingFrom: inputURL)
            try? FileManager.default.removeItem(at: inputURL)  // The open handle keeps it readable.
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
    }

    /// Runs `product` to the end; returns its exit status and output.
    public static func run(
        _ product: String, _ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
        standardInput: String? = nil, timeout: Duration = .seconds(120)
    ) async throws -> (status: Int32, output: String, error: String) {
        let child = try ChildProcess(
            product: product, arguments: arguments, environment: environment, currentDirectory: currentDirectory,
            standardInput: standardInput)
        let status = try await child.wait(timeout: timeout)
        return (status, child.standardOutput, child.standardError)
    }

    /// Runs the program at `path` to the end; returns its exit status and output.
    public static func run(
        path: String, _ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(120)
    ) async throws -> (status: Int32, output: String, error: String) {
        let child = try ChildProcess(
            executable: URL(fileURLWithPath: path), arguments: arguments, environment: environment)
        let status = try await child.wait(timeout: timeout)
        return (status, child.standardOutput, child.standardError)
    }

    public var pid: Int32 { process.processIdentifier }

    /// Sends `signal` to the process.
    public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Waits for the process to exit (polling, so it never blocks a concurrency thread) and returns its status.
    @discardableResult
    public func wait(timeout: Duration = .seconds(120)) async throws -> Int32 {
        let start = ContinuousClock.now
        while process.isRunning {
            if start.duration(to: .now) > timeout {
                send(SIGKILL)
                throw ChildProcessTimeout(arguments: process.arguments ?? [])
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return process.terminationStatus
    }

    /// Standard output as bytes (a streamed file).
    public var standardOutputData: Data { (try? Data(contentsOf: outputURL)) ?? Data() }

    public var standardOutput: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }

    /// The product's path: beside the test runner (`.build/<triple>/debug/`), or above it on Apple platforms.
    public static func locate(_ product: String) throws -> URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(product)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw ChildProcessTimeout(arguments: ["cannot find \(product) near \(CommandLine.arguments[0])"])
    }

    deinit {
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: outputURL)
        try? FileManager.default.removeItem(at: errorURL)
    }
}

public struct ChildProcessTimeout: Error, CustomStringConvertible {
    public var arguments: [String]
    public var description: String { "child process did not finish: \(arguments.joined(separator: " "))" }
}

/// The size of the file at `path`, or nil.
public func fileSize(_ path: String) -> Int? {
    (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
}

/// Waits until the file at `path` holds at least `bytes` bytes; returns false if that did not happen within
/// `timeout` (the caller decides whether that is a failure).
@discardableResult
public func waitForFile(_ path: String, atLeast bytes: Int, timeout: Duration = .seconds(60)) async throws -> Bool {
    let start = ContinuousClock.now
    while (fileSize(path) ?? 0) < bytes {
        if start.duration(to: .now) > timeout { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}
