// The sample of HaulKit's DocC overview (Sources/HaulKit/HaulKit.docc/HaulKit.md).
// snippet.hide
import Foundation
// snippet.show
import HaulKit

// snippet.hide
func overview(downloads: URL) async throws {
    // snippet.show
    let manager = try await DownloadManager(configuration: .init(downloadDirectory: downloads))
    let id = try await manager.add(URL(string: "https://example.com/big.iso")!)
    let file = try await manager.wait(for: id)
    await manager.shutdown()
    // snippet.hide
    print(file.path)
}
