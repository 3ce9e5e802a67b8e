import Foundation
import HaulTestSupport
import Testing

extension EndToEnd {
    /// Logins against nginx's `auth_basic`, cookie files, and what redirects may take along.
    @Suite("haul's logins, cookies and redirects")
    struct LoginCommandTests {
        @Test(
            "--user, a login in the URL, --netrc-file and $NETRC pass nginx's auth_basic; without: a clear 401",
            .enabled(if: NginxServer.executable != nil, "nginx is not installed (.ci/run installs it)"))
        func nginxBasicAuthentication() async throws {
            let server = try await NginxServer.start()
            let size = 3 * 1024 * 1024 + 99
            try Data(TestContent.bytes(0..<size)).write(to: server.root.appendingPathComponent("secret.bin"))
            let directory = TemporaryDirectory()
            let url = server.url("/private/secret.bin").absoluteString
            let netrc = directory.file("netrc")
            try "machine 127.0.0.1\n  login \(server.user)\n  password \(server.password)\n"
                .write(to: netrc, atomically: true, encoding: .utf8)
            let login = "\(server.user):\(server.password)"
            let withPassword = url.replacingOccurrences(of: "http://", with: "http://\(login)@")

            func get(
                _ name: String, _ arguments: [String], environment: [String: String] = [:]
            ) async throws
                -> (status: Int32, output: String, error: String)
            {
                try await ChildProcess.run(
                    "haul",
                    [
                        "get", "-q", "-x", "4", "-o", directory.file(name).path, "--state-dir",
                        directory.file("state").path,
                    ]
                        + arguments,
                    environment: environment.merging(["NETRC": directory.file("none").path]) { a, _ in a })
            }
            for (name, arguments, environment) in [
                ("user.bin", [url, "--user", login], [:]),
                ("url.bin", [withPassword], [:]),
                ("netrc.bin", [url, "--netrc-file", netrc.path], [:]),
                ("env.bin", [url], ["NETRC": netrc.path]),
            ] as [(String, [String], [String: String])] {
                let result = try await get(name, arguments, environment: environment)
                #expect(result.status == 0, "\(name): \(result.error)")
                let data = try Data(contentsOf: directory.file(name))
                #expect(TestContent.firstMismatch([UInt8](data), size: size) == nil, "\(name)")
            }
            // One 401 per run at most: later requests (other connections, segments) carry the login at once.
            let statuses = server.log.filter { $0.path == "/private/secret.bin" }.map(\.status)
            #expect(statuses.filter { $0 == 401 }.count <= 4, "\(statuses)")
            #expect(statuses.filter { $0 == 206 }.count >= 8, "\(statuses)")

            // The login is kept masked: not in the URL, not in list --json.
            let list = try await ChildProcess.run(
                "haul", ["list", "--json", "--state-dir", directory.file("state").path])
            #expect(!list.output.contains(server.password))
            #expect(list.output.contains("\"credentials\":\"ann:***\""), "\(list.output)")

            let refused = try await get("refused.bin", [url, "--no-netrc", "--retries", "1"])
            #expect(refused.status == 8, "a 401 is an HTTP error")
            #expect(refused.error.contains("401") && refused.error.contains("--user"), "\(refused.error)")
            let noPassword = try await get("prompt.bin", [url, "--user", server.user])
            #expect(noPassword.status == 64)
            #expect(noPassword.error.contains("no terminal"), "\(noPassword.error)")
            await server.stop()
        }

        @Test("--load-cookies sends a cookie file's cookies; --save-cookies writes them with the server's new ones")
        func cookieFiles() async throws {
            let origin = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            var resource = TestOrigin.Resource(size: 200_000)
            resource.requiredCookie = "session=abc"
            let file = origin.serve("/members/file.bin", resource)
            origin.redirect("/go", to: file.absoluteString, headers: [("Set-Cookie", "seen=1; Max-Age=3600")])
            let jar = directory.file("cookies.txt")
            try "# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t0\tsession\tabc\n"
                .write(to: jar, atomically: true, encoding: .utf8)
            let saved = directory.file("saved.txt")
            let result = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", origin.url("/go").absoluteString, "-o", directory.file("file.bin").path,
                    "--load-cookies", jar.path, "--save-cookies", saved.path,
                    "--state-dir", directory.file("state").path,
                ])
            #expect(result.status == 0, "\(result.error)")
            #expect(origin.requests(to: "/members/file.bin").first?.header("Cookie") == "session=abc; seen=1")
            let text = try String(contentsOf: saved, encoding: .utf8)
            #expect(text.contains("\tsession\tabc"), "\(text)")
            #expect(text.contains("\tseen\t1"), "\(text)")
            let refused = try await ChildProcess.run(
                "haul",
                [
                    "get", "-q", "--load-cookies", directory.file("missing.txt").path, file.absoluteString,
                    "--state-dir", directory.file("state2").path,
                ])
            #expect(refused.status == 64, "\(refused.error)")
            await origin.stop()
        }

        @Test("-H headers stay with the first origin unless --location-trusted")
        func locationTrusted() async throws {
            let home = try await TestOrigin.start()
            let away = try await TestOrigin.start()
            let directory = TemporaryDirectory()
            let target = away.serve("/file.bin", size: 100_000)
            home.redirect("/start", to: target.absoluteString)
            for (index, trusted) in [false, true].enumerated() {
                let result = try await ChildProcess.run(
                    "haul",
                    [
                        "get", "-q", home.url("/start").absoluteString, "-o", directory.file("f\(index).bin").path,
                        "-H", "X-Api-Token: t0ken", "--state-dir", directory.file("state\(index)").path,
                    ] + (trusted ? ["--location-trusted"] : []))
                #expect(result.status == 0, "\(result.error)")
            }
            #expect(away.requests(to: "/file.bin").map { $0.header("X-Api-Token") } == [nil, "t0ken"])
            await home.stop()
            await away.stop()
        }
    }
}
