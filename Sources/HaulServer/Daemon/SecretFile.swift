import Foundation
import HaulKit

/// The RPC secret kept in the state directory: made on first start (random, readable only by the owner) and read on
/// every start after, so clients keep working across restarts.
public enum SecretFile {
    public static let name = "rpc-secret"

    /// The secret in `directory`, created if there is none.
    public static func secret(in directory: URL) throws -> String {
        let url = directory.appendingPathComponent(name)
        if let existing = try? String(contentsOf: url, encoding: .utf8) {
            let secret = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            if !secret.isEmpty { return secret }
        }
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let secret = (0..<24).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        guard
            FileManager.default.createFile(
                atPath: url.path, contents: Data((secret + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else {
            throw DownloadError.fileSystem(path: url.path, reason: "cannot create the secret file")
        }
        return secret
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
