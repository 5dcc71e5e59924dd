//! Type-checked kernel launches: the parameter types a
//! [`#[kernel]`](macro@crate::kernel) fn may take ([`KernelParam`]), the
//! signature fingerprint that the host and the PTX must agree on, and (on host
//! builds) the [`Module`] a kernel is launched from and the host values each
//! parameter accepts ([`LaunchArg`]).
//!
//! This module builds on every target: the kernel crate computes the
//! fingerprint of each kernel when it is compiled for `nvptx64-nvidia-cuda`
//! (and embeds it in the PTX), and the host computes it again, from the same
//! definitions, when it compiles the launcher.
//!
//! # Why a launch of a safe kernel is safe
//!
//! A `#[kernel]` fn that is not `unsafe` gets a safe `launch`. What makes that
//! sound:
//!
//! 0. **The code that runs is the Rust code.** A [`Module`]'s PTX is the one
//!    `cuda_mem::build::KernelCrate` compiled from the kernel crate in this
//!    build ([`include_kernels!`](crate::include_kernels)); making a `Module`
//!    from any other PTX text is `unsafe` ([`Module::new`]), because a
//!    hand-written PTX could claim any signature.
//! 1. **The host passes exactly what the kernel declares.** Each argument must
//!    implement [`LaunchArg<P>`] for its parameter's type `P`, so the types
//!    are checked at compile time (a wrong type, a wrong count, `&` where the
//!    kernel writes, a parameter type that is not a [`KernelParam`]: all
//!    compile errors). The PTX actually loaded is checked too: before a
//!    kernel's first launch in a context, its signature fingerprint in the PTX
//!    (a hash of every parameter's kind and type layout, of the kernel's own
//!    source tokens and of its safety) is compared with the host's, and any
//!    difference (a stale PTX, another version of a struct, a kernel that is
//!    not there) is an `Err` naming the kernel, never a launch.
//! 2. **The memory is the kernel's while it runs.** A
//!    [`DeviceSliceMut`](crate::device::DeviceSliceMut) argument is `&mut` a
//!    buffer or an exclusive view and a
//!    [`DeviceSlice`](crate::device::DeviceSlice) argument `&` one, held for
//!    the whole call, so the borrow checker rules out aliasing between the
//!    arguments and any host reference into the memory at the time of the
//!    launch. Each buffer argument is ordered on the launch's stream exactly as
//!    [`kernel_arg`](crate::Memory::kernel_arg) /
//!    [`kernel_arg_mut`](crate::MemoryMut::kernel_arg_mut) are: the kernel runs
//!    after every earlier operation on the allocation, and later operations,
//!    host access (`as_slice`, `as_mut_slice`, `to_vec`) and the free wait for
//!    it. So no other work and no host code touches the memory while the
//!    kernel runs, except other readers of what it only reads.
//! 3. **Safe device code cannot misuse what it gets.** With only the safe API
//!    of [`cuda_mem::device`](crate::device) a kernel cannot write an element
//!    that another thread of the grid writes (each thread only reaches
//!    elements of its own, whatever the grid), cannot index out of bounds (a
//!    failed check traps: the kernel stops, and the stream and the context
//!    report an error), and cannot write through a `DeviceSlice`. Raw device
//!    addresses ([`DevicePtr`](crate::DevicePtr)) can only be dereferenced in
//!    `unsafe` code. A safe kernel body that contains `unsafe` blocks is its
//!    author's promise that they keep these rules, as for any safe Rust fn.
//! 4. **The launch configuration cannot break any of this.** The grid and
//!    block sizes only decide how many threads run and how they are numbered;
//!    the safe device API derives every thread's elements from its own index,
//!    and bounds-checks everything else (shared memory included), so no
//!    configuration makes two threads meet on an element or leave a slice.
//!    The launch refuses a grid of 2^63 threads or more (CUDA allows 2^73),
//!    so that every thread's 64-bit global index is exact and unique. An
//!    impossible configuration (a block of 2048 threads, too much shared
//!    memory) is refused by the driver: an `Err`. The write partitions
//!    ([`DeviceTilesMut`](crate::device::DeviceTilesMut),
//!    [`DeviceChunksMut`](crate::device::DeviceChunksMut),
//!    [`PitchedTilesMut`](crate::device::PitchedTilesMut)) take
//!    their tile and chunk sizes from the parameter's type, so every thread
//!    of every launch applies the same rule; shared memory is reached only
//!    through relaxed atomic accesses (which never race) or `unsafe`.
//!
//! An `unsafe fn` kernel (raw pointers, unchecked indexing, writes that
//! depend on the grid covering the data exactly once) has preconditions that
//! no type can express, so its `launch` is an `unsafe fn` whose caller
//! promises them; everything else above still holds.
//!
//! What the PTX says of a kernel and what a launch pushes are compared twice:
//! as a 64-bit fingerprint (a hash that also covers struct layouts and the
//! kernel's source, to catch a stale PTX; each parameter's own fingerprint
//! beside it names the parameter, and so the struct, that differs) and,
//! word for word, as a parameter
//! table ([`ParamAbi`]: each parameter's kind, size and alignment and its
//! elements', and the kernel's `unsafe`), which no chosen hash input can
//! match. Both, and the entry point, come from cuda-mem's own
//! [`__kernel_entry!`](crate::__kernel_entry), reached through `$crate`: the
//! PTX's statics come from the very parameter list the entry passes to the
//! kernel, and a launch's from the parameter types it pushes
//! ([`__launch`], generic over them), so a
//! `#[kernel(crate = "...")]` path cannot make them disagree without
//! `unsafe` of its own. A parameter value ([`LaunchArg::__into_param`],
//! `Launch::param`) is made only in `unsafe` code, so no device slice of an
//! unchecked lifetime reaches safe host code.
//!
//! # Exported macros hold no `unsafe` around the caller's tokens
//!
//! `#[macro_export]` puts a macro in every user's reach, hidden or not, and
//! `#![forbid(unsafe_code)]` does not see an `unsafe` block another crate's
//! macro writes. So none of cuda-mem's macros puts a token its caller chose
//! (a path, an expression, a type, a body) inside `unsafe { }` or an
//! `unsafe fn`: the kernel fn that `#[kernel]` emits is an item of a `const`
//! block, compiled in a safe context unless its author wrote `unsafe fn`
//! (whatever attribute macros do with its tokens); the PTX entry point is a
//! safe `extern "ptx-kernel" fn`, whose parameters' parts ([`__Raw`]) only the
//! driver makes; a safe kernel is called safely; an `unsafe fn` kernel is
//! called through a type that `#[kernel]` marks with an `unsafe impl` of
//! [`__UnsafeKernel`], its parameters put together outside the `unsafe`
//! block; a launch is a call of a generic function of cuda-mem's; and
//! `shared_array!` and `include_kernels!` name the caller's type, length or
//! file in items outside their `unsafe` blocks. A hand-written call of any
//! hidden macro makes at most what `#[kernel]` makes.
//!
//! Two more rules keep the checks the macros emit true:
//! - **A caller's tokens mean one thing.** Each paste of a type or an
//!   expression is expanded on its own, and a proc macro with a counter (safe
//!   code) can expand differently each time. So `shared_array!` expands its
//!   type and length once, into names that its declaration and its array
//!   both use, and each parameter type of a kernel is tied to the one its
//!   entry point's body takes, from whose signature the PTX's fingerprint and
//!   parameter table are computed (`entry`).
//! - **Every path is `$crate`'s.** `::core::…` resolves in the caller's
//!   extern prelude, which `extern crate some_macros as core;` redirects; so
//!   the macros reach `core` and its macros as `$crate::__private::core`.
//!
//! The parameter types, their fingerprints and parameter table are `param`;
//! what a kernel's PTX entry point is made of, `entry`; the hidden macros
//! `#[kernel]` expands to, `macros`; the host side (feature `host`), `host`.

mod entry;
#[cfg(feature = "host")]
mod host;
mod macros;
mod param;

pub use param::KernelParam;

#[doc(hidden)]
pub use {
    entry::{
        __AddressOf, __EntryBody, __Part, __RestOf, __assemble, __entry_abi, __entry_params,
        __entry_signature,
    },
    macros::{__UnsafeKernel, __plain_file_name},
    param::{
        __Raw, __abi_head, __abi_head_block, __assume_block, __block_shape, __block_word,
        __kernel_signature, __param_abi, __param_signature, ParamAbi,
    },
};

#[cfg(feature = "host")]
pub use host::{LaunchArg, Module, Occupancy};

#[cfg(feature = "host")]
#[doc(hidden)]
pub use {
    host::{__launch, __launch_unsafe, KernelParams, Launch, LaunchArgs, LaunchStream},
    std::sync::Arc as __Arc,
};
