import AsyncHTTPClient
import Foundation

/// A body compressed although `identity` was asked for.
extension DownloadJob {
    /// Whether a response sent with `encoding` although Haul asked for `identity` is to be decoded: yes for gzip
    /// and deflate, unless the file's name says it is compressed (`.gz`, `.tgz`), where the encoded bytes are the
    /// file people expect.
    func shouldDecode(_ encoding: String, head: ResponseHead, url: URL?) -> Bool {
        guard ResourceValidator.decodableEncodings.contains(encoding.lowercased()) else { return false }
        let name: String
        if let destination = record.destinationPath {
            name = (destination as NSString).lastPathComponent
        } else {
            name = FileNamer.name(
                contentDisposition: head.contentDisposition,
                url: url ?? URL(string: record.url) ?? URL(fileURLWithPath: "/"))
        }
        return !FileNamer.saysCompressed(name)
    }

    /// Fetches the whole file again through the decoding client and writes the decoded bytes from byte 0.
    ///
    /// Decoded bytes have no byte ranges on the server, so this copy cannot be resumed: a cut restarts it from 0
    /// (through the retry budget), and the record marks its bytes as decoded so a later run starts over too.
    mutating func receiveDecoded(_ encoding: String) async throws -> AttemptResult {
        logger.info("decoding an unrequested Content-Encoding", metadata: ["encoding": "\(encoding)"])
        machine.encodingSeen(encoding)
        if state.current.written > 0 || record.transfer.hasPartData { try await rewind(to: 0, because: nil) }
        let (response, finalURL) = try await send(RangeRequest(start: 0, overlap: 0), bounded: false, decoding: true)
        let head = ResponseHead(response, now: Date())
        guard head.status == 200 || head.status == 203 else {
            throw ResponseEvaluator.evaluate(
                head, request: RangeRequest(start: 0, overlap: 0), recorded: nil, url: record.url,
                policy: record.options.onResourceChange
            ).error ?? DownloadError.malformedResponse("a request for the whole file got \(head.status)")
        }
        var validator = head.validator
        validator.contentEncoding = ResourceValidator.decoded(head.contentEncoding ?? encoding)
        validator.totalBytes = nil
        let finalText = finalURL.absoluteString
        record.transfer.finalURL = finalText
        lastResponseURL = (finalText, finalURL)
        guard try await beginPartData(validator, head: head, url: finalURL) else { return .keptExistingFile }
        state.update { $0.total = nil }
        // The encoded length frames the body; the decoded length is known only at its end.
        return try await receive(response.body, from: 0, verifying: 0, contentLength: nil, endsTheFile: true)
    }
}
