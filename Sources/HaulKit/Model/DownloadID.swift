/// A download's stable identifier, unique within one state database.
///
/// Identifiers are small increasing integers, so they are easy to type on a command line
/// (`haul pause 12`) and order downloads by the time they were added.
public struct DownloadID: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByIntegerLiteral
{
    public let rawValue: Int64

    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { self.rawValue = value }

    public var description: String { String(rawValue) }

    public static func < (lhs: DownloadID, rhs: DownloadID) -> Bool { lhs.rawValue < rhs.rawValue }
}
