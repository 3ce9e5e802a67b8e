import ArgumentParser

/// What each request of a download carries besides the URL, and where its credentials may go: shared by `haul get`
/// and `haul add` (under "Request options").
struct RequestHeaderOptions: ParsableArguments {
    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp("Extra request header 'Name: value' (repeatable).", valueName: "HEADER"))
    var headers: [String] = []

    @Option(
        name: [.customShort("U"), .customLong("user-agent")],
        help: ArgumentHelp("Send this User-Agent instead of Haul's.", valueName: "TEXT"))
    var userAgent: String?

    @Option(help: ArgumentHelp("Send this Referer (the page the link was on).", valueName: "URL"))
    var referer: String?

    @Flag(
        name: .customLong("location-trusted"),
        help:
            "Also send credentials, cookies of the command line and -H headers to the other hosts a redirect leads to.")
    var locationTrusted = false

    @Flag(
        name: .customLong("allow-insecure-redirect"),
        help: "Follow a redirect from https to plain http (refused by default).")
    var allowInsecureRedirect = false
}

/// `--user`: the login of `haul get` and `haul add` (under "Authentication options", beside the netrc and cookie
/// options of the commands that download).
struct UserOption: ParsableArguments {
    @Option(
        name: [.customLong("user")],
        help: ArgumentHelp(
            "Log in as NAME when the server asks (Basic or Digest); without :PASSWORD it is asked for on the terminal.",
            valueName: "NAME[:PASSWORD]"))
    var user: String?
}
