import Foundation
import HaulKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The RPC secret kept in the state directory: made on first start (random, readable only by the owner from the
/// moment the file exists) and read on every start after, so clients keep working across restarts.
public enum SecretFile {
    public static let name = "rpc-secret"

    /// The secret in `directory`, created if there is none.
    public static func secret(in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        if let existing = try? String(contentsOf: url, encoding: .utf8) {
            let secret = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            if !secret.isEmpty { return secret }
            // An empty file (a start that died before writing it): made again.
            _ = unlink(url.path)
        }
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let secret = (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try create(url.path, holding: secret + "\n")
        return secret
    }

    /// Creates the file at `path` with `text`: `O_CREAT | O_EXCL` with mode 0600, so it is the owner's alone from
    /// its first moment (never a file that was readable, renamed or changed afterwards), and nothing already at the
    /// path, a symbolic link included, is followed or replaced.
    static func create(_ path: String, holding text: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DownloadError.fileSystem(
                path: path, reason: "cannot create the secret file (\(String(cString: strerror(errno))))")
        }
        defer { _ = close(descriptor) }
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                _ = unlink(path)
                throw DownloadError.fileSystem(path: path, reason: "cannot write the secret file")
            }
            written += count
        }
        _ = fsync(descriptor)
    }

    /// The secret in a file the user named (`--secret-file`): its first line.
    public static func read(_ path: String) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let secret =
            text.split(whereSeparator: \.isNewline).first.map(String.init)?
            .trimmingCharacters(in: .whitespaces) ?? ""
        guard !secret.isEmpty else {
            throw DownloadError.invalidRequest("the secret file \(path) is empty: put the secret on its first line")
        }
        return secret
    }
}
