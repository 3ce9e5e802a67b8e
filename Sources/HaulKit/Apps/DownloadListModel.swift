import Foundation
import Observation

/// The model of an app's downloads screen: a list of downloads with their progress, and pause, resume and delete,
/// over a ``DownloadManager``. `@Observable`: a SwiftUI `List(model.rows)` redraws as downloads move, and on Linux
/// `withObservationTracking` tells a terminal table when to redraw (`Examples/DownloadList`).
///
/// It holds nothing a crash could lose: the manager records every download as it is added and checkpoints its
/// bytes, so after the app is killed a new model on a manager of the same database shows the same rows, and the
/// downloads that were running continue.
///
/// ```swift
/// let model = DownloadListModel(manager: manager)
/// Task { await model.run() }   // SwiftUI: .task { await model.run() }
/// await model.add(URL(string: "https://example.com/big.iso")!)
/// ```
@MainActor
@Observable
public final class DownloadListModel {
    /// One download as the list shows it.
    public struct Row: Identifiable, Sendable, Hashable {
        /// Everything known about the download, as of the last event.
        public var snapshot: DownloadSnapshot

        public var id: DownloadID { snapshot.id }
        /// The file's name once known, else the URL's last path component.
        public var name: String {
            if let file = snapshot.file { return file.lastPathComponent }
            let last = snapshot.url.lastPathComponent
            return last.isEmpty || last == "/" ? snapshot.url.host ?? snapshot.url.absoluteString : last
        }
        public var state: DownloadState { snapshot.state }
        /// 0…1; nil while the size is unknown.
        public var fraction: Double? { snapshot.fraction }
        public var receivedBytes: Int64 { snapshot.receivedBytes }
        public var totalBytes: Int64? { snapshot.totalBytes }
        /// Bytes per second now (0 unless running).
        public var bytesPerSecond: Double { snapshot.state == .running ? snapshot.progress.bytesPerSecond : 0 }
        /// Time left at the current speed; nil unless running at a known size.
        public var estimatedTimeRemaining: Duration? {
            snapshot.state == .running ? snapshot.progress.estimatedTimeRemaining : nil
        }
        /// Why it failed (or what it is retrying after).
        public var error: DownloadError? { snapshot.lastError }
        /// Whether ``DownloadListModel/pause(_:)`` applies (queued or running).
        public var canPause: Bool { state == .queued || state == .running }
        /// Whether ``DownloadListModel/resume(_:)`` applies (paused, failed or interrupted).
        public var canResume: Bool { state == .paused || state == .failed || state == .interrupted }
    }

    /// The downloads, oldest first.
    public private(set) var rows: [Row] = []
    /// Whether ``rows`` holds the manager's downloads yet (``run()`` loads them first): until then a screen shows
    /// that it is loading rather than an empty list.
    public private(set) var isLoaded = false
    /// The last action that failed (add, pause, resume, delete), for an alert; set it to nil once shown.
    public var lastError: DownloadError?
    /// The manager the list shows.
    @ObservationIgnored public let manager: DownloadManager
    /// Where each download is in ``rows``.
    @ObservationIgnored private var positions: [DownloadID: Int] = [:]

    /// A model of `manager`'s downloads; ``run()`` fills and follows it.
    public init(manager: DownloadManager) {
        self.manager = manager
    }

    /// Loads the downloads and follows their events until the task is cancelled or the manager shuts down. Start it
    /// once, from the view that shows the list (SwiftUI: `.task { await model.run() }`).
    public func run() async {
        // Subscribed first, so that nothing between the load and the first event is missed.
        let events = await manager.events()
        load(await manager.snapshots())
        for await event in events {
            receive(event)
            // The file's name comes with the server's first answer, which no event carries: asked for once.
            if case .progress = event.change, let row = row(event.id), row.snapshot.file == nil {
                await refresh(event.id)
            }
        }
    }

    /// The row of `id`, if the list has it.
    public func row(_ id: DownloadID) -> Row? { positions[id].map { rows[$0] } }

