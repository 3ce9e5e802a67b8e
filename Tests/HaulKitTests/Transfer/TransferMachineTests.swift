import Testing

@testable import HaulKit

/// One download's run as a value: each step after an event, one line each.
@Suite("Transfer machine")
struct TransferMachineTests {
    /// The step's name, for one-line comparisons (a setback carries any error).
    static func name(_ step: TransferMachine.Step) -> String {
        switch step {
        case .attempt(let verifying): verifying ? "attempt, verifying" : "attempt"
        case .wait(.failure(let error)): "wait after \(DownloadError.mapping(error, stallTimeout: .seconds(1)).code)"
        case .wait(.restart(let reason, _)): "wait after restart: \(reason)"
        case .waitForSpace(let reason): "wait for space after \(reason.code)"
        case .finish: "finish"
        case .failed(let error): "failed: \(error.code)"
        case .stopped: "stopped"
        }
    }

    @Test("a resumed run verifies its overlap on the first attempt only")
    func overlap() {
        var machine = TransferMachine(resuming: true)
        #expect(Self.name(machine.step) == "attempt, verifying")
        machine.attemptEnded(.incomplete(wrote: true), missing: 10)
        #expect(Self.name(machine.step) == "attempt")
        #expect(Self.name(TransferMachine(resuming: false).step) == "attempt")
    }

    @Test("each way an attempt ends leads to its step")
    func attemptEndings() {
        var completed = TransferMachine(resuming: false)
        completed.attemptEnded(.completed, missing: 0)
        #expect(Self.name(completed.step) == "finish")
        var empty = TransferMachine(resuming: false)
        empty.attemptEnded(.incomplete(wrote: false), missing: 10)
        #expect(Self.name(empty.step) == "wait after \(DownloadError.Code.responseTruncated)")
        var refetch = TransferMachine(resuming: false)
        refetch.attemptEnded(.refetch(.contentMismatch, detail: "d"), missing: 10)
        #expect(Self.name(refetch.step) == "wait after restart: contentMismatch")
        var failed = TransferMachine(resuming: false)
        failed.failed(DownloadError.networkFailure("reset"), cancelled: false)
        #expect(Self.name(failed.step) == "wait after \(DownloadError.Code.networkFailure)")
    }

    @Test("finishing that rejects the file (a checksum failed with mirrors' bytes) waits, then attempts again")
    func finishRejected() {
        var machine = TransferMachine(resuming: false)
        machine.finishRejected(.checksumMismatch, detail: "d")
        #expect(Self.name(machine.step) == "attempt", "only from finish")
        machine.attemptEnded(.completed, missing: 0)
        machine.finishRejected(.checksumMismatch, detail: "d")
        #expect(Self.name(machine.step) == "wait after restart: checksumMismatch")
        machine.waited()
        #expect(Self.name(machine.step) == "attempt")
    }

    @Test("a wait leads to a new attempt, or the run fails when the budget is spent")
    func waits() {
        var machine = TransferMachine(resuming: false)
        machine.failed(DownloadError.networkFailure("reset"), cancelled: false)
        machine.waited()
        #expect(Self.name(machine.step) == "attempt")
        machine.failed(DownloadError.networkFailure("reset"), cancelled: false)
        machine.gaveUp(.httpStatus(404, reason: "Not Found", url: "u"))
        #expect(Self.name(machine.step) == "failed: \(DownloadError.Code.httpClientError)")
    }

    @Test("cancellation stops the run from any step but a final one")
    func cancellation() {
        var attempting = TransferMachine(resuming: false)
        attempting.failed(CancellationError(), cancelled: true)
        #expect(Self.name(attempting.step) == "stopped")
        var finishing = TransferMachine(resuming: false)
        finishing.attemptEnded(.completed, missing: 0)
        finishing.cancelled()
        #expect(Self.name(finishing.step) == "stopped")
        var failed = TransferMachine(resuming: false)
        failed.gaveUp(.diskFull(path: "/x"))
        failed.cancelled()
        #expect(Self.name(failed.step) == "failed: \(DownloadError.Code.diskFull)")
    }

    @Test("no room on the disk waits for space instead of failing or retrying; room again attempts")
    func space() {
        var writing = TransferMachine(resuming: false)
        writing.failed(DownloadError.diskFull(path: "/x"), cancelled: false)
        #expect(Self.name(writing.step) == "wait for space after \(DownloadError.Code.diskFull)")
        writing.waited()
        #expect(Self.name(writing.step) == "wait for space after \(DownloadError.Code.diskFull)", "not a retry wait")
        writing.spaceFound()
        #expect(Self.name(writing.step) == "attempt")
        var before = TransferMachine(resuming: true)
        let shortage = FreeSpaceShortage(path: "/x", neededBytes: 2, availableBytes: 1, floorBytes: 1)
        before.spaceRanOut(.waitingForSpace(shortage))
        #expect(Self.name(before.step) == "wait for space after \(DownloadError.Code.diskFull)")
        before.cancelled()
        #expect(Self.name(before.step) == "stopped")
        before.spaceFound()
        #expect(Self.name(before.step) == "stopped", "nothing after the end")
        var finishing = TransferMachine(resuming: false)
        finishing.attemptEnded(.completed, missing: 0)
        finishing.failed(DownloadError.diskFull(path: "/x"), cancelled: false)
        #expect(Self.name(finishing.step) == "wait for space after \(DownloadError.Code.diskFull)")
        finishing.gaveUp(.diskFull(path: "/x"))
        #expect(Self.name(finishing.step) == "failed: \(DownloadError.Code.diskFull)", "--space-wait spent")
    }

    @Test("events that do not apply change nothing")
    func illegal() {
        var machine = TransferMachine(resuming: false)
        machine.waited()
        #expect(Self.name(machine.step) == "attempt")
        machine.attemptEnded(.completed, missing: 0)
        machine.attemptEnded(.incomplete(wrote: false), missing: 1)
        machine.waited()
        #expect(Self.name(machine.step) == "finish")
        machine.cancelled()
        machine.attemptEnded(.completed, missing: 0)
        machine.gaveUp(.diskFull(path: "/x"))
        #expect(Self.name(machine.step) == "stopped")
    }
}
