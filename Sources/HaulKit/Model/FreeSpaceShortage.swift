/// A download waits for space: what its file system has, and what it needs.
public struct FreeSpaceShortage: Sendable, Hashable, CustomStringConvertible {
    /// The file or directory whose file system is short.
    public var path: String
    /// Bytes that must be free before it goes on: the floor plus what it still has to write, where known.
    public var neededBytes: Int64
    /// Bytes free when it last looked.
    public var availableBytes: Int64
    /// The floor (``FreeSpacePolicy/minimumFreeBytes``) on that file system.
    public var floorBytes: Int64

    public init(path: String, neededBytes: Int64, availableBytes: Int64, floorBytes: Int64) {
        self.path = path
        self.neededBytes = neededBytes
        self.availableBytes = availableBytes
        self.floorBytes = floorBytes
    }

    public var description: String {
        "waiting for space: \(neededBytes) bytes needed on the file system of \(path) (a floor of \(floorBytes)), "
            + "\(availableBytes) free"
    }
}
