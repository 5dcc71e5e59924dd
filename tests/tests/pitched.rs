//! GPU tests of `PitchedBuffer<T>`: 2D copies (host, pinned async, device to
//! device), memset and fill over the logical width only (the row padding is
//! poisoned first and checked byte by byte), row views. Random values and
//! sizes every run (the seed is printed; replay with `CUDA_MEM_SEED`).
//!
//! Bad input (empty and huge shapes, size overflow, length mismatches, out of
//! memory, streams of another context) is in `bad_input.rs`.

use cuda_mem::prelude::*;
use cuda_mem::{DeviceCopy, Error, PinnedBuffer, PitchedBuffer, UnifiedBuffer};
use cuda_mem_tests::{bytes, Rng};

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
            if w2 * h2 == w * h {
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
