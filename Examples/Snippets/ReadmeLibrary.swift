// The library sample of README.md ("The library"). Lines between `snippet.hide` and `snippet.show` are compiled but
// not quoted; a test checks that every Swift block of README.md and of HaulKit's DocC catalogue is one of these
// files' shown lines (Tests/HaulKitTests/Package/DocumentationSampleTests.swift).
// snippet.hide
import Foundation
// snippet.show
import HaulKit

// snippet.hide
func readmeLibrary(downloads: URL) async throws {
    // snippet.show
    let manager = try await DownloadManager(configuration: .init(downloadDirectory: downloads))
    let id = try await manager.add(
        URL(string: "https://example.com/big.iso")!,
        options: .init(checksum: try Checksum(parsing: "sha256=9f86d0…"), metadata: ["title": "Big ISO"]))
    for await event in await manager.events(for: id) {
        if case .progress(let p) = event.change { print(p.receivedBytes, p.expectedBytes ?? -1, p.fraction ?? 0) }
    }
    let file = try await manager.wait(for: id)  // or throws DownloadError: what happened, what to do, a stable code
    await manager.shutdown()
    // snippet.hide
    print(file.path)
}
