import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// Portable resume data: ``DownloadManager/resumeData(for:)`` in one manager, the part file copied, and
/// ``DownloadManager/add(resuming:partFile:to:options:paused:)`` in another (its own database, as on another
/// machine), checked before any byte is appended.
@Suite("Portable resume data")
struct ResumeDataTests {
    /// A download of `size` bytes paused partway in a manager of its own; returns its resume data, a copy of its part
    /// file in `elsewhere` (`NAME.part`), and the origin.
    static func pausedElsewhere(
        _ path: String, size: Int, connections: Int = 1, elsewhere: TemporaryDirectory
    ) async throws -> (data: Data, part: URL, origin: TestOrigin) {
        let first = try await Harness.make { $0.minimumSegmentSize = 128 * 1024 }
        let url = first.origin.serve(path, size: size)
        first.origin.setFaults { $0.bytesPerSecond = 1024 * 1024 }
        let id = try await first.manager.add(url, options: .init(connections: connections))
        try await first.waitForProgress(id, atLeast: Int64(size / 3))
        try await first.manager.pause(id)
        let data = try await first.manager.resumeData(for: id)
        let part = try #require(await first.manager.partFile(for: id))
        let copy = elsewhere.file((path as NSString).lastPathComponent + ".part")
        try FileManager.default.copyItem(at: part, to: copy)
        await first.manager.shutdown()
        first.origin.setFaults { $0.bytesPerSecond = nil }
        return (data, copy, first.origin)
    }

    @Test("another manager continues from the copied part file: Range and If-Range, byte-exact, the rest only")
    func continuesElsewhere() async throws {
        let elsewhere = TemporaryDirectory()
        let size = 3_000_001
        let (data, part, origin) = try await Self.pausedElsewhere("/one.bin", size: size, elsewhere: elsewhere)
        let blob = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(blob["format"] as? String == "haul-resume-data" && blob["version"] as? Int == 1)
        #expect(blob["etag"] != nil && blob["totalBytes"] as? Int == size)
        #expect(data.count < 1024, "small: \(data.count) bytes")
        #expect(!String(decoding: data, as: UTF8.self).contains(NSTemporaryDirectory()), "no path of its machine")
        let onDisk = try #require(blob["bytesOnDisk"] as? Int)
        #expect(onDisk >= size / 3)

        let second = try await Harness.make(origin: origin, directory: elsewhere)
        let before = origin.requests(to: "/one.bin").count
        let id = try await second.manager.add(resuming: data, partFile: part)
        let file = try await second.manager.wait(for: id)
        #expect(file.path == elsewhere.file("one.bin").path)
        expectContent(file, size: size)
        let resumed = try #require(origin.requests(to: "/one.bin").dropFirst(before).first)
        // The 64 KiB before the resume point are fetched again and compared before anything is appended.
        #expect(resumed.range == "bytes=\(onDisk - 64 * 1024)-", "\(resumed.range ?? "none")")
        #expect(resumed.ifRange != nil)
        await second.shutdown()
    }

    @Test("a download over several connections continues from its segment map")
    func continuesSegments() async throws {
        let elsewhere = TemporaryDirectory()
        let size = 4_000_003
        let (data, part, origin) = try await Self.pausedElsewhere(
            "/four.bin", size: size, connections: 4, elsewhere: elsewhere)
        let blob = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let pieces = try #require(blob["pieces"] as? [[String: Int]])
        #expect(pieces.count >= 2 && pieces.first?["start"] == 0 && pieces.last?["end"] == size)
        let second = try await Harness.make(origin: origin, directory: elsewhere)
        let before = origin.requests(to: "/four.bin").count
        let id = try await second.manager.add(resuming: data, partFile: part, options: .init(connections: 4))
        expectContent(try await second.manager.wait(for: id), size: size)
        let fetched = origin.requests(to: "/four.bin").dropFirst(before).reduce(0) { $0 + $1.bodyBytesSent }
        #expect(fetched < size, "only what was missing, and the overlaps: \(fetched) of \(size)")
        await second.shutdown()
    }

    @Test("a part file that is not what the resume data says is caught before a byte is appended")
    func wrongPartFileCaught() async throws {
        let elsewhere = TemporaryDirectory()
        let size = 2_000_000
        let (data, part, origin) = try await Self.pausedElsewhere("/wrong.bin", size: size, elsewhere: elsewhere)
        let blob = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let onDisk = try #require(blob["bytesOnDisk"] as? Int)
        // Bytes just before the resume point that the server never sent.
        let handle = try FileHandle(forWritingTo: part)
        try handle.seek(toOffset: UInt64(onDisk - 1000))
        try handle.write(contentsOf: Data(repeating: 0xAB, count: 500))
        try handle.close()
        let second = try await Harness.make(origin: origin, directory: elsewhere)
        let events = await second.manager.events()
        let id = try await second.manager.add(resuming: data, partFile: part)
        var restarts: [RestartReason] = []
        for await event in events where event.id == id {
            if case .restarted(let reason) = event.change { restarts.append(reason) }
            if case .status(.completed) = event.change { break }
        }
        #expect(restarts == [.contentMismatch])
        expectContent(elsewhere.file("wrong.bin"), size: size)
        await second.shutdown()
    }

    @Test("refused: a part file shorter than the data says, another format, a newer version, a busy destination")
    func refusals() async throws {
        let elsewhere = TemporaryDirectory()
        let (data, part, origin) = try await Self.pausedElsewhere("/r.bin", size: 1_000_000, elsewhere: elsewhere)
        let second = try await Harness.make(origin: origin, directory: elsewhere)
        let short = elsewhere.file("short.bin.part")
        try Data(repeating: 0, count: 10).write(to: short)
        await #expect(throws: DownloadError.self) { try await second.manager.add(resuming: data, partFile: short) }
        #expect(FileManager.default.fileExists(atPath: short.path), "a refused part file is left where it was")
        await #expect(throws: DownloadError.self) {
            try await second.manager.add(resuming: Data("{\"format\":\"other\"}".utf8), partFile: part)
        }
        var newer = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        newer["version"] = 2
        let newerData = try JSONSerialization.data(withJSONObject: newer)
        do {
            _ = try await second.manager.add(resuming: newerData, partFile: part)
            Issue.record("a newer version was taken")
        } catch {
            #expect(error.summary.contains("newer") || error.description.contains("newer"), "\(error)")
        }
        let id = try await second.manager.add(resuming: data, partFile: part, paused: true)
        #expect(await second.manager.state(of: id) == .paused)
        let copy = elsewhere.file("copy.part")
        try FileManager.default.copyItem(at: try #require(await second.manager.partFile(for: id)), to: copy)
        await #expect(throws: DownloadError.self) {
            try await second.manager.add(resuming: data, partFile: copy, to: elsewhere.file("r.bin"))
        }
        await #expect(throws: DownloadError.self) { try await second.manager.resumeData(for: DownloadID(rawValue: 99)) }
        await second.shutdown()
    }
}
