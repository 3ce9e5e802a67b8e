import Foundation

/// HaulKit's folder rules (the "Folder layers" table of `docs/architecture.md`) and a checker of the sources against
/// them.
///
/// Each folder has a layer; a file may name the types of folders in lower layers only, never those of another
/// folder of its own layer or of a higher one. The checker reads the sources without the compiler: it splits each
/// file into code tokens (comments and the text of string literals left out, interpolations kept), takes the names
/// each folder declares at the top level (`struct`, `class`, `enum`, `actor`, `protocol`, `typealias`, and global
/// `func`, `let`, `var`; not `private` ones), and looks for those names among every other folder's tokens.
/// `extension Name` is a use of `Name`; a name after a dot (`.member`, `Outer.Inner`) is a member, not a use; a name
/// a file declares a type of itself (nested or not) means its own type there.
enum FolderLayering {
    /// One source file: its folder below `Sources/HaulKit` and its name.
    struct SourceFile: Sendable {
        var folder: String
        var name: String
        var text: String

        var path: String { "\(folder)/\(name)" }
    }

    /// A word of a file's code (an identifier or a keyword), or one of its braces.
    struct Token: Equatable, Sendable {
        var text: String
        var line: Int
        /// Whether the code before it (spaces aside) is a dot: then it names a member, not a type of this module.
        var afterDot: Bool
    }

    /// A file naming a type of a folder its folder may not use.
    struct Violation: Hashable, Sendable, CustomStringConvertible {
        /// The file, `Folder/Name.swift`, and the line of its first use of the type.
        var file: String
        var line: Int
        var type: String
        /// Where the type is declared, `Folder/Name.swift`.
        var declaredIn: String
        /// The rule broken, in words.
        var rule: String

        var description: String { "\(file):\(line) names \(type) (\(declaredIn)): \(rule)" }
    }

    /// A use the rules forbid that is tolerated for now: a file and the type it names.
    struct Allowance: Hashable, Sendable, CustomStringConvertible {
        var file: String
        var type: String

        var description: String { "\(file) naming \(type)" }
    }

    /// What the check found: the forbidden uses, and the allowances that excused none.
    struct Findings: Sendable {
        var violations: [Violation]
        var unusedAllowances: [Allowance]
    }

    /// The rules cannot be read.
    struct RulesError: Error, CustomStringConvertible {
        var description: String
    }

    /// The layer of each folder (1 at the bottom).
    struct Layers: Sendable {
        var layer: [String: Int]

        /// The heading above the table.
        static let heading = "## Folder layers"

