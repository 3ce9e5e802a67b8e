/// Failures that tests inject where the real ones (a failing disk) cannot be made on demand. Empty in production.
struct FaultInjection: Sendable {
    /// The errno a checkpoint's sync of the part file fails with (as a failing disk reports `EIO` once).
    var checkpointSyncErrno: (@Sendable () -> Int32?)?

    init(checkpointSyncErrno: (@Sendable () -> Int32?)? = nil) {
        self.checkpointSyncErrno = checkpointSyncErrno
    }
}
