/// What was asked for: bytes from `start`, of which the first `overlap` are already on disk and are compared,
/// so the resume point itself is `start + overlap`.
struct RangeRequest: Sendable, Equatable {
    var start: Int64
    var overlap: Int64
    var resumePoint: Int64 { start + overlap }
}
