import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("A file already at the destination")
struct ExistingFileTests {
    static let mine = Data("the user's own file\n".utf8)

    /// Puts the user's file at `name` in the harness directory.
    static func place(_ harness: Harness, _ name: String) throws -> URL {
        let url = harness.directory.url.appendingPathComponent(name)
        try mine.write(to: url)
        return url
    }

    @Test("given a file: replaced by default and with replace, kept with keep (nothing fetched), renamed with rename")
    func fileDestination() async throws {
        let harness = try await Harness.make()
        for policy in [ExistingFilePolicy.automatic, .replace, .keep, .rename] {
            let name = "\(policy.rawValue).bin"
            let existing = try Self.place(harness, name)
            let url = harness.origin.serve("/\(name)", size: 30_000)
            let id = try await harness.manager.add(url, to: .file(existing), options: .init(existingFile: policy))
            let file = try await harness.manager.wait(for: id)
            switch policy {
            case .automatic, .replace:
                #expect(file == existing)
                expectContent(existing, size: 30_000)
            case .keep:
                #expect(file == existing)
                #expect(try Data(contentsOf: existing) == Self.mine)
                #expect(harness.origin.requests(to: "/\(name)").isEmpty)
                #expect(await harness.manager.snapshot(id)?.state == .completed)
                #expect(await harness.manager.snapshot(id)?.totalBytes == Int64(Self.mine.count))
            case .rename:
                #expect(file.lastPathComponent == "rename (1).bin", "\(file)")
                #expect(try Data(contentsOf: existing) == Self.mine)
                expectContent(file, size: 30_000)
            }
        }
        await harness.shutdown()
    }

    @Test("into a directory: renamed by default, replaced with replace, kept with keep")
    func directoryDestination() async throws {
        let harness = try await Harness.make()
        for policy in [ExistingFilePolicy.automatic, .replace, .keep] {
            let name = "d-\(policy.rawValue).bin"
            let existing = try Self.place(harness, name)
            let url = harness.origin.serve("/\(name)", size: 30_000)
            let id = try await harness.manager.add(url, options: .init(existingFile: policy))
            let file = try await harness.manager.wait(for: id)
            switch policy {
            case .automatic, .rename:
                #expect(file.lastPathComponent == "d-automatic (1).bin", "\(file)")
                #expect(try Data(contentsOf: existing) == Self.mine)
                expectContent(file, size: 30_000)
            case .replace:
                #expect(file == existing)
                expectContent(existing, size: 30_000)
            case .keep:
                #expect(file == existing)
                #expect(try Data(contentsOf: existing) == Self.mine)
                #expect(!FileManager.default.fileExists(atPath: existing.path + ".part"))
            }
        }
        await harness.shutdown()
    }
}
