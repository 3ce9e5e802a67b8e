import Foundation
import HaulKit

/// Human-readable sizes and rates (binary units), and parsing of `500K`, `2M`, `1.5G`.
enum ByteFormat {
    static func size(_ bytes: Int64) -> String { ByteCount.binary(bytes) }

    static func rate(_ bytesPerSecond: Double) -> String { size(Int64(bytesPerSecond)) + "/s" }

    /// Parses a byte count: a number with an optional K, M, G or T suffix (powers of 1024; `KiB`/`KB` too).
    static func parse(_ text: String) -> Int64? {
        var digits = text.trimmingWhitespace().uppercased()
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            let stripped = String(digits.dropLast(suffix.count))
            if stripped.last.map({ "KMGT".contains($0) }) == true || suffix == "B" {
                digits = stripped
                break
            }
        }
        var multiplier: Double = 1
        if let last = digits.last, let index = "KMGT".firstIndex(of: last) {
            multiplier = pow(1024, Double("KMGT".distance(from: "KMGT".startIndex, to: index) + 1))
            digits.removeLast()
        }
        guard let value = Double(digits), value.isFinite, value > 0 else { return nil }
        let bytes = value * multiplier
        guard bytes >= 1, bytes < 9e18 else { return nil }
        return Int64(bytes)
    }

    static func duration(_ seconds: Double) -> String {
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        let total = Int(seconds.rounded())
        if total < 3600 { return "\(total / 60) m \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) m"
    }
}

extension ByteFormat {
    /// A short remaining time: `17 s`, `4 m 05 s`, `2 h 10 m`.
    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        let total = Int(seconds.rounded(.up))
        if total < 60 { return "\(total) s" }
        if total < 3600 { return String(format: "%d m %02d s", total / 60, total % 60) }
        if total < 360_000 { return String(format: "%d h %02d m", total / 3600, total % 3600 / 60) }
        return "> 99 h"
    }
}
