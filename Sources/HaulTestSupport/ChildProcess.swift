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
    public init(product: String, arguments: [String], environment: [String: String] = [:]) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("haul-child-\(UUID().uuidString)")
        outputURL = scratch.appendingPathExtension("out")
        errorURL = scratch.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorURL.path, contents: nil)
        process.executableURL = try Self.locate(product)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
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

    public var standardOutput: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOf: errorURL, encoding: .utf8)) ?? "" }

    /// The product's path: beside the test runner (`.build/<triple>/debug/`), or above it on Apple platforms.
    static func locate(_ product: String) throws -> URL {
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
