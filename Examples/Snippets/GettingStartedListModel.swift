// The model of a downloads screen, in the DocC article GettingStarted.md ("For apps").
// snippet.hide
import Foundation
import HaulKit

@MainActor
func gettingStartedListModel(manager: DownloadManager) async {
    // snippet.show
    let model = DownloadListModel(manager: manager)
    Task { await model.run() }  // SwiftUI: .task { await model.run() }
    await model.add(URL(string: "https://example.com/big.iso")!)
    for row in model.rows {
        print(row.name, row.state, row.fraction ?? 0, row.canPause ? "pause" : "", row.canResume ? "resume" : "")
    }
    // snippet.hide
}
