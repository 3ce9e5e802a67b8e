import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Local ports for the servers tests start (nginx, tinyproxy).
enum LocalPorts {
    /// A port on 127.0.0.1 that nothing listens on now.
    static func free() throws -> Int {
        let fd = socket(AF_INET, streamSocketType, 0)
        guard fd >= 0 else { throw NginxUnavailable(reason: "no socket") }
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw NginxUnavailable(reason: "cannot find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// 127.0.0.1:`port` as a socket address (port 0: any free one, when binding).
    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// Starts `executable` with `arguments(port)` for a free port, up to five times (another program may take the
    /// port between the check and the start); returns the process and its port once it accepts connections, or nil.
    static func launch(_ executable: URL, arguments: (Int) throws -> [String]) throws -> (process: Process, port: Int)?
    {
        for _ in 0..<5 {
            let port = try free()
            let process = Process()
            process.executableURL = executable
            process.arguments = try arguments(port)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if waitUntilListening(port: port, process: process) { return (process, port) }
            forceKill(process)
        }
        return nil
    }

    /// Kills `process` at once and waits for it.
    static func forceKill(_ process: Process) {
        guard process.isRunning else { return }
        _ = kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits (up to 5 s) until something accepts connections on `port`; false if `process` ends first.
    static func waitUntilListening(port: Int, process: Process) -> Bool {
        for _ in 0..<200 {
            guard process.isRunning else { return false }
            let fd = socket(AF_INET, streamSocketType, 0)
            var address = loopback(port: port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(fd)
            if connected { return true }
            usleep(25_000)
        }
        return false
    }
}

#if canImport(Glibc)
let streamSocketType = Int32(SOCK_STREAM.rawValue)
#else
let streamSocketType = SOCK_STREAM
#endif
