import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

@Suite("IP version")
struct AddressFamilyTests {
    @Test("IPv4 only reaches an IPv4 origin; IPv6 only cannot, and says it is a network failure")
    func family() async throws {
        for family in [AddressFamily.ipv4, .ipv6] {
            let harness = try await Harness.make {
                $0.addressFamily = family
                $0.retry.maxAttempts = 2
                $0.connectTimeout = .seconds(2)
            }
            let id = try await harness.manager.add(harness.origin.serve("/v4.bin", size: 50_000))
            if family == .ipv4 {
                expectContent(try await harness.manager.wait(for: id), size: 50_000)
            } else {
                let error = try await #require(throws: DownloadError.self) { try await harness.manager.wait(for: id) }
                #expect(error.code == .networkFailure, "\(error)")
                #expect(harness.origin.requests.isEmpty)
            }
            await harness.shutdown()
        }
    }
}
