import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private nginx on 127.0.0.1, run in the foreground as a child of the test, with its own configuration: the
/// server people really download from. `/slow/` serves the same files at `limit_rate`; `/private/` serves them to
/// ``user`` with ``password`` only (`auth_basic`). The access log records
/// `$request_uri $status $bytes_sent "$http_range" "$http_if_range"` per request. Given ``TestCertificates``, it
/// serves HTTPS only, with the server certificate of that private authority, and `/mutual/` serves only clients
/// presenting a certificate the authority signed (mutual TLS).
public final class NginxServer: @unchecked Sendable {
    /// One line of the access log.
    public struct LogEntry: Sendable, Equatable {
        public var path: String
        public var status: Int
        public var bytesSent: Int
        public var range: String?
        public var ifRange: String?
    }

    public let root: URL
    public let port: Int
    /// `https` when started with certificates, else `http`.
    public let scheme: String
    /// The login `/private/` asks for.
    public let user = "ann"
    public let password = "open-sesame"

    private let directory: TemporaryDirectory

    /// The nginx executable, or nil if it is not installed (`.ci/run` installs `nginx-light`).
    public static var executable: URL? {
        for path in ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx", "/opt/homebrew/bin/nginx"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return URL(fileURLWithPath: path)
        }
        return nil
    }

    /// Starts nginx (off the cooperative thread pool) serving a fresh `root`.
    public static func start(limitRate: String = "8m", tls: TestCertificates? = nil) async throws -> NginxServer {
        try await blocking { try NginxServer(limitRate: limitRate, tls: tls) }
    }

    /// Starts nginx serving `root` (a fresh directory, `www` inside the server's own directory). Blocks.
    public init(limitRate: String = "8m", tls: TestCertificates? = nil) throws {
        guard let executable = Self.executable else { throw NginxUnavailable() }
        directory = TemporaryDirectory("haul-nginx")
        root = directory.file("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: directory.file("tmp"), withIntermediateDirectories: true)
        try "\(user):{PLAIN}\(password)\n".write(to: directory.file("htpasswd"), atomically: true, encoding: .utf8)
        scheme = tls == nil ? "http" : "https"
        let rootPath = root.path
        let secure =
            tls.map { certificates in
                """
                ssl_certificate \(certificates.serverCertificate);
                ssl_certificate_key \(certificates.serverKey);
                ssl_client_certificate \(certificates.ca);
                ssl_verify_client optional;
                location /mutual/ {
                    alias \(rootPath)/;
                    if ($ssl_client_verify != SUCCESS) { return 403; }
                }
                """
            } ?? ""
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try LocalPorts.free()
            let prefix = directory.path
            let configuration = """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(prefix)/nginx.pid;
                error_log \(prefix)/error.log warn;
                events { worker_connections 256; }
                http {
                    log_format haul '$request_uri $status $bytes_sent "$http_range" "$http_if_range"';
                    access_log \(prefix)/access.log haul;
                    log_format times '$msec';
                    access_log \(prefix)/times.log times;
                    client_body_temp_path \(prefix)/tmp;
                    proxy_temp_path \(prefix)/tmp;
                    fastcgi_temp_path \(prefix)/tmp;
                    uwsgi_temp_path \(prefix)/tmp;
                    scgi_temp_path \(prefix)/tmp;
                    sendfile on;
                    types { application/octet-stream bin; }
                    server {
                        listen 127.0.0.1:\(port)\(tls == nil ? "" : " ssl");
                        root \(root.path);
                        location /slow/ { alias \(root.path)/; limit_rate \(limitRate); }
                        location /private/ {
                            alias \(root.path)/;
                            auth_basic "haul";
                            auth_basic_user_file \(prefix)/htpasswd;
                        }
                        \(secure)
                    }
                }
                """
            try configuration.write(to: directory.file("nginx.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = executable
            process.arguments = ["-p", prefix, "-c", directory.file("nginx.conf").path, "-e", "\(prefix)/error.log"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if LocalPorts.waitUntilListening(port: port, process: process) {
                self.port = port
                self.running = process
                return
            }
            LocalPorts.forceKill(process)
            lastError = NginxUnavailable(
                reason: (try? String(contentsOf: directory.file("error.log"), encoding: .utf8)) ?? "did not start")
        }
        throw lastError ?? NginxUnavailable()
    }

    private var running: Process?

    public func url(_ path: String) -> URL { URL(string: "\(scheme)://127.0.0.1:\(port)\(path)")! }

    /// When each request so far was answered (Unix time in seconds, to the millisecond), in order.
    public var requestTimes: [Double] {
        guard let text = try? String(contentsOf: directory.file("times.log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { Double($0) }
    }

    /// The access log so far.
    public var log: [LogEntry] {
        guard let text = try? String(contentsOf: directory.file("access.log"), encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 3)
            guard fields.count == 4, let status = Int(fields[1]), let sent = Int(fields[2]) else { return nil }
            let quoted = fields[3].split(separator: "\"", omittingEmptySubsequences: false).map(String.init)
            // `"range" "if-range"` splits into ["", range, " ", ifRange, ""]; nginx logs "-" for none.
            func value(_ index: Int) -> String? {
                guard quoted.count > index, quoted[index] != "-", !quoted[index].isEmpty else { return nil }
                return quoted[index].replacingOccurrences(of: "\\x22", with: "\"")  // nginx escapes quotes
            }
            return LogEntry(
                path: String(fields[0]), status: status, bytesSent: sent, range: value(1), ifRange: value(3))
        }
    }

    /// Kills nginx. (SIGKILL: a child of a test runner may inherit blocked signals, and a single-process nginx
    /// never unblocks them; the access log is written per request, so nothing is lost.)
    public func stop() async {
        _ = try? await blocking { [self] in kill() }
    }

    private func kill() {
        if let running { LocalPorts.forceKill(running) }
    }

    deinit { kill() }
}

/// nginx is not installed or would not start.
public struct NginxUnavailable: Error, CustomStringConvertible {
    public var reason = "nginx is not installed (.ci/run installs nginx-light)"
    public var description: String { reason }
}
