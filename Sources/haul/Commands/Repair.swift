import ArgumentParser
import Foundation
import HaulKit

/// `haul repair ID|FILE`: re-check a completed file piece by piece and fetch only the bad pieces again.
struct Repair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Re-check a completed file piece by piece and fetch only the bad pieces again.",
        discussion: """
            The file's piece hashes come from the Metalink it was downloaded with, or from \
            --metalink FILE. Each bad piece is fetched again alone, by range, with If-Range \
            (a server whose copy is another version now is refused: download it again), \
            then the whole file must have the SHA-256 Haul recorded when it completed.

            Examples:
              haul repair 3
              haul repair debian.iso --metalink debian.iso.meta4
            """)

    @Argument(help: "A download id, or the path of a completed file.")
    var target: String

    @Option(help: ArgumentHelp("Take the piece hashes from this Metalink.", valueName: "FILE"))
    var metalink: String?

    @OptionGroup var state: StateOptions

    func run() async throws {
        let pieces = try metalink.map { path -> PieceHashes in
            let document = try RequestOptions.readMetalink(path)
            guard let pieces = document.files.first(where: { $0.pieces != nil })?.pieces else {
                throw ValidationError("\(path) has no piece hashes")
            }
            return pieces
        }
        let manager = try await state.openEditor()
        let id: DownloadID
        if let number = Int64(target) {
            id = DownloadID(rawValue: number)
        } else {
            let path = URL(fileURLWithPath: target).standardizedFileURL.path
            let completed = await manager.snapshots(in: [.completed])
            guard let found = completed.first(where: { $0.file?.standardizedFileURL.path == path }) else {
                await manager.shutdown()
                throw ValidationError("no completed download wrote \(path)")
            }
            id = found.id
        }
        do {
            let report = try await manager.repair(id, pieces: pieces)
            await manager.shutdown()
            let path = report.file.path
            if report.badPieces.isEmpty {
                Console.out("#\(id) ok \(path): all \(report.pieceCount) pieces have their hashes\n")
                return
            }
            Console.out(
                "#\(id) repaired \(path): \(report.badPieces.count) of \(report.pieceCount) pieces were bad "
                    + "(\(report.badPieces.prefix(20).map(String.init).joined(separator: ", "))"
                    + "\(report.badPieces.count > 20 ? ", …" : "")), \(report.fetchedBytes) bytes fetched"
                    + (report.matchesRecordedSHA256 == true ? "; the file has the SHA-256 Haul recorded" : "") + "\n")
        } catch let error as DownloadError {
            await manager.shutdown()
            Console.error(error.description)
            throw ExitStatus.forFailure(error.code == .unknownDownload ? .invalidRequest(error.summary) : error)
        }
    }
}
