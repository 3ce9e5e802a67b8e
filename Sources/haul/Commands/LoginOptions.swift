import ArgumentParser
import Foundation
import HaulKit

/// Where logins and cookies come from, for the commands that download (`get`, `run`, `serve`).
struct LoginOptions: ParsableArguments {
    @Option(
        name: .customLong("netrc-file"),
        help: ArgumentHelp(
            "Read logins from FILE instead of $NETRC or ~/.netrc (used when a server asks and no --user was given).",
            valueName: "FILE"))
    var netrcFile: String?

    @Flag(name: .customLong("no-netrc"), help: "Do not read ~/.netrc.")
    var noNetrc = false

    @Option(
        name: .customLong("load-cookies"),
        help: ArgumentHelp(
            "Send the cookies of this Netscape cookie file (as curl, wget and aria2 write it).",
            valueName: "FILE"))
    var loadCookies: String?

    @Option(
        name: .customLong("save-cookies"),
        help: ArgumentHelp(
            "Write the cookies, old and new, to FILE when done (owner-only permissions).",
            valueName: "FILE"))
    var saveCookies: String?

    func validate() throws {
        if noNetrc, netrcFile != nil { throw ValidationError("--netrc-file and --no-netrc cannot be used together") }
        if let netrcFile, !FileManager.default.isReadableFile(atPath: netrcFile) {
            throw ValidationError("cannot read the netrc file \(netrcFile)")
        }
        _ = try netrc()
        _ = try cookieJar()
    }

    /// The logins: the file given, else `$NETRC` or `~/.netrc` when it exists, unless `--no-netrc`.
    func netrc() throws -> Netrc? {
        if noNetrc { return nil }
        let path = netrcFile ?? Netrc.defaultPath
        guard netrcFile != nil || FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try Netrc(contentsOf: path)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The jar: loaded from `--load-cookies` (and from `--save-cookies` when that file exists, so a session
    /// continues), or empty when only saving; nil without either option.
    func cookieJar() throws -> CookieJar? {
        guard loadCookies != nil || saveCookies != nil else { return nil }
        let jar = CookieJar()
        for path in [saveCookies, loadCookies].compactMap({ $0 })
        where path == loadCookies
            || FileManager.default.fileExists(atPath: path)
        {
            do {
                try jar.load(netscape: try String(contentsOfFile: path, encoding: .utf8))
            } catch let error as DownloadError {
                throw ValidationError("\(error.summary)")
            } catch {
                throw ValidationError("cannot read the cookie file \(path): \(error.localizedDescription)")
            }
        }
        return jar
    }

    /// Puts the logins and the jar in `configuration`.
    func apply(to configuration: inout DownloadManager.Configuration) throws {
        configuration.netrc = try netrc()
        configuration.cookies = try cookieJar()
    }

    /// Writes the jar to `--save-cookies`, if given; a failure is reported, not fatal (the downloads are done).
    func save(_ configuration: DownloadManager.Configuration) {
        guard let saveCookies, let jar = configuration.cookies else { return }
        do {
            try jar.save(to: saveCookies)
        } catch {
            Console.error("haul: \(error)")
        }
    }
}
