import Foundation

/// What ``DownloadManager/resumeData(for:)`` hands out and ``DownloadManager/add(resuming:partFile:to:options:paused:)``
/// takes: everything another manager, process or machine needs to continue a download from a copy of its part file.
///
/// A small versioned JSON object: the URL, the server's validators (ETag, Last-Modified, size, content coding), the
/// bytes of the part file that are certain (one connection), or the segment map (several), the file's name and the
/// expected checksum. No path, no header and no login: it says nothing of the machine it was made on, and carries no
/// secret. Whatever it claims is checked again before a byte is appended: the request carries `If-Range`, and the
/// 64 KiB before each resume point are fetched again and compared with the part file.
struct ResumeData: Codable, Equatable, Sendable {
    /// What the `format` field holds.
    static let formatName = "haul-resume-data"
    /// The version this Haul writes; it reads this one and older.
    static let currentVersion = 1

    /// One range of the file fetched by one connection: `written` bytes from `start` are on disk.
    struct Piece: Codable, Equatable, Sendable {
        var start: Int64
        var end: Int64
        var written: Int64
    }

    var format = Self.formatName
    var version = Self.currentVersion
    /// The URL added (its login left out, as in every record).
    var url: String
    /// Where redirects led, when they did.
    var finalURL: String?
    var etag: String?
    var lastModified: String?
    /// The file's size, as the server said it.
    var totalBytes: Int64?
    var contentEncoding: String?
    /// Bytes from the start of the part file that are on disk (one connection; with ``pieces``, their contiguous
    /// prefix).
    var bytesOnDisk: Int64
    /// The segment map of a download over several connections; nil for one.
    var pieces: [Piece]?
    /// The file's name, for a manager that is given no destination.
    var fileName: String?
    /// The checksum the file must have, if one was given.
    var checksum: Checksum?
    /// When it was made.
    var createdAt: Date

    /// The bytes the part file must hold at least for these claims to be possible.
    var requiredPartSize: Int64 {
        guard let pieces else { return bytesOnDisk }
        return pieces.map { $0.start + $0.written }.max() ?? 0
    }

    /// The JSON.
    func encoded() throws(DownloadError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            return try encoder.encode(self)
        } catch {
            throw .internalError("cannot encode resume data: \(error)")
        }
    }

    /// Reads and checks `data`: Haul's format, a version this Haul knows, an http(s) URL, and a segment map that
    /// covers the file once, in order, with no piece written past its end.
    static func decoded(from data: Data) throws(DownloadError) -> ResumeData {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        struct Header: Decodable {
            var format: String?
            var version: Int?
        }
        guard let header = try? decoder.decode(Header.self, from: data), header.format == formatName,
            let version = header.version
        else {
            throw .invalidRequest("this is not Haul's resume data (DownloadManager.resumeData(for:) makes it)")
        }
        guard version <= currentVersion else {
            throw .invalidRequest(
                "this resume data is of version \(version), made by a newer Haul; this one reads up to "
                    + "\(currentVersion)")
        }
        let resume: ResumeData
        do {
            resume = try decoder.decode(ResumeData.self, from: data)
        } catch {
            throw .invalidRequest("the resume data is damaged: \(error)")
        }
        try resume.check()
        return resume
    }

    private func check() throws(DownloadError) {
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? "") else {
            throw .invalidRequest("the resume data's URL is not an http or https URL")
        }
        guard bytesOnDisk >= 0, totalBytes.map({ $0 >= 0 && bytesOnDisk <= $0 }) ?? true else {
            throw .invalidRequest("the resume data claims \(bytesOnDisk) bytes of a \(totalBytes ?? -1)-byte file")
        }
        guard let pieces else { return }
        guard let total = totalBytes, let first = pieces.first, first.start == 0, pieces.last?.end == total,
            zip(pieces, pieces.dropFirst()).allSatisfy({ $0.end == $1.start }),
            pieces.allSatisfy({ $0.start < $0.end && (0...($0.end - $0.start)).contains($0.written) })
        else {
            throw .invalidRequest("the resume data's segment map does not cover the file once, in order")
        }
    }
}
