import Foundation

extension DownloadManager {
    /// Portable resume data for download `id`: a small versioned blob with the URL, the server's validators, the
    /// size, which bytes of the part file are on disk, and the segment map, that
    /// ``add(resuming:partFile:to:options:paused:)`` takes in another manager, process or machine together with a
    /// copy of the part file (``partFile(for:)``).
    ///
    /// It describes the last checkpoint. Pause the download first and copy the part file after, so that both
    /// describe the same bytes; while it runs, the checkpoint is at most ``Configuration/checkpointInterval`` old and
    /// the part file holds at least its bytes. It holds no path, header or login. Unlike URLSession's, nothing it
    /// claims is taken on trust: the other manager checks the part file's size before it adds the download, and the
    /// server's bytes before each resume point (``Configuration/resumeOverlap``) before it appends any.
    ///
    /// Throws if the download has no bytes on disk to resume from (not started, completed, or decoded on the fly).
    public func resumeData(for id: DownloadID) async throws(DownloadError) -> Data {
        guard let record = records[id] else { throw .unknownDownload(id) }
        guard record.state != .completed else {
            throw .invalidRequest("download \(id) is completed: its file is in place, there is nothing to resume")
        }
        // A running job records its checkpoints in the store; the table here has them once the job has ended.
        let stored = jobs[id] != nil ? (try await store.fetch(id) ?? record) : record
        let transfer = stored.transfer
        guard transfer.hasPartData, !transfer.finalizing, let path = stored.destinationPath else {
            throw .invalidRequest("download \(id) has no bytes on disk to resume from yet")
        }
        guard !ResourceValidator.isDecoded(transfer.contentEncoding) else {
            throw .invalidRequest(
                "download \(id) is decoded as it arrives (the server compressed it): its bytes cannot be resumed")
        }
        let pieces = transfer.segments.map { segments in
            segments.sorted { $0.start < $1.start }.map {
                ResumeData.Piece(start: $0.start, end: $0.end, written: $0.written)
            }
        }
        return try ResumeData(
            url: stored.url, finalURL: transfer.finalURL, etag: transfer.etag, lastModified: transfer.lastModified,
            totalBytes: transfer.totalBytes, contentEncoding: transfer.contentEncoding,
            bytesOnDisk: transfer.durableBytes, pieces: pieces, fileName: (path as NSString).lastPathComponent,
            checksum: stored.options.checksum, createdAt: Date()
        ).encoded()
    }

    /// Where download `id` keeps its bytes until it completes (its file's path with `.part`); nil for an unknown
    /// download, one that has no file name yet, or one that has completed.
    public func partFile(for id: DownloadID) -> URL? {
        guard let record = records[id], record.state != .completed, let path = record.partPath else { return nil }
        return URL(fileURLWithPath: path)
    }

    /// Adds a download that continues from `partFile`, with the ``resumeData(for:)`` another manager made (in
    /// another process, or on another machine).
    ///
    /// The part file is moved beside its destination as `NAME.part` (on the same file system). The download first
    /// trusts only the bytes the resume data names, then asks the server for the rest with `If-Range` and compares
    /// the 64 KiB before each resume point with the part file: a file that changed on the server, or a part file
    /// that is not what the resume data says, starts over from byte 0 (``RestartReason``), never spliced.
    ///
    /// - Parameters:
    ///   - resumeData: what ``resumeData(for:)`` returned.
    ///   - partFile: a copy of the part file; it must hold at least the bytes the resume data names.
    ///   - destination: the file to make; nil for `partFile` without its `.part` (or, when it has none, the name in
    ///     the resume data beside it). A relative path is in ``Configuration/downloadDirectory``.
    ///   - options: as for ``add(_:to:options:paused:)``; the resume data's checksum when it gives none.
    ///   - paused: add it paused.
    @discardableResult
    public func add(
        resuming resumeData: Data, partFile: URL, to destination: URL? = nil, options: DownloadOptions = .init(),
        paused: Bool = false
    ) async throws(DownloadError) -> DownloadID {
        try ensureRunning()
        let blob = try ResumeData.decoded(from: resumeData)
        let given = partFile.standardizedFileURL.path
        guard case .regularFile(let size) = FileSystem.entry(at: given) else {
            throw .invalidRequest("there is no part file at \(given) (a symbolic link is not followed)")
        }
        guard size >= blob.requiredPartSize else {
            throw .invalidRequest(
                "the part file \(given) holds \(size) bytes, and the resume data says \(blob.requiredPartSize) are "
                    + "on disk: copy the part file after the resume data was made, once the download is paused")
        }
        let file = Self.destination(destination, forPart: given, resume: blob, base: configuration.downloadDirectory)
        if let holder = reservations.holder(of: file.path), records[holder] != nil {
            throw .invalidRequest("download \(holder) already writes \(file.path): give this one another file")
        }
        let partPath = file.path + partFileSuffix
        if partPath != given {
            guard FileSystem.entry(at: partPath) == .none else {
                throw .invalidRequest("\(partPath) is in the way: move it, or give this download another file")
            }
            try FileSystem.createDirectory(FileSystem.parent(of: partPath))
            try FileSystem.rename(given, to: partPath)
        }
        var options = options
        if options.checksum == nil { options.checksum = blob.checksum }
        let id: DownloadID
        do throws(DownloadError) {
            guard let url = URL(string: blob.url) else { throw .invalidURL(blob.url, reason: "it cannot be read") }
            id = try await add(url, to: .file(file), options: options, paused: true)
            guard var record = records[id], record.destinationPath == file.path, !record.transfer.hasPartData else {
                throw .invalidRequest("a download of \(blob.url) to \(file.path) exists already: remove it first")
            }
            record.transfer = Self.transfer(blob)
            record.updatedAt = Date()
            records[id] = record
            try await store.saveTransfer(record)
        } catch {
            if partPath != given { try? FileSystem.rename(partPath, to: given) }
            throw error
        }
        if !paused { try await resume(id) }
        return id
    }

    /// The file a resumed download makes.
    private static func destination(_ given: URL?, forPart part: String, resume: ResumeData, base: URL) -> URL {
        if let given {
            let path = given.path
            let absolute = path.hasPrefix("/") ? URL(fileURLWithPath: path) : base.appendingPathComponent(path)
            return URL(fileURLWithPath: absolute.standardizedFileURL.path, isDirectory: false)
        }
        if part.hasSuffix(partFileSuffix), part.count > partFileSuffix.count {
            return URL(fileURLWithPath: String(part.dropLast(partFileSuffix.count)), isDirectory: false)
        }
        let name = resume.fileName.flatMap { $0.isEmpty || $0.contains("/") ? nil : $0 } ?? "download"
        return URL(fileURLWithPath: FileSystem.child(name, of: FileSystem.parent(of: part)), isDirectory: false)
    }

    /// The job's columns the resume data describes: trusted only as far as it says (no boot: the bytes after the
    /// checkpoint are not the page cache's of this machine).
    private static func transfer(_ resume: ResumeData) -> TransferRecord {
        var transfer = TransferRecord()
        transfer.hasPartData = true
        transfer.durableBytes = resume.bytesOnDisk
        transfer.etag = resume.etag
        transfer.lastModified = resume.lastModified
        transfer.totalBytes = resume.totalBytes
        transfer.contentEncoding = resume.contentEncoding
        transfer.finalURL = resume.finalURL
        transfer.segments = resume.pieces?.enumerated().map { index, piece in
            Segment(id: index, start: piece.start, end: piece.end, written: piece.written)
        }
        return transfer
    }
}
