//! Allocator: a growing `allocator_api2::vec::Vec` in pinned host memory
//! (`PinnedAllocator`), then used as the source of asynchronous copies to a
//! device buffer.
//!
//!     cargo run --release --example allocator
//!
//! 1. A `Vec<Reading, PinnedAllocator>` grows by `push`, like any `Vec`: each
//!    reallocation is a `cuMemHostAlloc` (page-locking is slow, so the
//!    example also shows the cost of reserving the capacity up front).
//! 2. Its chunks are queued as asynchronous host-to-device copies
//!    (`cuMemcpyHtoDAsync`) on a stream while the host keeps working on the
//!    same data (it computes a checksum); only then does it wait. Async copies
//!    are only asynchronous from pinned memory, and a `Vec` does not track
//!    queued copies the way a `PinnedBuffer` does, so this part uses the raw
//!    driver call in an `unsafe` block: the `Vec` must not be written, moved
//!    or dropped until the copies are done. The device side is tracked by
//!    cudarc's `DevicePtrMut`, whose guard synchronises the stream when it is
//!    dropped. (For copies that need no `unsafe`, use a `PinnedBuffer` and
//!    `copy_from_host_async`, as the `pipeline` example does.)
//! 3. The device buffer is changed with a `fill` of a range and copied back
//!    into a second pinned `Vec` (`copy_to_host`, a DMA from pinned memory),
//!    and every reading is checked. The same upload from an ordinary,
//!    pageable `Vec` is timed for comparison.

use cuda_mem::prelude::*;
use std::error::Error;
use std::ops::Range;
use std::time::Instant;

use allocator_api2::vec::Vec as AllocVec;
use cuda_mem::cudarc::driver::{result, DevicePtrMut};
use cuda_mem::{DeviceBuffer, DeviceCopy, PinnedAllocator};
use cuda_mem_examples::{gb_per_s, gpu_or_exit, unit_f32, Checks};

/// A sensor reading: 16 bytes, no padding.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Reading {
    sensor: u32,
    sequence: u32,
    value: f32,
    quality: f32,
}

/// Readings collected (64 MiB).
const READINGS: usize = 4 << 20;
/// Asynchronous copies the upload is split into.
const CHUNKS: usize = 8;
/// The readings the device overwrites with [`INVALIDATED`] after the upload.
const INVALIDATED_RANGE: Range<usize> = 1_000_000..1_250_000;
const INVALIDATED: Reading = Reading {
    sensor: u32::MAX,
    sequence: u32::MAX,
    value: 0.0,
    quality: -1.0,
};

fn reading(i: usize) -> Reading {
    Reading {
        sensor: (i % 97) as u32,
        sequence: i as u32,
        value: unit_f32(i as u64) * 100.0 - 50.0,
        quality: unit_f32(!(i as u64)),
    }
}

