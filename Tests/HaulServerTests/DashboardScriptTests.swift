import Foundation
import HaulTestSupport
import Testing

@testable import HaulServer

/// The dashboard's page and script read as text: every element the script looks up is in the page, nothing from the
/// daemon goes in as HTML, and (with Node.js on the machine) the script parses.
@Suite("the dashboard's script")
struct DashboardScriptTests {
    static let node = ["/usr/bin/node", "/usr/local/bin/node", "/opt/homebrew/bin/node"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// The ids the script looks up with `$("…")`.
    static var lookedUp: Set<String> {
        let script = DashboardScript.javascript
        var ids: Set<String> = []
        var rest = script[...]
        while let open = rest.range(of: "$(\"") {
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: "\"") else { break }
            ids.insert(String(after[..<close]))
            rest = after[close...]
        }
        return ids
    }

    @Test("every element the script looks up by id is in the page, the hosts panel's too")
    func elementsExist() {
        let ids = Self.lookedUp
        for id in [
            "hosts-toggle", "hosts-body", "hosts-table", "host-rows", "hosts-empty", "hosts-status", "hosts-more",
        ] {
            #expect(ids.contains(id), "the script looks up \(id)")
        }
        for id in ids.sorted() {
            #expect(DashboardPage.html.contains("id=\"\(id)\""), "the page has #\(id)")
        }
    }

    @Test("the hosts panel: a table with a caption and column headers, a disclosure button, an empty state")
    func hostsPanelMarkup() throws {
        let html = DashboardPage.html
        let start = try #require(html.range(of: "<section aria-labelledby=\"hosts-heading\""))
        let end = try #require(html[start.upperBound...].range(of: "</section>"))
        let panel = html[start.lowerBound..<end.upperBound]
        #expect(panel.contains("<caption>"))
        #expect(panel.components(separatedBy: "<th scope=\"col\"").count - 1 == 7)
        #expect(panel.contains("aria-expanded=\"false\" aria-controls=\"hosts-body\""))
        #expect(panel.contains("No host has been contacted yet."))
        #expect(panel.contains("<div id=\"hosts-body\" hidden>"), "closed (and not read) until opened")
    }

    @Test("nothing goes in as HTML: no innerHTML, outerHTML, insertAdjacentHTML or document.write")
    func textOnly() {
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("] {
            #expect(!DashboardScript.javascript.contains(sink), "\(sink) in the script")
        }
    }

    @Test(
        "the script parses (node --check)",
        .enabled(if: Self.node != nil, "Node.js is not installed: the script's syntax is checked in Chromium only"))
    func parses() async throws {
        let directory = TemporaryDirectory()
        let file = directory.file("dashboard.js")
        try Data(DashboardScript.javascript.utf8).write(to: file)
        let check = try ChildProcess(
            executable: URL(fileURLWithPath: try #require(Self.node)), arguments: ["--check", file.path])
        let status = try await check.wait(timeout: .seconds(60))
        #expect(status == 0, "\(check.standardError)")
    }
}
