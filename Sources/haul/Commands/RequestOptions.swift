import ArgumentParser
import Foundation
import HaulKit

/// What to download and how: shared by `haul get` and `haul add`.
struct RequestOptions: ParsableArguments {
    @Argument(help: "http:// or https:// URLs to download.")
    var urls: [String] = []

    @Option(
        name: [.customShort("o"), .customShort("O"), .customLong("output")],
        help: ArgumentHelp("Write to FILE (one URL only; -O is wget's spelling).", valueName: "FILE"))
    var output: String?

    @Option(
        name: [.customShort("d"), .customLong("dir")],
        help: ArgumentHelp("Directory for the files (default: current).", valueName: "DIR"))
    var directory: String?

    @Option(
        name: [.customShort("i"), .customLong("input-file")],
        help: ArgumentHelp(
            "Read URLs from FILE ('-' for standard input), in aria2's format: one file per line with its mirrors "
                + "(TAB-separated) and KEY=VALUE options; indented KEY=VALUE lines below set more (out, dir, "
                + "checksum, header, connections, referer, user-agent); '#' comments.",
            valueName: "FILE"))
    var inputFile: String?

    /// Nil without `-x`: `auto` for a new download, and an existing one keeps its count.
    @Option(
        name: [.customShort("x"), .customLong("connections")],
        help: ArgumentHelp(
            "Connections per download (1-32), used when the server supports ranges; 'auto' (the default) starts "
                + "with one and adds them while the speed grows and the host allows (up to 16).",
            valueName: "N|auto"))
    var connections: ConnectionCount?

    @Option(
        help: ArgumentHelp("Expected digest, sha256=HEX, sha1=HEX or md5=HEX (one URL only).", valueName: "ALGO=HEX"))
    var checksum: String?

    @Option(
        name: .customLong("mirror"),
        help: ArgumentHelp(
            "Another URL of the same file (repeatable; one download only): with -x 2 or more its segments are spread "
                + "over the mirrors that serve the same bytes.", valueName: "URL"))
    var mirrors: [String] = []

    @Option(
        name: [.customShort("M"), .customLong("metalink")],
        help: ArgumentHelp(
            "Download the files of a Metalink (RFC 5854 .meta4, or version 3 .metalink): a file, or an http(s) URL; "
                + "each file from its URLs by priority, checked against its hashes and piece hashes. A .meta4 or "
                + ".metalink given as a URL argument is read the same way (repeatable).", valueName: "FILE"))
    var metalinks: [String] = []

    @Flag(
        name: .customLong("no-verify-server-digest"),
        help: ArgumentHelp(
            "Do not verify the digests the server states (Repr-Digest, Content-Digest, Digest, Content-MD5, "
                + "x-goog-hash, x-amz-checksum-*); verified by default."))
    var noVerifyServerDigest = false

    @Flag(
        name: .customLong("ask-digest"),
        help: "Ask the server for the file's digest (Want-Repr-Digest, Want-Digest) and verify it.")
    var askDigest = false

    @Flag(
        name: .customLong("no-clobber"),
        help:
            "Keep a file already at the destination and download nothing (default: -o replaces it, -d saves as 'NAME (1).EXT')."
    )
    var noClobber = false

    @Flag(
        help:
            "Replace a file already at the destination, also with -d (default: -o replaces, -d saves as 'NAME (1).EXT')."
    )
    var overwrite = false

    @Flag(
        name: [.customShort("N"), .customLong("timestamping")],
        help:
            "Download only when the server's copy is newer than the file already there; the file gets the server's time."
    )
    var timestamping = false

    @OptionGroup(title: "Request options") var http: RequestHeaderOptions
    @OptionGroup(title: "Authentication options") var account: UserOption

    /// `-H`, `-U`, `--referer` and `--user`: read here as before they were grouped.
    var headers: [String] { http.headers }
    var userAgent: String? { http.userAgent }
    var referer: String? { http.referer }
    var user: String? { account.user }

