//! GPU tests of `fill`: every element size 1..=64 and 72, 96, 100, 128, 192,
//! 256, the medium kernel's 257, 777, 1024 and 4013, and 4014 and 4096 past
//! it; random values (and values that take the memset paths);
//! random lengths including 0, 1 and primes; views at every byte offset
//! modulo 16; every element and the bytes just outside the view checked;
//! fills with no context, or another one, current on the thread.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::{
    CudaContext, CudaStream, DeviceBuffer, DeviceCopy, PinnedBuffer, PitchedBuffer, PoolBuffer,
    UnifiedBuffer,
};
use cuda_mem_tests::{gpu, with_current, Current, Rng};

/// A random value of `N` bytes; sometimes one whose bytes repeat with period
/// 1, 2 or 4 (the memset paths).
fn value<const N: usize>(rng: &mut Rng) -> [u8; N] {
    let period = [1, 2, 4, N, N, N][rng.below(6)].max(1);
    let base = rng.bytes(period);
    std::array::from_fn(|i| base[i % period])
}

/// Fills views of a buffer of `[u8; N]` at offsets 0..16 elements (every
/// residue of the byte offset modulo 16 when N is odd; all reachable ones
/// otherwise) and checks the whole buffer after each fill.
fn check_size<const N: usize>(rng: &mut Rng) {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for round in 0..3 {
        let len = rng.length(3000.min((1 << 21) / N));
        let total = len + 32;
        let mut expect: Vec<[u8; N]> = rng.values(total);
        let mut buf = DeviceBuffer::from_slice(&ctx, &expect).unwrap();
        for offset in 0..16.min(total - len + 1) {
            let v = value::<N>(rng);
            let mut view = buf.slice_mut(offset..offset + len).unwrap();
            if round == 1 {
                view.fill_async(v, &stream).unwrap();
            } else {
                view.fill(v).unwrap();
            }
            expect[offset..offset + len].fill(v);
            let got = buf.to_vec().unwrap();
            if let Some(i) = (0..total).find(|&i| got[i] != expect[i]) {
                panic!("size {N}, len {len}, offset {offset}, round {round}: element {i} is {:?}, want {:?}", &got[i][..N.min(16)], &expect[i][..N.min(16)]);
            }
        }
    }
}

macro_rules! sizes {
    ($($n:literal)*) => {
        #[test]
        #[ignore = "needs a CUDA device"]
        fn fill_every_size_with_views_at_every_offset() {
            let mut rng = Rng::from_env("fill_every_size");
            $( check_size::<$n>(&mut rng); )*
        }
    };
}
sizes!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
       33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64
       72 96 100 128 192 256 257 777 1024 4013 4014 4096);

