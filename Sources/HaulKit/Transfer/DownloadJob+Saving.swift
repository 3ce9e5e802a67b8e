/// Writing the job's record: the one place it is written, performing the machine's ``TransferMachine/Save`` actions.
extension DownloadJob {
    /// Performs `save`, which an event of the machine returned (``TransferMachine/recordChanged(_:)``): a new part
    /// file's record goes with other jobs' through the ``TransferRecorder``; every other change is written at once.
    /// Either way it is in the store before the job takes the step that depends on it.
    func perform(_ save: TransferMachine.Save) async throws(DownloadError) {
        switch save {
        case .newPartFile: try await environment.recorder.save(record)
        case .transfer: try await environment.store.saveTransfer(record)
        }
    }
}
