import Testing
import HaulTestSupport
@Test func warm2() { #expect(1 == 1) }
