//! A thread's chunk of a `DeviceChunksMut` is a `&mut` borrow of the
//! parameter: two at once do not compile.
#![allow(dead_code)]
use cm_renamed::device::DeviceChunksMut;

#[cm_renamed::kernel(crate = "cm_renamed")]
fn fill(mut out: DeviceChunksMut<u32, 4>) {
    let a = out.this_thread_chunk_mut();
    let b = out.this_thread_chunk_mut();
    drop((a, b));
}

fn main() {}
