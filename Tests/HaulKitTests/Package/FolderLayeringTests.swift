import Foundation
import HaulTestSupport
import Testing

/// HaulKit's folders keep the layers of `docs/architecture.md` ("Folder layers"): no file names a type of a folder
/// in its own layer or above it, so the folders have no cycles.
@Suite("HaulKit's folder layers")
struct FolderLayeringTests {
    /// Uses across the layers tolerated for now: none since issue 47 (the job reaches its owner through `JobHost`,
    /// and streaming to stdout is a body sink of the one transfer loop). An entry that excuses nothing fails
    /// ``allowancesAreStillNeeded``; add none.
    static let allowances: Set<FolderLayering.Allowance> = []

    static func layers() throws -> FolderLayering.Layers {
        try FolderLayering.Layers.parse(
            String(contentsOf: PackageRoot.file("docs/architecture.md"), encoding: .utf8))
    }

    @Test("every file of HaulKit names only types of lower layers")
    func codeKeepsTheLayers() throws {
        let files = try FolderLayering.sources(at: PackageRoot.url)
        #expect(files.count > 100, "found only \(files.count) files")
        let findings = FolderLayering.check(files, layers: try Self.layers(), allowances: Self.allowances)
        #expect(findings.violations.isEmpty, "\n\(findings.violations.map(\.description).joined(separator: "\n"))")
    }

    @Test("each folder of HaulKit has exactly one layer")
    func everyFolderHasALayer() throws {
        let folders = Set(try FolderLayering.sources(at: PackageRoot.url).map(\.folder))
        let named = Set(try Self.layers().layer.keys)
        #expect(folders.subtracting(named).isEmpty, "folders without a layer: \(folders.subtracting(named).sorted())")
        #expect(
            named.subtracting(folders).isEmpty, "layers name missing folders: \(named.subtracting(folders).sorted())")
    }

    @Test("every temporary allowance still excuses a use (so that the list only shrinks)")
    func allowancesAreStillNeeded() throws {
        let files = try FolderLayering.sources(at: PackageRoot.url)
        let findings = FolderLayering.check(files, layers: try Self.layers(), allowances: Self.allowances)
        #expect(findings.unusedAllowances.isEmpty, "remove from the allowances: \(findings.unusedAllowances)")
    }
}

/// The checker itself, on small sources in memory.
@Suite("The folder layering checker")
struct FolderLayeringCheckerTests {
    static let rules = """
        # Architecture

        ## Folder layers

        | layer | folders | what they hold |
        | --- | --- | --- |
        | 2 | `High`, `Side` | the top |
        | 1 | `Low` | the bottom |

        ## Next section

        | 9 | `Ignored` | not a layer: another section |
        """

    static func file(_ path: String, _ text: String) -> FolderLayering.SourceFile {
        let parts = path.split(separator: "/", maxSplits: 1)
        return .init(folder: String(parts[0]), name: String(parts[1]), text: text)
    }

    static let top = file("High/Top.swift", "struct Top {\n    var base = Base()\n}\n")
    static let base = file("Low/Base.swift", "/// The bottom.\npublic struct Base: Sendable {}\n")

