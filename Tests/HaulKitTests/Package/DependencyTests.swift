import Foundation
import HaulTestSupport
import Testing

/// What an app that embeds HaulKit links: the engine's own dependencies, and never the fleet's PostgreSQL client or
/// the daemon's web server. Read from the package manager's own view of the package (`swift package dump-package`
/// for the targets, `show-dependencies` for what each dependency pulls in).
@Suite("HaulKit's dependencies")
struct DependencyTests {
    /// The packages HaulKit may name: AsyncHTTPClient, GRDB, swift-log, swift-crypto and NIO (with NIOSSL and
    /// swift-nio-extras' decompression), and swift-http-structured-headers (RFC 8941: the digests servers state,
    /// verified by default; a small package of its own, without dependencies).
    static let allowed: Set<String> = [
        "async-http-client", "grdb.swift", "swift-log", "swift-crypto", "swift-nio", "swift-nio-ssl",
        "swift-nio-extras", "swift-http-structured-headers",
    ]

    /// Packages HaulKit must never reach, directly or through another package.
    static func isForbidden(_ identity: String) -> Bool {
        identity.contains("postgres") || identity.contains("hummingbird")
    }

    @Test("HaulKit names only its engine's packages, and of our targets only its C hook, which names nothing")
    func directDependencies() async throws {
        let graph = try await TargetGraph.load()
        let reached = graph.closure(of: "HaulKit")
        // HaulConcurrencyHook: a C file of our own with no dependency (Swift Concurrency's hook as linked).
        #expect(
            reached.targets == ["HaulKit", "HaulConcurrencyHook"],
            "HaulKit depends on other targets: \(reached.targets.sorted())")
        let unexpected = reached.packages.subtracting(Self.allowed)
        #expect(unexpected.isEmpty, "HaulKit names \(unexpected.sorted())")
        #expect(!reached.products.contains { $0.hasPrefix("Postgres") || $0.hasPrefix("Hummingbird") })
    }

    @Test("nothing HaulKit depends on pulls in PostgresNIO or Hummingbird")
    func transitiveDependencies() async throws {
        let graph = try await TargetGraph.load()
        let direct = graph.closure(of: "HaulKit").packages
        let tree = try await blocking {
            try JSONDecoder().decode(
                PackageNode.self, from: try PackageRoot.swiftPackage(["show-dependencies", "--format", "json"]))
        }
        var reached: Set<String> = []
        for identity in direct { tree.collect(below: identity, into: &reached) }
        #expect(reached.isSuperset(of: direct), "show-dependencies lacks some of \(direct.sorted())")
        let forbidden = reached.filter(Self.isForbidden)
        #expect(forbidden.isEmpty, "HaulKit reaches \(forbidden.sorted())")
        // The check itself would see them: the package as a whole does depend on both.
        var all: Set<String> = []
        tree.collect(into: &all)
        #expect(all.contains("postgres-nio") && all.contains("hummingbird"))
    }
}

/// The package's targets and what each names, from `swift package dump-package`.
private struct TargetGraph {
    /// Per target: the targets of this package it names, and the products of other packages (with their package).
    var targets: [String: (targets: [String], products: [(name: String, package: String?)])] = [:]

    static func load() async throws -> TargetGraph {
        let data = try await blocking { try PackageRoot.swiftPackage(["dump-package"]) }
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try #require(manifest["targets"] as? [[String: Any]])
        let names = Set(entries.compactMap { $0["name"] as? String })
        var graph = TargetGraph()
        for entry in entries {
            guard let name = entry["name"] as? String else { continue }
            var targets: [String] = []
            var products: [(String, String?)] = []
            for dependency in entry["dependencies"] as? [[String: [Any]]] ?? [] {
                if let target = dependency["target"]?.first as? String {
                    targets.append(target)
                } else if let product = dependency["product"], let productName = product.first as? String {
                    products.append((productName, product.count > 1 ? product[1] as? String : nil))
                } else if let byName = dependency["byName"]?.first as? String {
                    if names.contains(byName) { targets.append(byName) } else { products.append((byName, nil)) }
                }
            }
            graph.targets[name] = (targets, products)
        }
        return graph
    }

    /// The targets `target` reaches (itself included), and the packages and products they name.
    func closure(of target: String) -> (targets: Set<String>, packages: Set<String>, products: Set<String>) {
        var seen: Set<String> = []
        var packages: Set<String> = []
        var products: Set<String> = []
        var pending = [target]
        while let next = pending.popLast() {
            guard seen.insert(next).inserted, let entry = targets[next] else { continue }
            pending += entry.targets
            for product in entry.products {
                products.insert(product.name)
                if let package = product.package { packages.insert(package.lowercased()) }
            }
        }
        return (seen, packages, products)
    }
}

/// A package in `swift package show-dependencies --format json`, with the packages it depends on.
private struct PackageNode: Decodable {
    var identity: String
    var dependencies: [PackageNode]

    /// Adds every package below this one (not this one) to `identities`.
    func collect(into identities: inout Set<String>) {
        for dependency in dependencies {
            identities.insert(dependency.identity)
            dependency.collect(into: &identities)
        }
    }

    /// Adds the package `identity` (wherever it appears) and every package below it to `identities`.
    func collect(below identity: String, into identities: inout Set<String>) {
        if self.identity == identity {
            identities.insert(identity)
            collect(into: &identities)
        }
        for dependency in dependencies { dependency.collect(below: identity, into: &identities) }
    }
}
