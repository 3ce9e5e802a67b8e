import Foundation
import HaulKit

// DownloadList: the downloads screen of an app, in a terminal. The same `DownloadListModel` (HaulKit) would back a
// SwiftUI `List` on Apple platforms (README.md here shows it); on Linux, `LiveTable` redraws the list when the model
// says it changed.
//
//     swift run DownloadList [--state-dir DIR] [-d DIR] [URL...]
//
// Downloads the URLs given (and any the state directory still has), showing a live table; commands on standard
// input, one a line: `add URL`, `pause ID`, `resume ID`, `delete ID`, `quit`. It ends when nothing is queued or
// running and standard input has ended (or at `quit`). Killed at any moment (Ctrl-C, `kill -9`), the next run with
// the same state directory shows the same list and continues the downloads.

/// The command line: `--state-dir DIR`, `-d DIR`, URLs.
struct Options {
    var stateDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        .appendingPathComponent(".download-list")
    var downloadDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    var urls: [URL] = []

    init(_ arguments: [String]) throws {
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            switch argument {
            case "--state-dir", "-d":
                guard let value = rest.popFirst() else { throw UsageError("\(argument) needs a directory") }
                let url = URL(fileURLWithPath: value, isDirectory: true)
                if argument == "-d" { downloadDirectory = url } else { stateDirectory = url }
            case "-h", "--help":
                throw UsageError("usage: DownloadList [--state-dir DIR] [-d DIR] [URL...]")
            default:
                guard let url = URL(string: argument), url.scheme == "http" || url.scheme == "https" else {
                    throw UsageError("'\(argument)' is not an http or https URL")
                }
                urls.append(url)
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// What standard input has said so far.
@MainActor
final class InputState {
    var ended = false
    var quit = false
}

@MainActor
func runDownloadList() async -> Int32 {
    let options: Options
    do {
        options = try Options(Array(CommandLine.arguments.dropFirst()))
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        return 64
    }
    let manager: DownloadManager
    do {
        manager = try await DownloadManager(
            configuration: .init(
                downloadDirectory: options.downloadDirectory,
                databaseURL: options.stateDirectory.appendingPathComponent("downloads.sqlite")))
    } catch {
        FileHandle.standardError.write(Data("DownloadList: \(error)\n".utf8))
        return 1
    }
    let model = DownloadListModel(manager: manager)
    let following = Task { await model.run() }
    for url in options.urls { await model.add(url) }
    let table = LiveTable(model: model)
    table.start()
    let input = InputState()
    let commands = Commands.lines()
    Task {
        for await line in commands {
            if await Commands.perform(line, on: model) == .quit {
                input.quit = true
                break
            }
        }
        input.ended = true
    }
    // Until `quit`, or until standard input has ended and nothing is queued or running.
    while !input.quit, !(input.ended && model.isLoaded && model.rows.allSatisfy { !$0.canPause }) {
        try? await Task.sleep(for: .milliseconds(100))
    }
    table.stop()
    following.cancel()
    await manager.shutdown()
    return model.rows.contains { $0.state == .failed } ? 1 : 0
}

exit(await runDownloadList())