    /// Adds a download (it appears in ``rows`` at once) and returns its id; nil when it could not be added
    /// (``lastError`` says why).
    @discardableResult
    public func add(
        _ url: URL, to destination: DownloadDestination? = nil, options: DownloadOptions = .init()
    ) async -> DownloadID? {
        do {
            let id = try await manager.add(url, to: destination, options: options)
            // Looked at again after the await: ``run()`` may have taken the row in meanwhile (its load or the
            // `added` event) and followed it further, and this snapshot must not take it back to an older state.
            if positions[id] == nil, let snapshot = await manager.snapshot(id), positions[id] == nil {
                upsert(snapshot)
            }
            return id
        } catch {
            lastError = error
            return nil
        }
    }

    /// Pauses a download, keeping its bytes.
    public func pause(_ id: DownloadID) async {
        do { try await manager.pause(id) } catch { lastError = error }
        await refresh(id)
    }

    /// Resumes a paused, failed or interrupted download from its bytes on disk.
    public func resume(_ id: DownloadID) async {
        do { try await manager.resume(id) } catch { lastError = error }
        await refresh(id)
    }

    /// Removes a download from the list and deletes its partial data; with `deletingFile`, its completed file too.
    public func delete(_ id: DownloadID, deletingFile: Bool = false) async {
        do { try await manager.remove(id, deletingFile: deletingFile) } catch { lastError = error }
        await refresh(id)
    }

    /// Takes the manager's view of one download (after an action: its events may still be on their way).
    private func refresh(_ id: DownloadID) async {
        if let snapshot = await manager.snapshot(id) { upsert(snapshot) } else { drop(id) }
    }

    private func load(_ snapshots: [DownloadSnapshot]) {
        rows = snapshots.map(Row.init(snapshot:))
        positions = Dictionary(uniqueKeysWithValues: rows.enumerated().map { ($1.id, $0) })
        isLoaded = true
    }

    private func upsert(_ snapshot: DownloadSnapshot) {
        if let index = positions[snapshot.id] {
            rows[index].snapshot = snapshot
        } else {
            positions[snapshot.id] = rows.count
            rows.append(Row(snapshot: snapshot))
        }
    }

    private func drop(_ id: DownloadID) {
        guard let index = positions.removeValue(forKey: id) else { return }
        rows.remove(at: index)
        for position in index..<rows.count { positions[rows[position].id] = position }
    }

    /// Applies one event to the row it concerns.
    func receive(_ event: DownloadEvent) {
        if case .added(let snapshot) = event.change { return upsert(snapshot) }
        if case .status(.removed) = event.change { return drop(event.id) }
        guard let index = positions[event.id] else { return }
        var snapshot = rows[index].snapshot
        switch event.change {
        case .progress(let progress):
            snapshot.progress = progress
        case .restarted:
            snapshot.progress.receivedBytes = 0
        case .retrying(let error, _, _):
            snapshot.lastError = error
        case .status(let status):
            Self.apply(status, to: &snapshot)
        case .verified(let verification, _):
            snapshot.verification = verification
        case .waitingForSpace(let shortage):
            // The reason it shows while it waits (``DownloadSnapshot/isWaitingForSpace``), gone once there is room.
            snapshot.lastError = shortage.map { DownloadError.waitingForSpace($0) }
        case .added, .mirrorDropped, .fileChanged, .connections:
            return
        }
        rows[index].snapshot = snapshot
    }

    private static func apply(_ status: DownloadStatus, to snapshot: inout DownloadSnapshot) {
        switch status {
        case .queued: snapshot.state = .queued
        case .running:
            snapshot.state = .running
            snapshot.lastError = nil
        case .paused: snapshot.state = .paused
        case .interrupted: snapshot.state = .interrupted
        case .completed(let file):
            snapshot.state = .completed
            snapshot.file = file
            snapshot.lastError = nil
            if let total = snapshot.progress.expectedBytes { snapshot.progress.receivedBytes = total }
        case .failed(let error):
            snapshot.state = .failed
            snapshot.lastError = error
        case .removed: break
        }
    }
}
