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
              haul add -x 8 --limit-rate 1M --priority 5 https://example.com/c.iso
            """)

    @OptionGroup var request: RequestOptions

    @Option(
        name: .customLong("limit-rate"),
        help: ArgumentHelp(
            "Speed limit for each of these downloads, e.g. 500K, 2M (bytes per second).", valueName: "RATE"))
    var limitRate: String?

    @Option(help: ArgumentHelp("Higher runs first (-1000000 to 1000000).", valueName: "N"))
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

    /// Downloads are added this many at a time, one transaction each: a list of 100,000 is never held whole.
    static let batchSize = 10_000

    func run() async throws {
        var options = try request.downloadOptions()
        options.speedLimit = limitRate.flatMap(ByteFormat.parse)
        options.priority = priority
        var plan = try request.plannedDownloads()
        let manager = try await state.openEditor()
        var added = 0
        do {
            // A Metalink's files come first, in one batch (a Metalink names at most 10,000).
            var metalinked = try await request.metalinkAdditions(options, manager: manager)
            while true {
                var batch: [(URL, DownloadDestination?, DownloadOptions)] = metalinked
                metalinked = []
                while batch.count < Self.batchSize, let planned = try plan.next() {
                    batch.append(RequestOptions.addition(planned, options))
                }
                if batch.isEmpty { break }
                let ids = try await manager.add(contentsOf: batch)
                added += ids.count
                // An existing download keeps its state (completed, say): one look at the batch.
                let states = await manager.states(of: ids)
                var text = ""
                for ((id, state), (url, _, _)) in zip(zip(ids, states), batch) {
                    text += "#\(id) \((state ?? .queued).rawValue) \(url.absoluteString)\n"
                }
                Console.out(text)
            }
        } catch let error as DownloadError {
            Console.error(error.description)
            if added > 0 {
                Console.error(
                    "the first \(added) downloads of the list were added; adding the list again keeps them and adds "
                        + "the rest")
            }
            await manager.shutdown()
            throw ExitStatus.forFailures([error])
        } catch {
            await manager.shutdown()
            throw error
        }
        await manager.shutdown()
    }
}
