import ArgumentParser
import Foundation
import Testing

@testable import HaulKit
@testable import HaulServer
@testable import haul

/// docs/errors.md lists every ``DownloadError/Code`` with its number, name, exit status and aria2 error code: one
/// table, checked here against the code so that it cannot drift (the codes are read from DownloadError.swift itself,
/// so a new code without a row fails too).
@Suite("The table of error codes and exit statuses")
struct ErrorTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every `public static let NAME = Code(rawValue: N)` of DownloadError.swift, in order.
    static func declaredCodes() throws -> [(name: String, number: Int)] {
        let source = try String(
            contentsOf: root.appendingPathComponent("Sources/HaulKit/Model/DownloadError.swift"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"public static let (\w+) = Code\(rawValue: (\d+)\)"#)
        let range = NSRange(source.startIndex..., in: source)
        return pattern.matches(in: source, range: range).map { match in
            let text = { (index: Int) in String(source[Range(match.range(at: index), in: source)!]) }
            return (text(1), Int(text(2))!)
        }
    }

    /// The HTTP statuses an error is tried with (nil: none), to see where the mapping depends on it.
    static let statuses: [Int?] = [nil, 400, 401, 403, 404, 410, 500, 503]

    /// `value` for each status, as a cell: `8`, or `6; 8 with an HTTP status`, or `22; 24 for 401, 403`.
    static func cell(_ value: (Int?) -> String) -> String {
        let base = value(nil)
        var exceptions: [(value: String, statuses: [Int])] = []
        for case let status? in statuses where value(status) != base {
            if let index = exceptions.firstIndex(where: { $0.value == value(status) }) {
                exceptions[index].statuses.append(status)
            } else {
                exceptions.append((value(status), [status]))
            }
        }
        let all = statuses.count - 1
        return
            ([base]
            + exceptions.map { exception in
                exception.statuses.count == all
                    ? "\(exception.value) with an HTTP status"
                    : "\(exception.value) for " + exception.statuses.map(String.init).joined(separator: ", ")
            }).joined(separator: "; ")
    }

    static func error(_ code: DownloadError.Code, _ status: Int?) -> DownloadError {
        DownloadError(code: code, summary: "s", suggestion: "t", isTransient: false, httpStatus: status)
    }

    /// The row the table must have for `code`: number, name, exit status, aria2's error code.
    static func expectedRow(_ name: String, _ number: Int) -> [String] {
        let code = DownloadError.Code(rawValue: number)
        return [
            String(number), "`\(name)`",
            cell { String(ExitStatus.forFailure(error(code, $0)).rawValue) },
            cell { Aria2Status.errorCode(error(code, $0)) },
        ]
    }

    /// The first four cells of each row of the table under "## Error codes" in docs/errors.md.
    static func documentedRows() throws -> [[String]] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Error codes").dropFirst().first)
        return
            section
            .split(separator: "\n")
            .prefix { !$0.hasPrefix("## ") }
            .filter { $0.hasPrefix("| ") && $0.dropFirst(2).first?.isNumber == true }
            .map { line in
                Array(line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }.prefix(4))
            }
    }

    @Test("docs/errors.md lists every code with its number, name, exit status and aria2 code, as the code maps them")
    func documentedTable() throws {
        let codes = try Self.declaredCodes()
        #expect(codes.count >= 28, "the codes are read from DownloadError.swift")
        let expected = codes.map { Self.expectedRow($0.name, $0.number) }
        let documented = try Self.documentedRows()
        let table = expected.map { "| " + $0.joined(separator: " | ") + " | … |" }.joined(separator: "\n")
        #expect(documented == expected, "docs/errors.md should have these rows (then the meaning):\n\(table)")
    }

    @Test("each code's name in --json is the name of its constant")
    func names() throws {
        for (name, number) in try Self.declaredCodes() {
            #expect(DownloadError.Code(rawValue: number).name == name)
        }
        #expect(DownloadError.Code(rawValue: 4242).name == "code4242")
    }

    @Test("--json error objects carry the code, its name and the exit status it alone gives")
    func jsonErrorObject() throws {
        let error = DownloadError(
            code: .httpClientError, summary: "404 Not Found", suggestion: "check the URL", isTransient: false,
            httpStatus: 404)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(JSONRecord.ErrorInfo(error)), as: UTF8.self)
        #expect(json.contains(#""code":6"#) && json.contains(#""name":"httpClientError""#))
        #expect(json.contains(#""exitStatus":8"#), "\(json)")
    }

    @Test("the top-level help and the README list every exit status haul uses")
    func exitStatusesDocumented() throws {
        let help = Haul.helpMessage(columns: 10_000)
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let statuses: [ExitCode] = [
            ExitStatus.success, ExitStatus.downloadFailed, ExitStatus.checksumMismatch, ExitStatus.fileSystem,
            ExitStatus.tls, ExitStatus.network, ExitStatus.httpError, ExitStatus.usage, ExitStatus.unavailable,
            ExitStatus.interrupted,
        ]
        for status in statuses {
            let inHelp = help.contains(" \(status.rawValue) ")
            let inReadme = readme.contains("| `\(status.rawValue)` |")
            #expect(inHelp, "haul --help lacks \(status.rawValue)")
            #expect(inReadme, "the README's table lacks \(status.rawValue)")
        }
    }
}
