//! GPU tests of `DeviceVec<T>`: growth keeps the address and the contents
//! (random data, odd sizes, many chunks; extends from the host, from
//! device views at unaligned offsets and through the batched pusher; resize
//! through fill; truncate), every buffer operation on it, typed kernel
//! launches, `shrink_to_fit` returning memory to the device (measured with
//! `cuMemGetInfo`), out of memory in the middle of a growth leaving the
//! vector intact, growth beyond the reservation, and sharing with a peer
//! GPU. Outputs are poisoned first and every element is checked.

use cuda_mem::prelude::*;
use std::sync::{Arc, Mutex, MutexGuard};

use cuda_mem::{
    AsView, CudaContext, DeviceBuffer, DeviceVec, Error, LaunchConfig, Module, PinnedBuffer,
};
use cuda_mem_launch_kernels::{
    churn, poke, transform, transform_items, write_indices, Item, Params,
};
use cuda_mem_tests::{churned_fast, expect_err, gpu, skip_driver_errors_under_sanitizer, Rng};

static KERNELS: Module = cuda_mem::include_kernels!("launch-kernels");

/// One test of this file at a time: some map nearly all of the device's
/// memory, others measure the free memory.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// 12 bytes, align 1: every element offset is unaligned for wide stores.
type Elem = [u8; 12];

/// Free device memory in bytes (`cuMemGetInfo`).
fn free_memory(ctx: &Arc<CudaContext>) -> usize {
    ctx.mem_get_info().expect("cuMemGetInfo").0
}

/// Checks the vector against the model, element by element, and its invariants.
fn check<T: cuda_mem::DeviceCopy + PartialEq + std::fmt::Debug>(
    v: &DeviceVec<T>,
    model: &[T],
    addr: u64,
    what: &str,
) {
    assert_eq!(v.len(), model.len(), "{what}: len");
    assert!(v.capacity() >= v.len(), "{what}: capacity below len");
    assert!(v.capacity() <= v.max_capacity(), "{what}: capacity");
    assert_eq!(v.as_device_ptr().addr(), addr, "{what}: the address moved");
    let got = v.to_vec().unwrap();
    if let Some(i) = (0..model.len()).find(|&i| got[i] != model[i]) {
        panic!(
            "{what}: element {i} of {} is {:?}, expected {:?}",
            model.len(),
            got[i],
            model[i]
        );
    }
}

/// Makes the next `n` slots past the end hold `poison` (so an append that
/// writes nothing is caught), without changing the length.
fn poison_tail<T: cuda_mem::DeviceCopy>(v: &mut DeviceVec<T>, n: usize, poison: T) {
    let len = v.len();
    v.resize(len + n, poison).unwrap();
    v.truncate(len);
}

