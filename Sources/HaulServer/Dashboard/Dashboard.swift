import HTTPTypes
import Hummingbird
import NIOCore

/// The web dashboard at `/`: a page, its script and its style, served from the binary with a strict content
/// security policy (only this origin's script, style and sockets).
enum Dashboard {
    static let securityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; "
        + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    static func response(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.contentSecurityPolicy] = securityPolicy
        headers[.cacheControl] = "no-cache"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
