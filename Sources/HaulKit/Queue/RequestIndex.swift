import Foundation

/// The downloads a manager holds, found by what was asked for: their URL (but for its signature, ``ResourceKey``)
/// and, within it, their requested destination however it was spelled.
///
/// Adding a URL looks here for the download it asks for again. A lookup costs the same however many downloads
/// share the URL (a list of 10,000 names for one URL once made each addition compare every destination).
struct RequestIndex {
    /// By ``ResourceKey`` of the URL, in the order remembered (ids in order for a table built at once).
    private var byURL: [String: [DownloadID]] = [:]
    /// By ``key(url:destination:)``.
    private var byRequest: [String: [DownloadID]] = [:]
    /// The last destination spelled, and its spelling: a batch usually has one destination.
    private var lastSpelled: (destination: DownloadDestination?, spelling: String)?

    /// The index of `records`, in id order.
    init(_ records: RecordTable) {
        byURL.reserveCapacity(records.count)
        byRequest.reserveCapacity(records.count)
        for record in records.inIDOrder { insert(record) }
    }

    /// How a request is keyed: its URL's ``ResourceKey``, and its destination spelled one way.
    mutating func key(url: String, destination: DownloadDestination?) -> String {
        ResourceKey.of(url) + "\u{0}" + spelling(destination)
    }

    /// The downloads of `url` (but for its signature), in the order remembered.
    func downloads(ofURL url: String) -> [DownloadID] { byURL[ResourceKey.of(url)] ?? [] }

    /// The downloads asked for with this ``key(url:destination:)``, in the order remembered.
    func downloads(askedFor key: String) -> [DownloadID] { byRequest[key] ?? [] }

    /// Remembers `record`; `key` is its ``key(url:destination:)`` if already known.
    mutating func insert(_ record: DownloadRecord, key: String? = nil) {
        byURL[ResourceKey.of(record.url), default: []].append(record.downloadID)
        byRequest[key ?? self.key(url: record.url, destination: record.requestedDestination), default: []]
            .append(record.downloadID)
    }

    mutating func remove(_ record: DownloadRecord) {
        let id = record.downloadID
        let urlKey = ResourceKey.of(record.url)
        byURL[urlKey]?.removeAll { $0 == id }
        if byURL[urlKey]?.isEmpty == true { byURL[urlKey] = nil }
        let requestKey = key(url: record.url, destination: record.requestedDestination)
        byRequest[requestKey]?.removeAll { $0 == id }
        if byRequest[requestKey]?.isEmpty == true { byRequest[requestKey] = nil }
    }

    /// `destination` spelled one way, the last one remembered.
    private mutating func spelling(_ destination: DownloadDestination?) -> String {
        if let lastSpelled, lastSpelled.destination == destination { return lastSpelled.spelling }
        let spelling = Self.spelling(destination)
        lastSpelled = (destination, spelling)
        return spelling
    }

    /// `destination` spelled one way: however its URL was spelled (records written before destinations were spelled
    /// one way have a directory with or without its trailing `/`), two that name the same place are spelled alike.
    static func spelling(_ destination: DownloadDestination?) -> String {
        switch destination {
        case nil: "-"
        case .file(let file)?: "f" + file.standardizedFileURL.path
        case .directory(let directory)?: "d" + directory.standardizedFileURL.path
        }
    }
}
