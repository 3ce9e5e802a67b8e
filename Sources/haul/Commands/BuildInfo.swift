import HaulBuildStamp
import HaulKit

/// What this binary is: HaulKit's version, and the commit and date `tools/stamp-build` recorded for a release build
/// (`tools/build-release`, which `tools/install` and `tools/package-deb` run); a plain `swift build` has no stamp, and
/// says so.
struct BuildInfo: Sendable, Equatable {
    var version: String
    /// The commit (12 hex digits, `-dirty` with uncommitted changes), or nil without a stamp.
    var commit: String?
    /// The build date, ISO 8601 in UTC, or nil without a stamp.
    var date: String?

    /// This binary's.
    static let current = BuildInfo(
        version: HaulVersion.current, commit: nonEmpty(String(cString: haul_build_commit())),
        date: nonEmpty(String(cString: haul_build_date())))

    /// `haul --version`: `haul 0.1.0 (commit 1a2b3c4d5e6f, built 2026-11-27T15:04:05Z)`.
    var line: String {
        let commit = commit.map { "commit \($0)" } ?? "no commit recorded"
        let date = date.map { "built \($0)" } ?? "no build date: a development build, not from tools/install"
        return "haul \(version) (\(commit), \(date))"
    }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }
}
