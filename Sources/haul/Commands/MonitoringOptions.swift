import ArgumentParser
import HaulServer

/// `haul serve`'s `/metrics` access (docs/service.md, "Metrics").
struct MonitoringOptions: ParsableArguments {
    @Option(
        name: .customLong("metrics-token"),
        help: ArgumentHelp(
            "A token that reads GET /metrics (as Authorization: Bearer TOKEN) and nothing else; the RPC secret "
                + "reads it too.", valueName: "TOKEN"))
    var metricsToken: String?

    func validate() throws {
        if let metricsToken, metricsToken.isEmpty { throw ValidationError("--metrics-token must not be empty") }
    }

    var settings: HaulDaemon.Monitoring { HaulDaemon.Monitoring(metricsToken: metricsToken) }
}
