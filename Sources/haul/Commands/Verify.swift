import ArgumentParser
import Foundation
import HaulKit

/// `haul verify`: read completed files back and compare them with what Haul wrote.
struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read completed files back whole and compare their SHA-256 with the one recorded.",
        discussion: """
            Each file Haul completes keeps the SHA-256 of its bytes. A file that differs \
            or is gone is listed, and the exit status is 3; a file whose time changed but \
            whose bytes did not is fine. 'haul get' of the same URL fetches a changed file again.

            Examples:
              haul verify --all
              haul verify 3 7
              haul verify --all --json | jq -c 'select(.result != "ok")'
            """)

    @OptionGroup var selection: Selection

    @Flag(help: "One JSON object per download.")
    var json = false

    @OptionGroup var state: StateOptions

    func run() async throws {
        let manager = try await state.openEditor()
        let ids = try await selection.resolve(in: manager, states: [.completed])
        let results: [FileVerification]
        do {
            results = try await manager.verify(ids)
        } catch {
            Console.error(error.description)
            await manager.shutdown()
            throw ExitStatus.forFailures([error])
        }
        await manager.shutdown()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var text = ""
        for verification in results {
            if json {
                text += String(decoding: try encoder.encode(Line(verification)), as: UTF8.self) + "\n"
            } else {
                text += Self.describe(verification) + "\n"
            }
        }
        Console.out(text)
        let bad = results.filter { !$0.isGood }.count
        if !json, !results.isEmpty {
            Console.status(
                bad == 0
                    ? "haul: \(results.count) checked, all as Haul wrote them\n"
                    : "haul: \(bad) of \(results.count) differ from what Haul wrote; run their 'haul get' again\n")
        }
        if bad > 0 { throw ExitStatus.checksumMismatch }
    }

    /// `#ID RESULT PATH: detail`.
    static func describe(_ verification: FileVerification) -> String {
        let path = verification.file?.path ?? "-"
        let id = "#\(verification.id)"
        switch verification.result {
        case .matches: return "\(id) ok \(path)"
        case .differs(let actual):
            let pieces =
                verification.badPieces.map { bad in
                    "; bad pieces: " + bad.prefix(20).map(String.init).joined(separator: ", ")
                        + (bad.count > 20 ? ", … (\(bad.count))" : "")
                        + " ('haul repair \(verification.id)' fetches only those)"
                } ?? ""
            return "\(id) DIFFERS \(path): its sha256 is \(actual), Haul wrote \(verification.expected ?? "?")\(pieces)"
        case .missing(let how): return "\(id) MISSING \(path): it \(how)"
        case .noDigest(let sizeMatches):
            return sizeMatches
                ? "\(id) ok \(path) (size only: completed before Haul kept digests)"
                : "\(id) DIFFERS \(path): another size (completed before Haul kept digests)"
        case .notCompleted(let state): return "\(id) \(state.rawValue), not completed: nothing to read"
        case .unreadable(let error): return "\(id) UNREADABLE \(path): \(error.summary)"
        }
    }

    /// One download as `haul verify --json` prints it.
    struct Line: Encodable {
        var id: Int64
        var file: String?
        /// `ok`, `differs`, `missing`, `noDigest`, `notCompleted` or `unreadable`.
        var result: String
        var expected: String?
        var actual: String?
        var detail: String?
        /// The pieces that fail their hashes, when the file has piece hashes.
        var badPieces: [Int]?

        init(_ verification: FileVerification) {
            badPieces = verification.badPieces
            id = verification.id.rawValue
            file = verification.file?.path
            expected = verification.expected
            switch verification.result {
            case .matches: result = "ok"
            case .differs(let actual):
                result = "differs"
                self.actual = actual
            case .missing(let how):
                result = "missing"
                detail = how
            case .noDigest(let sizeMatches):
                result = sizeMatches ? "noDigest" : "differs"
                detail = "completed before Haul kept digests: size only"
            case .notCompleted(let state):
                result = "notCompleted"
                detail = state.rawValue
            case .unreadable(let error):
                result = "unreadable"
                detail = error.summary
            }
        }
    }
}
