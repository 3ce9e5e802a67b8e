/// Hears how the finishing of the downloads handed off to a ``FinishingQueue`` ended (see
/// ``FinishingQueue/handOff(_:to:)``): the jobs of those downloads have ended, and their owner ends the downloads.
protocol FinishingReceiver: AnyObject, Sendable {
    /// The finishing of each of `ends` is over: called as a group's outcomes are known, with those known together
    /// (the completions one transaction recorded; the failures of one group's files). Returns at once: it never
    /// blocks the queue.
    func finishingEnded(_ ends: [FinishingQueue.HandOffEnd])
}
