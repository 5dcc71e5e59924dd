//! The copy rows: pinned DMA each way, pageable copies (staged), the
//! overhead of a 4 KiB round trip, and two halves of one buffer copied on two
//! streams at once against two separate allocations.

use cuda_mem::prelude::*;
use std::ffi::c_void;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::{CudaContext, DeviceBuffer, PinnedBuffer};

use crate::harness::{median, Bench};

/// Pinned and pageable copies of 256 MiB each way, and a 4 KiB round trip.
pub fn host_copies(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let len = 256 << 20;
    let mut pinned = PinnedBuffer::<u8>::new(ctx, len).unwrap();
    let mut dev = DeviceBuffer::<u8>::new(ctx, len).unwrap();
    dev.memset(1).unwrap();
    let (d, h) = (
        dev.as_device_ptr().addr(),
        // The registered (DMA) mapping, as above.
        pinned.as_device_ptr().addr() as usize as *mut c_void,
    );
    let s = b.stream.clone();
    let gbps = |ms: f64| len as f64 / ms / 1e6;
    let ours = b.gpu_ms(|| dev.copy_from_host_async(&pinned, &s).unwrap());
    // SAFETY: both live, 256 MiB each; nothing else touches them meanwhile.
    let raw = b.gpu_ms(|| unsafe {
        sys::cuMemcpyHtoDAsync_v2(d, h, len, s.cu_stream())
            .result()
            .unwrap()
    });
    b.push(
        "copy",
        "pinned H2D 256 MiB".into(),
        "GB/s",
        gbps(ours),
        gbps(raw),
        "cuMemcpyHtoDAsync",
        true,
        None,
    );
    let ours = b.gpu_ms(|| dev.copy_to_host_async(&mut pinned, &s).unwrap());
    // SAFETY: as above.
    let raw = b.gpu_ms(|| unsafe {
        sys::cuMemcpyDtoHAsync_v2(h, d, len, s.cu_stream())
            .result()
            .unwrap()
    });
    b.push(
        "copy",
        "pinned D2H 256 MiB".into(),
        "GB/s",
        gbps(ours),
        gbps(raw),
        "cuMemcpyDtoHAsync",
        true,
        None,
    );

    let host: Vec<u8> = (0..len).map(|i| i as u8).collect();
    // Pageable copies are noisy: alternate ours and raw, median of each.
    let (ours, raw) = b.host_pair_us(
        1,
        || dev.copy_from_host(&host).unwrap(),
        // SAFETY: live buffers of `len` bytes.
        || unsafe {
            sys::cuMemcpyHtoD_v2(d, host.as_ptr().cast(), len)
                .result()
                .unwrap()
        },
        || {},
    );
    let (ours, raw) = (len as f64 / ours / 1e3, len as f64 / raw / 1e3);
    b.push(
        "copy",
        "copy_from_host(Vec) 256 MiB".into(),
        "GB/s",
        ours,
        raw,
        "cuMemcpyHtoD (pageable)",
        true,
        None,
    );
    assert!(dev.to_vec().unwrap() == host, "copy_from_host result wrong");
    let out = std::cell::RefCell::new(vec![0u8; len]);
    let (ours, raw) = b.host_pair_us(
        1,
        || dev.copy_to_host(&mut out.borrow_mut()).unwrap(),
        // SAFETY: live buffers of `len` bytes.
        || unsafe {
            sys::cuMemcpyDtoH_v2(out.borrow_mut().as_mut_ptr().cast(), d, len)
                .result()
                .unwrap()
        },
        || {},
    );
    b.push(
        "copy",
        "copy_to_host(Vec) 256 MiB".into(),
        "GB/s",
        len as f64 / ours / 1e3,
        len as f64 / raw / 1e3,
        "cuMemcpyDtoH (pageable)",
        true,
        None,
    );

    let small: Vec<u8> = vec![5; 4096];
    let mut d4 = DeviceBuffer::<u8>::new(ctx, 4096).unwrap();
    let a4 = d4.as_device_ptr().addr();
    let out = std::cell::RefCell::new(vec![0u8; 4096]);
    let (ours, raw) = b.host_pair_us(
        2000,
        || {
            d4.copy_from_host(&small).unwrap();
            d4.copy_to_host(&mut out.borrow_mut()).unwrap();
        },
        // SAFETY: live 4 KiB buffers.
        || unsafe {
            sys::cuMemcpyHtoD_v2(a4, small.as_ptr().cast(), 4096)
                .result()
                .unwrap();
            sys::cuMemcpyDtoH_v2(out.borrow_mut().as_mut_ptr().cast(), a4, 4096)
                .result()
                .unwrap();
        },
        || {},
    );
    b.push(
        "copy",
        "4 KiB round trip (overhead)".into(),
        "us",
        ours,
        raw,
        "cuMemcpyHtoD+DtoH",
        false,
        None,
    );
}

/// Full-duplex copies: host-to-device into the first half of one buffer on
/// stream A while device-to-host out of its second half runs on stream B
/// (64 MiB each, pinned host buffers), timed as a pair, against the same two
/// copies between two separate device allocations. The halves are disjoint,
/// so the copy engines could run both at once; with ordering per allocation
/// the second waits for the first (ratio about 0.5), with ordering per range
/// it need not (goal: 0.95 or more).
pub fn halves_on_two_streams(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let half = 64 << 20;
    let (sa, sb) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let upload = PinnedBuffer::from_slice(ctx, &vec![0x3cu8; half]).unwrap();
    let mut download = PinnedBuffer::<u8>::new(ctx, half).unwrap();
    let mut one = DeviceBuffer::<u8>::new(ctx, 2 * half).unwrap();
    one.memset(0xc3).unwrap();
    let mut first = DeviceBuffer::<u8>::new(ctx, half).unwrap();
    let mut second = DeviceBuffer::<u8>::new(ctx, half).unwrap();
    second.memset(0xc3).unwrap();
    let (mut o, mut r) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        o.push(b.gpu_two_streams_ms(&sa, &sb, || {
            let (mut low, high) = one.split_at_mut(half).unwrap();
            low.copy_from_host_async(&upload, &sa).unwrap();
            high.copy_to_host_async(&mut download, &sb).unwrap();
        }));
        r.push(b.gpu_two_streams_ms(&sa, &sb, || {
            first.copy_from_host_async(&upload, &sa).unwrap();
            second.copy_to_host_async(&mut download, &sb).unwrap();
        }));
    }
    let (ours, raw) = (median(o), median(r));
    assert!(
        download.as_slice().unwrap().iter().all(|&x| x == 0xc3),
        "D2H result wrong"
    );
    assert!(
        one.slice(..half)
            .unwrap()
            .to_vec()
            .unwrap()
            .iter()
            .all(|&x| x == 0x3c),
        "H2D result wrong"
    );
    let gbps = |ms: f64| (2 * half) as f64 / ms / 1e6;
    b.push(
        "copy",
        "halves of 1 buffer H2D+D2H, 2 streams".into(),
        "GB/s",
        gbps(ours),
        gbps(raw),
        "same on 2 allocations",
        true,
        None,
    );
}
