// A Foundation `Progress` per download, in the DocC article GettingStarted.md ("For apps").
// snippet.hide
import Foundation
import HaulKit

func gettingStartedProgress(manager: DownloadManager, id: DownloadID) async throws {
    // snippet.show
    let progress = try await manager.progress(for: id)
    print(progress.fractionCompleted)  // or ProgressView(progress) in SwiftUI, UIProgressView(observedProgress:)
    progress.pause()  // pauses the download; resume() resumes it, cancel() cancels it
    // snippet.hide
}