        /// Reads the table below ``heading`` in `markdown`: rows `| 3 | `Storage`, `Retry` | … |`, a layer number in
        /// the first cell and the folders, each between backticks, in the second.
        static func parse(_ markdown: String) throws -> Layers {
            let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
            guard let start = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == heading }) else {
                throw RulesError(description: "no \"\(heading)\" section")
            }
            var layer: [String: Int] = [:]
            var inTable = false
            for line in lines[(start + 1)...] {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("#") { break }
                guard trimmed.hasPrefix("|") else {
                    if inTable { break }
                    continue
                }
                inTable = true
                let cells = trimmed.split(separator: "|", omittingEmptySubsequences: false).dropFirst().map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                guard cells.count >= 2, let number = Int(cells[0]) else { continue }  // the header and its rule
                guard number >= 1 else { throw RulesError(description: "layer \(number): layers count from 1") }
                let folders = cells[1].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                    $0.offset % 2 == 1
                }.map {
                    String($0.element)
                }
                guard !folders.isEmpty else { throw RulesError(description: "layer \(number) names no folder") }
                for folder in folders {
                    if let other = layer[folder] {
                        throw RulesError(description: "\(folder) is in layer \(other) and in layer \(number)")
                    }
                    layer[folder] = number
                }
            }
            guard !layer.isEmpty else { throw RulesError(description: "no layers below \"\(heading)\"") }
            return Layers(layer: layer)
        }

        /// The rule a file of `folder` breaks by naming a type of `other` (another folder), or nil if it may.
        func brokenRule(from folder: String, to other: String) -> String? {
            guard let mine = layer[folder] else { return "\(folder) has no layer in docs/architecture.md" }
            guard let theirs = layer[other] else { return "\(other) has no layer in docs/architecture.md" }
            if theirs < mine { return nil }
            if theirs == mine {
                return "\(folder) and \(other) are both in layer \(mine), and a folder may not use another of its layer"
            }
            return "\(folder) (layer \(mine)) may not use \(other) (layer \(theirs)): only lower layers"
        }
    }

    /// The keywords that declare a type.
    static let declaring: Set<String> = ["struct", "class", "enum", "actor", "protocol", "typealias"]
    /// The keywords that declare a function, a constant or a variable: at the top level, names as a folder's types are.
    static let declaringValues: Set<String> = ["func", "let", "var"]
    /// The modifiers that may stand before those keywords.
    static let modifiers: Set<String> = [
        "public", "package", "internal", "private", "fileprivate", "open", "final", "indirect", "nonisolated",
    ]

    /// Checks `files` against `layers`; a forbidden use listed in `allowances` is not a violation. Each type is
    /// reported once per file, at its first use.
    static func check(_ files: [SourceFile], layers: Layers, allowances: Set<Allowance> = []) -> Findings {
        let scanned = files.map { ($0, tokens(in: $0.text)) }
        var owners: [String: SourceFile] = [:]
        for (file, tokens) in scanned {
            for name in declarations(in: tokens) where owners[name] == nil { owners[name] = file }
        }
        var violations: [Violation] = []
        var used: Set<Allowance> = []
        for (file, tokens) in scanned {
            var seen = ownTypes(in: tokens)
            for token in tokens where !token.afterDot {
                guard let owner = owners[token.text], owner.folder != file.folder, seen.insert(token.text).inserted,
                    let rule = layers.brokenRule(from: file.folder, to: owner.folder)
                else { continue }
                let allowance = Allowance(file: file.path, type: token.text)
                if allowances.contains(allowance) {
                    used.insert(allowance)
                    continue
                }
                violations.append(
                    Violation(file: file.path, line: token.line, type: token.text, declaredIn: owner.path, rule: rule))
            }
        }
        let unused = allowances.subtracting(used).sorted { ($0.file, $0.type) < ($1.file, $1.type) }
        return Findings(violations: violations, unusedAllowances: unused)
    }

    /// The names a file declares at the top level (not inside a type, an extension or a function) that other files
    /// may use: its types, functions, constants and variables, unless `private` or `fileprivate`.
    static func declarations(in tokens: [Token]) -> [String] {
        var names: [String] = []
        var depth = 0
        for (index, token) in tokens.enumerated() {
            switch token.text {
            case "{": depth += 1
            case "}": depth -= 1
            default:
                guard depth == 0, !token.afterDot, index + 1 < tokens.count,
                    declaring.contains(token.text) || declaringValues.contains(token.text)
                else { continue }
                var before = index - 1
                var hidden = false
                while before >= 0, modifiers.contains(tokens[before].text) {
                    hidden = hidden || tokens[before].text == "private" || tokens[before].text == "fileprivate"
                    before -= 1
                }
                let next = tokens[index + 1].text
                if !hidden && next != "{" && next != "}" { names.append(next) }
            }
        }
        return names
    }

    /// The names of the types a file declares at any depth: in that file, such a name means its own type.
    static func ownTypes(in tokens: [Token]) -> Set<String> {
        var names: Set<String> = []
        for (index, token) in tokens.enumerated().dropLast()
        where !token.afterDot && declaring.contains(token.text) {
            let next = tokens[index + 1].text
            if next != "{" && next != "}" { names.insert(next) }
        }
        return names
    }

    /// Where the scanner is: in code (at the top, or in an interpolation with its open parentheses), or in a string
    /// literal (with its `#` count, and whether it is a `"""` literal).
    private enum Context {
        case code(parentheses: Int)
        case string(hashes: Int, multiline: Bool)
    }

    /// The words and braces of `text`'s code: comments (nested ones too) and the text of string literals (raw and
    /// multi-line ones too) are left out; the code of their interpolations is kept.
    static func tokens(in text: String) -> [Token] {
        let bytes = Array(text.utf8)
        var tokens: [Token] = []
        var index = 0
        var line = 1
        var stack: [Context] = [.code(parentheses: 0)]
        var previous: UInt8 = 0  // the last byte of code that is not a space

        func byte(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }
        func hashes(from offset: Int) -> Int {
            var count = 0
            while byte(offset + count) == UInt8(ascii: "#") { count += 1 }
            return count
        }
        func isWord(_ value: UInt8) -> Bool {
            (value >= 0x41 && value <= 0x5A) || (value >= 0x61 && value <= 0x7A) || (value >= 0x30 && value <= 0x39)
                || value == UInt8(ascii: "_")
        }

        while index < bytes.count {
            let current = bytes[index]
            if current == UInt8(ascii: "\n") { line += 1 }
            switch stack[stack.count - 1] {
            case .string(let count, let multiline):
                if current == UInt8(ascii: "\\") && hashes(from: 1) == count {
                    if byte(1 + count) == UInt8(ascii: "(") {
                        stack.append(.code(parentheses: 0))
                        index += count + 2
                        previous = UInt8(ascii: "(")
                    } else {
                        if byte(1 + count) == UInt8(ascii: "\n") { line += 1 }
                        index += count + 2  // the escaped character
                    }
                } else if current == UInt8(ascii: "\"") {
                    let quotes = multiline ? 3 : 1
                    if (0..<quotes).allSatisfy({ byte($0) == UInt8(ascii: "\"") }) && hashes(from: quotes) >= count {
                        stack.removeLast()
                        index += quotes + count
                        previous = UInt8(ascii: "\"")
                    } else {
                        index += 1
                    }
                } else {
                    index += 1
                }
            case .code(let parentheses):
                if current == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "/") {
                    while let next = byte(0), next != UInt8(ascii: "\n") { index += 1 }
                } else if current == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "*") {
                    var depth = 0
                    repeat {
                        if byte(0) == UInt8(ascii: "/") && byte(1) == UInt8(ascii: "*") {
                            depth += 1
                            index += 2
                        } else if byte(0) == UInt8(ascii: "*") && byte(1) == UInt8(ascii: "/") {
                            depth -= 1
                            index += 2
                        } else {
                            if byte(0) == UInt8(ascii: "\n") { line += 1 }
                            index += 1
                        }
                    } while depth > 0 && index < bytes.count
                } else if current == UInt8(ascii: "\"") || current == UInt8(ascii: "#"),
                    case let count = hashes(from: 0), byte(count) == UInt8(ascii: "\"")
                {
                    let multiline = byte(count + 1) == UInt8(ascii: "\"") && byte(count + 2) == UInt8(ascii: "\"")
                    stack.append(.string(hashes: count, multiline: multiline))
                    index += count + (multiline ? 3 : 1)
                } else if isWord(current) {
                    let start = index
                    while let next = byte(0), isWord(next) { index += 1 }
                    let first = bytes[start]
                    if !(first >= 0x30 && first <= 0x39) {  // a number is no name
                        let word = String(decoding: bytes[start..<index], as: UTF8.self)
                        tokens.append(Token(text: word, line: line, afterDot: previous == UInt8(ascii: ".")))
                    }
                    previous = first
                } else {
                    if current == UInt8(ascii: "{") || current == UInt8(ascii: "}") {
                        tokens.append(Token(text: String(UnicodeScalar(current)), line: line, afterDot: false))
                    } else if stack.count > 1 && current == UInt8(ascii: "(") {
                        stack[stack.count - 1] = .code(parentheses: parentheses + 1)
                    } else if stack.count > 1 && current == UInt8(ascii: ")") {
                        if parentheses == 0 {
                            stack.removeLast()  // the end of an interpolation: back in its string
                        } else {
                            stack[stack.count - 1] = .code(parentheses: parentheses - 1)
                        }
                    }
                    if current != UInt8(ascii: " ") && current != UInt8(ascii: "\n") && current != UInt8(ascii: "\t") {
                        previous = current
                    }
                    index += 1
                }
            }
        }
        return tokens
    }

    /// Every Swift file below `Sources/HaulKit` of the package at `root`, by folder (the first directory below it).
    static func sources(at root: URL) throws -> [SourceFile] {
        let base = root.appendingPathComponent("Sources/HaulKit")
        guard let enumerator = FileManager.default.enumerator(atPath: base.path) else {
            throw RulesError(description: "cannot list \(base.path)")
        }
        var files: [SourceFile] = []
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let parts = relative.split(separator: "/")
            guard parts.count >= 2 else {
                throw RulesError(description: "\(relative) is in no folder: every file of HaulKit belongs to one")
            }
            let text = try String(contentsOf: base.appendingPathComponent(relative), encoding: .utf8)
            files.append(
                SourceFile(folder: String(parts[0]), name: parts.dropFirst().joined(separator: "/"), text: text))
        }
        return files.sorted { $0.path < $1.path }
    }
}
