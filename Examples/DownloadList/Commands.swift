import Foundation
import HaulKit

/// The commands read on standard input: `add URL`, `pause ID`, `resume ID`, `delete ID`, `quit`.
enum Commands {
    enum Outcome { case done, quit }

    /// Standard input's lines, read on a thread of their own (reading blocks).
    static func lines() -> AsyncStream<String> {
        AsyncStream { continuation in
            let thread = Thread {
                while let line = readLine() { continuation.yield(line) }
                continuation.finish()
            }
            thread.start()
        }
    }

    /// Performs one command on the model; says what went wrong on standard error.
    @MainActor
    static func perform(_ line: String, on model: DownloadListModel) async -> Outcome {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard let command = words.first else { return .done }
        let argument = words.dropFirst().first
        let id = argument.flatMap { Int64($0.trimmingCharacters(in: CharacterSet(charactersIn: "#"))) }
            .map(DownloadID.init(rawValue:))
        switch (command, id) {
        case ("quit", _):
            return .quit
        case ("add", _):
            guard let url = argument.flatMap(URL.init(string:)) else { return complain("add takes a URL") }
            await model.add(url)
        case ("pause", let id?):
            await model.pause(id)
        case ("resume", let id?):
            await model.resume(id)
        case ("delete", let id?):
            await model.delete(id)
        default:
            return complain("commands: add URL, pause ID, resume ID, delete ID, quit")
        }
        if let error = model.lastError {
            model.lastError = nil
            return complain(error.description)
        }
        return .done
    }

    private static func complain(_ message: String) -> Outcome {
        FileHandle.standardError.write(Data("DownloadList: \(message)\n".utf8))
        return .done
    }
}
