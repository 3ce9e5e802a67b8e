import ArgumentParser
import Foundation
import HaulKit

/// Metalinks on the command line: `-M FILE`, or a `.meta4`/`.metalink` file or URL among the URLs.
extension RequestOptions {
    /// Whether an argument names a Metalink by its extension.
    static func namesMetalink(_ argument: String) -> Bool {
        let path = URL(string: argument).map(\.path) ?? argument
        let lowered = (path.isEmpty ? argument : path).lowercased()
        return lowered.hasSuffix(".meta4") || lowered.hasSuffix(".metalink")
    }

    /// Every Metalink named: `-M` values, then URL arguments with a Metalink's extension.
    var metalinkArguments: [String] { metalinks + urls.filter(Self.namesMetalink) }

    /// The Metalinks named by a path (read now), and those named by an http(s) URL (fetched when the manager runs).
    var metalinkSources: (files: [String], urls: [URL]) {
        var files: [String] = []
        var addresses: [URL] = []
        for argument in metalinkArguments {
            if let url = URL(string: argument), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https"
            {
                addresses.append(url)
            } else {
                files.append(argument)
            }
        }
        return (files, addresses)
    }

    /// Reads each Metalink file, so a missing or hostile one is a usage error before anything is fetched.
    func validateMetalinks() throws {
        guard !metalinkArguments.isEmpty else { return }
        if output != nil {
            throw ValidationError("-o/--output does not apply to a Metalink: its files are named in it")
        }
        if checksum != nil || !mirrors.isEmpty {
            throw ValidationError("--checksum and --mirror do not apply to a Metalink: it gives its own")
        }
        for file in metalinkSources.files { _ = try Self.readMetalink(file) }
    }

    /// Reads and parses the Metalink at `path`.
    static func readMetalink(_ path: String) throws -> Metalink {
        let url = URL(fileURLWithPath: path)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        guard size <= Metalink.maximumSize else {
            throw ValidationError("\(path) is \(size) bytes, more than the \(Metalink.maximumSize) a Metalink may be")
        }
        guard let data = try? Data(contentsOf: url) else { throw ValidationError("cannot read the Metalink \(path)") }
        do {
            return try Metalink(parsing: data, origin: path)
        } catch {
            throw ValidationError(error.summary)
        }
    }

    /// The downloads of `metalink`'s files, with `options` (the command's): each file in `-d` (or the current
    /// directory) under its name, from its first URL with the others as mirrors, its best hash as the checksum and its
    /// piece hashes.
    func metalinkAdditions(
        _ metalink: Metalink, origin: String, _ options: DownloadOptions
    ) throws -> [(URL, DownloadDestination?, DownloadOptions)] {
        let base = URL(fileURLWithPath: directory ?? FileManager.default.currentDirectoryPath)
        return try metalink.files.map { file in
            guard let first = file.sources.first else {
                throw ValidationError("\(origin) gives no http(s) URL for \(file.name)")
            }
            return (first.url, .file(base.appendingPathComponent(file.name)), file.options(options))
        }
    }

    /// The downloads of every Metalink named: files read here, URLs fetched through `manager` (at most
    /// ``Metalink/maximumSize`` bytes each).
    func metalinkAdditions(
        _ options: DownloadOptions, manager: DownloadManager
    ) async throws -> [(URL, DownloadDestination?, DownloadOptions)] {
        var additions: [(URL, DownloadDestination?, DownloadOptions)] = []
        let (files, addresses) = metalinkSources
        for file in files { additions += try metalinkAdditions(try Self.readMetalink(file), origin: file, options) }
        for address in addresses {
            var data = Data()
            _ = try await manager.stream(address, options: options.fetchingMetalink) { bytes in
                guard data.count + bytes.count <= Metalink.maximumSize else {
                    throw DownloadError.invalidRequest(
                        "\(address.absoluteString) is more than the \(Metalink.maximumSize) bytes a Metalink may be")
                }
                data.append(contentsOf: bytes)
            }
            let metalink = try Metalink(parsing: data, origin: address.absoluteString)
            additions += try metalinkAdditions(metalink, origin: address.absoluteString, options)
        }
        return additions
    }
}

extension DownloadOptions {
    /// The options a Metalink itself is fetched with: the headers and login, nothing about its files.
    var fetchingMetalink: DownloadOptions {
        DownloadOptions(headers: headers, credentials: credentials, redirects: redirects)
    }
}
