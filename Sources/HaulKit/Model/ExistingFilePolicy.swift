/// What a download does when its destination already holds a file it did not write.
public enum ExistingFilePolicy: String, Sendable, Hashable, Codable {
    /// ``replace`` for a download given a file, ``rename`` for one given a directory (default): what `curl -o` and
    /// `wget -P` do.
    case automatic
    /// Keep the file and save the download under the next free name (`name (1).ext`).
    case rename
    /// Replace the file when the download completes (atomically: until then it stays as it was).
    case replace
    /// Keep the file and download nothing: the download completes with it, unchecked (wget's `--no-clobber`).
    case keep
    /// Keep the file unless the server's copy is newer (its `Last-Modified` after the file's modification time; asked
    /// with `If-Modified-Since` when the name is known before the request), else replace it; the new file gets the
    /// server's time, so the next run can compare (wget's `-N`).
    case replaceIfNewer
}
