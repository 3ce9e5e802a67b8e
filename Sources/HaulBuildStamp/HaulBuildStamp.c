// The build stamp: for a release build, `tools/stamp-build` writes stamp.h into .build-release/stamp, which
// tools/build-release puts on the C compiler's include path. Without it, as in a plain `swift build` of a fresh
// clone, the stamp is empty and `haul --version` says that the build has none.
#include "HaulBuildStamp.h"

#if __has_include("stamp.h")
#include "stamp.h"
#endif

#ifndef HAUL_BUILD_COMMIT
#define HAUL_BUILD_COMMIT ""
#endif

#ifndef HAUL_BUILD_DATE
#define HAUL_BUILD_DATE ""
#endif

const char *haul_build_commit(void) { return HAUL_BUILD_COMMIT; }

const char *haul_build_date(void) { return HAUL_BUILD_DATE; }
