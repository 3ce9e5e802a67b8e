import Foundation
import HaulTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension EndToEnd {
    /// The part file and the state database touched between runs, a full disk, a read-only destination: each ends
    /// byte-exact once the user fixes the cause, or with a clear error naming it, never with a success over wrong
    /// bytes.
    @Suite("haul with its part file and state in trouble")
    struct StateTroubleCommandTests {
        static let size = 6 * 1024 * 1024 + 7

        /// An origin serving `/t.bin` slowly, a directory, the arguments, and a first run interrupted at 2 MiB. Its
        /// response stops at 3 MiB (later ones are whole), so a Ctrl-C that comes late still finds a part file.
        static func interrupted() async throws -> (TestOrigin, TemporaryDirectory, [String]) {
            let origin = try await TestOrigin.start()
            let url = origin.serve("/t.bin", size: size)
            origin.setFaults {
                $0.bytesPerSecond = 4 * 1024 * 1024
                $0.stallAfter = 3 << 20
                $0.stallTimes = 1
            }
            let directory = TemporaryDirectory()
            let arguments = [
                "get", "-q", "-x", "1", "--state-dir", directory.file("state").path, "-d", directory.path,
                url.absoluteString,
            ]
            let first = try ChildProcess(product: "haul", arguments: arguments)
            if !(try await waitForFile(directory.file("t.bin.part").path, atLeast: 2 << 20)) {
                Issue.record("no progress")
            }
            first.send(SIGINT)
            _ = try await first.wait()
            origin.setFaults { $0.bytesPerSecond = nil }
            return (origin, directory, arguments)
        }

        static func expectComplete(_ directory: TemporaryDirectory) throws {
            let data = try #require(directory.contents("t.bin"))
            #expect(TestContent.firstMismatch(data, size: size) == nil)
        }

        @Test(
            "the part file truncated, extended with garbage or deleted between runs: byte-exact",
            arguments: ["truncated", "garbage", "deleted"])
        func partFileTouched(how: String) async throws {
            let (origin, directory, arguments) = try await Self.interrupted()
            let part = directory.file("t.bin.part")
            switch how {
            case "truncated": try FileHandle(forWritingTo: part).truncate(atOffset: 100_000)
            case "garbage":
                let handle = try FileHandle(forWritingTo: part)
                try handle.seekToEnd()
                try handle.write(contentsOf: Data(repeating: 0xEE, count: 300_000))
                try handle.close()
            default: try FileManager.default.removeItem(at: part)
            }
            let rerun = try await ChildProcess.run("haul", arguments)
            #expect(rerun.status == 0, "\(rerun.error)")
            try Self.expectComplete(directory)
            if how == "truncated" {
                #expect(origin.requests(to: "/t.bin").last?.range == "bytes=\(100_000 - 64 * 1024)-")
            }
            await origin.stop()
        }

        @Test("the state database deleted: the part file is neither trusted nor deleted; the file comes byte-exact")
        func stateDeleted() async throws {
            let (origin, directory, arguments) = try await Self.interrupted()
            let leftover = try #require(directory.contents("t.bin.part"))
            try FileManager.default.removeItem(at: directory.file("state"))
            let rerun = try await ChildProcess.run("haul", arguments)
            #expect(rerun.status == 0, "\(rerun.error)")
            // The part file has no record: it may be another state directory's, so it is kept, and the file takes
            // the next free name.
            let data = try #require(directory.contents("t (1).bin"))
            #expect(TestContent.firstMismatch(data, size: Self.size) == nil)
            #expect(directory.contents("t.bin.part") == leftover)
            #expect(origin.requests(to: "/t.bin").last?.range?.hasPrefix("bytes=0-") == true, "nothing trusted")
            await origin.stop()
        }

        @Test("the state database damaged: exit 4, naming the file and what to do; the partial file is kept")
        func stateDamaged() async throws {
            let (origin, directory, arguments) = try await Self.interrupted()
            let state = directory.file("state")
            for name in try FileManager.default.contentsOfDirectory(atPath: state.path) where name.contains("-wal") {
                try FileManager.default.removeItem(at: state.appendingPathComponent(name))
            }
            try Data(repeating: 0x42, count: 8192).write(to: state.appendingPathComponent("haul.sqlite"))
            let rerun = try await ChildProcess.run("haul", arguments)
            #expect(rerun.status == 4, "\(rerun.error)")
            #expect(rerun.error.contains("haul.sqlite") && rerun.error.contains("damaged"), "\(rerun.error)")
            #expect(rerun.error.contains("move it away"), "\(rerun.error)")
            #expect(FileManager.default.fileExists(atPath: directory.file("t.bin.part").path))
            await origin.stop()
        }

        /// The state database cut short after a killed run, its log holding its start: every command exits 4 saying
        /// it is damaged, without SQL; moved away, `--no-clobber` keeps the files already there and fetches the rest.
        @Test(
            "the state database cut short after a killed run: exit 4 saying it is damaged; moved away, the rest comes")
        func stateCutShortAfterKill() async throws {
            let origin = try await TestOrigin.start()
            let count = 120
            let size = 16 * 1024 + 3
            for index in 0..<count { origin.serve("/s\(index).bin", size: size) }
            // Slow enough that the run is killed with most of its queue left (about 4 s in all).
            origin.setFaults { $0.bytesPerSecond = 512 * 1024 }
            let directory = TemporaryDirectory()
            let list = directory.file("list.txt")
            try (0..<count).map { origin.url("/s\($0).bin").absoluteString }.joined(separator: "\n")
                .write(to: list, atomically: true, encoding: .utf8)
            let files = directory.file("files")
            let state = directory.file("state")
            let stateArguments = ["--state-dir", state.path]
            let add = try await ChildProcess.run("haul", ["add", "-d", files.path, "-i", list.path] + stateArguments)
            #expect(add.status == 0, "\(add.error)")
            let run = try ChildProcess(product: "haul", arguments: ["run", "-q", "-j", "1"] + stateArguments)
            let deadline = ContinuousClock.now + .seconds(60)
            var done: [String] = []
            while done.count < 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                done = (try? FileManager.default.contentsOfDirectory(atPath: files.path)) ?? []
            }
            run.send(SIGKILL)
            _ = try await run.wait()
            done = try FileManager.default.contentsOfDirectory(atPath: files.path).filter { !$0.hasSuffix(".part") }
            #expect(done.count >= 3 && done.count < count, "\(done.count) files when killed")
            let database = state.appendingPathComponent("haul.sqlite")
            #expect(FileManager.default.fileExists(atPath: database.path + "-wal"), "a killed run leaves its log")
            try FileHandle(forWritingTo: database).truncate(atOffset: 8192)

            for command in [["list"], ["run", "-q"], ["get", "-q", "-d", files.path, "-i", list.path]] {
                let result = try await ChildProcess.run("haul", command + stateArguments)
                #expect(result.status == 4, "\(command): \(result.error)")
                #expect(result.error.contains("haul.sqlite: it is damaged"), "\(command): \(result.error)")
                #expect(result.error.contains("move it away"), "\(command): \(result.error)")
                #expect(!result.error.contains("SELECT"), "no SQL: \(result.error)")
            }

            // The advice followed: the database moved away with whatever lies beside it, the same list again.
            for name in try FileManager.default.contentsOfDirectory(atPath: state.path)
            where name.hasPrefix("haul.sqlite") {
                try FileManager.default.moveItem(
                    at: state.appendingPathComponent(name), to: state.appendingPathComponent(name + ".damaged"))
            }
            origin.setFaults { $0.bytesPerSecond = nil }
            // Each file already there, as it is (its inode and time): --no-clobber keeps it, never writes it again.
            func identities() throws -> [String] {
                try done.map { name in
                    let path = files.appendingPathComponent(name).path
                    let attributes = try FileManager.default.attributesOfItem(atPath: path)
                    return "\(attributes[.systemFileNumber] ?? "") \(attributes[.modificationDate] ?? "")"
                }
            }
            let before = try identities()
            let again = try await ChildProcess.run(
                "haul", ["get", "-q", "--no-clobber", "-d", files.path, "-i", list.path] + stateArguments)
            #expect(again.status == 0, "\(again.error)")
            let names = try FileManager.default.contentsOfDirectory(atPath: files.path).sorted()
            #expect(names == (0..<count).map { "s\($0).bin" }.sorted(), "no second copies")
            for index in 0..<count {
                let data = try #require(
                    FileManager.default.contents(atPath: files.appendingPathComponent("s\(index).bin").path))
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil, "s\(index).bin")
            }
            #expect(try identities() == before, "the files already there kept as they were")
            await origin.stop()
        }

        @Test("a full disk, then space freed: exit 4 saying so, then resumed where it stopped, byte-exact")
        func fullDisk() async throws {
            let directory = TemporaryDirectory()
            guard let mount = try await EndToEnd.smallFileSystem("3m", named: "small", in: directory) else { return }
            let origin = try await TestOrigin.start()
            let url = origin.serve("/t.bin", size: Self.size)
            let arguments = [
                "get", "-x", "1", "--state-dir", directory.file("state").path, "-d", mount.path,
                // No floor: the first write that finds no room makes it wait, a second at most (docs/service.md).
                "--min-free-space", "0", "--space-wait", "1", "--space-check-interval", "0.2", url.absoluteString,
            ]
            let full = try await ChildProcess.run("haul", arguments)
            #expect(full.status == 4, "\(full.error)")
            #expect(full.error.contains("no space left"), "\(full.error)")
            let kept = try #require(fileSize(mount.appendingPathComponent("t.bin.part").path))
            #expect(kept > 1 << 20, "what was downloaded is kept")
            #expect(try await ChildProcess.run(path: "/bin/mount", ["-o", "remount,size=16m", mount.path]).status == 0)
            let freed = try await ChildProcess.run("haul", arguments)
            #expect(freed.status == 0, "\(freed.error)")
            let data = try #require(FileManager.default.contents(atPath: mount.appendingPathComponent("t.bin").path))
            #expect(TestContent.firstMismatch([UInt8](data), size: Self.size) == nil)
            #expect(origin.requests(to: "/t.bin").last?.range == "bytes=\(kept - 64 * 1024)-", "resumed")
            _ = try await ChildProcess.run(path: "/bin/umount", [mount.path])
            await origin.stop()
        }

        /// The state database's file system short of room (under its floor, though SQLite could still write): the
        /// downloads wait as they do for their own file system, asking the server nothing, and give up naming it;
        /// with room again, the same command completes.
        @Test("the state database's file system short of room: nothing fetched; exit 4 naming it; with room, all come")
        func stateFileSystemFull() async throws {
            let directory = TemporaryDirectory()
            guard let mount = try await EndToEnd.smallFileSystem("32m", named: "statefs", in: directory) else { return }
            let origin = try await TestOrigin.start()
            let count = 12
            let size = 16 * 1024 + 1
            for index in 0..<count { origin.serve("/q\(index).bin", size: size) }
            let list = directory.file("list.txt")
            try (0..<count).map { origin.url("/q\($0).bin").absoluteString }.joined(separator: "\n")
                .write(to: list, atomically: true, encoding: .utf8)
            // 800 KiB left: room for SQLite, under the state's floor (5% of 32 MiB, the default floor being smaller
            // than 16 MiB there).
            let free = try #require(
                try FileManager.default.attributesOfFileSystem(forPath: mount.path)[.systemFreeSize] as? NSNumber)
            let filler = mount.appendingPathComponent("filler")
            try Data(count: free.intValue - 800 * 1024).write(to: filler)
            let files = directory.file("files")
            let arguments = [
                "get", "-q", "-d", files.path, "--state-dir", mount.appendingPathComponent("state").path,
                "--space-wait", "1", "--space-check-interval", "0.2", "-i", list.path,
            ]
            let short = try await ChildProcess.run("haul", arguments)
            #expect(short.status == 4, "\(short.error)")
            #expect(short.error.contains("no space left") && short.error.contains(mount.path), "\(short.error)")
            let asked = (0..<count).map { origin.requests(to: "/q\($0).bin").count }.reduce(0, +)
            #expect(asked == 0, "nothing fetched while its end could not be recorded")

            try FileManager.default.removeItem(at: filler)
            let roomy = try await ChildProcess.run("haul", arguments)
            #expect(roomy.status == 0, "\(roomy.error)")
            for index in 0..<count {
                let data = try #require(
                    FileManager.default.contents(atPath: files.appendingPathComponent("q\(index).bin").path))
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil, "q\(index).bin")
            }
            _ = try await ChildProcess.run(path: "/bin/umount", [mount.path])
            await origin.stop()
        }

        @Test("a read-only destination: exit 4 naming it; once writable, the same command completes")
        func readOnlyDestination() async throws {
            guard getuid() != 0 || FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
                print("skipped: root without setpriv writes anywhere")
                return
            }
            let origin = try await TestOrigin.start()
            let url = origin.serve("/t.bin", size: 200_000)
            let directory = TemporaryDirectory()
            let locked = directory.file("locked")
            try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked.path)
            // As root, without the capability that writes anywhere.
            let haul = try ChildProcess.locate("haul").path
            let (program, prefix) =
                getuid() == 0
                ? (
                    "/usr/bin/setpriv",
                    [
                        "--inh-caps=-dac_override,-dac_read_search",
                        "--bounding-set=-dac_override,-dac_read_search", haul,
                    ]
                ) : (haul, [])
            let arguments = [
                "get", "-x", "1", "--state-dir", directory.file("state").path, "-d", locked.path, url.absoluteString,
            ]
            let refused = try await ChildProcess.run(path: program, prefix + arguments)
            #expect(refused.status == 4, "\(refused.error)")
            #expect(refused.error.contains(locked.path) && refused.error.contains("ermission"), "\(refused.error)")
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked.path)
            let allowed = try await ChildProcess.run(path: program, prefix + arguments)
            #expect(allowed.status == 0, "\(allowed.error)")
            let data = try #require(FileManager.default.contents(atPath: locked.appendingPathComponent("t.bin").path))
            #expect(TestContent.firstMismatch([UInt8](data), size: 200_000) == nil)
            await origin.stop()
        }
    }
}