    /// A download to add: where from, where to, and what its list line set.
    struct Planned {
        var url: URL
        var destination: DownloadDestination?
        var mirrors: [URL] = []
        /// What the list's line sets beside this command's options.
        var checksum: Checksum?
        var connections: Int?
        var headers: [HTTPHeaderField] = []
        var pacing: RequestPacing?

        init(url: URL, destination: DownloadDestination?, mirrors: [URL], entry: InputFile.Entry) {
            self.url = url
            self.destination = destination
            self.mirrors = mirrors
            checksum = entry.checksum
            connections = entry.connections
            headers = entry.headers
            pacing = entry.pacing
        }
    }

    func validate() throws {
        // The list is checked one download at a time, never held: `run()` reads it again, in batches.
        var plan = try plannedDownloads()
        var count = 0
        var files: Set<String> = []
        var shared: URL?
        while let planned = try plan.next() {
            count += 1
            if case .file(let file)? = planned.destination, shared == nil,
                !files.insert(file.standardizedFileURL.path).inserted
            {
                shared = file
            }
        }
        if count == 0, metalinkArguments.isEmpty { throw ValidationError("give at least one URL, or -i FILE") }
        try validateMetalinks()
        if output != nil, count != 1 { throw ValidationError("-o/--output takes exactly one URL") }
        if checksum != nil, count != 1 { throw ValidationError("--checksum takes exactly one URL") }
        if !mirrors.isEmpty, count != 1 { throw ValidationError("--mirror takes exactly one URL") }
        if [noClobber, overwrite, timestamping].filter({ $0 }).count > 1 {
            throw ValidationError("--no-clobber, --overwrite and -N/--timestamping exclude each other")
        }
        if let connections, !connections.isValid { throw ValidationError("-x/--connections must be 1 to 32, or auto") }
        if noVerifyServerDigest, askDigest {
            throw ValidationError("--ask-digest asks for a digest to verify; it excludes --no-verify-server-digest")
        }
        if let shared { throw ValidationError("two downloads would write \(shared.path): give each its own out= name") }
        _ = try downloadOptions(prompting: false)
    }

    /// The downloads to add, one at a time: the URLs given, then the input file's.
    func plannedDownloads() throws -> Plan {
        Plan(
            given: urls.filter { !Self.namesMetalink($0) }.map {
                InputFile.Entry(url: $0, mirrors: mirrors, out: output)
            },
            listed: try inputFile.map(InputFile.reader(for:)), inputFile: inputFile,
            base: directory.map { URL(fileURLWithPath: $0) })
    }

    /// Reads the planned downloads one at a time (``next()``), each checked as it is read.
    struct Plan {
        private let given: [InputFile.Entry]
        private var nextGiven = 0
        private var listed: InputFile.Reader?
        private let inputFile: String?
        /// `-d`, absolute.
        private let base: URL?

        fileprivate init(given: [InputFile.Entry], listed: InputFile.Reader?, inputFile: String?, base: URL?) {
            self.given = given
            self.listed = listed
            self.inputFile = inputFile
            self.base = base
        }

        /// The next download, or nil at the end; throws on a URL that is not http(s) or a malformed list line.
        mutating func next() throws -> Planned? {
            let entry: InputFile.Entry
            if nextGiven < given.count {
                entry = given[nextGiven]
                nextGiven += 1
            } else if let next = try listed?.next() {
                entry = next
            } else {
                return nil
            }
            let url = try address(entry.url, of: entry)
            let mirrors = try entry.mirrors.map { try address($0, of: entry) }
            // A line's dir= replaces -d; a relative one is relative to the current directory, as aria2's.
            let folder = entry.dir.map { URL(fileURLWithPath: $0) } ?? base
            guard let out = entry.out else {
                return Planned(url: url, destination: folder.map { .directory($0) }, mirrors: mirrors, entry: entry)
            }
            let file =
                out.hasPrefix("/") || folder == nil ? URL(fileURLWithPath: out) : folder!.appendingPathComponent(out)
            return Planned(url: url, destination: .file(file), mirrors: mirrors, entry: entry)
        }