    @Test("the rules are read from the section's table only")
    func parsesTheTable() throws {
        let layers = try FolderLayering.Layers.parse(Self.rules)
        #expect(layers.layer == ["High": 2, "Side": 2, "Low": 1])
        #expect(throws: FolderLayering.RulesError.self) { try FolderLayering.Layers.parse("# Nothing here\n") }
        #expect(throws: FolderLayering.RulesError.self) {
            try FolderLayering.Layers.parse("## Folder layers\n\n| 2 | `A` |\n| 1 | `A` |\n")
        }
    }

    @Test("a use of a higher layer is reported with its file, line, type and rule")
    func reportsAUpwardUse() throws {
        let layers = try FolderLayering.Layers.parse(Self.rules)
        let lifting = Self.file(
            "Low/Base+Lift.swift", "extension Base {\n    func lift() -> Top { Top(base: self) }\n}\n")
        let findings = FolderLayering.check([Self.top, Self.base, lifting], layers: layers)
        #expect(
            findings.violations == [
                .init(
                    file: "Low/Base+Lift.swift", line: 2, type: "Top", declaredIn: "High/Top.swift",
                    rule: "Low (layer 1) may not use High (layer 2): only lower layers")
            ])
        #expect(
            findings.violations.first?.description
                == "Low/Base+Lift.swift:2 names Top (High/Top.swift): Low (layer 1) may not use High (layer 2): "
                + "only lower layers")
        // Without the upward use, the same sources pass.
        #expect(FolderLayering.check([Self.top, Self.base], layers: layers).violations.isEmpty)
    }

    @Test("a use of another folder of the same layer is reported")
    func reportsASidewaysUse() throws {
        let layers = try FolderLayering.Layers.parse(Self.rules)
        let side = Self.file("Side/Neighbour.swift", "enum Neighbour {\n    static let top: Top? = nil\n}\n")
        let findings = FolderLayering.check([Self.top, Self.base, side], layers: layers)
        #expect(findings.violations.map(\.type) == ["Top"])
        #expect(findings.violations.first?.rule.contains("both in layer 2") == true)
    }

    @Test("names in comments and string literals are no uses; interpolations are")
    func readsOnlyCode() throws {
        let layers = try FolderLayering.Layers.parse(Self.rules)
        let quiet = Self.file(
            "Low/Quiet.swift",
            #"""
            // Top is mentioned here, /* and Top /* nested Top */ here */,
            let a = "Top \" Top"
            let b = #"Top "quoted" \(Top) Top"#
            let c = """
                Top
                "Top"
                """
            let d = thing.Top  // a member, not the type
            """#)
        #expect(FolderLayering.check([Self.top, Self.base, quiet], layers: layers).violations.isEmpty)
        let loud = Self.file("Low/Loud.swift", #"let a = "made of \(String(describing: Top.self)) \(1)""#)
        let raw = Self.file("Low/Raw.swift", "let a = #\"\"\"\n    \\#(Top())\n    \"\"\"#\n")
        let findings = FolderLayering.check([Self.top, Self.base, loud, raw], layers: layers)
        #expect(findings.violations.map(\.file) == ["Low/Loud.swift", "Low/Raw.swift"])
        #expect(findings.violations.map(\.line) == [1, 2])
    }

    @Test("only top-level declarations are a folder's types")
    func nestedTypesAreNotDeclared() throws {
        let layers = try FolderLayering.Layers.parse(Self.rules)
        let nesting = Self.file(
            "High/Outer.swift", "struct Outer {\n    struct Inner {}\n}\nfunc f() { enum Local {} }\n")
        #expect(FolderLayering.declarations(in: FolderLayering.tokens(in: nesting.text)) == ["Outer", "f"])
        let user = Self.file("Low/User.swift", "let inner = 1\nlet local = Local()\nlet x: Inner? = nil\n")
        #expect(FolderLayering.check([nesting, user], layers: layers).violations.isEmpty)
    }

    @Test("global functions and constants are a folder's too; private declarations and a file's own types are not")
    func globalsAndPrivates() throws {
        let layers = try FolderLayering.Layers.parse(Self.rules)
        let helpers = Self.file(
            "High/Helpers.swift",
            "func lifted() -> Int { 1 }\npublic let ceiling = 2\nprivate struct Key {}\nfileprivate func hidden() {}\n")
        #expect(
            FolderLayering.declarations(in: FolderLayering.tokens(in: helpers.text)) == ["lifted", "ceiling"])
        let user = Self.file("Low/User.swift", "let a = lifted()\nlet b = ceiling\n")
        let own = Self.file(
            "Low/Own.swift", "private struct Key {}\nstruct Holder {\n    struct Top {}\n    var top = Top()\n}\n")
        let findings = FolderLayering.check([Self.top, Self.base, helpers, user, own], layers: layers)
        #expect(
            findings.violations.map { "\($0.file):\($0.type)" } == ["Low/User.swift:lifted", "Low/User.swift:ceiling"])
    }

    @Test("an allowance excuses its file and type only, and one that excuses nothing is reported")
    func allowances() throws {
        let layers = try FolderLayering.Layers.parse(Self.rules)
        let one = Self.file("Low/One.swift", "let a = Top()\n")
        let two = Self.file("Low/Two.swift", "let b = Top()\n")
        let findings = FolderLayering.check(
            [Self.top, Self.base, one, two], layers: layers,
            allowances: [.init(file: "Low/One.swift", type: "Top"), .init(file: "Low/Gone.swift", type: "Top")])
        #expect(findings.violations.map(\.file) == ["Low/Two.swift"])
        #expect(findings.unusedAllowances == [.init(file: "Low/Gone.swift", type: "Top")])
    }

    @Test("a folder without a layer is reported")
    func unknownFolder() throws {
        let layers = try FolderLayering.Layers.parse(Self.rules)
        let stray = Self.file("Stray/Stray.swift", "let a = Base()\n")
        let findings = FolderLayering.check([Self.base, stray], layers: layers)
        #expect(findings.violations.map(\.rule) == ["Stray has no layer in docs/architecture.md"])
    }
}
