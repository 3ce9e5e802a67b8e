// The runtime's hook, referenced at link time (see the header). Weak: a runtime without it links, and the slot is NULL.
#include "HaulConcurrencyHook.h"

#if defined(__linux__)
extern void *swift_task_enqueueGlobal_hook __attribute__((weak));

void **haul_enqueue_global_hook_slot(void) { return &swift_task_enqueueGlobal_hook; }
#else
void **haul_enqueue_global_hook_slot(void) { return (void **)0; }
#endif