        private func address(_ text: String, of entry: InputFile.Entry) throws -> URL {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https",
                url.host?.isEmpty == false
            else {
                let place = entry.line.map { " (\(inputFile ?? "input") line \($0))" } ?? ""
                if entry.line == nil, !text.contains("://"), FileManager.default.fileExists(atPath: text) {
                    throw ValidationError("'\(text)' is a file, not a URL: to read the URLs in it, give -i \(text)")
                }
                if let suggestion = CommandLineHabits.withScheme(text) {
                    // Never guessed silently: http or https, the user knows which.
                    throw ValidationError(
                        "'\(text)'\(place) is not a URL (no http:// or https://): did you mean \(suggestion)?")
                }
                throw ValidationError("'\(text)'\(place) is not an http:// or https:// URL")
            }
            return url
        }
    }

    /// What to add for `planned`: `options` with what its list line set (mirrors, checksum, headers, connections).
    static func addition(_ planned: Planned, _ options: DownloadOptions) -> (URL, DownloadDestination?, DownloadOptions)
    {
        var options = options
        options.mirrors = planned.mirrors
        if let checksum = planned.checksum { options.checksum = checksum }
        if let connections = planned.connections {
            // A number on the line fixes the count, as `-x N` does.
            options.connections = connections
            options.adaptiveConnections = false
            options.connectionCountGiven = true
        }
        if let pacing = planned.pacing { options.requestPacing = pacing }
        for header in planned.headers {
            // The line's header replaces a -H of the same name.
            options.headers.removeAll { $0.name.lowercased() == header.name.lowercased() }
            options.headers.append(header)
        }
        return (planned.url, planned.destination, options)
    }

    /// Everything to add, with `options` (``addition(_:_:)``).
    func additions(_ options: DownloadOptions) throws -> [(URL, DownloadDestination?, DownloadOptions)] {
        var plan = try plannedDownloads()
        var all: [(URL, DownloadDestination?, DownloadOptions)] = []
        while let planned = try plan.next() { all.append(Self.addition(planned, options)) }
        return all
    }

    /// The engine options for every planned download; with `prompting`, a password missing from `--user` is asked
    /// for on the terminal.
    func downloadOptions(prompting: Bool = true) throws -> DownloadOptions {
        let count = connections ?? .auto
        var options = DownloadOptions(connections: count.count, adaptiveConnections: count == .auto)
        options.connectionCountGiven = connections != nil
        options.redirects = RedirectPolicy(
            trustsOtherOrigins: http.locationTrusted, allowsInsecureRedirects: http.allowInsecureRedirect)
        options.existingFile = noClobber ? .keep : overwrite ? .replace : timestamping ? .replaceIfNewer : .automatic
        options.serverDigests = noVerifyServerDigest ? .ignore : askDigest ? .ask : .verify
        do {
            if let user = account.user {
                let (name, password) = try Credentials.parsing(user)
                if let password {
                    options.credentials = Credentials(user: name, password: password)
                } else if prompting {
                    options.credentials = Credentials(user: name, password: try PasswordPrompt.read(for: name))
                }
            }
            options.checksum = try checksum.map { try Checksum(parsing: $0) }
            options.headers = try http.headers.map { try HTTPHeaderField(parsing: $0) }
            // Said once here, they replace a -H of the same name.
            for (name, value) in [("User-Agent", http.userAgent), ("Referer", http.referer)] {
                guard let value else { continue }
                options.headers.removeAll { $0.name.lowercased() == name.lowercased() }
                options.headers.append(try HTTPHeaderField(parsing: "\(name): \(value)"))
            }
        } catch {
            throw ValidationError((error as? DownloadError)?.description ?? "\(error)")
        }
        return options
    }
}
