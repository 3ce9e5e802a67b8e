import AsyncHTTPClient
import Crypto
import Foundation
import HaulKit
import NIOCore

/// POSTs an event to a webhook URL: the JSON of ``EventPayload``, signed when a secret is set, as GitHub signs its
/// webhooks (`X-Haul-Signature: sha256=` and the HMAC-SHA256 of the body in hex).
package struct WebhookSender: Sendable {
    package var secret: String?
    package var timeout: Duration
    package var userAgent: String

    package init(secret: String?, timeout: Duration, userAgent: String = "Haul/\(HaulVersion.current)") {
        self.secret = secret
        self.timeout = timeout
        self.userAgent = userAgent
    }

    /// The signature header's value for `body`.
    package static func signature(of body: Data, secret: String) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Data(secret.utf8)))
        return "sha256=" + code.map { String(format: "%02x", $0) }.joined()
    }

    /// Why a delivery failed (it is tried again).
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Sends `event` to `url`; returns when the receiver answered 2xx, throws ``Failure`` otherwise.
    package func send(_ event: OutboxEvent, to url: URL, attempt: Int) async throws(Failure) {
        let body: Data
        do {
            body = try EventPayload(event).body()
        } catch {
            throw Failure(description: "cannot encode the event: \(error)")
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: userAgent)
        request.headers.add(name: "X-Haul-Event", value: event.kind.rawValue)
        request.headers.add(name: "X-Haul-Event-ID", value: event.eventID)
        request.headers.add(name: "X-Haul-Delivery-Attempt", value: String(attempt))
        if let secret { request.headers.add(name: "X-Haul-Signature", value: Self.signature(of: body, secret: secret)) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let status: UInt
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .nanoseconds(timeout.nanoseconds))
            status = response.status.code
            // The answer is read (at most 64 KiB) so that the connection can serve the next event.
            _ = try? await response.body.collect(upTo: 64 * 1024)
        } catch {
            throw Failure(description: "\(error)")
        }
        guard (200..<300).contains(status) else { throw Failure(description: "the receiver answered \(status)") }
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (whole, fraction) = components
        return whole * 1_000_000_000 + fraction / 1_000_000_000
    }
}
