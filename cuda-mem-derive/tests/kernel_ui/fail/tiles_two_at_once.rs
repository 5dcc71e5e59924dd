//! A block's tile of a `DeviceTilesMut` is a `&mut` borrow of the parameter:
//! two at once (which would hand one thread two references to its own
//! elements) do not compile.
#![allow(dead_code)]
use cm_renamed::device::DeviceTilesMut;

#[cm_renamed::kernel(crate = "cm_renamed")]
fn fill(mut out: DeviceTilesMut<u32, 4>) {
    let a = out.this_block_tile_mut();
    let b = out.this_block_tile_mut();
    drop((a, b));
}

fn main() {}
