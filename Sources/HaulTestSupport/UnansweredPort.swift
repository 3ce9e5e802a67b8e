import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A port on 127.0.0.1 where connecting never completes, as behind a firewall that drops packets: a listening socket
/// that never accepts, its queue filled by a few connections of its own, so the kernel ignores new ones.
public final class UnansweredPort: @unchecked Sendable {
    public let port: Int
    private var descriptors: [Int32] = []

    public init() throws {
        let listener = socket(AF_INET, streamSocketType, 0)
        guard listener >= 0 else { throw NginxUnavailable(reason: "no socket") }
        descriptors.append(listener)
        var address = LocalPorts.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 0) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard listening else { throw NginxUnavailable(reason: "cannot listen on 127.0.0.1") }
        port = Int(UInt16(bigEndian: address.sin_port))
        // Fill the accept queue: these connections are never accepted, and later ones are not answered.
        var target = LocalPorts.loopback(port: port)
        for _ in 0..<3 {
            let filler = socket(AF_INET, streamSocketType, 0)
            guard filler >= 0 else { continue }
            descriptors.append(filler)
            _ = fcntl(filler, F_SETFL, fcntl(filler, F_GETFL) | O_NONBLOCK)
            _ = withUnsafePointer(to: &target) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        usleep(200_000)
    }

    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    deinit { for descriptor in descriptors { close(descriptor) } }
}