/// An order-dependent checksum of the readings' bytes (FNV-1a over 32-bit words).
fn checksum(readings: &[Reading]) -> u64 {
    readings.iter().fold(0xcbf2_9ce4_8422_2325, |hash, r| {
        [r.sensor, r.sequence, r.value.to_bits(), r.quality.to_bits()]
            .into_iter()
            .fold(hash, |h, word| {
                (h ^ word as u64).wrapping_mul(0x0100_0000_01b3)
            })
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("allocator");
    println!("device: {}", ctx.name()?);
    let pinned = PinnedAllocator::new(&ctx)?;
    let mut checks = Checks::new("allocator");
    let bytes = READINGS * size_of::<Reading>();

    // 1. Grow a Vec in pinned memory one push at a time.
    let start = Instant::now();
    let mut readings = AllocVec::new_in(pinned.clone());
    let mut reallocations = 0;
    for i in 0..READINGS {
        let capacity = readings.capacity();
        readings.push(reading(i));
        if readings.capacity() != capacity {
            reallocations += 1;
        }
    }
    let grow_ms = start.elapsed().as_secs_f64() * 1e3;
    let start = Instant::now();
    let mut reserved = AllocVec::with_capacity_in(READINGS, pinned.clone());
    reserved.extend((0..READINGS).map(reading));
    let reserve_ms = start.elapsed().as_secs_f64() * 1e3;
    println!(
        "{READINGS} readings ({} MiB) pushed into a pinned Vec: {reallocations} allocations, {grow_ms:.1} ms; \
         with the capacity reserved first: 1 allocation, {reserve_ms:.1} ms",
        bytes >> 20
    );
    checks.check(
        readings.len() == READINGS && readings[..] == reserved[..],
        "the grown Vec holds every reading, in order",
    );
    drop(reserved);

    // 2. Asynchronous copies from the pinned Vec, overlapped with host work.
    let mut device = DeviceBuffer::<Reading>::new(&ctx, READINGS)?;
    let stream = ctx.new_stream()?;
    let start = Instant::now();
    let host_checksum = {
        // `stream` waits for earlier work on `device`; `synchronised` waits
        // for `stream` when dropped, and borrows `device` until then.
        let (device_addr, synchronised) = device.device_ptr_mut(&stream);
        let chunk_len = READINGS.div_ceil(CHUNKS);
        for (index, chunk) in readings.chunks(chunk_len).enumerate() {
            let offset = (index * chunk_len * size_of::<Reading>()) as u64;
            // SAFETY: the destination, `chunk.len()` readings at element
            // `index * chunk_len` of `device`, lies inside the buffer, which
            // `synchronised` keeps borrowed. The source is pinned memory of
            // `readings`, which nothing writes, moves or frees before
            // `synchronised` is dropped below, and that waits for the copy.
            unsafe { result::memcpy_htod_async(device_addr + offset, chunk, stream.cu_stream())? };
        }
        let queued_us = start.elapsed().as_secs_f64() * 1e6;
        // The host reads the Vec while the copy engine does: both only read.
        let sum = checksum(&readings);
        let overlapped_ms = start.elapsed().as_secs_f64() * 1e3;
        drop(synchronised);
        let total_s = start.elapsed().as_secs_f64();
        println!(
            "{CHUNKS} async copies queued in {queued_us:.0} µs; host checksum done after {overlapped_ms:.1} ms; \
             copies done after {:.1} ms ({:.1} GB/s)",
            total_s * 1e3,
            gb_per_s(bytes, total_s)
        );
        sum
    };

    // 3. Change a range on the device, copy everything back, check.
    device.slice_mut(INVALIDATED_RANGE)?.fill(INVALIDATED)?;
    let mut back = AllocVec::with_capacity_in(READINGS, pinned.clone());
    back.resize(READINGS, INVALIDATED);
    device.copy_to_host(&mut back)?;
    let wrong = (0..READINGS)
        .filter(|&i| {
            let expected = if INVALIDATED_RANGE.contains(&i) {
                INVALIDATED
            } else {
                readings[i]
            };
            back[i] != expected
        })
        .count();
    checks.check(
        wrong == 0,
        format_args!("after the async upload and a device fill of {INVALIDATED_RANGE:?}, every reading is right ({wrong} wrong)"),
    );
    device.copy_from_host(&readings)?;
    device.copy_to_host(&mut back)?;
    checks.check(
        checksum(&back) == host_checksum,
        format_args!(
            "a plain round trip gives back the checksum the host computed ({host_checksum:#018x})"
        ),
    );

    // The same upload from pinned and from pageable memory (cuda-mem stages
    // large pageable copies through pinned chunks it allocates on first use:
    // the untimed first copy pays for that), each timed to completion.
    let pageable: Vec<Reading> = readings.to_vec();
    device.copy_from_host(&pageable)?;
    let start = Instant::now();
    device.copy_from_host(&readings)?;
    device.synchronize()?;
    let pinned_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    device.copy_from_host(&pageable)?;
    device.synchronize()?;
    let pageable_s = start.elapsed().as_secs_f64();
    println!(
        "copy_from_host of {} MiB: {:.1} GB/s from the pinned Vec, {:.1} GB/s from a pageable Vec",
        bytes >> 20,
        gb_per_s(bytes, pinned_s),
        gb_per_s(bytes, pageable_s)
    );
    checks.finish();
    Ok(())
}
