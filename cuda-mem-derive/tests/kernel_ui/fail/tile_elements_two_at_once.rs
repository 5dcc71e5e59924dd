//! A thread's element of a tile is a `&mut` borrow of the tile: the same
//! element twice at once does not compile.
#![allow(dead_code)]
use cm_renamed::device::DeviceTilesMut;

#[cm_renamed::kernel(crate = "cm_renamed")]
fn fill(mut out: DeviceTilesMut<u32, 4>) {
    if let Some(mut tile) = out.this_block_tile_mut() {
        let a = tile.thread_element_mut(0);
        let b = tile.thread_element_mut(0);
        if let (Some(a), Some(b)) = (a, b) {
            *a = 1;
            *b = 2;
        }
    }
}

fn main() {}
