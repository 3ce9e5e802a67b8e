import Foundation
import NIOCore
import Testing

@testable import HaulKit

/// What the job's machine carries besides its step: what finishing puts in place, what the run learnt of the
/// server, what the file must match, and whether the job holds its slot. Transition by transition.
@Suite("Transfer machine state")
struct TransferMachineStateTests {
    /// What a finish step puts in place, for one-line comparisons.
    static func contents(_ step: TransferMachine.Step) -> String {
        guard case .finish(let contents) = step else { return TransferMachineTests.name(step) }
        switch contents {
        case .partFile: return "finish the part file"
        case .held(let body, let fresh): return "finish \(body.count) held bytes\(fresh ? ", freshly named" : "")"
        case .keptExistingFile: return "keep the file already there"
        }
    }

    @Test("each way an attempt completes says what finishing puts in place")
    func finishingContents() {
        var part = TransferMachine(resuming: false)
        part.attemptEnded(.completed, missing: 0)
        #expect(Self.contents(part.step) == "finish the part file")

        let body = HeldBody()
        var buffer = ByteBuffer()
        buffer.writeString("hello")
        try? body.write(buffer, at: 0)
        var held = TransferMachine(resuming: false)
        held.attemptEnded(.held(body, fresh: true), missing: 0)
        #expect(Self.contents(held.step) == "finish 5 held bytes, freshly named")

        var kept = TransferMachine(resuming: true)
        kept.attemptEnded(.keptExistingFile, missing: 10)
        #expect(Self.contents(kept.step) == "keep the file already there")
    }

    @Test("a held body is valid only in its finish step: a rejected finish fetches again without it")
    func heldBodyIsDropped() {
        var machine = TransferMachine(resuming: false)
        machine.attemptEnded(.held(HeldBody(), fresh: false), missing: 0)
        machine.finishRejected(.resourceChanged, detail: "d")
        #expect(Self.contents(machine.step) == "wait after restart: resourceChanged")
        machine.waited()
        #expect(Self.contents(machine.step) == "attempt")
        machine.attemptEnded(.completed, missing: 0)
        #expect(Self.contents(machine.step) == "finish the part file")
    }

    @Test("what the run learns of the server stays learnt, whatever the step")
    func terms() {
        var machine = TransferMachine(resuming: false)
        #expect(machine.terms == TransferMachine.Terms())
        machine.rangesRefused()
        #expect(!machine.terms.rangesUsable && machine.terms.segmentsAllowed)
        machine.connectionsGranted(3)
        machine.requested(generation: 2)
        machine.failed(DownloadError.networkFailure("reset"), cancelled: false)
        machine.waited()
        #expect(machine.terms.connectionGrant == 3 && machine.terms.requestedGeneration == 2)
        machine.splitRefused()
        #expect(!machine.terms.segmentsAllowed)

        var decoding = TransferMachine(resuming: false)
        decoding.encodingSeen("gzip")
        #expect(decoding.terms.unrequestedEncoding == "gzip")
        #expect(!decoding.terms.rangesUsable && !decoding.terms.segmentsAllowed, "decoded bytes have no ranges")
    }

    @Test("a resumed completed file must match its SHA-256 until the file is fetched from byte 0")
    func expectations() {
        var machine = TransferMachine(resuming: false)
        let modified = Date(timeIntervalSince1970: 1_000_000)
        machine.comparingWithExisting(modified: modified)
        machine.resumingCompletedFile(sha256: "abc")
        machine.prepared(resuming: true)
        #expect(TransferMachineTests.name(machine.step) == "attempt, verifying")
        #expect(machine.expectations.sha256 == "abc")
        machine.fetchingFromStart()
        #expect(machine.expectations.sha256 == nil)
        #expect(machine.expectations.existingModified == modified, "about the destination, not the part file")
    }

    @Test("prepared sets the first attempt only before the run went on")
    func preparedOnlyFirst() {
        var machine = TransferMachine(resuming: false)
        machine.attemptEnded(.completed, missing: 0)
        machine.prepared(resuming: true)
        #expect(TransferMachineTests.name(machine.step) == "finish")
    }

    @Test("a slot given away when finishing started is asked for again before the next attempt")
    func slot() {
        var machine = TransferMachine(resuming: false)
        #expect(machine.holdsSlot)
        machine.attemptEnded(.completed, missing: 0)
        machine.slotGivenAway()
        machine.failed(DownloadError.networkFailure("rename"), cancelled: false)
        #expect(!machine.holdsSlot, "still without a slot through the wait")
        machine.waited()
        #expect(TransferMachineTests.name(machine.step) == "attempt")
        #expect(!machine.holdsSlot)
        machine.slotTaken()
        #expect(machine.holdsSlot)
    }

    @Test("a mirror taking over ends a wait at once; an attempt that gave up is made again as it was")
    func takeOver() {
        var waiting = TransferMachine(resuming: false)
        waiting.failed(DownloadError.networkFailure("reset"), cancelled: false)
        waiting.tookOver()
        #expect(TransferMachineTests.name(waiting.step) == "attempt")
        var attempting = TransferMachine(resuming: true)
        attempting.tookOver()
        #expect(TransferMachineTests.name(attempting.step) == "attempt, verifying")
        var failed = TransferMachine(resuming: false)
        failed.gaveUp(.httpStatus(404, reason: "Not Found", url: "u"))
        failed.tookOver()
        #expect(TransferMachineTests.name(failed.step) == "failed: \(DownloadError.Code.httpClientError)")
    }

    @Test("each change of the record is one save: a new part file's goes with others', the rest at once")
    func saves() {
        var machine = TransferMachine(resuming: false)
        #expect(machine.recordChanged(.newPartFile) == .newPartFile)
        let atOnce: [TransferMachine.RecordChange] = [
            .rewound(toStart: false), .sizeLearnt, .planned, .partFileTrusted, .partDataDropped, .renamed,
        ]
        for change in atOnce { #expect(machine.recordChanged(change) == .transfer, "\(change)") }
    }

    @Test("a cut back to byte 0 voids the SHA-256 a resumed file had to match; a cut elsewhere keeps it")
    func rewindExpectations() {
        var machine = TransferMachine(resuming: true)
        machine.resumingCompletedFile(sha256: "abc")
        _ = machine.recordChanged(.rewound(toStart: false))
        #expect(machine.expectations.sha256 == "abc")
        #expect(machine.recordChanged(.rewound(toStart: true)) == .transfer)
        #expect(machine.expectations.sha256 == nil)
    }

    @Test("a budget spent by one of several connections fails the run, unless the disk is full: that is waited out")
    func gaveUpInAttempt() {
        var spent = TransferMachine(resuming: false)
        spent.attemptEnded(.gaveUp(.networkFailure("reset")), missing: 10)
        #expect(TransferMachineTests.name(spent.step) == "failed: \(DownloadError.Code.networkFailure)")
        var full = TransferMachine(resuming: false)
        full.attemptEnded(.gaveUp(.diskFull(path: "/x")), missing: 10)
        #expect(TransferMachineTests.name(full.step) == "wait for space after \(DownloadError.Code.diskFull)")
    }
}
