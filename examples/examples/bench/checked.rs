//! The checked rows: what `Checked` memory's checks cost. Each row is a
//! read to a `Vec` (or a write from a slice) of `bool`s, or of a 4-byte
//! struct of an enum, a `bool` and a `u16`, against the same call on a
//! `DeviceBuffer` of the same bytes as a `DeviceCopy` type (`u8`, the
//! struct's bits): the checked path's cost is one pass over the values on
//! the host, in parallel lanes for large copies. Host wall-clock time of
//! the synchronous call, alternating the two.

use cuda_mem::prelude::*;
use std::hint::black_box;
use std::sync::Arc;

use cuda_mem::{CheckedDeviceBuffer, CheckedDeviceCopy, CudaContext, DeviceBuffer};

use crate::harness::Bench;
use crate::staged::{alternating_us, gbps, size_name};

/// A phase of matter: the bytes 1, 2 and 4 are values, no other.
#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[repr(u8)]
enum Phase {
    Solid = 1,
    Liquid = 2,
    Gas = 4,
}

/// A 4-byte struct of checked fields.
#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[repr(C)]
struct Cell {
    phase: Phase,
    alive: bool,
    heat: u16,
}

/// One read row and one write row of `values` in checked memory against the
/// same bytes as `DeviceCopy` memory.
fn rows_of<C>(b: &mut Bench, ctx: &Arc<CudaContext>, what: &str, values: &[C])
where
    C: CheckedDeviceCopy + Send + Sync,
    C::Bits: Send + Sync,
{
    let bits: Vec<C::Bits> = values.iter().map(|&v| v.into_bits()).collect();
    let bytes = std::mem::size_of_val(values);
    let mut checked = CheckedDeviceBuffer::<C>::from_slice(ctx, values).unwrap();
    let mut plain = DeviceBuffer::from_slice(ctx, &bits).unwrap();
    assert!(checked.to_vec().unwrap().len() == values.len());
    let (rounds, calls) = (b.reps, if bytes < 16 << 20 { 20 } else { 2 });
    let t = alternating_us(
        ctx,
        rounds,
        calls,
        &mut [
            &mut || drop(black_box(checked.to_vec().unwrap())),
            &mut || drop(black_box(plain.to_vec().unwrap())),
        ],
    );
    let size = size_name(bytes);
    b.push(
        "checked",
        format!("to_vec {size} of {what}, checked"),
        "GB/s",
        gbps(bytes, t[0]),
        gbps(bytes, t[1]),
        "to_vec, DeviceCopy bits",
        true,
        Some(bytes),
    );
    let t = alternating_us(
        ctx,
        rounds,
        calls,
        &mut [&mut || checked.copy_from_host(values).unwrap(), &mut || {
            plain.copy_from_host(&bits).unwrap()
        }],
    );
    b.push(
        "checked",
        format!("copy_from_host {size} of {what}, checked"),
        "GB/s",
        gbps(bytes, t[0]),
        gbps(bytes, t[1]),
        "copy_from_host, DeviceCopy bits",
        true,
        Some(bytes),
    );
}

/// The rows: `bool`s of 1 MiB, 64 MiB and 256 MiB, and 64 MiB of `Cell`s.
pub fn rows(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for len in [1 << 20, 64 << 20, 256 << 20] {
        let flags: Vec<bool> = (0..len).map(|_| next() & 1 == 1).collect();
        rows_of(b, ctx, "bool", &flags);
    }
    let phases = [Phase::Solid, Phase::Liquid, Phase::Gas];
    let cells: Vec<Cell> = (0..16 << 20)
        .map(|_| {
            let r = next();
            Cell {
                phase: phases[(r % 3) as usize],
                alive: r & 8 != 0,
                heat: (r >> 16) as u16,
            }
        })
        .collect();
    rows_of(b, ctx, "4-byte struct (enum, bool, u16)", &cells);
}
