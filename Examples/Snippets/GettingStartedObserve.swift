// Many small files: a handler instead of a stream, in the DocC article GettingStarted.md.
// snippet.hide
import HaulKit
import Synchronization

func gettingStartedObserve(manager: DownloadManager) async {
    // snippet.show
    let finished = Mutex(0)
    let observation = await manager.observeEvents { event in
        if case .status(.completed) = event.change { finished.withLock { $0 += 1 } }
    }
    // …
    observation.cancel()
    // snippet.hide
}
