//! GPU tests of `PitchedBuffer<T>`: 2D copies (host, pinned async, device to
//! device), memset and fill over the logical width only (the row padding is
//! poisoned first and checked byte by byte), row views; and, since pitched
//! memory runs on the shared engine, copies to and from every other kind,
//! regions, host data with its own pitch, copies between contexts, and the
//! cudarc / NCCL boundary. Random values and sizes every run (the seed is
//! printed; replay with `CUDA_MEM_SEED`).
//!
//! Bad input (empty and huge shapes, size overflow, length mismatches, out of
//! memory, streams of another context) is in `bad_input.rs`.

use cuda_mem::prelude::*;
use cuda_mem::{
    DeviceBuffer, DeviceCopy, Error, PinnedBuffer, PitchedBuffer, PoolBuffer, UnifiedBuffer,
};
use cuda_mem_tests::{bytes, expect_err, Rng};

#[derive(Clone, Copy, PartialEq, Debug, cuda_mem::DeviceCopy)]
#[repr(C)]
struct P3 {
    x: f32,
    y: f32,
    z: f32,
}

/// Odd widths, always including 1000 (the case) and 1.
const WIDTHS: [usize; 6] = [1, 3, 17, 1000, 1001, 129];

fn random_height(rng: &mut Rng) -> usize {
    1 + rng.below(37)
}

/// Checks the raw allocation: each row's logical bytes equal `expect_row(r)`,
/// each row's padding is still `pad`.
fn check_raw<T: DeviceCopy>(buf: &PitchedBuffer<T>, pad: u8, expect: &[T], what: &str) {
    let raw = buf.raw_padded_bytes().unwrap();
    let (w, h, pitch) = (buf.width(), buf.height(), buf.pitch());
    let row_bytes = w * size_of::<T>();
    assert_eq!(raw.len(), pitch * h, "{what}: allocation size");
    let expect = bytes(expect);
    for r in 0..h {
        let row = &raw[r * pitch..(r + 1) * pitch];
        assert_eq!(
            &row[..row_bytes],
            &expect[r * row_bytes..(r + 1) * row_bytes],
            "{what}: row {r} of {w}x{h} (pitch {pitch})"
        );
        if let Some(i) = row[row_bytes..].iter().position(|&b| b != pad) {
            panic!(
                "{what}: padding byte {i} of row {r} changed to {:#x} ({w}x{h}, pitch {pitch})",
                row[row_bytes + i]
            );
        }
    }
}

