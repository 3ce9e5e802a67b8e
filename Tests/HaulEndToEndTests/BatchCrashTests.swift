import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    @Suite("SIGKILL in the middle of a batch of small files")
    struct BatchCrashTests {
        /// Sizes around every threshold of the small-file path: empty, a byte, held in memory (up to 256 KiB), just
        /// above it (a part file), and, every 40th, one large enough to be split over connections.
        static func size(of index: Int) -> Int {
            if index % 40 == 39 { return 3 * 1024 * 1024 + 17 }
            return [0, 1, 4_096, 65_536, 200_000, 262_144, 262_145, 700_000][index % 8] + index
        }

        @Test(
            "killed while a batch arrives (held bodies, part files, chunked bodies): what it named is whole; the next run completes every file byte-exact under its name",
            arguments: ["1", "4"], [0.25, 0.6])
        func killMidBatch(connections: String, fraction: Double) async throws {
            let origin = try await TestOrigin.start()
            let count = 120
            let names = (0..<count).map { "b\($0).bin" }
            let urls = names.indices.map { index in
                var resource = TestOrigin.Resource(size: Self.size(of: index))
                // Every seventh without a length: it cannot be held until its size is known.
                resource.chunked = index % 7 == 3
                return origin.serve("/" + names[index], resource)
            }
            // Slow enough that bodies are on their way, held or in part files, when the kill comes.
            origin.setFaults { $0.bytesPerSecond = 2 * 1024 * 1024 }
            let directory = TemporaryDirectory()
            let (arguments, files) = try Self.getList(urls, connections: connections, in: directory)
            let expected = Set(names)
            let first = try ChildProcess(product: "haul", arguments: arguments)
            let target = Int(Double(count) * fraction)
            let start = ContinuousClock.now
            while Self.named(in: files.path, among: expected).count < target, first.process.isRunning,
                start.duration(to: .now) < .seconds(60)
            {
                try await Task.sleep(for: .milliseconds(2))
            }
            first.send(SIGKILL)
            _ = try await first.wait()
            #expect(first.process.terminationReason == .uncaughtSignal, "it ended before the kill")

            // What the killed run left: a file under its final name is whole; anything else is a part file.
            let left = (try? FileManager.default.contentsOfDirectory(atPath: files.path)) ?? []
            let named = left.filter(expected.contains)
            #expect(named.count >= target / 2, "killed with \(named.count) files named")
            print(
                "killed after \(start.duration(to: .now)) with \(named.count) of \(count) files named,",
                "\(left.count - named.count) part files")
            for name in named { Self.expectWhole(files.appendingPathComponent(name), index: Self.index(of: name)) }
            for name in left where !expected.contains(name) {
                #expect(name.hasSuffix(".part") || name.hasSuffix(".part.segments"), "left \(name)")
            }

            origin.setFaults { $0.bytesPerSecond = nil }
            let second = try ChildProcess(product: "haul", arguments: arguments)
            #expect(try await second.wait() == 0, "\(second.standardError)")
            // Every file under the name it was first given: no part file left, no second copy beside it, none missing
            // (a download recorded completed without its file would be skipped and missing here).
            let after = Set(try FileManager.default.contentsOfDirectory(atPath: files.path))
            #expect(
                after == expected,
                "extra: \(after.subtracting(expected).sorted()), missing: \(expected.subtracting(after).sorted())")
            for name in names { Self.expectWhole(files.appendingPathComponent(name), index: Self.index(of: name)) }
            await origin.stop()
        }

        /// The arguments of a `haul get -j 8 -x CONNECTIONS` of `urls` (from a list file) into a `files` directory, with
        /// its state, all in `directory`; and that `files` directory.
        static func getList(
            _ urls: [URL], connections: String, in directory: TemporaryDirectory
        ) throws -> (arguments: [String], files: URL) {
            let list = directory.file("list.txt")
            try urls.map(\.absoluteString).joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
            let files = directory.file("files")
            let arguments = [
                "get", "-q", "-j", "8", "-x", connections, "--state-dir", directory.file("state").path, "-d",
                files.path, "-i", list.path,
            ]
            return (arguments, files)
        }

        static func index(of name: String) -> Int { Int(name.dropFirst().dropLast(4))! }

        static func named(in directory: String, among expected: Set<String>) -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter(expected.contains)
        }

        static func expectWhole(_ url: URL, index: Int, sourceLocation: SourceLocation = #_sourceLocation) {
            guard let data = FileManager.default.contents(atPath: url.path) else {
                Issue.record("\(url.lastPathComponent) unreadable", sourceLocation: sourceLocation)
                return
            }
            let expected = TestContent.bytes(0..<size(of: index))
            // Compared whole first: the byte-by-byte search of a debug build is slow for 30 MB a run.
            let same =
                data.count == expected.count
                && data.withUnsafeBytes { got in
                    expected.withUnsafeBytes { memcmp(got.baseAddress!, $0.baseAddress!, expected.count) == 0 }
                }
            guard !same else { return }
            let mismatch = TestContent.firstMismatch([UInt8](data), size: expected.count)
            #expect(
                mismatch == nil, "\(url.lastPathComponent): \(data.count) bytes, first wrong at \(mismatch ?? -1)",
                sourceLocation: sourceLocation)
        }
    }
}
