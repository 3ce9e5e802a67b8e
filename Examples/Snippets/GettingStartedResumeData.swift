// Portable resume data, in the DocC article GettingStarted.md ("For apps").
// snippet.hide
import Foundation
import HaulKit

func gettingStartedResumeData(
    manager: DownloadManager, id: DownloadID, other: DownloadManager, copied: URL
) async throws {
    // snippet.show
    try await manager.pause(id)
    let data = try await manager.resumeData(for: id)  // a few hundred bytes of JSON: no path, no login
    let part = await manager.partFile(for: id)!  // take both where you like: another process, another machine

    // There, another manager continues from the copy, checking the server's bytes before appending any:
    let resumed = try await other.add(resuming: data, partFile: copied)
    // snippet.hide
    print(part.path, resumed)
}
