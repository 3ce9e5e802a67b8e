import Foundation
import HaulTestSupport
import Testing

@testable import HaulKit

/// The stores the contract cases run against (``DownloadStoreTests``, ``DownloadStoreContractTests``): the same
/// calls must give the same answers from the embedded SQLite database and from the in-memory store.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case memory

    var testDescription: String { rawValue }

    /// A store on a fresh database in `directory` (SQLite: `haul.sqlite`; memory: its own records). `batchesUpdates`:
    /// SQLite's batched statements, or one record per statement (an SQLite older than 3.33).
    func make(_ directory: TemporaryDirectory, batchesUpdates: Bool = true) throws -> any DownloadStore {
        switch self {
        case .sqlite: try SQLiteDownloadStore(path: directory.file("haul.sqlite").path, batchesUpdates: batchesUpdates)
        case .memory: InMemoryDownloadStore()
        }
    }

    /// Another handle on the records of `store`, made by ``make(_:batchesUpdates:)`` in `directory`: another process
    /// on the same database file.
    func another(_ store: any DownloadStore, in directory: TemporaryDirectory) throws -> any DownloadStore {
        switch self {
        case .sqlite: try SQLiteDownloadStore(path: directory.file("haul.sqlite").path)
        case .memory: InMemoryDownloadStore(sharingRecordsOf: try #require(store as? InMemoryDownloadStore))
        }
    }
}
