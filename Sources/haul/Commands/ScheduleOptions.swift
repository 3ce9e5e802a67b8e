import ArgumentParser
import Foundation
import HaulKit

/// `--limit-rate-schedule` and `--pause-schedule` of `haul serve` and `haul run` (docs/service.md, "Schedules").
struct ScheduleOptions: ParsableArguments {
    @Option(
        name: .customLong("limit-rate-schedule"),
        help: ArgumentHelp(
            "The global speed limit by the local time of the week, e.g. \"Mon-Fri 08:00-18:00=2M, *=0\" (0: no "
                + "limit; the first matching rule wins). Set at each boundary; a change over RPC holds until the "
                + "next.", valueName: "RULES"))
    var limitRateSchedule: String?

    @Option(
        name: .customLong("pause-schedule"),
        help: ArgumentHelp(
            "When downloads wait, e.g. \"Mon-Fri 09:00-17:00\" (rules as for --limit-rate-schedule; =run or =pause "
                + "to say which): running ones go back to the queue and nothing starts until the window ends.",
            valueName: "RULES"))
    var pauseSchedule: String?

    func validate() throws {
        _ = try runner()
    }

    /// The runner of the schedules given; empty when none is.
    func runner() throws -> ScheduleRunner {
        do {
            let rates = try limitRateSchedule.map { text throws(DownloadError) in
                try DownloadSchedule<Int64?>(parsing: text, option: "--limit-rate-schedule", fallback: nil) { value in
                    value.trimmingCharacters(in: .whitespaces) == "0" ? .some(nil) : ByteFormat.parse(value).map { $0 }
                }
            }
            let pauses = try pauseSchedule.map { text throws(DownloadError) in
                try DownloadSchedule<Bool>(parsing: text, option: "--pause-schedule", fallback: false, bare: true) {
                    switch $0.lowercased() {
                    case "pause", "paused", "on", "true": true
                    case "run", "off", "false": false
                    default: nil
                    }
                }
            }
            return ScheduleRunner(rates: rates, pauses: pauses)
        } catch let error as DownloadError {
            throw ValidationError(error.summary)
        }
    }
}