#[test]
#[ignore = "needs a CUDA device"]
fn growth_keeps_the_address_and_the_contents() {
    let _serial = serial();
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("growth_keeps_the_address_and_the_contents");
    let mut v = DeviceVec::<Elem>::with_capacity(&ctx, rng.below(1000)).unwrap();
    let addr = v.as_device_ptr().addr();
    assert_ne!(addr, 0, "the range is reserved up front");
    let mut model: Vec<Elem> = Vec::new();
    let mut capacities = vec![v.capacity()];
    for step in 0..60 {
        // Up to about 3 MiB per step (many granules, many chunks in all).
        let n = rng.length(1 << 18);
        let poison: Elem = rng.value();
        match rng.below(6) {
            0 => {
                let data: Vec<Elem> = rng.values(n);
                poison_tail(&mut v, n, poison);
                v.extend_from_host(&data).unwrap();
                model.extend_from_slice(&data);
            }
            1 => {
                // From an unaligned view of a device buffer, on a stream.
                let pad = 1 + rng.below(7);
                let data: Vec<Elem> = rng.values(n + 2 * pad);
                let src = DeviceBuffer::from_slice(&ctx, &data).unwrap();
                poison_tail(&mut v, n, poison);
                v.extend_from_device_async(&src.slice(pad..pad + n).unwrap(), &stream)
                    .unwrap();
                model.extend_from_slice(&data[pad..pad + n]);
            }
            2 => {
                let data: Vec<Elem> = rng.values(n);
                let src = PinnedBuffer::from_slice(&ctx, &data).unwrap();
                poison_tail(&mut v, n, poison);
                v.extend_from_device(&src).unwrap();
                model.extend_from_slice(&data);
            }
            3 => {
                // Batched pushes: more than one batch sometimes.
                let count = n + if rng.below(4) == 0 {
                    cuda_mem::Pusher::<Elem>::BATCH + 1
                } else {
                    0
                };
                let data: Vec<Elem> = rng.values(count);
                poison_tail(&mut v, count, poison);
                let mut p = v.pusher();
                for &x in &data {
                    p.push(x).unwrap();
                }
                assert_eq!(p.len(), model.len() + count);
                p.finish().unwrap();
                model.extend_from_slice(&data);
            }
            4 => {
                // Resize up through fill (a 12-byte value: the fill kernels),
                // or down.
                let value: Elem = rng.value();
                let new_len = if rng.below(3) == 0 {
                    rng.below(model.len() + 1)
                } else {
                    model.len() + n
                };
                v.resize(new_len, value).unwrap();
                model.resize(new_len, value);
            }
            _ => {
                let keep = rng.below(model.len() + 1);
                v.truncate(keep);
                model.truncate(keep);
            }
        }
        check(&v, &model, addr, &format!("step {step}"));
        capacities.push(v.capacity());
    }
    // The mapped bytes (capacity * 12, plus under 12) are whole granules.
    let g = v.granularity();
    assert!(
        (v.capacity() * 12).div_ceil(g) * g < v.capacity() * 12 + 12,
        "capacity {} is not a whole number of {g}-byte granules",
        v.capacity()
    );
    eprintln!(
        "{} elements, capacity {} ({} granules of {} bytes), capacities seen: {}",
        v.len(),
        v.capacity(),
        v.capacity() * 12 / v.granularity(),
        v.granularity(),
        capacities.len()
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn growing_by_doubling_to_a_gibibyte_keeps_every_element() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("growing_by_doubling_to_a_gibibyte_keeps_every_element");
    let mut v = DeviceVec::<u64>::new(&ctx).unwrap();
    let addr = v.as_device_ptr().addr();
    let mut bounds = vec![0usize];
    let mut values = Vec::new();
    let mut len = 1 + rng.below(1000);
    while len * 8 < 1 << 30 {
        let value = rng.next_u64();
        v.resize(len, value).unwrap();
        bounds.push(len);
        values.push(value);
        len = len * 2 + 1 + rng.below(3);
    }
    assert_eq!(v.as_device_ptr().addr(), addr, "the address moved");
    let got = v.to_vec().unwrap();
    for (k, w) in bounds.windows(2).enumerate() {
        for (i, &x) in got.iter().enumerate().take(w[1]).skip(w[0]) {
            assert_eq!(x, values[k], "element {i} (step {k}, {}..{})", w[0], w[1]);
        }
    }
    eprintln!("{} elements, capacity {}", v.len(), v.capacity());
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_device_vec_has_every_buffer_operation() {
    let _serial = serial();
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("a_device_vec_has_every_buffer_operation");
    for _ in 0..10 {
        let len = 3 + rng.length(100_000);
        let mut model: Vec<Elem> = rng.values(len);
        let mut v = DeviceVec::from_slice(&ctx, &model).unwrap();
        assert_eq!(v.byte_size(), len * 12);
        check(&v, &model, v.as_device_ptr().addr(), "from_slice");
        let addr = v.as_device_ptr().addr();

        let byte = rng.next_u64() as u8;
        v.memset(byte).unwrap();
        model.fill([byte; 12]);
        check(&v, &model, addr, "memset");

        let a = 1 + rng.below(len / 2);
        let b = a + rng.below(len - a);
        let value: Elem = rng.value();
        v.slice_mut(a..b)
            .unwrap()
            .fill_async(value, &stream)
            .unwrap();
        model[a..b].fill(value);
        let m = rng.next_u64() as u8;
        v.slice_mut(..a).unwrap().memset_async(m, &stream).unwrap();
        model[..a].fill([m; 12]);
        check(&v, &model, addr, "views: fill_async, memset_async");

        let part: Vec<Elem> = rng.values(b - a);
        v.slice_mut(a..b).unwrap().copy_from_host(&part).unwrap();
        model[a..b].copy_from_slice(&part);
        assert_eq!(v.slice(a..b).unwrap().to_vec().unwrap(), part);

        // Device to device, both ways, and through pinned memory.
        let src: Vec<Elem> = rng.values(len);
        let dev = DeviceBuffer::from_slice(&ctx, &src).unwrap();
        v.copy_from(&dev).unwrap();
        check(&v, &src, addr, "copy_from a DeviceBuffer");
        let mut back = DeviceBuffer::<Elem>::new(&ctx, len).unwrap();
        back.fill(rng.value()).unwrap();
        back.copy_from_async(&v, &stream).unwrap();
        assert_eq!(
            back.to_vec().unwrap(),
            src,
            "a DeviceBuffer copied from the vec"
        );
        let pinned = PinnedBuffer::from_slice(&ctx, &model).unwrap();
        v.copy_from_host_async(&pinned, &stream).unwrap();
        let mut out = PinnedBuffer::<Elem>::new(&ctx, len).unwrap();
        out.as_mut_slice().unwrap().fill(rng.value());
        v.copy_to_host_async(&mut out, &stream).unwrap();
        assert_eq!(out.as_slice().unwrap(), &model[..], "copy_to_host_async");
        assert_eq!(v.as_view().len(), len);

        let (x, y) = v.split_at_mut(a).unwrap();
        assert_eq!((x.len(), y.len()), (a, len - a));
        assert_eq!(v.cast::<u8>().unwrap().len(), len * 12);
        let mut host = vec![[0u8; 12]; len];
        v.copy_to_host(&mut host).unwrap();
        assert_eq!(host, model);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn typed_kernels_run_on_a_device_vec() {
    let _serial = serial();
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("typed_kernels_run_on_a_device_vec");
    for _ in 0..8 {
        let n = 1 + rng.length(300_000);
        let poison = rng.next_u64();
        let mut v = DeviceVec::<u64>::new(&ctx).unwrap();
        v.resize(n, poison).unwrap();
        let offset = rng.next_u64() >> 1;
        write_indices
            .launch(
                &KERNELS,
                &stream,
                LaunchConfig::for_num_elems(n as u32),
                (&mut v, offset),
            )
            .unwrap();
        let got = v.to_vec().unwrap();
        for (i, &x) in got.iter().enumerate() {
            assert_eq!(x, offset + i as u64, "write_indices element {i} of {n}");
        }

        // Grow after the launch, then a kernel on an unaligned view of the
        // new end, reading another DeviceVec.
        let extra = 1 + rng.below(100_000);
        let input: Vec<Item> = (0..extra)
            .map(|_| Item {
                key: rng.next_u64() as u32,
                weight: rng.below(1 << 20) as f32 / 3.0,
                id: rng.next_u64(),
            })
            .collect();
        let params = Params {
            add: rng.next_u64() as u32,
            scale: 1.5,
        };
        let items = DeviceVec::from_slice(&ctx, &input).unwrap();
        let poison_item = Item {
            key: 0xDEAD_BEEF,
            weight: -0.0,
            id: 0x5A5A_5A5A_5A5A_5A5A,
        };
        let mut out = DeviceVec::<Item>::new(&ctx).unwrap();
        let lead = 1 + rng.below(5);
        out.resize(lead + extra, poison_item).unwrap();
        transform_items
            .launch(
                &KERNELS,
                &stream,
                LaunchConfig::for_num_elems(extra as u32),
                (out.slice_mut(lead..).unwrap(), &items, params),
            )
            .unwrap();
        let got = out.to_vec().unwrap();
        for i in 0..lead + extra {
            let expected = if i < lead {
                poison_item
            } else {
                transform(input[i - lead], params)
            };
            assert!(
                got[i].key == expected.key
                    && got[i].weight.to_bits() == expected.weight.to_bits()
                    && got[i].id == expected.id,
                "transform_items element {i}: {:?}, expected {expected:?}",
                got[i]
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn shrink_to_fit_returns_memory_to_the_device() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("shrink_to_fit_returns_memory_to_the_device");
    let slack = 64 << 20; // other allocations of the driver, measured noise
    let before = free_memory(&ctx);
    let n = (1usize << 30) / 4 + 1 + rng.below(1 << 20);
    let value = rng.next_u64() as u32;
    let mut v = DeviceVec::<u32>::with_capacity(&ctx, 0).unwrap();
    v.resize(n, value).unwrap();
    let mapped = v.capacity() * 4;
    let grown = free_memory(&ctx);
    assert!(
        before - grown + slack >= mapped,
        "growth to {mapped} bytes took only {} bytes of free memory",
        before - grown
    );

    let keep = 1 + rng.below(1 << 20);
    let part: Vec<u32> = rng.values(keep);
    v.slice_mut(..keep).unwrap().copy_from_host(&part).unwrap();
    v.truncate(keep);
    assert_eq!(v.capacity() * 4, mapped, "truncate keeps the memory");
    v.shrink_to_fit().unwrap();
    let kept = v.capacity() * 4;
    let bound = (keep * 4 + keep * 4 / 4).div_ceil(v.granularity()) * v.granularity();
    assert!(
        kept <= bound.max(v.granularity()) + v.granularity(),
        "shrink_to_fit kept {kept} bytes for {} bytes of elements",
        keep * 4
    );
    let shrunk = free_memory(&ctx);
    // compute-sanitizer holds on to released physical memory for a while
    // (seen under memcheck: 1 GiB unmapped, 0.3 GiB back), so the free
    // memory is only checked without it.
    let measured = !cuda_mem_tests::under_sanitizer();
    assert!(
        !measured || shrunk + slack >= grown + (mapped - kept),
        "shrink_to_fit unmapped {} bytes but free memory rose by {}",
        mapped - kept,
        shrunk.saturating_sub(grown)
    );
    assert_eq!(v.to_vec().unwrap(), part, "the kept elements");
    // It grows again, at the same address.
    let addr = v.as_device_ptr().addr();
    v.resize(keep + 1000, value).unwrap();
    assert_eq!(v.as_device_ptr().addr(), addr);
    drop(v);
    let after = free_memory(&ctx);
    assert!(
        !measured || after + slack >= before,
        "dropping the vec: free memory {after}, was {before}"
    );
    eprintln!("free: {before} -> {grown} (grown to {mapped}) -> {shrunk} (kept {kept}) -> {after}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn running_out_of_memory_mid_growth_leaves_the_vector_intact() {
    let _serial = serial();
    if skip_driver_errors_under_sanitizer(
        "running_out_of_memory_mid_growth_leaves_the_vector_intact",
        "it provokes CUDA_ERROR_OUT_OF_MEMORY from cuMemCreate on purpose",
    ) {
        return;
    }
    let ctx = gpu();
    let mut rng = Rng::from_env("running_out_of_memory_mid_growth_leaves_the_vector_intact");
    let slack = 64 << 20;
    let len = 1 + rng.length(1 << 20) * 3;
    let model: Vec<Elem> = rng.values(len);
    let mut v = DeviceVec::from_slice(&ctx, &model).unwrap();
    let (addr, capacity) = (v.as_device_ptr().addr(), v.capacity());
    let (free, total) = ctx.mem_get_info().unwrap();
    // More than the free memory, less than the reservation (the total):
    // the growth maps many chunks before one fails.
    let additional = (free + (total - free) / 2) / 12;
    assert!(len + additional <= v.max_capacity());
    for exact in [true, false] {
        let result = if exact {
            v.reserve_exact(additional)
        } else {
            v.reserve(additional)
        };
        match result {
            Err(Error::OutOfMemory { requested, .. }) => {
                assert!(requested >= free, "requested {requested}, free {free}")
            }
            other => panic!("reserve (exact: {exact}) of {additional} elements: {other:?}"),
        }
        assert_eq!(v.capacity(), capacity, "capacity after the failed growth");
        check(&v, &model, addr, "after the failed growth");
        let now = free_memory(&ctx);
        assert!(
            now + slack >= free,
            "free memory {now} after the failed growth, {free} before: chunks leaked"
        );
    }
    // The same through extend and resize: Err, the vector intact.
    let err = v.resize(len + additional, [1; 12]).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory { .. }), "{err:?}");
    check(&v, &model, addr, "after the failed resize");
    // And it still grows within the memory there is.
    let extra = 1 + rng.below(100_000);
    let more: Vec<Elem> = rng.values(extra);
    v.extend_from_host(&more).unwrap();
    let mut expected = model.clone();
    expected.extend_from_slice(&more);
    check(&v, &expected, addr, "growth after the failures");
}

#[test]
#[ignore = "needs a CUDA device"]
fn growth_beyond_the_reservation_is_an_error() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("growth_beyond_the_reservation_is_an_error");
    let max = 1 + rng.below(1 << 22);
    let mut v = DeviceVec::<u16>::with_max_capacity(&ctx, 0, max).unwrap();
    assert!(v.max_capacity() >= max);
    assert!(v.max_capacity() * 2 - max * 2 < v.granularity());
    let max = v.max_capacity();
    let short = rng.below(100);
    let model: Vec<u16> = rng.values(max - short);
    v.extend_from_host(&model).unwrap();
    let addr = v.as_device_ptr().addr();
    let err = expect_err(
        v.extend_from_host(&[7; 101]),
        &["DeviceVec", "with_max_capacity"],
        "extend past the maximum",
    );
    assert!(
        matches!(err, Error::CapacityExceeded { max: m, .. } if m == max),
        "{err:?}"
    );
    expect_err(
        v.reserve(usize::MAX),
        &["with_max_capacity"],
        "reserve(usize::MAX)",
    );
    expect_err(
        v.resize(max + 1, 0),
        &["with_max_capacity"],
        "resize past the maximum",
    );
    check(&v, &model, addr, "after the refused growth");
    // Up to the maximum exactly is fine.
    v.resize(max, 3).unwrap();
    assert_eq!(v.len(), max);
    expect_err(
        DeviceVec::<u16>::with_max_capacity(&ctx, 10, 9),
        &["capacity exceeds the maximum"],
        "capacity > max_capacity",
    );
    // A zero maximum reserves nothing and holds nothing.
    let mut empty = DeviceVec::<u32>::with_max_capacity(&ctx, 0, 0).unwrap();
    assert_eq!(
        (empty.len(), empty.capacity(), empty.max_capacity()),
        (0, 0, 0)
    );
    empty.extend_from_host(&[]).unwrap();
    expect_err(
        empty.extend_from_host(&[1]),
        &["DeviceVec"],
        "push into a zero maximum",
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_device_vec_is_shared_with_a_peer_gpu() {
    let _serial = serial();
    let n = cuda_mem::device_count().expect("this test needs a CUDA device");
    let gpu0 = gpu();
    let mut rng = Rng::from_env("a_device_vec_is_shared_with_a_peer_gpu");
    // The same device (another context of it) needs nothing.
    let other = CudaContext::new_non_primary(0, 0).expect("a non-primary context on device 0");
    let mut v = DeviceVec::<u32>::from_slice(&gpu0, &rng.values(1000)).unwrap();
    v.share_with(&gpu0).unwrap();
    v.share_with(&other).unwrap();
    if n < 2 {
        eprintln!("skipped the peer GPU part: {n} device(s), this needs 2");
        return;
    }
    let gpu1 = cuda_mem::context(1).unwrap();
    if !cuda_mem::can_access_peer(&gpu0, &gpu1).unwrap() {
        expect_err(
            v.share_with(&gpu1),
            &["cannot access"],
            "share_with a non-peer",
        );
        eprintln!("skipped the peer GPU part: devices 0 and 1 are not peers");
        return;
    }
    // Copies between the two devices work before any sharing, as for buffers.
    let model = v.to_vec().unwrap();
    let mut there = DeviceBuffer::<u32>::new(&gpu1, model.len()).unwrap();
    there.fill(rng.next_u64() as u32).unwrap();
    there.copy_from(&v).unwrap();
    assert_eq!(
        there.to_vec().unwrap(),
        model,
        "peer copy out of an unshared vec"
    );
    let back: Vec<u32> = rng.values(model.len());
    there.copy_from_host(&back).unwrap();
    v.copy_from(&there).unwrap();
    assert_eq!(v.to_vec().unwrap(), back, "peer copy into an unshared vec");
    v.share_with(&gpu1).unwrap();
    // Growth after sharing grants the new chunks too.
    let len = (64 << 20) + 1 + rng.below(1000);
    let poison = rng.next_u64() as u32;
    v.resize(len, poison).unwrap();
    v.synchronize().unwrap();
    let stream1 = gpu1.new_stream().unwrap();
    // A kernel on GPU 1 writes into both ends of GPU 0's vector.
    let mut expected = v.to_vec().unwrap();
    for (i, value) in [(0usize, 0xC0FFEE_u32), (len - 1, 0xBEEF)] {
        let ptr = v.as_device_ptr().checked_add(i).unwrap();
        // SAFETY: `ptr` is element `i` of the vector, which nothing else uses
        // until the kernel is done (`synchronize` below); GPU 1 was granted
        // access to every mapped chunk.
        unsafe {
            poke.launch(
                &KERNELS,
                &stream1,
                LaunchConfig::for_num_elems(1),
                (ptr, value),
            )
            .unwrap()
        };
        expected[i] = value;
    }
    stream1.synchronize().unwrap();
    assert_eq!(v.to_vec().unwrap(), expected, "peer writes");
    // A peer copy to a buffer on GPU 1.
    let mut b = DeviceBuffer::<u32>::new(&gpu1, len).unwrap();
    b.fill(!poison).unwrap();
    b.copy_from(&v).unwrap();
    assert_eq!(b.to_vec().unwrap(), expected, "peer copy");
}

/// Rounds of the slow kernel `churn`: milliseconds of dependent
/// multiply-adds per thread, so the host reaches its next call long before
/// the kernel ends.
const ROUNDS: u32 = 200_000;

#[test]
#[ignore = "needs a CUDA device"]
fn growth_shrinking_and_drop_are_safe_while_a_kernel_runs() {
    let _serial = serial();
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("growth_shrinking_and_drop_are_safe_while_a_kernel_runs");
    // Several granules, so that a shrink to one element unmaps chunks the
    // kernel is still writing unless it waits.
    let n = (12 << 20) / 4 + 1 + rng.below(1000);
    let config = LaunchConfig::for_num_elems(n as u32);
    let start: Vec<u32> = rng.values(n);
    let expected: Vec<u32> = start.iter().map(|&x| churned_fast(x, ROUNDS)).collect();

    // Growth while the kernel runs on the old elements: nothing moves.
    let mut v = DeviceVec::from_slice(&ctx, &start).unwrap();
    churn
        .launch(&KERNELS, &stream, config, (&mut v, ROUNDS))
        .unwrap();
    let more: Vec<u32> = rng.values(n);
    v.extend_from_host(&more).unwrap();
    let got = v.to_vec().unwrap();
    assert_eq!(
        &got[..n],
        &expected[..],
        "the kernel's elements after growth"
    );
    assert_eq!(&got[n..], &more[..], "the appended elements");

    // Shrinking waits for the kernel before it unmaps.
    let mut v = DeviceVec::from_slice(&ctx, &start).unwrap();
    churn
        .launch(&KERNELS, &stream, config, (&mut v, ROUNDS))
        .unwrap();
    v.truncate(1);
    v.shrink_to_fit().unwrap();
    assert!(v.capacity() * 4 <= v.granularity(), "{}", v.capacity());
    assert_eq!(v.to_vec().unwrap(), [expected[0]], "the kept element");

    // Dropping waits for the kernel before it unmaps and frees.
    let mut v = DeviceVec::from_slice(&ctx, &start).unwrap();
    churn
        .launch(&KERNELS, &stream, config, (&mut v, ROUNDS))
        .unwrap();
    drop(v);
    stream
        .synchronize()
        .expect("the kernel ran to its end on mapped memory");
    ctx.synchronize().expect("the context is healthy");
}
