extension DownloadOptions {
    /// These options with `newer`'s where they speak: each of `newer`'s values that is not the default replaces
    /// this one (a new checksum, new headers, another connection count (both of its fields, as one setting), a speed
    /// limit, mirrors, a policy for an existing file); a default leaves this value as it is. Headers are replaced by
    /// name: a new `Authorization` replaces the old one, which is never sent again, and the others stay.
    func merging(_ newer: DownloadOptions) -> DownloadOptions {
        let defaults = DownloadOptions()
        var merged = self
        if let checksum = newer.checksum {
            merged.checksum = checksum
            merged.checksumSource = newer.checksumSource
        }
        if let pieces = newer.pieces { merged.pieces = pieces }
        if !newer.headers.isEmpty {
            let names = Set(newer.headers.map { $0.name.lowercased() })
            merged.headers = headers.filter { !names.contains($0.name.lowercased()) } + newer.headers
        }
        if newer.priority != defaults.priority { merged.priority = newer.priority }
        if let limit = newer.speedLimit { merged.speedLimit = limit }
        if let pacing = newer.requestPacing { merged.requestPacing = pacing }
        if !newer.metadata.isEmpty { merged.metadata.merge(newer.metadata) { _, new in new } }
        if newer.onResourceChange != defaults.onResourceChange { merged.onResourceChange = newer.onResourceChange }
        // The count is one setting: `-x 4` after `-x auto` fixes it at 4 (its `adaptiveConnections` is the default,
        // false, but it is not silent), and `-x auto` after `-x 4` chooses again.
        // Whether the count was named decides, when the front end says (`-x 1` is the default's value, and no `-x` is
        // not: see ``connectionCountGiven``).
        if newer.connectionCountGiven
            ?? (newer.connections != defaults.connections || newer.adaptiveConnections != defaults.adaptiveConnections)
        {
            merged.connections = newer.connections
            merged.adaptiveConnections = newer.adaptiveConnections
        }
        merged.connectionCountGiven = nil
        if let credentials = newer.credentials { merged.credentials = credentials }
        if newer.redirects != defaults.redirects { merged.redirects = newer.redirects }
        if !newer.mirrors.isEmpty { merged.mirrors = newer.mirrors }
        if newer.existingFile != defaults.existingFile { merged.existingFile = newer.existingFile }
        if newer.serverDigests != defaults.serverDigests { merged.serverDigests = newer.serverDigests }
        return merged
    }

    /// These options as a download keeps them: without what only a request says (``connectionCountGiven``).
    var asKept: DownloadOptions {
        guard connectionCountGiven != nil else { return self }
        var kept = self
        kept.connectionCountGiven = nil
        return kept
    }
}
