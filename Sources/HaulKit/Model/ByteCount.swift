import Foundation

/// Sizes as people read them, in binary units: the command line, the daemon's dashboard and an app's list say
/// `1.5 MiB` the same way.
public enum ByteCount {
    /// `bytes` in the largest binary unit that keeps it at or above 1, with one decimal: `512 B`, `1.5 MiB`,
    /// `2.0 GiB`.
    public static func binary(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f", value) + " " + units[unit]
    }
}
