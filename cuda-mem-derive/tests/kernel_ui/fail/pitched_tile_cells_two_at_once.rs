//! A thread's cell of a `PitchedTilesMut` tile is a `&mut` borrow of the
//! tile: the same cell twice at once does not compile.
#![allow(dead_code)]
use cm_renamed::device::PitchedTilesMut;

#[cm_renamed::kernel(crate = "cm_renamed")]
fn fill(mut out: PitchedTilesMut<f32, 32, 32>) {
    if let Some(mut tile) = out.this_block_tile_mut() {
        let a = tile.thread_element_mut(0, 0);
        let b = tile.thread_element_mut(0, 0);
        if let (Some(a), Some(b)) = (a, b) {
            *a = 1.0;
            *b = 2.0;
        }
    }
}

fn main() {}
