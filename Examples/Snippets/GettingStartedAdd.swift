// "Add a download", in the DocC article GettingStarted.md: the options in the order `DownloadOptions.init` takes them.
// snippet.hide
import Foundation
// snippet.show
import HaulKit

// snippet.hide
func gettingStartedAdd(downloads: URL) async throws -> (DownloadManager, DownloadID) {
    // snippet.show
    var configuration = DownloadManager.Configuration(downloadDirectory: downloads)
    configuration.maxConcurrentDownloads = 4
    let manager = try await DownloadManager(configuration: configuration)

    let id = try await manager.add(
        URL(string: "https://example.com/big.iso")!,
        options: .init(checksum: try Checksum(parsing: "sha256=9f86d0…"), connections: 8))
    // snippet.hide
    return (manager, id)
}
