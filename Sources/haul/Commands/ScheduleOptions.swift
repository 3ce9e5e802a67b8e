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
        var runner = ScheduleRunner()
        do throws(DownloadError) {
            if let limitRateSchedule {
                runner.rates = try DownloadSchedule<Int64?>(
                    parsing: limitRateSchedule, option: "--limit-rate-schedule", fallback: nil, value: Self.rate)
            }
            if let pauseSchedule {
                runner.pauses = try DownloadSchedule<Bool>(
                    parsing: pauseSchedule, option: "--pause-schedule", fallback: false, bare: true, value: Self.pause)
            }
        } catch {
            throw ValidationError(error.summary)
        }
        return runner
    }

    /// A rate: `0` for no limit (`.some(nil)`), else a size such as `2M`; nil when it cannot be read.
    static func rate(_ text: String) -> Int64?? {
        if text.trimmingCharacters(in: .whitespaces) == "0" { return .some(nil) }
        guard let bytes = ByteFormat.parse(text) else { return nil }
        return .some(bytes)
    }

    /// `pause` or `run` (and their synonyms); nil when it is neither.
    static func pause(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "pause", "paused", "on", "true": true
        case "run", "off", "false": false
        default: nil
        }
    }
}
