#ifndef HAUL_CONCURRENCY_HOOK_H
#define HAUL_CONCURRENCY_HOOK_H

/// Where Swift Concurrency's `swift_task_enqueueGlobal_hook` lives in this process, as linked (Linux only; NULL
/// elsewhere, or where the runtime has no such hook).
///
/// A binary built with `--static-swift-stdlib` holds the runtime itself, and its linker keeps the runtime's symbols
/// out of the dynamic symbol table: `dlsym` cannot find the hook there, but a reference made at link time can.
void *_Nullable *_Nullable haul_enqueue_global_hook_slot(void);

#endif
