//! Kernels that panic on purpose, built by `tests/build.rs` with
//! `KernelCrate::printing_panics(true)`: the GPU test `device_std` runs them
//! in a child process and checks that the launch fails, that the process
//! lives on, and that the handler printed the location, the block and
//! thread, and the message.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

cuda_mem::printing_panic_handler!();

#[cfg(target_arch = "nvptx64")]
mod kernels {
    use cuda_mem::device::{block_idx, thread_idx, DeviceSlice, DeviceSliceMut};

    /// Copies `data[0]` to each thread's element of `out`, except that
    /// thread `thread` of block `block` (x components) reads `data[data.len()]`:
    /// an index out of bounds, so a panic.
    #[no_mangle]
    pub extern "ptx-kernel" fn index_out_of_bounds(
        data: DeviceSlice<'_, u32>,
        mut out: DeviceSliceMut<'_, u32>,
        block: u32,
        thread: u32,
    ) {
        let i = if block_idx().x == block && thread_idx().x == thread {
            data.len()
        } else {
            0
        };
        if let Some(o) = out.this_thread_mut() {
            *o = data[i];
        }
    }

    /// Panics with a message of its own in every thread whose `x` index is
    /// `thread`.
    #[no_mangle]
    pub extern "ptx-kernel" fn explicit_panic(thread: u32, code: u32) {
        if thread_idx().x == thread {
            panic!("explicit panic with code {code}");
        }
    }
}
