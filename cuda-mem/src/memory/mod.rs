//! `memory/`: memory kinds and their allocation. It owns how each kind of
//! memory is allocated and freed (`allocation`: device, pitched, pinned,
//! managed, pool, mapped and imported memory), [`RawMemory`](raw::RawMemory)
//! (one allocation, untyped, with its stream order), pinned pages and the
//! per-context cache of pinned blocks (`pinned_pages`, `pinned_cache`),
//! stream-ordered pools (`pool`), virtual memory reservations (`vmm`), and the
//! process-wide record of memory shared with other processes that freeing an
//! import must update (`exporter`, `open_imports`; the IPC API is `ipc/`).
//!
//! May use: `context`, `order/`, `copy/`, `error`.

pub(crate) mod allocation;
#[cfg(target_os = "linux")]
pub(crate) mod exporter;
#[cfg(target_os = "linux")]
pub(crate) mod open_imports;
pub(crate) mod pinned_cache;
pub(crate) mod pinned_pages;
pub(crate) mod pool;
pub(crate) mod raw;
pub(crate) mod vmm;
