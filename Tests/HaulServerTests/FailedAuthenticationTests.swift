import Foundation
import HaulKit
import HaulTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HaulServer

/// Issue 45, item 2: every failed token costs its caller, wherever it is (a batch, a multicall, parallel
/// connections); a request tries one token; failures share one budget across the daemon, refused with 429 once it is
/// spent; the owner's right token keeps working.
@Suite("failed authentications")
struct FailedAuthenticationTests {
    @Test("a multicall of wrong tokens is delayed and tries one: a right token after a wrong one is not accepted")
    func multicall() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            var calls: [JSONValue] = (0..<49).map { index in
                ["methodName": "aria2.getVersion", "params": [.string("token:guess\(index)")]]
            }
            calls.append(["methodName": "aria2.getVersion", "params": ["token:s3cret"]])
            let start = ContinuousClock.now
            let answer = try await client.rpc("system.multicall", [.array(calls)], token: nil)
            #expect(start.duration(to: .now) >= .milliseconds(200), "the failures cost the delay")
            let results = try #require(answer.result?.arrayValue)
            #expect(results.count == 50)
            #expect(results.allSatisfy { $0["message"] == "Unauthorized" }, "one guess per request")
        }
    }

    @Test("a batch of wrong tokens is delayed and tries one; a right token before them works")
    func batch() async throws {
        let harness = try await DaemonHarness.make()
        try await harness.test { client in
            let wrong = (0..<10).map { rpcCall("aria2.getGlobalStat", token: "guess\($0)", id: .integer(Int64($0))) }
            let start = ContinuousClock.now
            let answer = try await client.post(JSONValue.array(wrong + [rpcCall("aria2.getGlobalStat")]).jsonText)
            #expect(start.duration(to: .now) >= .milliseconds(200))
            let answers = try #require(answer.body.arrayValue)
            #expect(answers.count == 11)
            #expect(answers.allSatisfy { $0["error"]?["message"] == "Unauthorized" })
            let first = try await client.post(JSONValue.array([rpcCall("aria2.getGlobalStat")] + wrong).jsonText)
            #expect(first.body.arrayValue?.first?["result"]?["numActive"] == "0")
        }
    }

    @Test("parallel wrong tokens share one budget: beyond it, 429; the owner's token works meanwhile")
    func parallel() async throws {
        let harness = try await DaemonHarness.make {
            $0.failedAuthenticationBurst = 5
            $0.failedAuthenticationInterval = .seconds(60)
            // Long beside the owner's answer, so that one delayed like a failure is told from one slowed by the
            // suite's load.
            $0.unauthorizedDelay = .seconds(5)
        }
        try await harness.test { client in
            let statuses = try await withThrowingTaskGroup(of: RPCAnswer.self) { group in
                for index in 0..<40 {
                    group.addTask { try await client.rpc("aria2.tellActive", token: "guess\(index)") }
                }
                var answers: [RPCAnswer] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            let unauthorized = statuses.filter { $0.errorMessage == "Unauthorized" }
            let refused = statuses.filter { $0.status == 429 }
            #expect(unauthorized.count == 5, "the budget: five failures answered as such")
            #expect(refused.count == 35 && refused.allSatisfy { $0.error?["code"] == -32003 })
            let lateness = Lateness()
            let start = ContinuousClock.now
            let owner = try await client.rpc("aria2.getGlobalStat")
            let took = start.duration(to: .now)
            let late = await lateness.stop()
            #expect(owner.status == 200 && owner.result?["numActive"] == "0", "the right token still works")
            #expect(took < .seconds(1) + late, "and is not delayed: answered after \(took), tasks woke \(late) late")
            let refusedAlso = try await client.rpc("aria2.getGlobalStat", token: "guess")
            #expect(refusedAlso.status == 429)
        }
    }

    @Test("a refusal while the budget is empty is delayed like a failure (no faster answer to learn from)")
    func refusalDelayed() async throws {
        let harness = try await DaemonHarness.make {
            $0.failedAuthenticationBurst = 1
            $0.failedAuthenticationInterval = .seconds(60)
        }
        try await harness.test { client in
            _ = try await client.rpc("aria2.tellActive", token: "first")
            let start = ContinuousClock.now
            let refused = try await client.rpc("aria2.tellActive", token: "second")
            #expect(refused.status == 429)
            #expect(start.duration(to: .now) >= .milliseconds(200))
        }
    }

    @Test("the budget: a burst, then one a interval, never more than the burst")
    func budget() {
        let start = ContinuousClock.now
        var budget = FailureBudget(capacity: 3, interval: .seconds(1), now: start)
        let burst = (0..<4).map { _ in budget.take(at: start) }
        #expect(burst == [true, true, true, false])
        #expect(budget.isEmpty(at: start + .milliseconds(900)))
        let refilled = (0..<2).map { _ in budget.take(at: start + .seconds(1)) }
        #expect(refilled == [true, false], "one a second")
        let later = start + .seconds(3600)
        let afterAnHour = (0..<4).map { _ in budget.take(at: later) }
        #expect(afterAnHour == [true, true, true, false], "refilled to the burst and no further")
    }
}
