import Synchronization

/// A flag set from an asynchronous call and read after it.
final class SharedFlag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Sets the flag.
    func set() { value.store(true, ordering: .releasing) }

    /// Sets the flag; returns whether this call set it (it was not set before).
    func setFirst() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }

    /// Whether it was set.
    var isSet: Bool { value.load(ordering: .acquiring) }
}
