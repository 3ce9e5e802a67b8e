// The build stamp: `tools/stamp-build` writes stamp.h beside this file before a release build (the install and
// package scripts do) and removes it after; git ignores it. Without it, as after a plain `swift build` of a fresh
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
