import ArgumentParser
import Foundation
import HaulKit

/// `haul add`: queue downloads for `haul run` (or a running `haul run`) without downloading now.
struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue downloads without starting them; 'haul run' downloads the queue.",
        discussion: """
            Adding a URL that is already queued with the same destination returns the existing download (and \
            queues it again if it was paused or failed). Prints the id of each download.

            Examples:
              haul add https://example.com/a.iso https://example.com/b.iso
              haul add -d ~/Downloads -i urls.txt
              haul add -x 8 --limit-rate 1M --checksum sha256=9f86d0… https://example.com/c.iso
            """)

    @OptionGroup var request: RequestOptions

    @Option(
        name: .customLong("limit-rate"),
        help: ArgumentHelp(
            "Speed limit for each of these downloads, e.g. 500K, 2M (bytes per second).", valueName: "RATE"))
    var limitRate: String?

    @Option(help: "Higher runs first (default 0; -1000000 to 1000000).")
    var priority: Int = 0

    @OptionGroup var state: StateOptions

    func validate() throws {
        if request.output == "-" {
            throw ValidationError("-o - streams to standard output, which only 'haul get' can do: give a file name")
        }
        if !(-1_000_000...1_000_000).contains(priority) {
            throw ValidationError("--priority must be -1000000 to 1000000, got \(priority)")
        }
        if let limitRate, ByteFormat.parse(limitRate) == nil {
            throw ValidationError("--limit-rate '\(limitRate)' is not a rate like 500K, 2M or 1G")
        }
    }

    func run() async throws {
        var options = try request.downloadOptions()
        options.speedLimit = limitRate.flatMap(ByteFormat.parse)
        options.priority = priority
        let planned = try request.plannedDownloads()
        let additions = try request.additions(options)
        let manager = try await state.openEditor()
        do {
            let ids = try await manager.add(contentsOf: additions)
            for (id, download) in zip(ids, planned) {
                let state = await manager.snapshot(id)?.state.rawValue ?? "queued"
                Console.out("#\(id) \(state) \(download.url.absoluteString)\n")
            }
        } catch {
            Console.error(error.description)
            await manager.shutdown()
            throw ExitStatus.forFailures([error])
        }
        await manager.shutdown()
    }
}
