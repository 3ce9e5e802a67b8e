import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// The digests a server states are verified as the file arrives: each header, right and wrong, on one connection and
/// on four; a wrong one never completes.
@Suite("Server digests verified")
struct ServerDigestTests {
    static let size = 3 * 1024 * 1024 + 321

    static func harness() async throws -> Harness {
        try await Harness.make { $0.minimumSegmentSize = 256 * 1024 }
    }

    /// Serves `/file.bin` with `fields` (and `change` applied), downloads it with `connections`; returns the harness,
    /// the download's id and how it ended.
    static func download(
        _ fields: [TestOrigin.DigestField], connections: Int, size: Int = size,
        policy: ServerDigestPolicy = .verify, faults: (inout TestOrigin.Faults) -> Void = { _ in },
        change: (inout TestOrigin.Resource) -> Void = { _ in }
    ) async throws -> (harness: Harness, id: DownloadID, result: Result<URL, DownloadError>) {
        let harness = try await Self.harness()
        var resource = TestOrigin.Resource(size: size)
        resource.digests = fields
        change(&resource)
        harness.origin.serve("/file.bin", resource)
        harness.origin.setFaults(faults)
        let id = try await harness.manager.add(
            harness.origin.url("/file.bin"), options: .init(connections: connections, serverDigests: policy))
        do {
            return (harness, id, .success(try await harness.manager.wait(for: id)))
        } catch {
            return (harness, id, .failure(error))
        }
    }

    /// Every header that states a digest Haul verifies, and the one it is reported as.
    static let verified: [(TestOrigin.DigestHeader, String, DigestAlgorithm)] = [
        (.reprDigest, "Repr-Digest", .sha256), (.contentDigest, "Content-Digest", .sha256),
        (.digest, "Digest", .sha256), (.contentMD5, "Content-MD5", .md5), (.googHash, "x-goog-hash", .md5),
        (.amazonSHA256, "x-amz-checksum-sha256", .sha256), (.amazonCRC32C, "x-amz-checksum-crc32c", .crc32c),
    ]

    @Test("a right digest is verified and said so", arguments: [1, 4], 0..<7)
    func right(connections: Int, index: Int) async throws {
        let (header, name, algorithm) = Self.verified[index]
        let (harness, id, result) = try await Self.download([.init(header)], connections: connections)
        let file = try result.get()
        expectContent(file, size: Self.size)
        let verification = try #require(await harness.manager.snapshot(id)?.verification)
        let check = try #require(verification.checks.first, "\(verification)")
        #expect(check.source == .server && check.header == name && check.algorithm == algorithm, "\(verification)")
        #expect(verification.description.hasPrefix("verified: \(algorithm) "), "\(verification)")
        await harness.shutdown()
    }

    @Test("a wrong digest fails the download (serverDigestMismatch), its bytes kept aside", arguments: [1, 4], 0..<7)
    func wrong(connections: Int, index: Int) async throws {
        let (header, name, _) = Self.verified[index]
        let (harness, _, result) = try await Self.download([.init(header, wrong: true)], connections: connections)
        guard case .failure(let error) = result else {
            Issue.record("a wrong \(name) completed")
            return await harness.shutdown()
        }
        #expect(error.code == .serverDigestMismatch, "\(error)")
        #expect(error.summary.contains(name), "\(error)")
        #expect(FileManager.default.fileExists(atPath: harness.directory.file("file.bin.bad").path))
        #expect(!FileManager.default.fileExists(atPath: harness.directory.file("file.bin").path))
        await harness.shutdown()
    }

    @Test("right digest, damaged bytes: the download fails, whatever the connections", arguments: [1, 4])
    func damagedBytes(connections: Int) async throws {
        let (harness, _, result) = try await Self.download(
            [.init(.reprDigest)], connections: connections, change: { $0.corrupted = 2_000_000..<2_000_100 })
        guard case .failure(let error) = result else {
            Issue.record("damaged bytes completed")
            return await harness.shutdown()
        }
        #expect(error.code == .serverDigestMismatch, "\(error)")
        await harness.shutdown()
    }

    @Test("a small file held in memory is verified too, right and wrong", arguments: [false, true])
    func small(wrong: Bool) async throws {
        let (harness, id, result) = try await Self.download(
            [.init(.reprDigest, wrong: wrong), .init(.contentMD5, wrong: wrong)], connections: 1, size: 100_000)
        switch result {
        case .success(let file):
            #expect(!wrong, "a wrong digest completed")
            expectContent(file, size: 100_000)
            let verification = try #require(await harness.manager.snapshot(id)?.verification)
            #expect(verification.checks.map(\.header) == ["Repr-Digest", "Content-MD5"], "\(verification)")
        case .failure(let error):
            #expect(wrong, "\(error)")
            #expect(error.code == .serverDigestMismatch, "\(error)")
        }
        await harness.shutdown()
    }

    @Test("a multipart S3 checksum is not of the whole object: ignored, and said so")
    func composite() async throws {
        let (harness, id, result) = try await Self.download([.init(.amazonComposite)], connections: 4)
        expectContent(try result.get(), size: Self.size)
        let verification = try #require(await harness.manager.snapshot(id)?.verification)
        #expect(verification.description == "not verified: the server sent no digest")
        await harness.shutdown()
    }

    @Test("turned off, a wrong digest is not checked, and the final word says so")
    func turnedOff() async throws {
        let (harness, id, result) = try await Self.download(
            [.init(.reprDigest, wrong: true)], connections: 4, policy: .ignore)
        expectContent(try result.get(), size: Self.size)
        let verification = try #require(await harness.manager.snapshot(id)?.verification)
        #expect(!verification.isVerified)
        #expect(verification.description.contains("--no-verify-server-digest"), "\(verification)")
        await harness.shutdown()
    }

    @Test(
        "Want-Repr-Digest and Want-Digest are sent only when asked for", arguments: [ServerDigestPolicy.verify, .ask])
    func asks(policy: ServerDigestPolicy) async throws {
        let (harness, _, result) = try await Self.download([.init(.reprDigest)], connections: 4, policy: policy)
        _ = try result.get()
        let requests = harness.origin.requests(to: "/file.bin")
        let asked = requests.filter { $0.header("Want-Repr-Digest") != nil && $0.header("Want-Digest") != nil }
        #expect(asked.count == (policy == .ask ? requests.count : 0))
        await harness.shutdown()
    }

    @Test(
        "a file that changed on the server behind the same validators is fetched again, not failed",
        arguments: [1, 4])
    func changedMeanwhile(connections: Int) async throws {
        let (harness, _, result) = try await Self.download(
            [.init(.reprDigest)], connections: connections,
            faults: { $0.changeVersionAfter = (bytes: 200_000, version: 1) }, change: { $0.fixedValidators = true })
        expectContent(try result.get(), size: Self.size, version: 1)
        await harness.shutdown()
    }
}