fn fill_and_memset_skip_padding<T: DeviceCopy>(rng: &mut Rng, name: &str) {
    let ctx = cuda_mem::context(0).expect("GPU");
    let stream = ctx.new_stream().unwrap();
    for &w in &WIDTHS {
        let h = random_height(rng);
        let mut buf = PitchedBuffer::<T>::new(&ctx, w, h).unwrap();
        assert!(
            buf.pitch() >= w * size_of::<T>(),
            "{name}: pitch {} for width {w}",
            buf.pitch()
        );
        assert_eq!(
            (buf.width(), buf.height(), buf.len(), buf.byte_size()),
            (w, h, w * h, w * h * size_of::<T>())
        );
        let pad = 0xa5;

        buf.raw_memset_padded(pad).unwrap();
        let value: T = rng.value();
        buf.fill(value).unwrap();
        check_raw(&buf, pad, &vec![value; w * h], &format!("{name} fill"));

        let value: T = rng.value();
        buf.fill_async(value, &stream).unwrap();
        check_raw(
            &buf,
            pad,
            &vec![value; w * h],
            &format!("{name} fill_async"),
        );

        // A byte other than the padding's, so a memset over the padding shows.
        let byte = match rng.next_u64() as u8 {
            b if b == pad => 0x3c,
            b => b,
        };
        buf.memset(byte).unwrap();
        let rb = w * size_of::<T>();
        let raw = buf.raw_padded_bytes().unwrap();
        for r in 0..h {
            let row = &raw[r * buf.pitch()..(r + 1) * buf.pitch()];
            assert!(
                row[..rb].iter().all(|&b| b == byte),
                "{name} memset row {r}"
            );
            assert!(
                row[rb..].iter().all(|&b| b == pad),
                "{name} memset touched padding of row {r}"
            );
        }

        buf.memset_async(!byte, &stream).unwrap();
        let out = buf.to_vec().unwrap();
        assert!(
            bytes(&out).iter().all(|&b| b == !byte),
            "{name} memset_async"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn fill_and_memset_touch_only_the_logical_width() {
    let _ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("fill_and_memset_touch_only_the_logical_width");
    fill_and_memset_skip_padding::<P3>(&mut rng, "P3");
    fill_and_memset_skip_padding::<u8>(&mut rng, "u8");
    fill_and_memset_skip_padding::<u16>(&mut rng, "u16");
    fill_and_memset_skip_padding::<u32>(&mut rng, "u32");
    fill_and_memset_skip_padding::<u64>(&mut rng, "u64");
    fill_and_memset_skip_padding::<[u8; 3]>(&mut rng, "[u8; 3]");
    fill_and_memset_skip_padding::<[u32; 4]>(&mut rng, "[u32; 4]");
    fill_and_memset_skip_padding::<[u8; 20]>(&mut rng, "[u8; 20]");
    fill_and_memset_skip_padding::<[u64; 40]>(&mut rng, "[u64; 40]");
}

#[test]
#[ignore = "needs a CUDA device"]
fn fill_with_repeating_bytes_uses_memset_paths_correctly() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("fill_with_repeating_bytes_uses_memset_paths_correctly");
    for &w in &WIDTHS {
        let h = random_height(&mut rng);
        let mut buf = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
        buf.raw_memset_padded(0xa5).unwrap();
        // Period-4 pattern: goes through cuMemsetD2D32.
        let v = f32::from_bits(rng.next_u64() as u32);
        let value = P3 { x: v, y: v, z: v };
        buf.fill(value).unwrap();
        check_raw(&buf, 0xa5, &vec![value; w * h], "P3 period-4 fill");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_copies_round_trip_p3_with_odd_widths() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("host_copies_round_trip_p3_with_odd_widths");
    for &w in &WIDTHS {
        let h = random_height(&mut rng);
        let data: Vec<P3> = rng.values(w * h);
        let buf = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
        let mut out = vec![
            P3 {
                x: 1.5,
                y: -2.5,
                z: 9.0
            };
            w * h
        ];
        buf.copy_to_host(&mut out).unwrap();
        assert_eq!(bytes(&out), bytes(&data), "{w}x{h} from_slice/copy_to_host");

        let mut buf = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
        buf.raw_memset_padded(0xa5).unwrap();
        let data: Vec<P3> = rng.values(w * h);
        buf.copy_from_host(&data).unwrap();
        check_raw(&buf, 0xa5, &data, "copy_from_host");
        assert_eq!(
            bytes(&buf.to_vec().unwrap()),
            bytes(&data),
            "{w}x{h} to_vec"
        );
        for r in 0..h {
            let row = buf.row(r).unwrap().to_vec().unwrap();
            assert_eq!(
                bytes(&row),
                bytes(&data[r * w..(r + 1) * w]),
                "row view {r}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn zeroed_is_zero_and_leaves_padding() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("zeroed_is_zero_and_leaves_padding");
    for &w in &WIDTHS {
        let h = random_height(&mut rng);
        let mut buf = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
        buf.fill(rng.value()).unwrap();
        let buf = PitchedBuffer::<[u8; 7]>::zeroed(&ctx, w, h).unwrap();
        assert!(
            bytes(&buf.to_vec().unwrap()).iter().all(|&b| b == 0),
            "{w}x{h} zeroed"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn row_views_touch_only_their_row() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("row_views_touch_only_their_row");
    let stream = ctx.new_stream().unwrap();
    for &w in &WIDTHS {
        let h = 2 + rng.below(20);
        let mut model: Vec<P3> = rng.values(w * h);
        let mut buf = PitchedBuffer::from_slice(&ctx, &model, w, h).unwrap();
        buf.raw_memset_padded(0xa5).unwrap();
        buf.copy_from_host(&model).unwrap();

        let r = rng.below(h);
        let value: P3 = rng.value();
        buf.row_mut(r).unwrap().fill(value).unwrap();
        model[r * w..(r + 1) * w].fill(value);
        check_raw(&buf, 0xa5, &model, "row fill");

        let r = rng.below(h);
        let row_data: Vec<P3> = rng.values(w);
        buf.row_mut(r).unwrap().copy_from_host(&row_data).unwrap();
        model[r * w..(r + 1) * w].copy_from_slice(&row_data);
        check_raw(&buf, 0xa5, &model, "row copy_from_host");

        let r = rng.below(h);
        let byte = rng.next_u64() as u8;
        buf.row_mut(r).unwrap().memset_async(byte, &stream).unwrap();
        for b in bytemuck_bytes_mut(&mut model[r * w..(r + 1) * w]) {
            *b = byte;
        }
        check_raw(&buf, 0xa5, &model, "row memset_async");

        // Sub-views of a row.
        let r = rng.below(h);
        let (a, b) = (rng.below(w + 1), rng.below(w + 1));
        let (a, b) = (a.min(b), a.max(b));
        let value: P3 = rng.value();
        buf.row_mut(r)
            .unwrap()
            .slice_mut(a..b)
            .unwrap()
            .fill(value)
            .unwrap();
        model[r * w + a..r * w + b].fill(value);
        check_raw(&buf, 0xa5, &model, "row sub-view fill");

        assert!(matches!(buf.row(h), Err(Error::OutOfRange { .. })));
        assert!(matches!(
            buf.row_mut(h + rng.below(100)),
            Err(Error::OutOfRange { .. })
        ));
        assert!(matches!(buf.row(usize::MAX), Err(Error::OutOfRange { .. })));
        assert_eq!(buf.row(h - 1).unwrap().len(), w);
    }
}

/// The bytes of a mutable slice of `DeviceCopy` values.
fn bytemuck_bytes_mut<T: DeviceCopy>(values: &mut [T]) -> &mut [u8] {
    // SAFETY: DeviceCopy types have no padding and accept every bit pattern.
    unsafe {
        std::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<u8>(),
            std::mem::size_of_val(values),
        )
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn pinned_and_unified_async_copies_both_ways() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("pinned_and_unified_async_copies_both_ways");
    let stream = ctx.new_stream().unwrap();
    for &w in &WIDTHS {
        let h = random_height(&mut rng);
        let data: Vec<P3> = rng.values(w * h);
        let src = PinnedBuffer::from_slice(&ctx, &data).unwrap();
        let mut buf = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
        buf.raw_memset_padded(0xa5).unwrap();
        buf.copy_from_host_async(&src, &stream).unwrap();
        check_raw(&buf, 0xa5, &data, "pinned copy_from_host_async");

        let mut dst = PinnedBuffer::<P3>::new(&ctx, w * h).unwrap();
        dst.as_mut_slice().unwrap().fill(P3 {
            x: -7.0,
            y: 7.0,
            z: 0.5,
        });
        buf.copy_to_host_async(&mut dst, &stream).unwrap();
        assert_eq!(
            bytes(dst.as_slice().unwrap()),
            bytes(&data),
            "pinned copy_to_host_async"
        );

        let data: Vec<P3> = rng.values(w * h);
        let src = UnifiedBuffer::from_slice(&ctx, &data).unwrap();
        buf.copy_from_host_async(&src, &stream).unwrap();
        let mut dst = UnifiedBuffer::<P3>::new(&ctx, w * h).unwrap();
        dst.as_mut_slice().unwrap().fill(P3 {
            x: 3.0,
            y: 3.0,
            z: -3.0,
        });
        buf.copy_to_host_async(&mut dst, &stream).unwrap();
        assert_eq!(
            bytes(dst.as_slice().unwrap()),
            bytes(&data),
            "unified async round trip"
        );
        check_raw(&buf, 0xa5, &data, "unified copy_from_host_async");

        // Wrong lengths are errors.
        let short = PinnedBuffer::<P3>::new(&ctx, w * h - 1).unwrap();
        assert!(matches!(
            buf.copy_from_host_async(&short, &stream),
            Err(Error::LengthMismatch { .. })
        ));
        let mut long = PinnedBuffer::<P3>::new(&ctx, w * h + 1).unwrap();
        assert!(matches!(
            buf.copy_to_host_async(&mut long, &stream),
            Err(Error::LengthMismatch { .. })
        ));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_to_device_2d_copies() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("device_to_device_2d_copies");
    let stream = ctx.new_stream().unwrap();
    for &w in &WIDTHS {
        let h = random_height(&mut rng);
        let data: Vec<P3> = rng.values(w * h);
        let src = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
        let mut dst = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
        dst.raw_memset_padded(0xa5).unwrap();
        dst.copy_from(&src).unwrap();
        check_raw(&dst, 0xa5, &data, "copy_from");

        let data: Vec<P3> = rng.values(w * h);
        let mut src2 = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
        src2.copy_from_host(&data).unwrap();
        dst.copy_from_async(&src2, &stream).unwrap();
        check_raw(&dst, 0xa5, &data, "copy_from_async");

        // A different shape: error, nothing written.
        let other = PitchedBuffer::<P3>::new(&ctx, w + 1, h).unwrap();
        assert!(matches!(
            dst.copy_from(&other),
            Err(Error::LengthMismatch { .. })
        ));
        if h > 1 && w > 1 && (w * h).is_multiple_of(2) {
            // Same element count, other shape.
            let (w2, h2) = if w.is_multiple_of(2) {
                (w / 2, h * 2)
            } else {
                (w * 2, h / 2)
            };
            // Two images of several rows each (an image of one row is a
            // linear run, which copies into any shape of its length).
            if w2 * h2 == w * h && h2 > 1 {
                let reshaped = PitchedBuffer::<P3>::new(&ctx, w2, h2).unwrap();
                assert!(matches!(
                    dst.copy_from(&reshaped),
                    Err(Error::InvalidArgument(_))
                ));
            }
        }
        check_raw(&dst, 0xa5, &data, "after rejected copies");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn kernel_args_and_pointers_address_the_buffer() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("kernel_args_and_pointers_address_the_buffer");
    let stream = ctx.new_stream().unwrap();
    let (w, h) = (1000, random_height(&mut rng));
    let mut buf = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
    let base = buf.as_device_ptr().addr();
    assert_ne!(base, 0);
    assert_eq!(buf.row(0).unwrap().as_device_ptr().addr(), base);
    if h > 1 {
        assert_eq!(
            buf.row(1).unwrap().as_device_ptr().addr(),
            base + buf.pitch() as u64
        );
    }
    assert_eq!(buf.kernel_arg(&stream).unwrap().device_ptr().addr(), base);
    assert_eq!(
        buf.kernel_arg_mut(&stream).unwrap().device_ptr().addr(),
        base
    );
    buf.synchronize().unwrap();
    assert!(format!("{buf:?}").contains("PitchedBuffer"));
}

// ---------------------------------------------------------------------------
// The shared engine: pitched memory against every other kind, regions, host
// data with its own pitch, the cudarc and NCCL boundary.
// ---------------------------------------------------------------------------

/// A random sub-rectangle of a `w` x `h` array: `(x, y, cols, rows)`, at
/// least one element, often not at column 0 (unaligned x offsets).
fn random_rect(rng: &mut Rng, w: usize, h: usize) -> (usize, usize, usize, usize) {
    let (x, y) = (rng.below(w), rng.below(h));
    (x, y, 1 + rng.below(w - x), 1 + rng.below(h - y))
}

/// `model` (a packed `w`-wide array) with the `cols` x `rows` rectangle at
/// `(x, y)` replaced by the packed `block`.
fn paste<T: Copy>(
    model: &mut [T],
    w: usize,
    (x, y, cols, rows): (usize, usize, usize, usize),
    block: &[T],
) {
    for r in 0..rows {
        model[(y + r) * w + x..][..cols].copy_from_slice(&block[r * cols..][..cols]);
    }
}

/// The packed `cols` x `rows` rectangle at `(x, y)` of the `w`-wide `model`.
fn cut<T: Copy>(model: &[T], w: usize, (x, y, cols, rows): (usize, usize, usize, usize)) -> Vec<T> {
    (0..rows)
        .flat_map(|r| model[(y + r) * w + x..][..cols].iter().copied())
        .collect()
}

/// Pitched memory to and from device, pool, pinned and unified buffers, both
/// directions, on the default stream and on another: packed rows on the
/// linear side, the padding of the pitched side untouched.
#[test]
#[ignore = "needs a CUDA device"]
fn pitched_to_and_from_every_linear_kind() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("pitched_to_and_from_every_linear_kind");
    let stream = ctx.new_stream().unwrap();
    let poison = P3 {
        x: -1.0,
        y: f32::NAN,
        z: 4.25,
    };
    for &w in &WIDTHS {
        let h = random_height(&mut rng);
        let n = w * h;
        for kind in ["device", "pool", "pinned", "unified"] {
            let data: Vec<P3> = rng.values(n);
            let mut pitched = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
            pitched.raw_memset_padded(0xa5).unwrap();
            let poisoned = vec![poison; n];
            // Linear -> pitched.
            match kind {
                "device" => pitched.copy_from(&DeviceBuffer::from_slice(&ctx, &data).unwrap()),
                "pool" => {
                    let mut pool = PoolBuffer::<P3>::new(n, &stream).unwrap();
                    pool.copy_from_host(&data).unwrap();
                    pitched.copy_from_async(&pool, &stream)
                }
                "pinned" => pitched.copy_from(&PinnedBuffer::from_slice(&ctx, &data).unwrap()),
                _ => pitched
                    .copy_from_async(&UnifiedBuffer::from_slice(&ctx, &data).unwrap(), &stream),
            }
            .unwrap();
            check_raw(&pitched, 0xa5, &data, &format!("{kind} -> pitched {w}x{h}"));
            // Pitched -> linear, into poisoned memory.
            let back = match kind {
                "device" => {
                    let mut dst = DeviceBuffer::from_slice(&ctx, &poisoned).unwrap();
                    dst.copy_from_async(&pitched, &stream).unwrap();
                    dst.to_vec().unwrap()
                }
                "pool" => {
                    let mut dst = PoolBuffer::<P3>::new(n, &stream).unwrap();
                    dst.copy_from_host(&poisoned).unwrap();
                    dst.copy_from(&pitched).unwrap();
                    dst.to_vec().unwrap()
                }
                "pinned" => {
                    let mut dst = PinnedBuffer::from_slice(&ctx, &poisoned).unwrap();
                    dst.copy_from_async(&pitched, &stream).unwrap();
                    dst.as_slice().unwrap().to_vec()
                }
                _ => {
                    let mut dst = UnifiedBuffer::from_slice(&ctx, &poisoned).unwrap();
                    dst.copy_from(&pitched).unwrap();
                    dst.as_slice().unwrap().to_vec()
                }
            };
            assert_eq!(bytes(&back), bytes(&data), "pitched {w}x{h} -> {kind}");
            // A linear buffer of another length is refused, nothing written.
            let other = DeviceBuffer::<P3>::new(&ctx, n + 1).unwrap();
            assert!(matches!(
                pitched.copy_from(&other),
                Err(Error::LengthMismatch { .. })
            ));
            check_raw(
                &pitched,
                0xa5,
                &data,
                &format!("{kind} after a refused copy"),
            );
        }
    }
}

/// Regions of odd sizes at unaligned offsets copied between two pitched
/// buffers, within one buffer's rows into a linear buffer and back: only the
/// target rectangle changes, padding and the rest are checked byte by byte.
#[test]
#[ignore = "needs a CUDA device"]
fn regions_copy_to_regions_and_linear_memory() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("regions_copy_to_regions_and_linear_memory");
    let stream = ctx.new_stream().unwrap();
    for &w in &WIDTHS {
        for _ in 0..4 {
            let h = random_height(&mut rng);
            let (w2, h2) = (w + rng.below(40), h + rng.below(9));
            let src_data: Vec<P3> = rng.values(w * h);
            let src = PitchedBuffer::from_slice(&ctx, &src_data, w, h).unwrap();
            let mut model: Vec<P3> = rng.values(w2 * h2);
            let mut dst = PitchedBuffer::<P3>::new(&ctx, w2, h2).unwrap();
            dst.raw_memset_padded(0x5a).unwrap();
            dst.copy_from_host(&model).unwrap();

            // Region -> region of the same shape, at other offsets.
            let (x, y, cols, rows) = random_rect(&mut rng, w, h);
            let (x2, y2) = (rng.below(w2 - cols + 1), rng.below(h2 - rows + 1));
            let from = src.region(x..x + cols, y..y + rows).unwrap();
            assert_eq!(
                (from.len(), from.width(), from.height()),
                (cols * rows, cols, rows)
            );
            if rows > 1 {
                assert_eq!(from.pitch(), src.pitch());
            }
            let block = cut(&src_data, w, (x, y, cols, rows));
            assert_eq!(
                bytes(&from.to_vec().unwrap()),
                bytes(&block),
                "region to_vec"
            );
            let mut to = dst.region_mut(x2..x2 + cols, y2..y2 + rows).unwrap();
            if rng.below(2) == 0 {
                to.copy_from(&from).unwrap();
            } else {
                to.copy_from_async(&from, &stream).unwrap();
            }
            paste(&mut model, w2, (x2, y2, cols, rows), &block);
            check_raw(
                &dst,
                0x5a,
                &model,
                &format!("region {cols}x{rows} -> region"),
            );

            // Region -> linear (packed) and linear -> region.
            let mut linear = DeviceBuffer::<P3>::new(&ctx, cols * rows).unwrap();
            linear
                .fill(P3 {
                    x: 9.0,
                    y: 9.0,
                    z: 9.0,
                })
                .unwrap();
            linear
                .copy_from(&dst.region(x2..x2 + cols, y2..y2 + rows).unwrap())
                .unwrap();
            assert_eq!(
                bytes(&linear.to_vec().unwrap()),
                bytes(&block),
                "region -> linear"
            );
            let fresh: Vec<P3> = rng.values(cols * rows);
            linear.copy_from_host(&fresh).unwrap();
            let (x3, y3) = (rng.below(w2 - cols + 1), rng.below(h2 - rows + 1));
            dst.region_mut(x3..x3 + cols, y3..y3 + rows)
                .unwrap()
                .copy_from_async(&linear, &stream)
                .unwrap();
            paste(&mut model, w2, (x3, y3, cols, rows), &fresh);
            check_raw(&dst, 0x5a, &model, "linear -> region");

            // A region of another shape with the same length is refused.
            if cols > 1 && rows > 1 && rows != cols && cols <= h2 && rows <= w2 {
                let other = dst.region(..rows, ..cols).unwrap();
                let mut target = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
                assert!(matches!(
                    target
                        .region_mut(x..x + cols, y..y + rows)
                        .unwrap()
                        .copy_from(&other),
                    Err(Error::InvalidArgument(_))
                ));
            }
        }
    }
}

/// Host images with their own pitch: rows in from and out to a host slice
/// whose rows are `host_pitch` elements apart; the host elements between
/// rows are never written.
#[test]
#[ignore = "needs a CUDA device"]
fn host_data_with_its_own_pitch() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("host_data_with_its_own_pitch");
    for &w in &WIDTHS {
        let h = random_height(&mut rng);
        let mut model: Vec<P3> = rng.values(w * h);
        let mut buf = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
        buf.raw_memset_padded(0xa5).unwrap();
        buf.copy_from_host(&model).unwrap();

        let rect = random_rect(&mut rng, w, h);
        let (x, y, cols, rows) = rect;
        let host_pitch = cols + rng.below(50);
        let span = (rows - 1) * host_pitch + cols;
        let extra = rng.below(3);
        let image: Vec<P3> = rng.values(span + extra);
        // In: the whole buffer's rectangle from the strided host image.
        buf.region_mut(x..x + cols, y..y + rows)
            .unwrap()
            .copy_from_host_2d(&image, host_pitch)
            .unwrap();
        let block: Vec<P3> = (0..rows)
            .flat_map(|r| image[r * host_pitch..][..cols].iter().copied())
            .collect();
        paste(&mut model, w, rect, &block);
        check_raw(
            &buf,
            0xa5,
            &model,
            &format!("copy_from_host_2d {cols}x{rows} pitch {host_pitch}"),
        );

        // Out: into a poisoned strided host image; the gaps keep the poison.
        let poison: P3 = rng.value();
        let mut out = vec![poison; span];
        buf.region(x..x + cols, y..y + rows)
            .unwrap()
            .copy_to_host_2d(&mut out, host_pitch)
            .unwrap();
        for (i, v) in out.iter().enumerate() {
            let (r, c) = (i / host_pitch, i % host_pitch);
            let want = if c < cols {
                block[r * cols + c]
            } else {
                poison
            };
            assert_eq!(
                bytes(&[*v]),
                bytes(&[want]),
                "copy_to_host_2d element {i} (row {r}, column {c})"
            );
        }
        // The whole buffer out with a host pitch.
        let hp = w + 1 + rng.below(7);
        let mut whole = vec![poison; (h - 1) * hp + w];
        buf.copy_to_host_2d(&mut whole, hp).unwrap();
        for r in 0..h {
            assert_eq!(
                bytes(&whole[r * hp..][..w]),
                bytes(&model[r * w..][..w]),
                "whole row {r}"
            );
            if r + 1 < h {
                assert!(whole[r * hp + w..(r + 1) * hp]
                    .iter()
                    .all(|v| bytes(&[*v]) == bytes(&[poison])));
            }
        }

        // Bad pitches and lengths: errors, nothing written.
        let mut region = buf.region_mut(x..x + cols, y..y + rows).unwrap();
        if cols > 1 {
            assert!(matches!(
                region.copy_from_host_2d(&image, cols - 1),
                Err(Error::InvalidArgument(_))
            ));
        }
        if rows > 1 {
            assert!(matches!(
                region.copy_from_host_2d(&image[..span - 1], host_pitch),
                Err(Error::LengthMismatch { .. })
            ));
            let mut short = vec![poison; span - 1];
            assert!(matches!(
                region.copy_to_host_2d(&mut short, host_pitch),
                Err(Error::LengthMismatch { .. })
            ));
        }
        check_raw(&buf, 0xa5, &model, "after refused host copies");
    }
}

/// Fill and memset of regions (odd sizes, unaligned columns, every element
/// size class): the rectangle changes, nothing else in the whole padded
/// allocation does.
#[test]
#[ignore = "needs a CUDA device"]
fn fill_and_memset_of_regions_touch_nothing_outside() {
    fn run<T: DeviceCopy>(rng: &mut Rng, name: &str) {
        let ctx = cuda_mem::context(0).expect("GPU");
        let stream = ctx.new_stream().unwrap();
        for &w in &WIDTHS {
            let h = random_height(rng);
            let mut model: Vec<T> = rng.values(w * h);
            let mut buf = PitchedBuffer::<T>::new(&ctx, w, h).unwrap();
            buf.raw_memset_padded(0xa5).unwrap();
            buf.copy_from_host(&model).unwrap();
            for step in 0..4 {
                let rect = random_rect(rng, w, h);
                let (x, y, cols, rows) = rect;
                let mut region = buf.region_mut(x..x + cols, y..y + rows).unwrap();
                let block: Vec<T> = match step {
                    0 | 1 => {
                        let v: T = rng.value();
                        if step == 0 {
                            region.fill(v).unwrap();
                        } else {
                            region.fill_async(v, &stream).unwrap();
                        }
                        vec![v; cols * rows]
                    }
                    _ => {
                        let byte = match rng.next_u64() as u8 {
                            0xa5 => 0x3c,
                            b => b,
                        };
                        if step == 2 {
                            region.memset(byte).unwrap();
                        } else {
                            region.memset_async(byte, &stream).unwrap();
                        }
                        let mut v: T = rng.value();
                        bytemuck_bytes_mut(std::slice::from_mut(&mut v)).fill(byte);
                        vec![v; cols * rows]
                    }
                };
                paste(&mut model, w, rect, &block);
                check_raw(
                    &buf,
                    0xa5,
                    &model,
                    &format!("{name} region step {step} {cols}x{rows} at ({x}, {y})"),
                );
            }
        }
    }
    let mut rng = Rng::from_env("fill_and_memset_of_regions_touch_nothing_outside");
    run::<P3>(&mut rng, "P3");
    run::<u8>(&mut rng, "u8");
    run::<u16>(&mut rng, "u16");
    run::<u64>(&mut rng, "u64");
    run::<[u8; 20]>(&mut rng, "[u8; 20]");
    run::<[u64; 40]>(&mut rng, "[u64; 40]");
}

/// Slices of 2D views follow rows; casts go row by row; a view of several
/// padded rows is no slice kernel parameter.
#[test]
#[ignore = "needs a CUDA device"]
fn slices_and_casts_of_2d_views() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("slices_and_casts_of_2d_views");
    let (w, h) = (17 + rng.below(100), 3 + rng.below(10));
    let data: Vec<P3> = rng.values(w * h);
    let mut buf = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
    buf.raw_memset_padded(0xa5).unwrap();
    buf.copy_from_host(&data).unwrap();
    // Whole rows 1..3 and a piece of row 2.
    let rows = buf.slice(w..3 * w).unwrap();
    assert_eq!((rows.width(), rows.height()), (w, 2));
    assert_eq!(bytes(&rows.to_vec().unwrap()), bytes(&data[w..3 * w]));
    let piece = buf.slice(2 * w + 3..2 * w + 9).unwrap();
    assert_eq!(
        bytes(&piece.to_vec().unwrap()),
        bytes(&data[2 * w + 3..2 * w + 9])
    );
    expect_err(
        buf.slice(w - 1..w + 1),
        &["within one row"],
        "slice across rows",
    );
    // Bytes of a region, row by row: memset through the cast.
    let (x, y, cols, rws) = (1 + rng.below(w - 1), 1, 1 + rng.below(4), h - 1);
    let cols = cols.min(w - x);
    {
        let mut region = buf.region_mut(x..x + cols, y..y + rws).unwrap();
        let mut raw = region.cast_mut::<u8>().unwrap();
        assert_eq!((raw.width(), raw.height()), (cols * 12, rws));
        raw.memset(0).unwrap();
        let mut floats = region.cast_mut::<f32>().unwrap();
        assert_eq!(floats.len(), cols * 3 * rws);
        floats.fill(2.5).unwrap();
    }
    let mut model = data.clone();
    paste(
        &mut model,
        w,
        (x, y, cols, rws),
        &vec![
            P3 {
                x: 2.5,
                y: 2.5,
                z: 2.5
            };
            cols * rws
        ],
    );
    check_raw(&buf, 0xa5, &model, "cast region fill");
    // The split of a 2D view at a row boundary.
    {
        let (mut top, mut bottom) = buf.split_at_mut(w).unwrap();
        top.fill(P3 {
            x: 1.0,
            y: 1.0,
            z: 1.0,
        })
        .unwrap();
        bottom
            .region_mut(..1, ..)
            .unwrap()
            .fill(P3 {
                x: 2.0,
                y: 2.0,
                z: 2.0,
            })
            .unwrap();
    }
    model[..w].fill(P3 {
        x: 1.0,
        y: 1.0,
        z: 1.0,
    });
    for r in 1..h {
        model[r * w] = P3 {
            x: 2.0,
            y: 2.0,
            z: 2.0,
        };
    }
    check_raw(&buf, 0xa5, &model, "split_at_mut");
    assert!(matches!(
        buf.split_at_mut(w + 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(format!("{:?}", buf.region(1.., 1..).unwrap()).contains("pitch"));
}

/// Pitched buffers through cudarc: padded ones get address 0 (the driver
/// refuses the call), unpadded ones (one row) work; NCCL (a 1-rank
/// communicator) refuses padded ones with a clear error before it runs and
/// reduces unpadded ones.
#[test]
#[ignore = "needs a CUDA device"]
fn pitched_buffers_at_the_cudarc_and_nccl_boundary() {
    use cuda_mem::cudarc::driver::DevicePtr;
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("pitched_buffers_at_the_cudarc_and_nccl_boundary");
    let stream = ctx.new_stream().unwrap();
    let w = 1 + rng.below(5000) * 2; // odd: never a multiple of the pitch alignment
    let h = 2 + rng.below(10);
    let data: Vec<f32> = (0..w * h).map(|_| rng.below(1000) as f32).collect();
    let padded = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
    assert!(
        padded.pitch() > w * 4,
        "an odd width of f32s has padded rows"
    );
    let mut host = vec![-1.0f32; w * h];
    // The refusal is the driver's answer to address 0, which memcheck
    // reports as an API error: under compute-sanitizer only the address is
    // checked (below).
    if !cuda_mem_tests::under_sanitizer() {
        assert!(
            stream.memcpy_dtoh(&padded, &mut host).is_err(),
            "cudarc copy of padded rows"
        );
        assert!(host.iter().all(|&v| v == -1.0));
    }
    {
        let (addr, _sync) = padded.device_ptr(&stream);
        assert_eq!(addr, 0);
    }
    let row = PitchedBuffer::from_slice(&ctx, &data[..w], w, 1).unwrap();
    let mut host = vec![-1.0f32; w];
    stream.memcpy_dtoh(&row, &mut host).unwrap();
    assert_eq!(host, data[..w]);
    {
        let second_row = padded.row(1).unwrap();
        let (addr, _sync) = second_row.device_ptr(&stream);
        assert_eq!(addr, padded.as_device_ptr().addr() + padded.pitch() as u64);
    }

    if !cuda_mem::nccl::is_available() || cuda_mem_tests::under_sanitizer() {
        eprintln!("pitched NCCL: skipped (no NCCL, or under the sanitizer)");
        return;
    }
    use cuda_mem::cudarc::nccl::{Comm, Id, ReduceOp};
    ctx.bind_to_thread().unwrap();
    let comm = Comm::from_rank(ctx.new_stream().unwrap(), 0, 1, Id::new().unwrap()).unwrap();
    let mut recv = PitchedBuffer::<f32>::zeroed(&ctx, w, h).unwrap();
    expect_err(
        cuda_mem::nccl::all_reduce(&comm, &padded, &mut recv, &ReduceOp::Sum),
        &["padded", "copy it into a packed buffer"],
        "NCCL all_reduce of padded rows",
    );
    expect_err(
        cuda_mem::nccl::all_reduce_in_place(&comm, &mut recv, &ReduceOp::Sum),
        &["padded"],
        "NCCL in-place all_reduce of padded rows",
    );
    assert!(
        recv.to_vec().unwrap().iter().all(|&v| v == 0.0),
        "refused NCCL calls wrote"
    );
    // The documented way: copy into a packed buffer; and one unpadded row works as is.
    let mut packed = DeviceBuffer::<f32>::new(&ctx, w * h).unwrap();
    packed.copy_from(&padded).unwrap();
    let mut sum = DeviceBuffer::<f32>::new(&ctx, w * h).unwrap();
    cuda_mem::nccl::all_reduce(&comm, &packed, &mut sum, &ReduceOp::Sum).unwrap();
    assert_eq!(sum.to_vec().unwrap(), data);
    let mut row_out = PitchedBuffer::<f32>::zeroed(&ctx, w, 1).unwrap();
    cuda_mem::nccl::all_reduce(&comm, &row, &mut row_out, &ReduceOp::Sum).unwrap();
    assert_eq!(row_out.to_vec().unwrap(), data[..w]);
    println!("pitched NCCL: padded {w}x{h} refused, packed and one-row buffers reduced");
}

/// Pitched memory and regions between two contexts (the primary context and
/// a non-primary one on device 0, and device 1 when there is one): the 2D
/// peer path (`cuMemcpy3DPeerAsync`), against pitched and linear memory.
#[test]
#[ignore = "needs a CUDA device"]
fn pitched_copies_between_contexts() {
    let mut rng = Rng::from_env("pitched_copies_between_contexts");
    let a = cuda_mem::context(0).expect("GPU");
    let mut others = vec![cuda_mem::CudaContext::new_non_primary(0, 0).expect("a second context")];
    if cuda_mem::device_count().unwrap() > 1 {
        others.push(cuda_mem::context(1).unwrap());
    }
    for b in &others {
        let stream_b = b.new_stream().unwrap();
        for &w in &WIDTHS {
            let h = random_height(&mut rng);
            let data: Vec<P3> = rng.values(w * h);
            let src = PitchedBuffer::from_slice(&a, &data, w, h).unwrap();
            let mut dst = PitchedBuffer::<P3>::new(b, w, h).unwrap();
            dst.raw_memset_padded(0xa5).unwrap();
            dst.copy_from_async(&src, &stream_b).unwrap();
            check_raw(&dst, 0xa5, &data, &format!("pitched peer copy {w}x{h}"));
            // A region of another context's buffer into linear memory and back.
            let rect = random_rect(&mut rng, w, h);
            let (x, y, cols, rows) = rect;
            let mut linear = DeviceBuffer::<P3>::new(b, cols * rows).unwrap();
            linear.memset(0xee).unwrap();
            linear
                .copy_from(&src.region(x..x + cols, y..y + rows).unwrap())
                .unwrap();
            let block = cut(&data, w, rect);
            assert_eq!(
                bytes(&linear.to_vec().unwrap()),
                bytes(&block),
                "peer region -> linear"
            );
            let fresh: Vec<P3> = rng.values(cols * rows);
            linear.copy_from_host(&fresh).unwrap();
            let mut model = data.clone();
            dst.region_mut(x..x + cols, y..y + rows)
                .unwrap()
                .copy_from(&linear)
                .unwrap();
            paste(&mut model, w, rect, &fresh);
            check_raw(&dst, 0xa5, &model, "linear -> same-context region");
            let mut back = PitchedBuffer::<P3>::new(&a, w, h).unwrap();
            back.raw_memset_padded(0x5a).unwrap();
            back.copy_from(&dst).unwrap();
            check_raw(&back, 0x5a, &model, "pitched peer copy back");
        }
    }
}

/// Regions without columns (or rows) hold no elements: copies between them
/// succeed whatever their heights and touch nothing, padding included.
#[test]
#[ignore = "needs a CUDA device"]
fn empty_regions_of_any_shape_copy_nothing() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("empty_regions_of_any_shape_copy_nothing");
    let stream = ctx.new_stream().unwrap();
    let (w, h) = (1 + rng.below(300), 3 + rng.below(30));
    let data: Vec<P3> = rng.values(w * h);
    let src = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
    let mut dst = PitchedBuffer::<P3>::new(&ctx, w, h).unwrap();
    dst.raw_memset_padded(0x5a).unwrap();
    let before = dst.raw_padded_bytes().unwrap();
    let (x, x2) = (rng.below(w + 1), rng.below(w + 1));
    // Two different heights of at least 2 rows (refused as 2D shapes before).
    let rows = 2 + rng.below(h - 2);
    let rows2 = rows + 1 + rng.below(h - rows);
    let from = src.region(x..x, 0..rows).unwrap();
    let mut to = dst.region_mut(x2..x2, h - rows2..h).unwrap();
    assert_eq!((from.len(), to.len()), (0, 0));
    to.copy_from(&from).unwrap();
    to.copy_from_async(&from, &stream).unwrap();
    // An empty row range against an empty column range.
    dst.region_mut(.., 1..1)
        .unwrap()
        .copy_from(&src.region(x..x, ..).unwrap())
        .unwrap();
    stream.synchronize().unwrap();
    assert_eq!(dst.raw_padded_bytes().unwrap(), before);
    println!(
        "empty regions ({rows} and {rows2} rows, no columns): copied nothing, {w} x {h} untouched"
    );
}
