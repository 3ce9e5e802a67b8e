import HaulKit

/// aria2's download identifier: 16 lowercase hex digits. Haul's is the download's number in the state database, so
/// a GID stays the same across restarts and between the daemon and the command line.
public struct GID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let id: DownloadID

    public init(_ id: DownloadID) { self.id = id }

    /// The 16 hex digits.
    public var description: String {
        let digits = String(UInt64(bitPattern: id.rawValue), radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    public static func < (a: GID, b: GID) -> Bool { a.id < b.id }

    /// The GID that `text` names among `known`: the whole GID or a unique prefix of it, as aria2 accepts.
    public static func resolve(_ text: String, among known: some Sequence<GID>) throws(RPCError) -> GID {
        let prefix = text.lowercased()
        guard !prefix.isEmpty, prefix.count <= 16, prefix.allSatisfy(\.isHexDigit) else {
            throw .failed("Invalid GID \(text)")
        }
        var found: GID?
        for gid in known where gid.description.hasPrefix(prefix) {
            guard found == nil else { throw .failed("GID \(text) is not unique") }
            found = gid
        }
        guard let found else { throw .failed("GID \(text) is not found") }
        return found
    }
}