/// Aligned element types take the 16- and 32-bit memset paths at offsets the
/// byte arrays never reach with that alignment.
fn check_typed<T: DeviceCopy + PartialEq + std::fmt::Debug>(rng: &mut Rng, values: &[T]) {
    let ctx = gpu();
    for &v in values {
        let len = rng.length(5000) + 8;
        let mut expect: Vec<T> = rng.values(len);
        let mut buf = DeviceBuffer::from_slice(&ctx, &expect).unwrap();
        let (a, b) = (rng.below(4), len - rng.below(4));
        buf.slice_mut(a..b).unwrap().fill(v).unwrap();
        expect[a..b].fill(v);
        let got = buf.to_vec().unwrap();
        // Compare bytes: a random float may be NaN, which is never equal to itself.
        assert!(
            cuda_mem::bytes_of_slice(&got) == cuda_mem::bytes_of_slice(&expect),
            "{} fill of {v:?} over {a}..{b} of {len}",
            std::any::type_name::<T>()
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn fill_typed_values_on_every_path() {
    let mut rng = Rng::from_env("fill_typed");
    let (a, b, c, d, e, f): (f32, u16, u64, [f32; 3], u128, [f64; 3]) = (
        rng.value(),
        rng.value(),
        rng.value(),
        rng.value(),
        rng.value(),
        rng.value(),
    );
    check_typed::<f32>(&mut rng, &[1.0, -0.0, f32::from_bits(0x3f3f3f3f), a]);
    check_typed::<u16>(&mut rng, &[0x1212, 0xabcd, b]);
    check_typed::<u64>(
        &mut rng,
        &[0, u64::MAX, 0x0102_0304_0102_0304, 0x0101_0101_0101_0101, c],
    );
    check_typed::<[f32; 3]>(&mut rng, &[[1.0, 2.0, 3.0], [0.5; 3], d]);
    check_typed::<u128>(&mut rng, &[e, 7]);
    check_typed::<[f64; 3]>(&mut rng, &[f]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn fill_works_on_every_buffer_kind() {
    let mut rng = Rng::from_env("fill_kinds");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let len = rng.length(100_000) + 1;
    let v: [u8; 12] = rng.value();

    let mut pinned = PinnedBuffer::<[u8; 12]>::new(&ctx, len).unwrap();
    pinned.fill_async(v, &stream).unwrap();
    assert!(pinned.as_slice().unwrap().iter().all(|x| *x == v), "pinned");

    let mut unified = UnifiedBuffer::<[u8; 12]>::new(&ctx, len).unwrap();
    unified.fill(v).unwrap();
    assert!(
        unified.as_slice().unwrap().iter().all(|x| *x == v),
        "unified"
    );

    let mut pool = PoolBuffer::<[u8; 12]>::new(len, &stream).unwrap();
    pool.fill_async(v, &stream).unwrap();
    assert!(pool.to_vec().unwrap().iter().all(|x| *x == v), "pool");
    pool.free_on_stream(&stream).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn fill_large_elements_beyond_the_parameter_path() {
    let mut rng = Rng::from_env("fill_large");
    let ctx = gpu();
    for _ in 0..4 {
        let len = rng.length(300) + 2;
        let mut expect: Vec<[u8; 12345]> = rng.values(len);
        let mut buf = DeviceBuffer::from_slice(&ctx, &expect).unwrap();
        let a = rng.below(2);
        let v: [u8; 12345] = rng.value();
        buf.slice_mut(a..len).unwrap().fill(v).unwrap();
        expect[a..].fill(v);
        assert!(
            buf.to_vec().unwrap() == expect,
            "12345-byte elements, len {len}, from {a}"
        );
    }
}

/// Fills `len` elements at a random offset of a buffer of random `[u8; N]`
/// (the bytes around them poison) with `current` current on this thread:
/// once on `stream`, a stream of the buffer's context, after a first fill
/// there, and once on the context's default stream; checks every element
/// after each. A fill on a stream of its own, with no other stream's work
/// on the memory to wait for, leaves `current` current.
fn fill_with_current<const N: usize>(
    rng: &mut Rng,
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    current: Current<'_>,
) {
    let len = 1 + rng.length(5000.min((1 << 21) / N));
    let total = len + 32;
    let mut expect: Vec<[u8; N]> = rng.values(total);
    let mut buf = DeviceBuffer::from_slice(ctx, &expect).unwrap();
    // The upload (on the default stream) done: the fills below have no
    // other stream to wait for.
    buf.synchronize().unwrap();
    let offset = rng.below(16);
    let check = |buf: &DeviceBuffer<[u8; N]>, expect: &[[u8; N]], what: &str| {
        let got = buf.to_vec().unwrap();
        if let Some(i) = (0..total).find(|&i| got[i] != expect[i]) {
            panic!(
                "size {N}, len {len}, offset {offset}, {current:?}, {what}: element {i} is {:?}, want {:?}",
                &got[i][..N.min(16)],
                &expect[i][..N.min(16)]
            );
        }
    };
    // The first fill on `stream` (which sets up the fill kernels): with the
    // buffer's own context current.
    let first = value::<N>(rng);
    buf.slice_mut(offset..offset + len)
        .unwrap()
        .fill_async(first, stream)
        .unwrap();
    expect[offset..offset + len].fill(first);
    let v = value::<N>(rng);
    let mut view = buf.slice_mut(offset..offset + len).unwrap();
    let (filled, kept) = with_current(current, || view.fill_async(v, stream));
    filled.unwrap();
    assert!(
        kept,
        "size {N}, {current:?}: a fill on a stream of its own changed the thread's current context"
    );
    expect[offset..offset + len].fill(v);
    check(&buf, &expect, "on a stream");
    let w = value::<N>(rng);
    let mut view = buf.slice_mut(offset..offset + len).unwrap();
    let (filled, _) = with_current(current, || view.fill(w));
    filled.unwrap();
    expect[offset..offset + len].fill(w);
    check(&buf, &expect, "on the default stream");
}

/// Fills land in their buffer's context whatever context the calling
/// thread has current: none, or another context of the same GPU. Every
/// path: the memsets (values whose bytes repeat), the small, medium and
/// large kernels, and 2D memsets and kernels over padded rows.
#[test]
#[ignore = "needs a CUDA device"]
fn fills_land_in_their_buffers_context_whatever_context_is_current() {
    let mut rng = Rng::from_env("fills_land_in_their_buffers_context");
    let ctx = gpu();
    let other = CudaContext::new_non_primary(0, 0).expect("a second (non-primary) context");
    let stream = ctx.new_stream().unwrap();
    for current in [Current::Nothing, Current::Other(&other)] {
        for _ in 0..4 {
            fill_with_current::<1>(&mut rng, &ctx, &stream, current);
            fill_with_current::<4>(&mut rng, &ctx, &stream, current);
            fill_with_current::<12>(&mut rng, &ctx, &stream, current);
            fill_with_current::<777>(&mut rng, &ctx, &stream, current);
            fill_with_current::<4013>(&mut rng, &ctx, &stream, current);
            fill_with_current::<4096>(&mut rng, &ctx, &stream, current);
        }
        // Padded rows: the 2D memset (a repeating u32) and the kernel over
        // rows, after a first fill on `stream` each.
        let (width, height) = (1 + rng.below(300), 2 + rng.below(40));
        let mut pitched = PitchedBuffer::<u32>::new(&ctx, width, height).unwrap();
        pitched.fill_async(rng.next_u64() as u32, &stream).unwrap();
        let mut pairs = PitchedBuffer::<[u8; 6]>::new(&ctx, width, height).unwrap();
        pairs.fill_async(value::<6>(&mut rng), &stream).unwrap();
        let (v, p) = (rng.next_u64() as u32, value::<6>(&mut rng));
        let ((a, b), kept) = with_current(current, || {
            (pitched.fill_async(v, &stream), pairs.fill_async(p, &stream))
        });
        a.unwrap();
        b.unwrap();
        assert!(
            kept,
            "{current:?}: a 2D fill changed the thread's current context"
        );
        assert!(
            pitched.to_vec().unwrap().iter().all(|&x| x == v),
            "{current:?}: 2D memset"
        );
        assert!(
            pairs.to_vec().unwrap().iter().all(|&x| x == p),
            "{current:?}: 2D kernel"
        );
    }
}
