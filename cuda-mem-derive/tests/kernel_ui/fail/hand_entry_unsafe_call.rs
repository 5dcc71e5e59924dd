//! cuda-mem's entry macro called by hand, hoping to run code of the
//! caller's choice through its `unsafe fn` kernel arm (whose `unsafe` block
//! calls the callee's `__cuda_mem_run`), from a crate that forbids unsafe
//! code: that arm only takes a callee marked by an `unsafe impl` of
//! `__UnsafeKernel`, which `#[kernel]` writes for its own (unnameable) type
//! and nobody else can without `unsafe`. (Round 2's `@call true` arm called
//! any path, `core::ptr::write_bytes` included, inside its `unsafe` block.)
#![forbid(unsafe_code)]

struct Evil;

impl Evil {
    fn __cuda_mem_run(_: ()) {}
}

fn main() {
    cm_renamed::__kernel_entry!(@call true, Evil, ());
}
