import ArgumentParser
import HaulKit

/// `-x N` (1-32) or `-x auto`: a fixed number of connections per download, or one chosen by measurement.
enum ConnectionCount: ExpressibleByArgument, Equatable, CustomStringConvertible {
    case fixed(Int)
    /// Chosen by measurement (``HaulKit/DownloadOptions/adaptiveConnections``), up to ``autoMaximum``.
    case auto

    /// The most connections `-x auto` opens per download.
    static let autoMaximum = DownloadOptions.automaticConnectionCeiling

    init?(argument: String) {
        if argument.lowercased() == "auto" {
            self = .auto
        } else if let count = Int(argument) {
            self = .fixed(count)
        } else {
            return nil
        }
    }

    var defaultValueDescription: String { description }

    var description: String {
        switch self {
        case .fixed(let count): String(count)
        case .auto: "auto"
        }
    }

    /// Whether a fixed count is within 1...32.
    var isValid: Bool {
        if case .fixed(let count) = self { return (1...32).contains(count) }
        return true
    }

    /// The connections a download may use: the fixed count, or the most `auto` opens.
    var count: Int {
        switch self {
        case .fixed(let count): count
        case .auto: Self.autoMaximum
        }
    }
}
