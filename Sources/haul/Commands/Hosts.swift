import ArgumentParser
import Foundation
import HaulKit

/// `haul hosts`: the politeness state of the fleet's hosts (request rate, backoff, last throttle).
struct Hosts: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show each host's request rate, backoff and last throttle (the fleet's, with --database).",
        discussion: """
            With --database the state is the fleet's, kept in PostgreSQL by every
            worker. Without it, it belongs to the process that runs the downloads:
            ask 'haul serve' with the haul.getHosts RPC.
            Examples:
              haul hosts --database "$DB"
              haul hosts --database "$DB" --json | jq '.[] | select(.throttles > 0)'
            """)

    @Flag(help: "Print one JSON array.")
    var json = false

    @OptionGroup var state: StateOptions

    func run() async throws {
        guard try state.sharedQueue() != nil else {
            Console.error(
                "host state is kept by the process that runs the downloads: give --database for the fleet's, or ask "
                    + "'haul serve' with the haul.getHosts RPC")
            throw ExitStatus.usage
        }
        let manager = try await state.openEditor()
        let hosts: [HostStatus]
        do {
            hosts = try await manager.hosts()
        } catch {
            await manager.shutdown()
            Console.error(error.description)
            throw ExitStatus.forFailure(error)
        }
        await manager.shutdown()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            Console.out(String(decoding: try encoder.encode(hosts), as: UTF8.self) + "\n")
            return
        }
        Console.out(Self.table(hosts, now: Date()))
    }

    /// One line per host: requests, the limit in force, connections, the hold, the last throttle and why.
    static func table(_ hosts: [HostStatus], now: Date) -> String {
        guard !hosts.isEmpty else { return "no host has been asked anything yet\n" }
        var lines = ["HOST\tREQUESTS\tLIMIT\tCONNECTIONS\tHELD\tTHROTTLES\tLAST THROTTLE"]
        for host in hosts {
            let limit = host.requestLimit.map { String(format: "%.1f/s", $0) } ?? "-"
            let connections = host.connectionCap.map(String.init) ?? "-"
            let held = host.heldForSeconds.map { String(format: "%.1fs", $0) } ?? "-"
            let last =
                host.lastThrottle.map {
                    String(format: "%.0fs ago", max(0, now.timeIntervalSince($0))) + " (\(host.reason ?? "?"))"
                } ?? "-"
            lines.append(
                [host.host, String(host.requests), limit, connections, held, String(host.throttles), last]
                    .joined(separator: "\t"))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
