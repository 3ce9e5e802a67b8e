import Testing

/// Every end-to-end suite runs inside this one, one test at a time: they start real processes and servers, and
/// several at once on a small machine would turn timing assertions (bytes in flight at a SIGKILL, redraw rates)
/// into measurements of the machine's load.
@Suite(.serialized)
enum EndToEnd {}
