//! GPU tests of the buffer kinds: every method on every kind with random data,
//! odd lengths and unaligned sub-views; ordering across two streams; the
//! soundness rules (host access waits, drops wait). Bad input (lengths,
//! ranges, sizes, zero lengths, out of memory, other contexts) is in
//! `bad_input.rs`.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::{
    AsView, Buffer, DeviceBuffer, MemoryKind, PinnedBuffer, PinnedFlags, PoolBuffer, UnifiedBuffer,
};
use cuda_mem_tests::{gpu, Rng};

type Elem = [u8; 12];

/// Exercises every shared operation on `buf` (any kind), checking against a host model.
fn exercise<K: MemoryKind>(
    rng: &mut Rng,
    buf: &mut Buffer<Elem, K>,
    stream: &Arc<cuda_mem::CudaStream>,
) {
    let ctx = buf.context().clone();
    let len = buf.len();
    assert_eq!(buf.byte_size(), len * 12);
    assert_eq!(buf.is_empty(), len == 0);
    let mut model: Vec<Elem> = rng.values(len);
    buf.copy_from_host(&model).unwrap();
    assert_eq!(
        buf.to_vec().unwrap(),
        model,
        "{} copy_from_host/to_vec",
        K::NAME
    );

    let byte = rng.next_u64() as u8;
    buf.memset(byte).unwrap();
    model.fill([byte; 12]);
    let mut out = vec![[0x5a; 12]; len];
    buf.copy_to_host(&mut out).unwrap();
    assert_eq!(out, model, "{} memset", K::NAME);

    // Unaligned sub-views: fill, memset_async, copies in and out.
    if len >= 3 {
        let a = 1 + rng.below(len / 2);
        let b = a + rng.below(len - a);
        let v: Elem = rng.value();
        buf.slice_mut(a..b).unwrap().fill_async(v, stream).unwrap();
        model[a..b].fill(v);
        let part: Vec<Elem> = rng.values(b - a);
        buf.slice_mut(a..b).unwrap().copy_from_host(&part).unwrap();
        model[a..b].copy_from_slice(&part);
        assert_eq!(buf.slice(a..b).unwrap().to_vec().unwrap(), part);
        let m = rng.next_u64() as u8;
        buf.slice_mut(..a).unwrap().memset_async(m, stream).unwrap();
        model[..a].fill([m; 12]);
        assert_eq!(buf.to_vec().unwrap(), model, "{} views", K::NAME);
    }

    // Device-to-device from every kind, synchronous and on a stream.
    let src: Vec<Elem> = rng.values(len);
    let dev = DeviceBuffer::from_slice(&ctx, &src).unwrap();
    buf.copy_from(&dev).unwrap();
    assert_eq!(buf.to_vec().unwrap(), src, "{} copy_from device", K::NAME);
    let pinned = PinnedBuffer::from_slice(&ctx, &model).unwrap();
    buf.copy_from_async(&pinned, stream).unwrap();
    buf.copy_from_host_async(&pinned, stream).unwrap();
    assert_eq!(buf.to_vec().unwrap(), model, "{} copy_from pinned", K::NAME);
    let unified = UnifiedBuffer::from_slice(&ctx, &src).unwrap();
    buf.copy_from(&unified.as_view()).unwrap();
    let mut back = PinnedBuffer::<Elem>::new(&ctx, len).unwrap();
    buf.copy_to_host_async(&mut back, stream).unwrap();
    assert_eq!(
        back.as_slice().unwrap(),
        &src[..],
        "{} copy_to_host_async",
        K::NAME
    );

    assert!(!buf.as_device_ptr().is_null() || len == 0);
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_method_on_every_kind() {
    let mut rng = Rng::from_env("every_method");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for _ in 0..3 {
        let len = rng.length(20_000);
        exercise(
            &mut rng,
            &mut DeviceBuffer::<Elem>::new(&ctx, len).unwrap(),
            &stream,
        );
        exercise(
            &mut rng,
            &mut PinnedBuffer::<Elem>::new(&ctx, len).unwrap(),
            &stream,
        );
        exercise(
            &mut rng,
            &mut UnifiedBuffer::<Elem>::new(&ctx, len).unwrap(),
            &stream,
        );
        let mut pool = PoolBuffer::<Elem>::new(len, &stream).unwrap();
        exercise(&mut rng, &mut pool, &stream);
        pool.free_on_stream(&stream).unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn constructors_initialise_and_copy() {
    let mut rng = Rng::from_env("constructors");
    let ctx = gpu();
    let len = rng.length(10_000) + 1;
    let data: Vec<u64> = rng.values(len);
    assert!(DeviceBuffer::<u64>::zeroed(&ctx, len)
        .unwrap()
        .to_vec()
        .unwrap()
        .iter()
        .all(|&x| x == 0));
    assert_eq!(
        DeviceBuffer::from_slice(&ctx, &data)
            .unwrap()
            .to_vec()
            .unwrap(),
        data
    );
    // Host memory handed out is initialised: pinned and unified start zeroed.
    assert!(PinnedBuffer::<u64>::new(&ctx, len)
        .unwrap()
        .as_slice()
        .unwrap()
        .iter()
        .all(|&x| x == 0));
    assert!(UnifiedBuffer::<u64>::new(&ctx, len)
        .unwrap()
        .as_slice()
        .unwrap()
        .iter()
        .all(|&x| x == 0));
    assert_eq!(
        PinnedBuffer::from_slice(&ctx, &data)
            .unwrap()
            .as_slice()
            .unwrap(),
        &data[..]
    );
    assert_eq!(
        UnifiedBuffer::from_slice(&ctx, &data)
            .unwrap()
            .as_slice()
            .unwrap(),
        &data[..]
    );
    for flags in [
        PinnedFlags {
            portable: true,
            ..Default::default()
        },
        PinnedFlags {
            device_map: true,
            ..Default::default()
        },
        PinnedFlags {
            write_combined: true,
            ..Default::default()
        },
    ] {
        let mut p = PinnedBuffer::<u64>::with_flags(&ctx, len, flags).unwrap();
        p.as_mut_slice().unwrap().copy_from_slice(&data);
        let d = DeviceBuffer::<u64>::new(&ctx, len).unwrap();
        let mut d = d;
        d.copy_from(&p).unwrap();
        assert_eq!(d.to_vec().unwrap(), data, "{flags:?}");
    }
}

/// H2D on one stream, a device-to-device transform on another, D2H on the
/// first: the stream order makes each wait for the previous one; every byte checked.
#[test]
#[ignore = "needs a CUDA device"]
fn two_stream_pipeline_is_ordered() {
    let mut rng = Rng::from_env("pipeline");
    let ctx = gpu();
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let chunk = 1 << 20;
    let mut dev = [
        DeviceBuffer::<u32>::new(&ctx, chunk).unwrap(),
        DeviceBuffer::<u32>::new(&ctx, chunk).unwrap(),
    ];
    let mut mid = [
        DeviceBuffer::<u32>::new(&ctx, chunk).unwrap(),
        DeviceBuffer::<u32>::new(&ctx, chunk).unwrap(),
    ];
    let mut host_in = [
        PinnedBuffer::<u32>::new(&ctx, chunk).unwrap(),
        PinnedBuffer::<u32>::new(&ctx, chunk).unwrap(),
    ];
    let mut host_out = [
        PinnedBuffer::<u32>::new(&ctx, chunk).unwrap(),
        PinnedBuffer::<u32>::new(&ctx, chunk).unwrap(),
    ];
    for round in 0..8 {
        let i = round % 2;
        let data: Vec<u32> = rng.values(chunk);
        host_in[i].as_mut_slice().unwrap().copy_from_slice(&data); // waits for the previous H2D
        host_out[i].as_mut_slice().unwrap().fill(0xdead_beef);
        dev[i].copy_from_host_async(&host_in[i], &s1).unwrap();
        mid[i].copy_from_async(&dev[i], &s2).unwrap(); // s2 waits for s1's copy
        mid[i]
            .slice_mut(..7)
            .unwrap()
            .fill_async(round as u32, &s2)
            .unwrap();
        mid[i].copy_to_host_async(&mut host_out[i], &s1).unwrap(); // s1 waits for s2
        let got = host_out[i].as_slice().unwrap();
        assert!(got[..7].iter().all(|&x| x == round as u32), "round {round}");
        assert_eq!(&got[7..], &data[7..], "round {round}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_access_waits_for_queued_work_and_drop_waits() {
    let mut rng = Rng::from_env("host_waits");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let len = 64 << 20;
    let v: u32 = rng.value();
    let mut dev = DeviceBuffer::<u32>::new(&ctx, len).unwrap();
    dev.fill_async(v, &stream).unwrap();
    let mut pinned = PinnedBuffer::<u32>::new(&ctx, len).unwrap();
    dev.copy_to_host_async(&mut pinned, &stream).unwrap();
    // No stream sync here: as_slice must wait for the 256 MiB copy.
    let s = pinned.as_slice().unwrap();
    assert!(s[0] == v && s[len - 1] == v && s.iter().all(|&x| x == v));
    // Drop a device buffer with work still queued on another stream.
    let other = ctx.new_stream().unwrap();
    let mut big = DeviceBuffer::<u32>::new(&ctx, len).unwrap();
    big.fill_async(7, &other).unwrap();
    drop(big);
    let mut pool = PoolBuffer::<u32>::new(len, &stream).unwrap();
    pool.fill_async(3, &other).unwrap();
    drop(pool); // freed stream-ordered behind the fill
    ctx.synchronize().unwrap();
}

/// Buffers can be handed to a cudarc kernel launch through `kernel_arg`, and
/// to cudarc's own copy calls through its `DevicePtr` traits.
#[test]
#[ignore = "needs a CUDA device"]
fn cudarc_interop() {
    let mut rng = Rng::from_env("cudarc_interop");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let data: Vec<f32> = (0..1000).map(|_| rng.below(1000) as f32).collect();
    let dev = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let back: Vec<f32> = stream.clone_dtoh(&dev).unwrap();
    assert_eq!(back, data);
    let mut dst = DeviceBuffer::<f32>::zeroed(&ctx, 1000).unwrap();
    stream.memcpy_dtod(&dev, &mut dst).unwrap();
    assert_eq!(dst.to_vec().unwrap(), data);
    let arg = dst.kernel_arg_mut(&stream).unwrap();
    assert_eq!(arg.device_ptr().addr(), dst_addr(&arg));
}

fn dst_addr(arg: &cuda_mem::KernelArg<'_, f32>) -> u64 {
    arg.device_ptr().addr()
}

#[test]
#[ignore = "needs a CUDA device"]
fn unified_prefetch_and_advise() {
    let mut rng = Rng::from_env("unified");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let len = rng.length(1 << 20) + 1;
    let data: Vec<u16> = rng.values(len);
    let mut u = UnifiedBuffer::from_slice(&ctx, &data).unwrap();
    use cuda_mem::{Advice, Location};
    for advice in [
        Advice::ReadMostly(true),
        Advice::ReadMostly(false),
        Advice::PreferredLocation(Some(Location::Device)),
        Advice::PreferredLocation(None),
        Advice::AccessedBy(Location::Device, true),
        Advice::AccessedBy(Location::Device, false),
    ] {
        u.advise(advice).unwrap();
    }
    u.prefetch_to_device(&stream).unwrap();
    u.fill_async(0x77, &stream).unwrap();
    u.prefetch_to_host(&stream).unwrap();
    assert!(u.as_slice().unwrap().iter().all(|&x| x == 0x77));
    u.as_mut_slice().unwrap().copy_from_slice(&data);
    u.prefetch_to_device(&stream).unwrap();
    assert_eq!(u.to_vec().unwrap(), data);
}

/// A random range `a..b` inside `0..len` (often unaligned, sometimes empty).
fn random_range(rng: &mut Rng, len: usize) -> std::ops::Range<usize> {
    let a = rng.below(len + 1);
    let b = a + rng.below(len - a + 1);
    a..b
}

/// Prefetch and advice on element ranges, by location: random unaligned
/// sub-ranges of an odd-sized buffer go to the device, to the host and to
/// the device by ordinal, interleaved with fills of other random ranges on
/// two streams; the contents must be exactly the model's after every round
/// (host access waits for the prefetches). Ranges outside the buffer are
/// `OutOfRange`, an ordinal that names no device is `InvalidArgument`. With
/// a second GPU, part of the buffer is prefetched there and back.
#[test]
#[ignore = "needs a CUDA device"]
fn unified_prefetch_and_advise_on_ranges_by_location() {
    use cuda_mem::{Advice, Error, Location};
    let mut rng = Rng::from_env("unified_ranges");
    let ctx = gpu();
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let len = 2 * rng.below(1 << 19) + 4099;
    let mut model: Vec<Elem> = rng.values(len);
    let mut u = UnifiedBuffer::from_slice(&ctx, &model).unwrap();
    let count = cuda_mem::device_count().unwrap();
    let here = Location::DeviceOrdinal(ctx.ordinal());
    for round in 0..24 {
        let to = [Location::Device, Location::Host, here][rng.below(3)];
        let stream = if rng.below(2) == 0 { &s1 } else { &s2 };
        u.prefetch(random_range(&mut rng, len), to, stream)
            .unwrap_or_else(|e| panic!("round {round}: prefetch to {to:?}: {e}"));
        let advice = match rng.below(6) {
            0 => Advice::ReadMostly(true),
            1 => Advice::ReadMostly(false),
            2 => Advice::PreferredLocation(Some(
                [Location::Device, Location::Host, here][rng.below(3)],
            )),
            3 => Advice::PreferredLocation(None),
            4 => Advice::AccessedBy([Location::Device, here][rng.below(2)], true),
            _ => Advice::AccessedBy([Location::Device, here][rng.below(2)], false),
        };
        u.advise_range(random_range(&mut rng, len), advice)
            .unwrap_or_else(|e| panic!("round {round}: {advice:?}: {e}"));
        // A fill on the other stream, ordered after the prefetch.
        let other = if std::ptr::eq(stream, &s1) { &s2 } else { &s1 };
        let fill = random_range(&mut rng, len);
        let value: Elem = rng.value();
        u.slice_mut(fill.clone())
            .unwrap()
            .fill_async(value, other)
            .unwrap();
        model[fill].fill(value);
        u.prefetch(random_range(&mut rng, len), Location::Host, other)
            .unwrap();
        if round % 4 == 3 {
            assert!(
                u.as_slice().unwrap() == &model[..],
                "round {round}: host view differs from the model"
            );
            let mut out = vec![[0xa5; 12]; len];
            u.copy_to_host(&mut out).unwrap();
            assert!(
                out == model,
                "round {round}: copy_to_host differs from the model"
            );
        }
    }
    // Empty ranges are fine; ranges outside the buffer and absent devices are not.
    u.prefetch(len..len, Location::Device, &s1).unwrap();
    u.advise_range(7..7, Advice::ReadMostly(true)).unwrap();
    for (what, result) in [
        (
            "prefetch past the end",
            u.prefetch(len - 1..len + 1, Location::Host, &s1),
        ),
        (
            "advise past the end",
            u.advise_range(..=len, Advice::ReadMostly(true)),
        ),
    ] {
        assert!(
            matches!(result, Err(Error::OutOfRange { .. })),
            "{what}: {result:?}"
        );
    }
    let absent = Location::DeviceOrdinal(count);
    for (what, result) in [
        ("prefetch to an absent device", u.prefetch(.., absent, &s1)),
        (
            "preferred location on an absent device",
            u.advise_range(..1, Advice::PreferredLocation(Some(absent))),
        ),
        (
            "accessed by an absent device",
            u.advise(Advice::AccessedBy(absent, true)),
        ),
    ] {
        assert!(
            matches!(result, Err(Error::InvalidArgument(_))),
            "{what}: {result:?}"
        );
    }
    if count >= 2 {
        let other = Location::DeviceOrdinal(if ctx.ordinal() == 0 { 1 } else { 0 });
        let part = random_range(&mut rng, len);
        match u.prefetch(part.clone(), other, &s1) {
            Ok(()) => eprintln!("prefetched {part:?} to {other:?}"),
            Err(Error::NotSupported(why)) => eprintln!("{other:?} refused: {why}"),
            Err(e) => panic!("prefetch to {other:?}: {e}"),
        }
        let value: Elem = rng.value();
        u.slice_mut(part.clone())
            .unwrap()
            .fill_async(value, &s2)
            .unwrap();
        model[part].fill(value);
        u.prefetch(.., Location::Device, &s2).unwrap();
    }
    assert!(
        u.as_slice().unwrap() == &model[..],
        "final host view differs from the model"
    );
    let mut out = vec![[0x5a; 12]; len];
    u.as_view().copy_to_host(&mut out).unwrap();
    assert!(out == model, "final copy differs from the model");
    u.as_mut_slice().unwrap().fill([0; 12]);
    assert!(u.to_vec().unwrap().iter().all(|e| *e == [0; 12]));
}
