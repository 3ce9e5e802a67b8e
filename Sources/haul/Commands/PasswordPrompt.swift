import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Asks for a password on the terminal, without echo, as curl and wget do for `--user NAME`.
enum PasswordPrompt {
    /// The password for `user`, read from the controlling terminal; a usage error when there is none.
    static func read(for user: String) throws -> String {
        guard isatty(0) == 1 else {
            throw ValidationError(
                "--user \(user) has no password and no terminal can ask for it: give --user \(user):PASSWORD, or put "
                    + "it in ~/.netrc")
        }
        guard let typed = getpass("Password for '\(user)': ") else {
            throw ValidationError("no password was read for \(user)")
        }
        return String(cString: typed)
    }
}
