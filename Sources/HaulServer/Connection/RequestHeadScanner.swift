/// Follows the bytes of a request head (its request line and header lines, up to the empty line) as they arrive,
/// without parsing them: enough to refuse an over-long request line (414) or head (431) before the HTTP parser
/// buffers it, and to tell when the head is complete. Bare `LF` line ends count as `CRLF` does; empty lines before the
/// request line are skipped, as HTTP allows.
struct RequestHeadScanner: Sendable, Hashable {
    /// What the bytes seen so far amount to.
    enum Verdict: Sendable, Hashable {
        /// More of the head is to come.
        case incomplete
        /// The head ended after `consumed` bytes of the last chunk; the rest is the body or the next request.
        case complete(consumed: Int)
        /// The request line is longer than allowed.
        case requestLineTooLong
        /// The head is larger than allowed.
        case headTooLarge
    }

    let maxRequestLine: Int
    let maxHead: Int
    /// Bytes of the head so far.
    private(set) var headBytes = 0
    /// Bytes of the current line so far, `CR` left out.
    private var lineBytes = 0
    private var sawRequestLine = false

    init(maxRequestLine: Int, maxHead: Int) {
        self.maxRequestLine = maxRequestLine
        self.maxHead = maxHead
    }

    /// Whether any byte of a head arrived.
    var hasStarted: Bool { headBytes > 0 }

    /// Takes the next chunk of bytes.
    mutating func scan(_ bytes: UnsafeRawBufferPointer) -> Verdict {
        for (index, byte) in bytes.enumerated() {
            headBytes += 1
            switch byte {
            case UInt8(ascii: "\n"):
                if sawRequestLine, lineBytes == 0 { return .complete(consumed: index + 1) }
                if lineBytes > 0 { sawRequestLine = true }
                lineBytes = 0
            case UInt8(ascii: "\r"):
                break
            default:
                lineBytes += 1
                if !sawRequestLine, lineBytes > maxRequestLine { return .requestLineTooLong }
            }
            if headBytes > maxHead { return .headTooLarge }
        }
        return .incomplete
    }
}
