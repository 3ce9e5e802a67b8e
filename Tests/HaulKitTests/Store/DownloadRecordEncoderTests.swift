import Foundation
import Testing

@testable import HaulKit

/// The encoder keeps the text of the last options, destination and verification it wrote, for the next record of the
/// batch: each record must still get its own.
@Suite("Download record encoder")
struct DownloadRecordEncoderTests {
    static func completed(_ index: Int, _ verification: DownloadVerification?) -> DownloadRecord {
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        var record = DownloadRecord(
            id: Int64(index), url: "http://a/\(index)", options: .init(), state: .completed, createdAt: date,
            updatedAt: date)
        record.fingerprint = FileFingerprint(
            size: 4_096, modified: 1, identity: "1:\(index)", sha256: String(repeating: "a", count: 64),
            verification: verification)
        return record
    }

    @Test("verifications alike, different, absent, and alike again: each record's text is its own")
    func verifications() throws {
        let server = DownloadVerification(checks: [.init(algorithm: .sha256, source: .server, header: "Repr-Digest")])
        let parts = DownloadVerification(checks: [
            .init(algorithm: .md5, source: .server, header: "Content-MD5", parts: 2)
        ])
        let none = DownloadVerification(checks: [], unverifiedBecause: "the server sent no digest")
        let other = DownloadVerification(checks: [], unverifiedBecause: "no digest was known")
        let sequence: [DownloadVerification?] = [server, server, parts, nil, none, other, none, server]
        var batch = DownloadRecordEncoder()
        for (index, verification) in sequence.enumerated() {
            let record = Self.completed(index, verification)
            var alone = DownloadRecordEncoder()
            let expected = try alone.value(.verification, of: record)
            #expect(try batch.value(.verification, of: record) == expected, "record \(index)")
            if let verification {
                guard case .text(let text) = expected else {
                    Issue.record("record \(index): \(expected)")
                    continue
                }
                let decoded = try StoredJSON.decoder().decode(DownloadVerification.self, from: Data(text.utf8))
                #expect(decoded == verification, "record \(index)")
            } else {
                #expect(expected == .null, "record \(index)")
            }
        }
    }
}
