import ArgumentParser

/// What a foreground session prints: shared by `haul get` and `haul run` (under "Output options").
struct OutputOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Print only errors.")
    var quiet = false

    @Flag(help: "Print one JSON object per event and a final summary (NDJSON) instead of text.")
    var json = false

    @OptionGroup var log: LogOptions

    func validate() throws {
        if quiet, json { throw ValidationError("--quiet and --json cannot be used together") }
        if quiet, log.level != nil { throw ValidationError("--quiet and -v/--debug cannot be used together") }
    }
}
