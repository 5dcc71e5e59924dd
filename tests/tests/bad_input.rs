//! The bad-input catalogue: every misuse the API can see is an `Err` whose
//! message names the problem (each test checks the words of the message), no
//! call panics or aborts, and a rejected call changes nothing (contents are
//! random, checked element by element after the rejected calls). One test per
//! kind of bad input, over every buffer kind:
//!
//! - lengths that do not match, both ways (host copies, device copies, async
//!   copies through pinned memory, views, 2D copies);
//! - ranges past the end, reversed (`5..3`) and overflowing (`..=usize::MAX`);
//! - sizes whose byte count overflows `usize` (`len * size_of::<T>()`,
//!   `width * height * size_of::<T>()`), refused before any driver call;
//! - zero-length buffers of every kind: every operation succeeds and does nothing;
//! - allocations beyond the card (and beyond any host), after which a normal
//!   allocation succeeds;
//! - prefetch and advice where managed memory cannot be prefetched (on a
//!   device that can, as the H200, the calls succeed and change nothing);
//! - a buffer of one CUDA context used with a stream of another (a second,
//!   non-primary context of the same GPU), and a copy between two contexts
//!   queued on a stream of a third;
//! - pitched widths of 0 and huge;
//! - casts to a type whose size or alignment does not fit the view;
//! - fill and memset of views of length 0.
//!
//! Under compute-sanitizer (see `cuda_mem_tests::under_sanitizer`) the parts
//! that make the driver fail on purpose (out of memory, invalid sizes) are
//! skipped: the sanitizer counts each failing driver call as an error.

use cuda_mem::prelude::*;
use std::ops::Bound;
use std::sync::Arc;

use cuda_mem::{
    Advice, AsView, Buffer, CudaContext, DeviceBuffer, Location, MemPool, MemoryKind, PinnedBuffer,
    PitchedBuffer, PoolBuffer, UnifiedBuffer,
};
use cuda_mem_tests::{expect_err, for_each_kind, gpu, skip_driver_errors_under_sanitizer, Rng};

/// A 12-byte element.
type E = [u32; 3];

/// The words of a `LengthMismatch` message.
fn mismatch(expected: usize, actual: usize) -> [String; 3] {
    [
        "length mismatch".into(),
        format!("holds {expected} elements"),
        format!("source has {actual}"),
    ]
}

/// The words of an `OutOfRange` message.
fn out_of_range(start: usize, end: usize, len: usize) -> [String; 3] {
    [
        "out of bounds".into(),
        format!("range {start}..{end} "),
        format!("buffer of {len} elements"),
    ]
}

fn words(w: &[String]) -> Vec<&str> {
    w.iter().map(String::as_str).collect()
}

