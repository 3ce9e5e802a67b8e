import Foundation

/// This package's directory (the one holding `Package.swift`), and the package manager run in it.
public enum PackageRoot {
    /// The package's directory, found from this source file's place in it.
    public static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // HaulTestSupport
        .deletingLastPathComponent()  // Sources
        .deletingLastPathComponent()

    /// A file or directory of the package, by its path from the package's directory.
    public static func file(_ path: String) -> URL { url.appendingPathComponent(path) }

    /// Runs `swift package ARGUMENTS` in the package's directory (blocking) and returns what it printed on standard
    /// output; throws with its standard error if it fails. For commands that only read (`dump-package`,
    /// `show-dependencies`): it ignores the lock of `.build`, which the `swift test` running the tests holds.
    public static func swiftPackage(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "--ignore-lock"] + arguments
        process.currentDirectoryURL = url
        let output = Pipe()
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "haul-package-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read to the end before waiting: a full pipe would stop the process.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            throw PackageCommandFailed(arguments: arguments, status: process.terminationStatus, message: message)
        }
        return data
    }
}

/// `swift package …` failed.
public struct PackageCommandFailed: Error, CustomStringConvertible {
    public var arguments: [String]
    public var status: Int32
    public var message: String
    public var description: String {
        "swift package \(arguments.joined(separator: " ")) exited \(status): \(message)"
    }
}
