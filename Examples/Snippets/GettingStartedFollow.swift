// "Follow it", in the DocC article GettingStarted.md.
// snippet.hide
import HaulKit

func gettingStartedFollow(manager: DownloadManager, id: DownloadID) async {
    // snippet.show
    for await event in await manager.events(for: id) {
        switch event.change {
        case .progress(let progress):
            print(progress.receivedBytes, progress.expectedBytes ?? -1, progress.fraction ?? 0)
        case .status(.completed(let file)):
            print("saved", file.path)
        case .status(.failed(let error)):
            print(error.summary, "-", error.suggestion)
        default:
            break
        }
    }
    // snippet.hide
}
