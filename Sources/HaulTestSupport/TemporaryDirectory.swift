import Foundation

/// A fresh directory under the system's temporary directory, deleted with everything in it when released.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(_ label: String = "haul-test") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// `url/name`.
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The bytes of `url/name`, or nil if absent.
    public func contents(_ name: String) -> [UInt8]? {
        FileManager.default.contents(atPath: file(name).path).map { [UInt8]($0) }
    }

    /// Names of the entries in the directory, sorted.
    public func entries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
