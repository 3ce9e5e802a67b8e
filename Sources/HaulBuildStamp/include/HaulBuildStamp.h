#ifndef HAUL_BUILD_STAMP_H
#define HAUL_BUILD_STAMP_H

/// The commit this binary was built from (`git rev-parse --short=12 HEAD`, `-dirty` with uncommitted changes), as
/// `tools/stamp-build` recorded it for a release build; "" in a build without a stamp (`swift build`, `swift run`).
const char *haul_build_commit(void);

/// When this binary was built, in ISO 8601 UTC (`SOURCE_DATE_EPOCH` when set, for reproducible packages); "" without
/// a stamp.
const char *haul_build_date(void);

#endif
