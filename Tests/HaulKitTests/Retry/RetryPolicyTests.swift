import Testing

@testable import HaulKit

@Suite("Retry policy")
struct RetryPolicyTests {
    @Test(
        "backoff grows, is capped, is jittered and honours Retry-After",
        arguments: [
            (1, nil, 0.0, Duration.milliseconds(500)), (1, nil, 1.0, .seconds(1)), (2, nil, 1.0, .seconds(2)),
            (4, nil, 1.0, .seconds(8)), (20, nil, 1.0, .seconds(60)), (20, nil, 0.0, .seconds(30)),
            (1, .seconds(90), 0.5, .seconds(90)), (1, .seconds(99_999), 0.5, .seconds(3600)),
            (3, .milliseconds(1), 1.0, .seconds(4)),
        ] as [(Int, Duration?, Double, Duration)])
    func backoff(_ failure: Int, _ retryAfter: Duration?, _ random: Double, _ expected: Duration) {
        #expect(RetryPolicy().delay(afterFailure: failure, retryAfter: retryAfter, random: random) == expected)
    }
}
