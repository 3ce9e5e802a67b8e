/// What Haul does with the digests a server states about a file (`Repr-Digest`, `Content-Digest`, RFC 3230's
/// `Digest`, `Content-MD5`, `x-goog-hash`, a full-object `x-amz-checksum-*`).
public enum ServerDigestPolicy: String, Sendable, Hashable, Codable {
    /// Verify those the server sends of its own accord (the default); ask for none.
    case verify
    /// Verify them, and ask for them: `Want-Repr-Digest` and RFC 3230's `Want-Digest` on every request of the
    /// download's own URL (`--ask-digest`). Off by default: the obsolete `Want-Digest` singles a client out.
    case ask
    /// Ignore them (`--no-verify-server-digest`).
    case ignore

    var verifies: Bool { self != .ignore }
}