/// Every copy with a wrong length, both ways, on `buf` (of any kind, at least 2
/// elements); the buffer and the host destinations are unchanged afterwards.
fn check_lengths<K: MemoryKind>(
    rng: &mut Rng,
    ctx: &Arc<CudaContext>,
    stream: &Arc<cuda_mem::CudaStream>,
    buf: &mut Buffer<E, K>,
    what: &str,
) {
    let len = buf.len();
    let orig = buf.to_vec().unwrap();
    for n in [len - 1, len + 1, 0] {
        let src: Vec<E> = rng.values(n);
        let w = |case: &str| format!("{what}: {case} with {n} elements into {len}");
        expect_err(
            buf.copy_from_host(&src),
            &words(&mismatch(len, n)),
            &w("copy_from_host"),
        );
        let mut out: Vec<E> = rng.values(n);
        let poisoned = out.clone();
        expect_err(
            buf.copy_to_host(&mut out),
            &words(&mismatch(n, len)),
            &w("copy_to_host"),
        );
        assert_eq!(out, poisoned, "{}", w("a rejected copy_to_host wrote"));

        let mut other = DeviceBuffer::from_slice(ctx, &src).unwrap();
        expect_err(
            buf.copy_from(&other),
            &words(&mismatch(len, n)),
            &w("copy_from"),
        );
        expect_err(
            buf.copy_from_async(&other.as_view(), stream),
            &words(&mismatch(len, n)),
            &w("copy_from_async"),
        );
        expect_err(
            other.copy_from(&*buf),
            &words(&mismatch(n, len)),
            &w("copy_from (reverse)"),
        );
        assert_eq!(
            other.to_vec().unwrap(),
            src,
            "{}",
            w("a rejected copy_from wrote")
        );

        let pinned = PinnedBuffer::from_slice(ctx, &src).unwrap();
        expect_err(
            buf.copy_from_host_async(&pinned, stream),
            &words(&mismatch(len, n)),
            &w("copy_from_host_async"),
        );
        let mut pinned_out = PinnedBuffer::from_slice(ctx, &poisoned).unwrap();
        expect_err(
            buf.copy_to_host_async(&mut pinned_out, stream),
            &words(&mismatch(n, len)),
            &w("copy_to_host_async"),
        );
        assert_eq!(
            pinned_out.as_slice().unwrap(),
            &poisoned[..],
            "{}",
            w("a rejected async copy wrote")
        );
    }
    // Views: one element short of the source.
    let src: Vec<E> = rng.values(len);
    expect_err(
        buf.slice_mut(1..).unwrap().copy_from_host(&src),
        &words(&mismatch(len - 1, len)),
        &format!("{what}: view copy_from_host"),
    );
    let mut out: Vec<E> = rng.values(len);
    expect_err(
        buf.slice(1..).unwrap().copy_to_host(&mut out),
        &words(&mismatch(len, len - 1)),
        &format!("{what}: view copy_to_host"),
    );
    let other = DeviceBuffer::from_slice(ctx, &src).unwrap();
    expect_err(
        buf.slice_mut(..len - 1).unwrap().copy_from(&other),
        &words(&mismatch(len - 1, len)),
        &format!("{what}: view copy_from"),
    );
    stream.synchronize().unwrap();
    assert_eq!(
        buf.to_vec().unwrap(),
        orig,
        "{what}: rejected calls changed the buffer"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn length_mismatches_both_ways_are_errors() {
    let mut rng = Rng::from_env("length_mismatches");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let data: Vec<E> = {
        let n = 2 + rng.length(5000);
        rng.values(n)
    };
    for_each_kind!(&ctx, &stream, &pool, &data, |buf, name| {
        check_lengths(&mut rng, &ctx, &stream, &mut buf, name);
    });

    // Pitched: packed host data of the wrong length, async copies, 2D copies.
    let (w, h) = (1 + rng.below(300), 2 + rng.below(20));
    let data: Vec<E> = rng.values(w * h);
    let n = w * h;
    expect_err(
        PitchedBuffer::from_slice(&ctx, &data[1..], w, h),
        &words(&mismatch(n, n - 1)),
        "pitched from_slice",
    );
    let mut buf = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
    for m in [n - 1, n + 1] {
        let src: Vec<E> = rng.values(m);
        expect_err(
            buf.copy_from_host(&src),
            &words(&mismatch(n, m)),
            "pitched copy_from_host",
        );
        let mut out: Vec<E> = rng.values(m);
        let poisoned = out.clone();
        expect_err(
            buf.copy_to_host(&mut out),
            &words(&mismatch(m, n)),
            "pitched copy_to_host",
        );
        assert_eq!(out, poisoned);
        let pinned = PinnedBuffer::from_slice(&ctx, &src).unwrap();
        expect_err(
            buf.copy_from_host_async(&pinned, &stream),
            &words(&mismatch(n, m)),
            "pitched copy_from_host_async",
        );
        let mut pinned = PinnedBuffer::from_slice(&ctx, &poisoned).unwrap();
        expect_err(
            buf.copy_to_host_async(&mut pinned, &stream),
            &words(&mismatch(m, n)),
            "pitched copy_to_host_async",
        );
        assert_eq!(pinned.as_slice().unwrap(), &poisoned[..]);
    }
    let other = PitchedBuffer::<E>::zeroed(&ctx, w + 1, h).unwrap();
    expect_err(
        buf.copy_from(&other),
        &words(&mismatch(n, (w + 1) * h)),
        "pitched copy_from",
    );
    // Same number of elements, another shape: not a length mismatch, a shape one.
    let transposed = PitchedBuffer::<E>::zeroed(&ctx, h, w).unwrap();
    if w != h {
        expect_err(
            buf.copy_from_async(&transposed, &stream),
            &["invalid argument", "different width and height"],
            "pitched copy_from of another shape",
        );
    }
    assert_eq!(
        buf.to_vec().unwrap(),
        data,
        "rejected calls changed the pitched buffer"
    );
}

/// Ranges past the end, reversed and overflowing on `buf` (at least 6 elements).
fn check_ranges<K: MemoryKind>(buf: &mut Buffer<E, K>, what: &str) {
    let len = buf.len();
    expect_err(
        buf.slice(0..len + 1),
        &words(&out_of_range(0, len + 1, len)),
        what,
    );
    expect_err(
        buf.slice(len + 1..),
        &words(&out_of_range(len + 1, len, len)),
        what,
    );
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = buf.slice(5..3);
    expect_err(reversed, &words(&out_of_range(5, 3, len)), what);
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = buf.slice_mut(5..3);
    expect_err(reversed, &words(&out_of_range(5, 3, len)), what);
    expect_err(
        buf.slice_mut(len..len + 2),
        &words(&out_of_range(len, len + 2, len)),
        what,
    );
    // An end bound of usize::MAX + 1 and a start of usize::MAX + 1: no overflow panic.
    expect_err(
        buf.slice(..=usize::MAX),
        &words(&out_of_range(0, usize::MAX, len)),
        what,
    );
    expect_err(
        buf.slice((Bound::Excluded(usize::MAX), Bound::Unbounded)),
        &words(&out_of_range(usize::MAX, len, len)),
        what,
    );
    expect_err(
        buf.split_at_mut(len + 1),
        &words(&out_of_range(0, len + 1, len)),
        what,
    );
    #[allow(clippy::reversed_empty_ranges)]
    let none = buf.get(5..3).is_none() && buf.get_mut(0..len + 1).is_none();
    assert!(none, "{what}: get/get_mut of bad ranges");
    // A view is checked against its own length.
    let view = buf.slice(1..len).unwrap();
    expect_err(
        view.slice(0..len),
        &words(&out_of_range(0, len, len - 1)),
        what,
    );
    let mut view = buf.slice_mut(2..).unwrap();
    expect_err(
        view.slice_mut(3..len),
        &words(&out_of_range(3, len, len - 2)),
        what,
    );
    // The edges are fine.
    assert!(buf.slice(len..len).unwrap().is_empty());
    assert_eq!(buf.slice(..).unwrap().len(), len);
}

#[test]
#[ignore = "needs a CUDA device"]
fn ranges_past_the_end_and_reversed_are_errors() {
    let mut rng = Rng::from_env("ranges");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let data: Vec<E> = {
        let n = 6 + rng.length(3000);
        rng.values(n)
    };
    for_each_kind!(&ctx, &stream, &pool, &data, |buf, name| {
        check_ranges(&mut buf, name);
        assert_eq!(buf.to_vec().unwrap(), data, "{name}");
    });

    let (w, h) = (1 + rng.below(100), 1 + rng.below(9));
    let mut p = PitchedBuffer::<E>::zeroed(&ctx, w, h).unwrap();
    expect_err(p.row(h), &words(&out_of_range(h, h + 1, h)), "pitched row");
    expect_err(
        p.row(usize::MAX),
        &words(&out_of_range(usize::MAX, usize::MAX, h)),
        "pitched row(usize::MAX)",
    );
    expect_err(
        p.row_mut(h),
        &words(&out_of_range(h, h + 1, h)),
        "pitched row_mut",
    );
    let row = p.row(h - 1).unwrap();
    expect_err(
        row.slice(0..w + 1),
        &words(&out_of_range(0, w + 1, w)),
        "a row's slice",
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn overflowing_sizes_are_errors() {
    // All refused before any driver call (so they also run under the sanitizer).
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let linear = ["size overflow", "len * size_of::<T>()"];
    expect_err(
        DeviceBuffer::<u64>::new(&ctx, usize::MAX / 4),
        &linear,
        "device",
    );
    expect_err(
        DeviceBuffer::<u64>::zeroed(&ctx, usize::MAX / 8 + 1),
        &linear,
        "device zeroed",
    );
    expect_err(
        PinnedBuffer::<u16>::new(&ctx, usize::MAX / 2 + 1),
        &linear,
        "pinned",
    );
    expect_err(
        PinnedBuffer::<u16>::with_flags(&ctx, usize::MAX, Default::default()),
        &linear,
        "pinned with flags",
    );
    expect_err(
        UnifiedBuffer::<E>::new(&ctx, usize::MAX / 6),
        &linear,
        "unified",
    );
    expect_err(
        PoolBuffer::<u32>::new(usize::MAX / 3, &stream),
        &linear,
        "pool",
    );
    expect_err(
        PoolBuffer::<[u8; 300]>::from_pool(&pool, usize::MAX / 299, &stream),
        &linear,
        "MemPool",
    );
    let planar = ["size overflow", "width * height * size_of::<T>()"];
    expect_err(
        PitchedBuffer::<u8>::new(&ctx, usize::MAX, 2),
        &planar,
        "width * height",
    );
    expect_err(
        PitchedBuffer::<E>::new(&ctx, usize::MAX / 4, 1),
        &planar,
        "width * size",
    );
    expect_err(
        PitchedBuffer::<E>::new(&ctx, 1 << 32, 1 << 31),
        &planar,
        "len * size",
    );
    expect_err(
        PitchedBuffer::<u64>::zeroed(&ctx, 3, usize::MAX / 2),
        &planar,
        "zeroed",
    );
    expect_err(
        PitchedBuffer::<E>::from_slice(&ctx, &[], usize::MAX, usize::MAX),
        &planar,
        "from_slice",
    );
    // Nothing was allocated: the pool holds nothing.
    assert_eq!(pool.usage().unwrap().used_current, 0);
}

/// Every operation on a zero-length buffer of any kind succeeds and does nothing.
fn zero_length_ops<K: MemoryKind>(
    rng: &mut Rng,
    ctx: &Arc<CudaContext>,
    stream: &Arc<cuda_mem::CudaStream>,
    b: &mut Buffer<E, K>,
    what: &str,
) {
    assert_eq!(
        (b.is_empty(), b.len(), b.byte_size()),
        (true, 0, 0),
        "{what}"
    );
    let v: E = rng.value();
    b.memset(rng.next_u64() as u8).unwrap();
    b.memset_async(1, stream).unwrap();
    b.fill(v).unwrap();
    b.fill_async(v, stream).unwrap();
    b.copy_from_host(&[]).unwrap();
    b.copy_to_host(&mut []).unwrap();
    assert!(b.to_vec().unwrap().is_empty());
    let device = DeviceBuffer::<E>::new(ctx, 0).unwrap();
    b.copy_from(&device).unwrap();
    b.copy_from_async(&device, stream).unwrap();
    let unified = UnifiedBuffer::<E>::new(ctx, 0).unwrap();
    b.copy_from(&unified.as_view()).unwrap();
    let mut pinned = PinnedBuffer::<E>::new(ctx, 0).unwrap();
    b.copy_from_host_async(&pinned, stream).unwrap();
    b.copy_to_host_async(&mut pinned, stream).unwrap();
    assert!(b.slice(..).unwrap().to_vec().unwrap().is_empty());
    b.slice_mut(0..0).unwrap().fill(v).unwrap();
    let (l, r) = b.split_at_mut(0).unwrap();
    assert!(l.is_empty() && r.is_empty());
    b.kernel_arg(stream).unwrap();
    b.kernel_arg_mut(stream).unwrap();
    b.synchronize().unwrap();
    expect_err(b.copy_from_host(&[v]), &words(&mismatch(0, 1)), what);
    expect_err(b.slice(0..1), &words(&out_of_range(0, 1, 0)), what);
}

#[test]
#[ignore = "needs a CUDA device"]
fn zero_length_buffers_of_every_kind_work() {
    let mut rng = Rng::from_env("zero_length");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let empty: [E; 0] = [];
    for_each_kind!(&ctx, &stream, &pool, &empty, |buf, name| {
        zero_length_ops(&mut rng, &ctx, &stream, &mut buf, name);
    });
    assert!(DeviceBuffer::<E>::zeroed(&ctx, 0).unwrap().is_empty());
    let mut pinned = PinnedBuffer::<E>::new(&ctx, 0).unwrap();
    assert!(pinned.as_slice().unwrap().is_empty() && pinned.as_mut_slice().unwrap().is_empty());
    let mut unified = UnifiedBuffer::<E>::new(&ctx, 0).unwrap();
    assert!(unified.as_slice().unwrap().is_empty() && unified.as_mut_slice().unwrap().is_empty());
    unified.prefetch_to_device(&stream).unwrap();
    unified.prefetch_to_host(&stream).unwrap();
    unified.advise(Advice::ReadMostly(true)).unwrap();
    PoolBuffer::<E>::new(0, &stream)
        .unwrap()
        .free_on_stream(&stream)
        .unwrap();
    PoolBuffer::<E>::from_pool(&pool, 0, &stream)
        .unwrap()
        .free_on_stream(&stream)
        .unwrap();
    assert_eq!(
        pool.usage().unwrap().used_current,
        0,
        "zero-length pool buffers hold nothing"
    );

    // Pitched: width 0, height 0, or both.
    for (w, h) in [(0, 0), (0, 1 + rng.below(50)), (1 + rng.below(50), 0)] {
        let mut buf = PitchedBuffer::<E>::new(&ctx, w, h).unwrap();
        assert!(buf.is_empty());
        assert_eq!(
            (buf.len(), buf.byte_size(), buf.width(), buf.height()),
            (0, 0, w, h)
        );
        buf.fill(rng.value()).unwrap();
        buf.fill_async(rng.value(), &stream).unwrap();
        buf.memset(1).unwrap();
        buf.memset_async(2, &stream).unwrap();
        buf.copy_from_host(&[]).unwrap();
        buf.copy_to_host(&mut []).unwrap();
        assert!(buf.to_vec().unwrap().is_empty());
        expect_err(
            buf.copy_from_host(&[rng.value()]),
            &words(&mismatch(0, 1)),
            "pitched",
        );
        let mut pinned = PinnedBuffer::<E>::new(&ctx, 0).unwrap();
        buf.copy_from_host_async(&pinned, &stream).unwrap();
        buf.copy_to_host_async(&mut pinned, &stream).unwrap();
        let other = PitchedBuffer::<E>::zeroed(&ctx, w, h).unwrap();
        buf.copy_from(&other).unwrap();
        assert!(PitchedBuffer::<E>::from_slice(&ctx, &[], w, h)
            .unwrap()
            .is_empty());
        expect_err(
            buf.row(h),
            &words(&out_of_range(h, h + 1, h)),
            "pitched row",
        );
        if h > 0 {
            assert!(buf.row(h - 1).unwrap().is_empty());
            buf.row_mut(0).unwrap().fill(rng.value()).unwrap();
        }
        buf.kernel_arg(&stream).unwrap();
        buf.synchronize().unwrap();
    }
    stream.synchronize().unwrap();
}

/// Asks for more than the card (or any host) has; then a normal allocation of
/// the same kind succeeds and works.
#[test]
#[ignore = "needs a CUDA device"]
fn allocation_beyond_the_card_fails_then_a_normal_one_succeeds() {
    if skip_driver_errors_under_sanitizer(
        "allocation_beyond_the_card",
        "it provokes CUDA_ERROR_OUT_OF_MEMORY on purpose",
    ) {
        return;
    }
    let mut rng = Rng::from_env("beyond_the_card");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let total = ctx.total_mem().unwrap();
    let too_much = 2 * total;
    let oom = |kind: &str| -> Vec<String> {
        vec![
            "out of memory".into(),
            format!("allocate {too_much} bytes"),
            format!("of {kind} memory"),
        ]
    };
    expect_err(
        DeviceBuffer::<u8>::new(&ctx, too_much),
        &words(&oom("device")),
        "device",
    );
    expect_err(
        DeviceBuffer::<u64>::zeroed(&ctx, too_much / 8),
        &words(&oom("device")),
        "device zeroed",
    );
    expect_err(
        PoolBuffer::<u8>::new(too_much, &stream),
        &words(&oom("stream-ordered pool")),
        "pool",
    );
    expect_err(
        PoolBuffer::<u8>::from_pool(&pool, too_much, &stream),
        &words(&oom("stream-ordered pool")),
        "MemPool",
    );
    // 64 KiB rows, 2^30 rows: 64 TiB.
    let (w, h) = (1usize << 16, 1usize << 30);
    expect_err(
        PitchedBuffer::<u8>::new(&ctx, w, h),
        &[
            "out of memory",
            &format!("allocate {} bytes", w * h),
            "pitched device",
        ],
        "pitched",
    );
    // 4 PiB of pinned host memory: beyond any host. (Unified memory is not
    // tried: managed memory may oversubscribe, and a huge managed request can
    // hang the GPU.)
    let huge = 1usize << 52;
    let err = expect_err(PinnedBuffer::<u8>::new(&ctx, huge), &[], "pinned");
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "out of memory: could not allocate {huge} bytes of pinned host memory"
        )) || text.contains("cuMemHostAlloc"),
        "pinned: {text}"
    );

    // Normal allocations of every kind work afterwards.
    let data: Vec<E> = {
        let n = 1 + rng.length(10_000);
        rng.values(n)
    };
    for_each_kind!(&ctx, &stream, &pool, &data, |buf, name| {
        let v: E = rng.value();
        buf.fill_async(v, &stream).unwrap();
        assert!(
            buf.to_vec().unwrap().iter().all(|x| *x == v),
            "{name} after the failed allocations"
        );
    });
    let mut p = PitchedBuffer::from_slice(&ctx, &data, data.len(), 1).unwrap();
    let v: E = rng.value();
    p.fill(v).unwrap();
    assert!(p.to_vec().unwrap().iter().all(|x| *x == v));
    ctx.synchronize().unwrap();
}

/// Prefetch needs concurrent managed access (`NotSupported` without it);
/// advice the device cannot take is `NotSupported` too. The H200 supports
/// both, so there the error path is unreachable and this checks that every
/// call succeeds and leaves the contents intact.
#[test]
#[ignore = "needs a CUDA device"]
fn prefetch_and_advise_where_unsupported() {
    let mut rng = Rng::from_env("prefetch_unsupported");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let attr = cuda_mem::cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS;
    let concurrent = ctx.attribute(attr).unwrap() != 0;
    let data: Vec<E> = {
        let n = 1 + rng.length(100_000);
        rng.values(n)
    };
    let u = UnifiedBuffer::from_slice(&ctx, &data).unwrap();
    if !concurrent {
        let words = ["not supported", "concurrent managed access"];
        expect_err(u.prefetch_to_device(&stream), &words, "prefetch_to_device");
        expect_err(u.prefetch_to_host(&stream), &words, "prefetch_to_host");
        eprintln!("no concurrent managed access: prefetch is NotSupported, as it should be");
    } else {
        eprintln!("concurrent managed access: prefetch and advice must succeed");
        u.prefetch_to_device(&stream).unwrap();
        u.prefetch_to_host(&stream).unwrap();
        for advice in [
            Advice::ReadMostly(true),
            Advice::ReadMostly(false),
            Advice::PreferredLocation(Some(Location::Device)),
            Advice::PreferredLocation(Some(Location::Host)),
            Advice::PreferredLocation(None),
            Advice::AccessedBy(Location::Device, true),
            Advice::AccessedBy(Location::Device, false),
            Advice::AccessedBy(Location::Host, true),
            Advice::AccessedBy(Location::Host, false),
        ] {
            u.advise(advice)
                .unwrap_or_else(|e| panic!("{advice:?}: {e}"));
        }
        u.prefetch_to_device(&stream).unwrap();
        assert_eq!(
            u.to_vec().unwrap(),
            data,
            "prefetch and advice changed the contents"
        );
        u.prefetch_to_host(&stream).unwrap();
        assert_eq!(u.as_slice().unwrap(), &data[..]);
    }
}

/// A second CUDA context on the same GPU: `CudaContext::new_non_primary`
/// (cudarc; `cuCtxCreate`). Its streams must not be used with buffers of the
/// primary context. A copy between the two contexts is a peer copy (see
/// `multi_gpu.rs`); queued on a stream of a third context, it is refused.
#[test]
#[ignore = "needs a CUDA device"]
fn a_stream_of_another_context_is_a_context_mismatch() {
    let mut rng = Rng::from_env("context_mismatch");
    let ctx = gpu();
    let other = CudaContext::new_non_primary(0, 0).expect("a second (non-primary) context");
    let third = CudaContext::new_non_primary(0, 0).expect("a third (non-primary) context");
    assert_ne!(ctx.cu_ctx(), other.cu_ctx());
    let (stream, foreign) = (ctx.new_stream().unwrap(), other.new_stream().unwrap());
    let alien = third.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let stream_words = [
        "context mismatch",
        "the stream belongs to another CUDA context",
    ];
    let peer_words = [
        "context mismatch",
        "the stream of a copy between two contexts (it must be of one of them)",
    ];
    let data: Vec<E> = {
        let n = 1 + rng.length(5000);
        rng.values(n)
    };
    let foreign_buf = DeviceBuffer::from_slice(&other, &data).unwrap();
    let mut foreign_pinned = PinnedBuffer::from_slice(&other, &data).unwrap();
    for_each_kind!(&ctx, &stream, &pool, &data, |buf, name| {
        let v: E = rng.value();
        expect_err(buf.fill_async(v, &foreign), &stream_words, name);
        expect_err(buf.memset_async(1, &foreign), &stream_words, name);
        expect_err(
            buf.slice_mut(1..).unwrap().fill_async(v, &foreign),
            &stream_words,
            name,
        );
        let same = DeviceBuffer::from_slice(&ctx, &data).unwrap();
        expect_err(buf.copy_from_async(&same, &foreign), &stream_words, name);
        expect_err(buf.copy_from_async(&foreign_buf, &alien), &peer_words, name);
        expect_err(
            buf.copy_from_host_async(&foreign_pinned, &alien),
            &peer_words,
            name,
        );
        expect_err(
            buf.copy_to_host_async(&mut foreign_pinned, &alien),
            &peer_words,
            name,
        );
        expect_err(buf.kernel_arg(&foreign).map(|_| ()), &stream_words, name);
        expect_err(
            buf.kernel_arg_mut(&foreign).map(|_| ()),
            &stream_words,
            name,
        );
        stream.synchronize().unwrap();
        assert_eq!(
            buf.to_vec().unwrap(),
            data,
            "{name}: rejected calls changed the buffer"
        );
    });
    // Zero-length buffers are checked too.
    let mut empty = DeviceBuffer::<E>::new(&ctx, 0).unwrap();
    expect_err(
        empty.fill_async(rng.value(), &foreign),
        &stream_words,
        "empty fill",
    );
    expect_err(
        empty.memset_async(0, &foreign),
        &stream_words,
        "empty memset",
    );
    // Pools, unified prefetch, pitched copies.
    let pool_words = ["context mismatch", "the memory pool"];
    expect_err(
        PoolBuffer::<E>::from_pool(&pool, 10, &foreign),
        &pool_words,
        "from_pool",
    );
    let pooled = PoolBuffer::<E>::new(10, &stream).unwrap();
    expect_err(
        pooled.free_on_stream(&foreign),
        &stream_words,
        "free_on_stream",
    );
    let u = UnifiedBuffer::from_slice(&ctx, &data).unwrap();
    expect_err(u.prefetch_to_device(&foreign), &stream_words, "prefetch");
    let mut p = PitchedBuffer::from_slice(&ctx, &data, data.len(), 1).unwrap();
    let foreign_p = PitchedBuffer::from_slice(&other, &data, data.len(), 1).unwrap();
    expect_err(
        p.fill_async(rng.value(), &foreign),
        &stream_words,
        "pitched fill",
    );
    expect_err(
        p.copy_from_async(&foreign_p, &alien),
        &peer_words,
        "pitched copy_from",
    );
    expect_err(
        p.copy_from_host_async(&foreign_pinned, &alien),
        &peer_words,
        "pitched upload",
    );
    assert_eq!(p.to_vec().unwrap(), data);
    // The other context's own buffers work on its own streams.
    let mut mine = DeviceBuffer::<E>::new(&other, data.len()).unwrap();
    let v: E = rng.value();
    mine.fill_async(v, &foreign).unwrap();
    assert!(mine.to_vec().unwrap().iter().all(|x| *x == v));
    let mut mine_pool = PoolBuffer::<E>::new(data.len(), &foreign).unwrap();
    mine_pool.copy_from_async(&foreign_buf, &foreign).unwrap();
    assert_eq!(mine_pool.to_vec().unwrap(), data);
    mine_pool.free_on_stream(&foreign).unwrap();
    other.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn pitched_widths_of_zero_and_huge() {
    let mut rng = Rng::from_env("pitched_widths");
    let ctx = gpu();
    // Width 0: an empty buffer of any height; rows are empty views.
    for h in [0, 1, 1 + rng.below(1000)] {
        let mut p = PitchedBuffer::<E>::new(&ctx, 0, h).unwrap();
        assert_eq!((p.len(), p.byte_size(), p.pitch()), (0, 0, 0));
        p.fill(rng.value()).unwrap();
        p.memset(3).unwrap();
        if h > 0 {
            assert!(p.row(h - 1).unwrap().to_vec().unwrap().is_empty());
        }
    }
    // Widths whose byte size overflows: refused before the driver.
    for (w, h) in [
        (usize::MAX, 1),
        (usize::MAX / 12 + 1, 1),
        (usize::MAX / 24, 3),
    ] {
        expect_err(
            PitchedBuffer::<E>::new(&ctx, w, h),
            &["size overflow", "width * height * size_of::<T>()"],
            &format!("{w} x {h}"),
        );
    }
    if skip_driver_errors_under_sanitizer(
        "pitched_widths_of_zero_and_huge",
        "huge widths make cuMemAllocPitch fail on purpose",
    ) {
        return;
    }
    // Representable but impossible: one row of 1 TiB, and 16 TiB rows of 2^40 bytes.
    for (w, h) in [(1usize << 40, 1usize), (1 << 36, 1 << 8)] {
        let err = expect_err(
            PitchedBuffer::<u8>::new(&ctx, w, h),
            &[],
            &format!("{w} x {h}"),
        );
        let text = err.to_string();
        assert!(
            (text.contains("out of memory") && text.contains("pitched device"))
                || text.contains("cuMemAllocPitch"),
            "{w} x {h}: {text}"
        );
        eprintln!("pitched {w} x {h} u8: {text}");
    }
    // A wide but possible one works, every element checked.
    let w = 1_000_003;
    let data: Vec<u8> = rng.bytes(w * 2);
    let p = PitchedBuffer::from_slice(&ctx, &data, w, 2).unwrap();
    assert!(p.pitch() >= w);
    assert_eq!(p.to_vec().unwrap(), data);
}

/// Fill and memset of views of length 0 (at the start, the end, the middle)
/// on every kind: the whole buffer, random beforehand, is unchanged.
#[test]
#[ignore = "needs a CUDA device"]
fn fill_and_memset_of_empty_views_write_nothing() {
    let mut rng = Rng::from_env("empty_views");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let data: Vec<[u8; 300]> = {
        let n = 1 + rng.length(2000);
        rng.values(n)
    };
    let len = data.len();
    for_each_kind!(&ctx, &stream, &pool, &data, |buf, name| {
        for at in [0, len, rng.below(len + 1)] {
            let v: [u8; 300] = rng.value();
            buf.slice_mut(at..at).unwrap().fill(v).unwrap();
            buf.slice_mut(at..at)
                .unwrap()
                .fill_async(v, &stream)
                .unwrap();
            buf.slice_mut(at..at).unwrap().memset(0xee).unwrap();
            buf.get_mut(at..at)
                .unwrap()
                .memset_async(0x11, &stream)
                .unwrap();
            let (mut left, _) = buf.split_at_mut(at).unwrap();
            left.slice_mut(at..).unwrap().fill(v).unwrap();
            assert!(
                buf.to_vec().unwrap() == data,
                "{name}: an empty view at {at} wrote"
            );
        }
    });
    let words: Vec<u32> = {
        let n = 1 + rng.length(5000);
        rng.values(n)
    };
    let mut dev = DeviceBuffer::from_slice(&ctx, &words).unwrap();
    for at in [0, words.len(), rng.below(words.len() + 1)] {
        dev.slice_mut(at..at).unwrap().fill(rng.value()).unwrap();
        dev.slice_mut(at..at).unwrap().memset(0xff).unwrap();
    }
    assert_eq!(dev.to_vec().unwrap(), words);
    // Pitched: empty parts of rows; the padding is checked too.
    let (w, h) = (1 + rng.below(500), 1 + rng.below(8));
    let mut p = PitchedBuffer::<E>::new(&ctx, w, h).unwrap();
    p.raw_memset_padded(0xa5).unwrap();
    let before = p.raw_padded_bytes().unwrap();
    for r in 0..h {
        let at = rng.below(w + 1);
        p.row_mut(r)
            .unwrap()
            .slice_mut(at..at)
            .unwrap()
            .fill(rng.value())
            .unwrap();
        p.row_mut(r)
            .unwrap()
            .slice_mut(at..at)
            .unwrap()
            .memset(0)
            .unwrap();
    }
    assert!(
        p.raw_padded_bytes().unwrap() == before,
        "an empty row view wrote"
    );
}

/// `cast` / `cast_mut` refuse a byte size that is not a whole number of the
/// new elements and a view whose address is misaligned for them (a
/// zero-sized target does not build); the accepted casts read and write the
/// same bytes.
#[test]
#[ignore = "needs a CUDA device"]
fn casts_of_the_wrong_size_or_alignment_are_refused() {
    let mut rng = Rng::from_env("casts");
    let ctx = gpu();
    let n = 2 + rng.below(10_000);
    let data: Vec<E> = rng.values(n);
    let mut buf = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    // 12-byte elements as u8 / u32: always fine; as u64: only an even count
    // of elements starting at an 8-byte boundary.
    let as_bytes = buf.cast::<u8>().unwrap().to_vec().unwrap();
    assert_eq!(as_bytes, cuda_mem_tests::bytes(&data));
    let odd = 1 + 2 * rng.below((n - 1) / 2);
    expect_err(
        buf.slice(..odd).unwrap().cast::<u64>(),
        &["invalid argument", "not a multiple of the new element size"],
        "12 * odd bytes as u64",
    );
    expect_err(
        buf.slice(1..3).unwrap().cast::<u64>(),
        &["invalid argument", "not aligned for the new element type"],
        "a view 12 bytes in as u64",
    );
    // A cast to a zero-sized type fails the build (the element check, like
    // every buffer's): the `compile_fail` example of `Memory::cast`.
    let even = 2 * rng.below(n / 2 + 1);
    assert_eq!(
        buf.slice(..even).unwrap().cast::<u64>().unwrap().len(),
        even * 12 / 8
    );
    // Writes through a cast land in the right bytes, and nowhere else.
    let (a, b) = (rng.below(n), rng.below(n));
    let (a, b) = (a.min(b), a.max(b));
    let word = rng.next_u64() as u32;
    buf.slice_mut(a..b)
        .unwrap()
        .cast_mut::<u32>()
        .unwrap()
        .fill(word)
        .unwrap();
    let mut want = data.clone();
    want[a..b].fill([word; 3]);
    assert_eq!(
        buf.to_vec().unwrap(),
        want,
        "fill through cast_mut of {a}..{b}"
    );
}
