import ArgumentParser
import HaulKit

/// `haul`'s exit statuses. Stable: scripts depend on them.
enum ExitStatus {
    /// Every download completed.
    static let success = ExitCode(0)
    /// At least one download failed (network or HTTP).
    static let downloadFailed = ExitCode(1)
    /// A checksum did not match.
    static let checksumMismatch = ExitCode(3)
    /// A disk or file-system error (disk full, not writable, state database).
    static let fileSystem = ExitCode(4)
    /// Interrupted by Ctrl-C or SIGTERM; run the same command again to resume.
    static let interrupted = ExitCode(130)
    /// Bad arguments (ArgumentParser's `EX_USAGE`).
    static let usage = ExitCode.validationFailure

    /// The status for a set of failures: the most specific one wins.
    static func forFailures(_ errors: [DownloadError]) -> ExitCode {
        if errors.isEmpty { return success }
        if errors.contains(where: {
            [.diskFull, .destinationNotWritable, .destinationInUse, .fileSystem, .stateDatabase].contains($0.code)
        }) {
            return fileSystem
        }
        if errors.contains(where: { $0.code == .checksumMismatch }) { return checksumMismatch }
        return downloadFailed
    }
}
