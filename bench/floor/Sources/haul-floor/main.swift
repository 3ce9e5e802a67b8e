// haul-floor LIST DIR JOBS [sync]: fetches every URL of LIST (one a line) into DIR/<last path component>, JOBS at a
// time, with one AsyncHTTPClient configured as Haul's transport is (HTTP/1.1 only, no redirects, no decompression,
// no tracing, no read timeout, JOBS connections per host). Each body streams into its file with `pwrite` as it
// arrives, as Haul's body loop does. With `sync`, one `syncfs` at the end (as curl `&& sync -f DIR`). Exits 1 on the
// first failure.
import AsyncHTTPClient
import Foundation
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let arguments = CommandLine.arguments
guard arguments.count >= 4, let jobs = Int(arguments[3]), jobs > 0 else {
    complain("usage: haul-floor LIST DIR JOBS [sync]")
    exit(64)
}
let directory = arguments[2]
let syncsAtEnd = arguments.count > 4 && arguments[4] == "sync"
guard let list = try? String(contentsOfFile: arguments[1], encoding: .utf8) else {
    complain("haul-floor: cannot read \(arguments[1])")
    exit(66)
}
let urls = list.split(separator: "\n").map(String.init).filter { !$0.isEmpty }

/// Writes a line to standard error.
func complain(_ line: String) {
    let text = Array((line + "\n").utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

struct FloorError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

var configuration = HTTPClient.Configuration()
configuration.httpVersion = .http1Only
configuration.redirectConfiguration = .disallow
configuration.decompression = .disabled
configuration.tracing.tracer = nil
configuration.timeout = .init(connect: .seconds(30), read: nil)
configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = jobs
configuration.connectionPool.retryConnectionEstablishment = false
let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)

/// Fetches `url` into its file: the body written with `pwrite` part by part as it arrives.
func fetch(_ url: String) async throws {
    let name = url.split(separator: "/").last.map(String.init) ?? "index"
    let path = directory + "/" + name
    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(60))
    guard response.status == .ok else { throw FloorError("\(url): \(response.status)") }
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw FloorError("cannot create \(path)") }
    defer { close(descriptor) }
    var offset: off_t = 0
    for try await part in response.body {
        let written = part.withUnsafeReadableBytes { pwrite(descriptor, $0.baseAddress, $0.count, offset) }
        guard written == part.readableBytes else { throw FloorError("cannot write \(path)") }
        offset += off_t(written)
    }
}

var failed = false
do {
    try await withThrowingTaskGroup(of: Void.self) { group in
        // JOBS at a time: the first JOBS, then one more each time one ends.
        var waiting = urls.makeIterator()
        for _ in 0..<jobs {
            guard let url = waiting.next() else { break }
            group.addTask { try await fetch(url) }
        }
        while try await group.next() != nil {
            if let url = waiting.next() { group.addTask { try await fetch(url) } }
        }
    }
} catch {
    complain("haul-floor: \(error)")
    failed = true
}
try? await client.shutdown()
if syncsAtEnd, !failed {
    let descriptor = open(directory, O_RDONLY | O_DIRECTORY)
    if descriptor >= 0 {
        // syncfs(2), looked up at run time: the C module does not declare it (Haul's `PartFile` does the same).
        if let symbol = dlsym(dlopen(nil, RTLD_NOW), "syncfs") {
            _ = unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)(descriptor)
        }
        close(descriptor)
    }
}
exit(failed ? 1 : 0)
