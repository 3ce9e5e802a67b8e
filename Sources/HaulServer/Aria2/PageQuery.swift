import Foundation
import HaulKit

/// What `haul.page` is asked for: which downloads (states, a search), in which order, and which slice of them.
///
/// `{"states": ["running", "failed"], "search": "iso", "sort": "name", "descending": false, "offset": 0,
/// "count": 100}`, every field optional. States are Haul's (`haul list`'s) and `removed` (results aria2 keeps after a
/// removal); none means all. The search matches the name or the URL, ignoring case.
struct PageQuery: Equatable {
    /// The orders a page can be sorted in.
    enum Sort: String, CaseIterable {
        /// Running, then waiting in the order they will start, then finished (latest first), then removed.
        case queue
        case name
        case size
        case progress
        case speed
        /// The order they were added in.
        case added
    }

    static let states = DownloadState.allCases.map(\.rawValue) + ["removed"]
    /// The most downloads one page holds.
    static let maxCount = 500

    var states: Set<String> = []
    var search = ""
    var sort = Sort.queue
    var descending = false
    var offset = 0
    var count = 100

    init() {}

    init(_ value: JSONValue?) throws(RPCError) {
        guard let value else { return }
        guard let fields = value.objectValue else { throw .failed("haul.page expects an object of options") }
        for (name, field) in fields {
            switch name {
            case "states":
                guard let names = field.arrayValue?.compactMap(\.stringValue) else {
                    throw .failed("states must be an array of state names")
                }
                for name in names where !Self.states.contains(name) {
                    throw .failed("'\(name)' is not a state: \(Self.states.joined(separator: ", "))")
                }
                states = Set(names)
            case "search":
                guard let text = field.stringValue else { throw .failed("search must be a string") }
                search = String(text.prefix(1_000)).trimmingCharacters(in: .whitespacesAndNewlines)
            case "sort":
                guard let text = field.stringValue, let order = Sort(rawValue: text) else {
                    throw .failed("sort must be one of \(Sort.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                sort = order
            case "descending":
                guard case .bool(let flag) = field else { throw .failed("descending must be true or false") }
                descending = flag
            case "offset":
                guard let number = field.integerValue, number >= 0 else {
                    throw .failed("offset must be a whole number from 0")
                }
                offset = Int(clamping: number)
            case "count":
                guard let number = field.integerValue, (1...Int64(Self.maxCount)).contains(number) else {
                    throw .failed("count must be 1 to \(Self.maxCount)")
                }
                count = Int(number)
            default:
                throw .failed("haul.page has no option '\(name)'")
            }
        }
    }

    /// Whether `state` is asked for.
    func includes(_ state: String) -> Bool { states.isEmpty || states.contains(state) }

    /// The Haul states asked for.
    var downloadStates: Set<DownloadState> {
        Set(DownloadState.allCases.filter { includes($0.rawValue) })
    }

    /// Whether `text` (a name or a URL) matches the search.
    func matches(_ texts: String...) -> Bool {
        search.isEmpty || texts.contains { $0.range(of: search, options: .caseInsensitive) != nil }
    }
}
