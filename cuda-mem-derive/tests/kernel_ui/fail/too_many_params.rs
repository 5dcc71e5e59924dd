//! A kernel of 25 parameters: refused by `#[kernel]` with the limit and
//! what to do instead (launches and entry points go up to 24), rather than
//! with a trait error from inside the expansion.
#![allow(dead_code)]
use cm_renamed::kernel;

#[kernel(crate = "cm_renamed")]
fn too_many(p0: u32, p1: u32, p2: u32, p3: u32, p4: u32, p5: u32, p6: u32, p7: u32, p8: u32, p9: u32, p10: u32, p11: u32, p12: u32, p13: u32, p14: u32, p15: u32, p16: u32, p17: u32, p18: u32, p19: u32, p20: u32, p21: u32, p22: u32, p23: u32, p24: u32) {
    let _ = (p0, p24);
}

fn main() {}
