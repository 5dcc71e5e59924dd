//! GPU tests of the allocators: `allocator_api2::vec::Vec` in pinned and
//! managed memory (growth to 100k elements, contents checked, memory fed to
//! device copies), alignment and zero-size layouts, and `CudaAllocator`
//! (alignment 1..=256, zero size and over-aligned layouts rejected, out of
//! memory). Random values every run (seed printed; replay with `CUDA_MEM_SEED`).

use cuda_mem::prelude::*;
use std::alloc::Layout;

use allocator_api2::alloc::{AllocError, Allocator};
use allocator_api2::vec::Vec as AVec;
use cuda_mem::{CudaAllocator, DeviceBuffer, Error, PinnedAllocator, UnifiedAllocator};
use cuda_mem_tests::{bytes, skip_driver_errors_under_sanitizer, Rng};

#[derive(Clone, Copy, PartialEq, Debug, cuda_mem::DeviceCopy)]
#[repr(C)]
struct P3 {
    x: f32,
    y: f32,
    z: f32,
}

/// Pushes `n` random values one by one (so the Vec grows many times), checks
/// them against a `std` Vec after every regrowth and at the end.
fn grow<A: Allocator + Clone>(rng: &mut Rng, alloc: A, n: usize, what: &str) {
    let mut v: AVec<u64, A> = AVec::new_in(alloc);
    let mut model = Vec::new();
    let mut regrowths = 0;
    for _ in 0..n {
        let x = rng.next_u64();
        let cap = v.capacity();
        v.push(x);
        model.push(x);
        if v.capacity() != cap {
            regrowths += 1;
            assert_eq!(v.as_ptr() as usize % align_of::<u64>(), 0);
            assert_eq!(
                &v[..],
                &model[..],
                "{what}: after growing to {}",
                v.capacity()
            );
        }
    }
    assert!(regrowths > 5, "{what}: only {regrowths} regrowths");
    assert_eq!(&v[..], &model[..], "{what}: final contents");
    // Shrink, truncate, extend again.
    v.truncate(n / 3);
    v.shrink_to_fit();
    assert_eq!(&v[..], &model[..n / 3], "{what}: after shrink_to_fit");
    let more: Vec<u64> = (0..1000).map(|_| rng.next_u64()).collect();
    v.extend_from_slice(&more);
    assert_eq!(&v[n / 3..], &more[..], "{what}: after extend");
    // A clone of the allocator frees the clone's blocks; a cloned Vec is independent.
    let copy = v.clone();
    drop(v);
    assert_eq!(
        &copy[..n / 3],
        &model[..n / 3],
        "{what}: clone outlives original"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn pinned_vec_grows_to_100k_elements() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("pinned_vec_grows_to_100k_elements");
    grow(
        &mut rng,
        PinnedAllocator::new(&ctx).unwrap(),
        100_000,
        "pinned",
    );
    let mut p3 = AVec::new_in(PinnedAllocator::new(&ctx).unwrap());
    let model: Vec<P3> = rng.values(100_000);
    for &x in &model {
        p3.push(x);
    }
    assert_eq!(bytes(&p3), bytes(&model));
}

/// Portable and mapped pinned memory grows like the default; write-combined
/// memory is refused (it has no unregistered alias, so cudarc's copies
/// through a slice of the Vec would run unordered with the Vec's host code).
#[test]
#[ignore = "needs a CUDA device"]
fn pinned_allocator_flags_and_write_combined_refused() {
    use cuda_mem::PinnedFlags;
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("pinned_allocator_flags_and_write_combined_refused");
    for flags in [
        PinnedFlags {
            portable: true,
            ..Default::default()
        },
        PinnedFlags {
            device_map: true,
            ..Default::default()
        },
    ] {
        let alloc = PinnedAllocator::with_flags(&ctx, flags).unwrap();
        let n = 1 + rng.below(20_000);
        grow(&mut rng, alloc, n, &format!("{flags:?}"));
    }
    let refused = PinnedAllocator::with_flags(
        &ctx,
        PinnedFlags {
            write_combined: true,
            ..Default::default()
        },
    );
    match refused {
        Err(e @ Error::NotSupported(_)) => {
            assert!(e.to_string().contains("PinnedBuffer"), "{e}")
        }
        other => panic!("write-combined PinnedAllocator: {:?}", other.map(drop)),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn unified_vec_grows_to_100k_elements() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("unified_vec_grows_to_100k_elements");
    grow(
        &mut rng,
        UnifiedAllocator::new(&ctx).unwrap(),
        100_000,
        "unified",
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn pinned_vec_feeds_device_copies() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("pinned_vec_feeds_device_copies");
    let n = 50_000 + rng.below(50_000);
    let mut v = AVec::with_capacity_in(n, PinnedAllocator::new(&ctx).unwrap());
    v.extend(rng.values::<P3>(n));
    let dev = DeviceBuffer::from_slice(&ctx, &v).unwrap();
    assert_eq!(bytes(&dev.to_vec().unwrap()), bytes(&v));

    let mut back = AVec::with_capacity_in(n, PinnedAllocator::new(&ctx).unwrap());
    back.resize(
        n,
        P3 {
            x: -1.0,
            y: 1.0,
            z: f32::MAX,
        },
    );
    dev.copy_to_host(&mut back).unwrap();
    assert_eq!(bytes(&back), bytes(&v));

    let mut dev2 = DeviceBuffer::<P3>::new(&ctx, n).unwrap();
    dev2.memset(0xa5).unwrap();
    let fresh: Vec<P3> = rng.values(n);
    back.copy_from_slice(&fresh);
    dev2.copy_from_host(&back).unwrap();
    assert_eq!(bytes(&dev2.to_vec().unwrap()), bytes(&fresh));
}

#[test]
#[ignore = "needs a CUDA device"]
fn unified_vec_is_addressable_by_the_device() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("unified_vec_is_addressable_by_the_device");
    let n = 1 + rng.below(100_000);
    let mut v = AVec::new_in(UnifiedAllocator::new(&ctx).unwrap());
    v.extend(rng.values::<u32>(n));
    let mut dev = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    dev.memset(0xa5).unwrap();
    dev.synchronize().unwrap();
    ctx.bind_to_thread().unwrap();
    // SAFETY: both ranges are `n * 4` bytes of live memory of this context;
    // the synchronous copy completes before the call returns, and nothing else
    // uses either buffer meanwhile.
    unsafe {
        cudarc::driver::sys::cuMemcpy(dev.as_device_ptr().addr(), v.as_ptr() as u64, n * 4)
            .result()
            .unwrap();
    }
    ctx.synchronize().unwrap();
    assert_eq!(dev.to_vec().unwrap(), &v[..]);
}

fn check_alignments<A: Allocator>(rng: &mut Rng, alloc: &A, max_align: usize, what: &str) {
    let mut align = 1;
    while align <= max_align {
        for _ in 0..3 {
            let size = 1 + rng.below(3 * align + 100);
            let layout = Layout::from_size_align(size, align).unwrap();
            let block = alloc
                .allocate(layout)
                .unwrap_or_else(|_| panic!("{what}: {layout:?}"));
            let ptr = block.cast::<u8>().as_ptr();
            assert!(block.len() >= size);
            assert_eq!(ptr as usize % align, 0, "{what}: {layout:?} at {ptr:p}");
            // SAFETY: `block` is `block.len()` live bytes, exclusively ours.
            let mem = unsafe { std::slice::from_raw_parts_mut(ptr, block.len()) };
            assert!(mem.iter().all(|&b| b == 0), "{what}: {layout:?} not zeroed");
            let data = rng.bytes(size);
            mem[..size].copy_from_slice(&data);
            assert_eq!(&mem[..size], &data[..]);
            // SAFETY: allocated above with `layout`, no longer used.
            unsafe { alloc.deallocate(block.cast(), layout) };
        }
        align *= 2;
    }
    let too_aligned = Layout::from_size_align(64, max_align * 2).unwrap();
    assert_eq!(
        alloc.allocate(too_aligned),
        Err(AllocError),
        "{what}: align {}",
        max_align * 2
    );
    for align in [1, 16, 4096, 1 << 20] {
        let zero = Layout::from_size_align(0, align).unwrap();
        let block = alloc.allocate(zero).unwrap();
        assert_eq!(block.len(), 0);
        assert_eq!(
            block.cast::<u8>().as_ptr() as usize % align,
            0,
            "{what}: zero-size align {align}"
        );
        // SAFETY: zero-size block from this allocator.
        unsafe { alloc.deallocate(block.cast(), zero) };
    }
    let zeroed = alloc
        .allocate_zeroed(Layout::from_size_align(4096, 8).unwrap())
        .unwrap();
    // SAFETY: 4096 live bytes.
    assert!(
        unsafe { std::slice::from_raw_parts(zeroed.cast::<u8>().as_ptr(), 4096) }
            .iter()
            .all(|&b| b == 0)
    );
    // SAFETY: allocated above with this layout.
    unsafe { alloc.deallocate(zeroed.cast(), Layout::from_size_align(4096, 8).unwrap()) };
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_allocators_honour_alignment_and_zero_size() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("host_allocators_honour_alignment_and_zero_size");
    check_alignments(
        &mut rng,
        &PinnedAllocator::new(&ctx).unwrap(),
        cuda_mem::PINNED_MAX_ALIGN,
        "pinned",
    );
    check_alignments(
        &mut rng,
        &UnifiedAllocator::new(&ctx).unwrap(),
        cuda_mem::DEVICE_MAX_ALIGN,
        "unified",
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn cuda_allocator_honours_alignment() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("cuda_allocator_honours_alignment");
    let alloc = CudaAllocator::new(&ctx).unwrap();
    let mut align = 1;
    while align <= 256 {
        let layout = Layout::from_size_align(1 + rng.below(5000), align).unwrap();
        let raw = alloc.alloc(layout).unwrap();
        assert!(!raw.is_null());
        assert_eq!(raw.addr() % align as u64, 0, "raw {layout:?}");
        // SAFETY: from `alloc` with this layout, unused.
        unsafe { alloc.dealloc(raw, layout).unwrap() };

        let mut block = alloc.allocate(layout).unwrap();
        assert_eq!(
            block.as_device_ptr().addr() % align as u64,
            0,
            "owned {layout:?}"
        );
        assert_eq!((block.size(), block.layout()), (layout.size(), layout));
        block.view_mut().memset(0xa5).unwrap();
        let data = rng.bytes(layout.size());
        block.view_mut().copy_from_host(&data).unwrap();
        assert_eq!(
            block.view().to_vec().unwrap(),
            data,
            "owned {layout:?} round trip"
        );
        let byte = rng.next_u64() as u8;
        block.view_mut().fill(byte).unwrap();
        let mut out = vec![!byte; layout.size()];
        block.view().copy_to_host(&mut out).unwrap();
        assert!(out.iter().all(|&b| b == byte));
        let mut dev = DeviceBuffer::<u8>::new(&ctx, layout.size()).unwrap();
        dev.copy_from(&block).unwrap();
        assert!(dev.to_vec().unwrap().iter().all(|&b| b == byte));
        align *= 2;
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn cuda_allocator_rejects_bad_layouts_and_reports_out_of_memory() {
    let ctx = cuda_mem::context(0).expect("GPU");
    let mut rng = Rng::from_env("cuda_allocator_rejects_bad_layouts_and_reports_out_of_memory");
    let alloc = CudaAllocator::new(&ctx).unwrap();
    for align in [1, 8, 256, 4096] {
        let zero = Layout::from_size_align(0, align).unwrap();
        assert!(matches!(alloc.alloc(zero), Err(Error::InvalidArgument(_))));
        assert!(matches!(
            alloc.allocate(zero),
            Err(Error::InvalidArgument(_))
        ));
    }
    for align in [512, 4096, 1 << 16] {
        let l = Layout::from_size_align(1 + rng.below(1000), align).unwrap();
        assert!(
            matches!(alloc.alloc(l), Err(Error::InvalidArgument(_))),
            "align {align}"
        );
        assert!(
            matches!(alloc.allocate(l), Err(Error::InvalidArgument(_))),
            "align {align}"
        );
    }
    if skip_driver_errors_under_sanitizer(
        "cuda_allocator_rejects_bad_layouts_and_reports_out_of_memory",
        "its out-of-memory part provokes CUDA_ERROR_OUT_OF_MEMORY on purpose",
    ) {
        return;
    }
    let huge = Layout::from_size_align(1 << 50, 256).unwrap(); // 1 PiB
    match alloc.allocate(huge) {
        Err(Error::OutOfMemory { requested, .. }) => assert_eq!(requested, 1 << 50),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    assert!(matches!(
        alloc.alloc(huge),
        Err(Error::OutOfMemory {
            requested: 1_125_899_906_842_624,
            ..
        })
    ));
    // The context is still usable.
    let block = alloc.allocate(Layout::new::<[u64; 16]>()).unwrap();
    assert_eq!(block.view().to_vec().unwrap().len(), 128);
    // SAFETY: the null pointer / zero size are documented no-ops.
    unsafe {
        alloc
            .dealloc(cuda_mem::DevicePtr::null(), Layout::new::<u8>())
            .unwrap()
    };
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_allocators_fail_cleanly_when_out_of_memory() {
    if skip_driver_errors_under_sanitizer(
        "host_allocators_fail_cleanly_when_out_of_memory",
        "it provokes out-of-memory driver errors on purpose",
    ) {
        return;
    }
    let ctx = cuda_mem::context(0).expect("GPU");
    let pinned = PinnedAllocator::new(&ctx).unwrap();
    let huge = Layout::from_size_align(1 << 52, 64).unwrap(); // 4 PiB: beyond any address space
    assert_eq!(pinned.allocate(huge), Err(AllocError));
    let unified = UnifiedAllocator::new(&ctx).unwrap();
    assert_eq!(unified.allocate(huge), Err(AllocError));
    // Still usable.
    let mut v = AVec::new_in(pinned);
    v.push(1u8);
    assert_eq!(&v[..], &[1]);
}
