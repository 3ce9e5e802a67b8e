import Foundation
import Testing

@testable import HaulKit

/// `--max-requests-per-host`, `--wait` and `--random-wait` as values.
@Suite("Request rates and pacing")
struct RequestRateTests {
    @Test(
        "rates parse per second, minute and hour",
        arguments: [
            ("20/s", 20, 1), ("600/min", 600, 60), ("3000/h", 3000, 3600), ("5", 5, 1), (" 7/sec ", 7, 1),
            ("2/m", 2, 60), ("1/hour", 1, 3600),
        ])
    func parses(_ text: String, _ requests: Int, _ seconds: Int) throws {
        let rate = try RequestRate(parsing: text)
        #expect(rate.requests == requests)
        #expect(rate.period == .seconds(seconds))
        #expect(try RequestRate(parsing: rate.description) == rate)
    }

    @Test(
        "bad rates are refused with what is wrong", arguments: ["", "0/s", "-3/s", "20/day", "x/s", "20/s/s", "1.5/s"])
    func refuses(_ text: String) {
        #expect(throws: DownloadError.self) { try RequestRate(parsing: text) }
    }

    @Test("the gap is the larger of the rate's and the wait; random wait spreads it by 0.5 to 1.5")
    func gaps() throws {
        let rate = try RequestRate(parsing: "10/s")
        #expect(rate.interval == .milliseconds(100))
        #expect(RequestPacing(maxRequestsPerHost: rate).interval(random: 0.3) == .milliseconds(100))
        #expect(RequestPacing(maxRequestsPerHost: rate, wait: .seconds(2)).interval(random: 0) == .seconds(2))
        let random = RequestPacing(wait: .seconds(2), randomWait: true)
        #expect(random.interval(random: 0) == .seconds(1))
        #expect(random.interval(random: 1) == .seconds(3))
        #expect(RequestPacing().interval(random: 0.5) == nil)
        #expect(RequestPacing().isEmpty)
    }

    @Test("the stricter pacing wins, field by field; it survives a round trip through JSON")
    func strictestAndCoding() throws {
        let loose = RequestPacing(maxRequestsPerHost: try RequestRate(parsing: "20/s"))
        let strict = RequestPacing(maxRequestsPerHost: try RequestRate(parsing: "600/min"), wait: .milliseconds(300))
        let merged = loose.strictest(with: strict)
        #expect(merged.maxRequestsPerHost?.perSecond == 10)
        #expect(merged.wait == .milliseconds(300))
        #expect(strict.strictest(with: loose).maxRequestsPerHost?.perSecond == 10)
        let encoded = try JSONEncoder().encode(merged)
        #expect(try JSONDecoder().decode(RequestPacing.self, from: encoded) == merged)
    }
}
