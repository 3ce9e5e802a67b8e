import Foundation
import HaulTestSupport
import Testing

/// Every Swift code block of README.md and of HaulKit's DocC catalogue is compiled: each is the shown part of a file
/// of `Examples/Snippets` (the `HaulSnippets` target, built with everything else), quoted exactly.
///
/// A snippet file shows only the lines between `// snippet.show` and the next `// snippet.hide` (its imports of
/// Foundation, the function around the sample, the values it needs are compiled but not quoted), each shown run
/// without the indentation common to its lines.
@Suite("The documents' Swift samples compile")
struct DocumentationSampleTests {
    /// A fenced Swift block of a document, and where it starts.
    struct Block {
        var document: String
        var line: Int
        var text: String
    }

    static let documents = ["README.md"] + catalogue()

    static func catalogue() -> [String] {
        let directory = "Sources/HaulKit/HaulKit.docc"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: PackageRoot.file(directory).path)) ?? []
        return names.filter { $0.hasSuffix(".md") }.sorted().map { "\(directory)/\($0)" }
    }

    /// The ```swift blocks of `document`, without the fence's own indentation.
    static func blocks(in document: String) throws -> [Block] {
        let text = try String(contentsOf: PackageRoot.file(document), encoding: .utf8)
        var blocks: [Block] = []
        var current: (line: Int, indent: Int, lines: [String])?
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " }
            let indent = line.count - trimmed.count
            if var open = current {
                if trimmed.hasPrefix("```") {
                    blocks.append(Block(document: document, line: open.line, text: normalized(open.lines)))
                    current = nil
                } else {
                    open.lines.append(String(line.dropFirst(min(open.indent, line.prefix { $0 == " " }.count))))
                    current = open
                }
            } else if trimmed == "```swift" {
                current = (number + 1, indent, [])
            }
        }
        return blocks
    }

    /// The shown lines of each snippet file, by file name.
    static func snippets() throws -> [String: String] {
        let directory = PackageRoot.file("Examples/Snippets")
        var snippets: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            var shown: [String] = []
            var run: [String]?
            for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
                switch line.trimmingCharacters(in: .whitespaces) {
                case "// snippet.show": run = []
                case "// snippet.hide":
                    shown += dedented(run ?? [])
                    run = nil
                default: run?.append(String(line))
                }
            }
            shown += dedented(run ?? [])
            snippets[name] = normalized(shown)
        }
        return snippets
    }

    /// `lines` without the indentation all its non-blank lines share.
    static func dedented(_ lines: [String]) -> [String] {
        let indent = lines.filter { !$0.allSatisfy(\.isWhitespace) }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.prefix { $0 == " " }.count))) }
    }

    /// The lines joined, without trailing spaces, and without blank lines at either end.
    static func normalized(_ lines: [String]) -> String {
        var lines = lines.map { String($0.reversed().drop { $0 == " " }.reversed()) }
        while lines.first?.isEmpty == true { lines.removeFirst() }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }

    @Test("each Swift block of the documents is a compiled snippet, quoted exactly", arguments: documents)
    func blocksAreSnippets(document: String) throws {
        let snippets = try Self.snippets()
        let blocks = try Self.blocks(in: document)
        #expect(!blocks.isEmpty || document != "README.md", "README.md has its library sample")
        for block in blocks where !snippets.values.contains(block.text) {
            let message =
                "\(block.document):\(block.line): this Swift block is not the shown part of any file of "
                + "Examples/Snippets, so nothing compiles it:\n\(block.text)"
            Issue.record(Comment(rawValue: message))
        }
    }

    @Test("every snippet is quoted by a document (none is compiled for nothing)")
    func snippetsAreQuoted() throws {
        let quoted = Set(try Self.documents.flatMap { try Self.blocks(in: $0) }.map(\.text))
        for (name, text) in try Self.snippets() where !quoted.contains(text) {
            Issue.record("Examples/Snippets/\(name) is quoted by no document:\n\(text)")
        }
    }
}
