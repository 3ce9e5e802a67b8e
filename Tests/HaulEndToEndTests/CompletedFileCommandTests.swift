import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// A completed file that the user (or a tool) changed, truncated, touched or deleted: the next `haul get` never
    /// says "already complete" over it, and `haul verify` tells.
    @Suite("haul and completed files the user touched")
    struct CompletedFileCommandTests {
        static let size = 3 * 1024 * 1024 + 17

        /// An origin serving `/f.bin`, a directory, and the arguments of `haul get` for it (`extra` first).
        static func setUp(_ extra: [String] = []) async throws -> (TestOrigin, TemporaryDirectory, [String]) {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/f.bin", size: size)
            let directory = TemporaryDirectory()
            let arguments =
                ["get", "-x", "1", "--state-dir", directory.file("state").path, "-d", directory.path]
                + extra + [url.absoluteString]
            return (origin, directory, arguments)
        }

        static func expectComplete(_ directory: TemporaryDirectory) throws {
            let data = try #require(directory.contents("f.bin"))
            #expect(TestContent.firstMismatch(data, size: size) == nil)
        }

        @Test("truncated to 1 MiB: resumed from its bytes (one range request), byte-exact, with a line saying so")
        func truncated() async throws {
            let (origin, directory, arguments) = try await Self.setUp()
            #expect(try await ChildProcess.run("haul", arguments).status == 0)
            try FileHandle(forWritingTo: directory.file("f.bin")).truncate(atOffset: 1 << 20)
            let rerun = try await ChildProcess.run("haul", arguments)
            #expect(rerun.status == 0, "\(rerun.error)")
            #expect(rerun.error.contains("is 1048576 bytes now"), "\(rerun.error)")
            #expect(!rerun.error.contains("already complete"), "\(rerun.error)")
            try Self.expectComplete(directory)
            let requests = origin.requests(to: "/f.bin")
            #expect(requests.count == 2)
            #expect(requests.last?.range == "bytes=\((1 << 20) - 64 * 1024)-", "the overlap check at 1 MiB")
            await origin.stop()
        }

        @Test("bytes changed inside (same size): fetched again and replaced; the edited file is never complete")
        func edited() async throws {
            let (origin, directory, arguments) = try await Self.setUp()
            #expect(try await ChildProcess.run("haul", arguments).status == 0)
            let handle = try FileHandle(forWritingTo: directory.file("f.bin"))
            try handle.seek(toOffset: 2_000_000)
            try handle.write(contentsOf: Data("edited".utf8))
            try handle.close()
            let verify = try await ChildProcess.run(
                "haul", ["verify", "--all", "--state-dir", directory.file("state").path])
            #expect(verify.status == 3, "\(verify.output)")
            #expect(verify.output.contains("DIFFERS"), "\(verify.output)")
            let rerun = try await ChildProcess.run("haul", arguments)
            #expect(rerun.status == 0, "\(rerun.error)")
            #expect(rerun.error.contains("was modified"), "\(rerun.error)")
            try Self.expectComplete(directory)
            #expect(origin.requests(to: "/f.bin").count == 2)
            let again = try await ChildProcess.run(
                "haul", ["verify", "--all", "--state-dir", directory.file("state").path])
            #expect(again.status == 0, "\(again.output)")
            await origin.stop()
        }

        @Test("touched or copied back: read, not fetched; deleted: fetched again")
        func touchedAndDeleted() async throws {
            let (origin, directory, arguments) = try await Self.setUp()
            #expect(try await ChildProcess.run("haul", arguments).status == 0)
            let path = directory.file("f.bin").path
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: path)
            let touched = try await ChildProcess.run("haul", arguments)
            #expect(touched.status == 0, "\(touched.error)")
            #expect(origin.requests(to: "/f.bin").count == 1, "nothing fetched for a file whose bytes are the same")
            // A copy put back: another inode, the same bytes.
            let copy = directory.file("copy").path
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.moveItem(atPath: copy, toPath: path)
            #expect(try await ChildProcess.run("haul", arguments).status == 0)
            #expect(origin.requests(to: "/f.bin").count == 1)
            try FileManager.default.removeItem(atPath: path)
            let deleted = try await ChildProcess.run("haul", arguments)
            #expect(deleted.status == 0, "\(deleted.error)")
            #expect(deleted.error.contains("is gone"), "\(deleted.error)")
            try Self.expectComplete(directory)
            #expect(origin.requests(to: "/f.bin").count == 2)
            let list = try await ChildProcess.run("haul", ["list", "--state-dir", directory.file("state").path])
            #expect(list.output.split(separator: "\n").count == 2, "one download, not a second: \(list.output)")
            await origin.stop()
        }

        @Test("--no-clobber keeps a changed file and fails (exit 4); a directory in its place is refused (exit 4)")
        func keptOrRefused() async throws {
            let (origin, directory, arguments) = try await Self.setUp()
            #expect(try await ChildProcess.run("haul", arguments).status == 0)
            let path = directory.file("f.bin").path
            try FileHandle(forWritingTo: directory.file("f.bin")).truncate(atOffset: 100)
            let kept = try await ChildProcess.run("haul", ["get", "--no-clobber"] + arguments.dropFirst())
            #expect(kept.status == 4, "\(kept.error)")
            #expect(kept.error.contains("--no-clobber"), "\(kept.error)")
            #expect(fileSize(path) == 100, "kept as it is")
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let refused = try await ChildProcess.run("haul", arguments)
            #expect(refused.status == 4, "\(refused.error)")
            #expect(refused.error.contains("a directory"), "\(refused.error)")
            // --overwrite never replaces a directory either: it is not offered.
            #expect(!refused.error.contains("--overwrite"), "\(refused.error)")
            let overwriting = try await ChildProcess.run("haul", ["get", "--overwrite"] + arguments.dropFirst())
            #expect(overwriting.status == 4, "\(overwriting.error)")
            #expect(origin.requests(to: "/f.bin").count == 1)
            await origin.stop()
        }

        @Test("--no-clobber over the user's own file says it kept it; --overwrite later fetches the server's copy")
        func keptThenOverwritten() async throws {
            let (origin, directory, arguments) = try await Self.setUp()
            let mine = Data("the user's own file\n".utf8)
            try mine.write(to: directory.file("f.bin"))
            let kept = try await ChildProcess.run("haul", ["get", "--no-clobber"] + arguments.dropFirst())
            #expect(kept.status == 0, "\(kept.error)")
            #expect(kept.error.contains("kept \(directory.file("f.bin").path) as it was"), "\(kept.error)")
            #expect(!kept.error.contains("saved"), "\(kept.error)")
            #expect(directory.contents("f.bin") == Array(mine))
            let again = try await ChildProcess.run("haul", arguments)
            #expect(again.status == 0, "\(again.error)")
            #expect(directory.contents("f.bin") == Array(mine), "the stored --no-clobber stays")
            let overwritten = try await ChildProcess.run("haul", ["get", "--overwrite"] + arguments.dropFirst())
            #expect(overwritten.status == 0, "\(overwritten.error)")
            try Self.expectComplete(directory)
            #expect(directory.entries().filter { $0.hasPrefix("f") } == ["f.bin"], "no second copy")
            await origin.stop()
        }

        @Test("-N on a completed download asks the server: not newer keeps the file, nothing fetched")
        func conditional() async throws {
            let (origin, directory, arguments) = try await Self.setUp(["-N"])
            #expect(try await ChildProcess.run("haul", arguments).status == 0)
            let again = try await ChildProcess.run("haul", arguments)
            #expect(again.status == 0, "\(again.error)")
            let requests = origin.requests(to: "/f.bin")
            #expect(requests.count == 2, "the server was asked")
            #expect(requests.last?.header("If-Modified-Since") != nil)
            #expect(origin.bodyBytesSent(to: "/f.bin") == Self.size, "nothing fetched the second time")
            try Self.expectComplete(directory)
            await origin.stop()
        }

        @Test("haul remove --completed, --failed and --older-than prune the list, keeping the files")
        func prune() async throws {
            let (origin, directory, arguments) = try await Self.setUp()
            #expect(try await ChildProcess.run("haul", arguments).status == 0)
            let state = ["--state-dir", directory.file("state").path]
            let missing = origin.url("/missing.bin").absoluteString
            #expect(
                try await ChildProcess.run("haul", ["get", "-q", "-d", directory.path, missing] + state).status == 8)
            let recent = try await ChildProcess.run("haul", ["remove", "--completed", "--older-than", "1d"] + state)
            #expect(recent.status == 0 && recent.output.isEmpty, "nothing older than a day: \(recent.output)")
            let pruned = try await ChildProcess.run("haul", ["remove", "--completed"] + state)
            #expect(pruned.output == "#1 removed\n", "\(pruned.output) \(pruned.error)")
            try Self.expectComplete(directory)
            let list = try await ChildProcess.run("haul", ["list"] + state)
            #expect(list.output.contains("failed") && !list.output.contains("completed"), "\(list.output)")
            #expect(try await ChildProcess.run("haul", ["remove", "--failed"] + state).output == "#2 removed\n")
            await origin.stop()
        }

        @Test("a new --checksum is checked against the finished file: one it fails is fetched again and kept aside")
        func newChecksum() async throws {
            let (origin, directory, arguments) = try await Self.setUp()
            #expect(try await ChildProcess.run("haul", arguments).status == 0)
            let right = "sha256=" + TestContent.sha256(size: Self.size)
            let agreed = try await ChildProcess.run("haul", ["get", "--checksum", right] + arguments.dropFirst())
            #expect(agreed.status == 0, "\(agreed.error)")
            #expect(origin.requests(to: "/f.bin").count == 1, "the recorded SHA-256 settles it")
            let state = try #require(arguments.firstIndex(of: "--state-dir").map { Array(arguments[$0...($0 + 1)]) })
            func integrity() async throws -> String {
                let info = try await ChildProcess.run("haul", ["info", "1"] + state).output
                return info.split(separator: "\n").first { $0.contains("Integrity") }.map(String.init) ?? info
            }
            let verifiedFirst = try await integrity()
            #expect(verifiedFirst.contains("verified: sha-256 you gave"), "\(verifiedFirst)")
            let wrong = "md5=" + String(repeating: "0", count: 32)
            let refused = try await ChildProcess.run("haul", ["get", "--checksum", wrong] + arguments.dropFirst())
            #expect(refused.status == 3, "\(refused.error)")
            #expect(!refused.error.contains("starting over"), "\(refused.error)")
            try Self.expectComplete(directory)
            let bad = try #require(directory.contents("f.bin.bad"))
            #expect(TestContent.firstMismatch(bad, size: Self.size) == nil, "the server's bytes, kept aside")
            // The right checksum after the wrong one: the file kept is verified against it, without a fetch.
            let requests = origin.requests(to: "/f.bin").count
            let settled = try await ChildProcess.run("haul", ["get", "--checksum", right] + arguments.dropFirst())
            #expect(settled.status == 0, "\(settled.error)")
            #expect(origin.requests(to: "/f.bin").count == requests)
            let verifiedAgain = try await integrity()
            #expect(verifiedAgain.contains("verified: sha-256 you gave"), "\(verifiedAgain)")
            try Self.expectComplete(directory)
            // A wrong sha256: said once (the recorded SHA-256 settles it; the file is not read to say it again).
            let wrongSHA = "sha256=" + String(repeating: "0", count: 64)
            let mismatched = try await ChildProcess.run(
                "haul", ["get", "--checksum", wrongSHA] + arguments.dropFirst())
            #expect(mismatched.status == 3, "\(mismatched.error)")
            let said = mismatched.error.components(separatedBy: "does not have the sha256 given").count - 1
            #expect(said == 1, "\(mismatched.error)")
            try Self.expectComplete(directory)
            await origin.stop()
        }
    }
}
