import Synchronization

/// A flag set from an asynchronous call and read after it.
final class SharedFlag: Sendable {
    private let value = Atomic<Bool>(false)

    /// Sets the flag.
    func set() { value.store(true, ordering: .relaxed) }

    /// Whether it was set.
    var isSet: Bool { value.load(ordering: .relaxed) }
}
