//! `#[kernel]` and typed launches: the PTX of the test kernels
//! (`tests/launch-kernels`, built by `tests/build.rs`) on the CPU, and
//! launches on the GPU: every parameter kind on random data and odd sizes
//! (outputs poisoned first, every element checked), every memory kind,
//! views, ordering against host access, other streams and drops, the
//! fingerprint check (a PTX built with another struct layout, a doctored
//! fingerprint, a missing fingerprint, a missing kernel), and `unsafe fn`
//! kernels.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::{
    CudaContext, CudaStream, DeviceBuffer, DevicePtr, Error, KernelProblem, LaunchConfig, Module,
    PinnedBuffer, PitchedBuffer, PoolBuffer, UnifiedBuffer,
};
use cuda_mem_launch_kernels::checked::{next_phases, step_cells, Cell, Phase};
use cuda_mem_launch_kernels::{
    churn, churned, histogram, pitched_add, poke, span_lengths, transform, transform_items,
    write_indices, Item, Params, Span,
};
use cuda_mem_tests::{
    assemble_ptx, churned_fast, gpu, ptx_fingerprint, ptx_global_bytes, ptx_kernel,
    ptx_param_table, ptx_with_global_bytes, with_current, Current, Rng,
};

static KERNELS: Module = cuda_mem::include_kernels!("launch-kernels");
/// `transform_items` compiled over a `Params` of another layout, and
/// `span_lengths` over a `Span` with its two fields swapped.
static SKEWED: Module = cuda_mem::include_kernels!("launch-kernels-skewed");

/// Every kernel of `launch-kernels` with the host's fingerprint.
const ALL: [(&str, u64); 9] = [
    (transform_items::NAME, transform_items::SIGNATURE),
    (span_lengths::NAME, span_lengths::SIGNATURE),
    (write_indices::NAME, write_indices::SIGNATURE),
    (histogram::NAME, histogram::SIGNATURE),
    (churn::NAME, churn::SIGNATURE),
    (pitched_add::NAME, pitched_add::SIGNATURE),
    (poke::NAME, poke::SIGNATURE),
    (next_phases::NAME, next_phases::SIGNATURE),
    (step_cells::NAME, step_cells::SIGNATURE),
];

// --- the PTX, on the CPU ---

#[test]
fn every_kernel_has_an_entry_and_the_hosts_fingerprint() {
    let ptx = KERNELS.ptx();
    for (name, signature) in ALL {
        ptx_kernel(ptx, name);
        assert_eq!(
            ptx_fingerprint(ptx, name),
            Some(signature),
            "the fingerprint of {name} in the PTX is not the host's"
        );
        assert!(
            ptx.contains(&format!(
                ".visible .global .align 8 .b8 __cuda_mem_sig_{name}[8]"
            )),
            "{name}: the fingerprint is not a visible 8-byte global"
        );
    }
    assert!(
        !ptx.contains(".extern .func"),
        "the PTX calls a function it does not define"
    );
}

#[test]
fn a_struct_of_another_layout_changes_the_fingerprint() {
    let skewed = ptx_fingerprint(SKEWED.ptx(), transform_items::NAME)
        .expect("the skewed PTX has transform_items' fingerprint");
    assert_ne!(skewed, transform_items::SIGNATURE);
}

/// `span_lengths` built over a `Span` whose two `u32` fields are swapped
/// (`launch-kernels-skewed`): the same kernel tokens, the same parameter
/// table (kinds, sizes, alignments), so only the struct's field names tell
/// the PTX from the host's. Before the layout fingerprint covered field
/// names the two fingerprints were equal and the launch ran, the kernel
/// reading `end` where the host wrote `start` (issue 29, class 3).
#[test]
fn a_struct_with_two_fields_swapped_changes_the_fingerprint() {
    let skewed = ptx_fingerprint(SKEWED.ptx(), span_lengths::NAME)
        .expect("the skewed PTX has span_lengths' fingerprint");
    assert_ne!(
        skewed,
        span_lengths::SIGNATURE,
        "a PTX whose Span has its fields swapped has the host's fingerprint"
    );
    // The parameter tables agree: the fingerprint is what catches it.
    assert_eq!(
        ptx_param_table(SKEWED.ptx(), span_lengths::NAME),
        ptx_param_table(KERNELS.ptx(), span_lengths::NAME)
    );
    // Each parameter's own fingerprint: the slice's agrees, `Span`'s does
    // not, which is how a launch names the struct.
    let params = |ptx: &str| {
        let bytes = ptx_global_bytes(ptx, "__cuda_mem_params_span_lengths")
            .expect("the per-parameter fingerprints of span_lengths");
        bytes
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
            .collect::<Vec<_>>()
    };
    let host = [
        <cuda_mem::device::DeviceSliceMut<'_, u32> as cuda_mem::KernelParam>::SIGNATURE,
        <Span as cuda_mem::KernelParam>::SIGNATURE,
    ];
    assert_eq!(params(KERNELS.ptx()), host);
    let skewed = params(SKEWED.ptx());
    assert_eq!(skewed[0], host[0]);
    assert_ne!(skewed[1], host[1]);
}

/// A kernel whose `crate = "..."` path forges the fingerprint function
/// (`launch-kernels`' `forged` module: its own `__kernel_signature` returns
/// the source hash alone, and its parameter is a `DeviceSliceMut<u8>` in the
/// PTX but a `[u64; 2]` on the host). The host's `SIGNATURE` constant goes
/// through the forged path, but the PTX's fingerprint and the launch's come
/// from cuda-mem's own macros, over the real parameter types: they differ,
/// so a launch is refused (`a_kernel_whose_crate_path_forges_the_fingerprint_is_refused`).
/// Before the fingerprint moved into those macros the PTX held the forged
/// value, equal to the host's.
#[test]
fn a_forged_crate_path_cannot_forge_the_ptx_fingerprint() {
    use cuda_mem::device::DeviceSliceMut;
    use cuda_mem::launch::__kernel_signature;
    use cuda_mem::KernelParam;
    use cuda_mem_launch_kernels::forged::forged_scribble;
    // The forged function returns the source hash: that is the host constant.
    let source = forged_scribble::SIGNATURE;
    let in_ptx = ptx_fingerprint(KERNELS.ptx(), forged_scribble::NAME)
        .expect("the PTX has forged_scribble's fingerprint");
    let real = __kernel_signature(false, source, &[<DeviceSliceMut<'_, u8>>::SIGNATURE]);
    let pushed = __kernel_signature(false, source, &[<[u64; 2]>::SIGNATURE]);
    assert_eq!(
        in_ptx, real,
        "the PTX's fingerprint is not the one of its parameter types"
    );
    assert_ne!(in_ptx, forged_scribble::SIGNATURE);
    assert_ne!(
        in_ptx, pushed,
        "a launch pushing [u64; 2] would be accepted"
    );
    // The parameter table, compared in the clear, says the same.
    let table = ptx_param_table(KERNELS.ptx(), forged_scribble::NAME).expect("its parameter table");
    let real_table =
        cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [DeviceSliceMut<u8>])
            .to_vec();
    let pushed_table =
        cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [[u64; 2]]).to_vec();
    assert_eq!(table, real_table);
    assert_ne!(table, pushed_table);
}

/// Each kernel's parameter table in the PTX is the one a launch with its
/// declared parameter types computes (kinds, sizes and alignments in the
/// clear, and the `unsafe` of `poke`).
#[test]
fn every_kernel_has_the_hosts_parameter_table() {
    use cuda_mem::device::{
        CheckedSlice, CheckedSliceMut, DeviceAtomicSlice, DeviceSlice, DeviceSliceMut,
        PitchedSlice, PitchedSliceMut,
    };
    let ptx = KERNELS.ptx();
    let expected: [(&str, Vec<[u64; 5]>); 9] = [
        (
            transform_items::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [DeviceSliceMut<Item>, DeviceSlice<Item>, Params]).to_vec(),
        ),
        (
            span_lengths::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [DeviceSliceMut<u32>, Span]).to_vec(),
        ),
        (
            write_indices::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [DeviceSliceMut<u64>, u64]).to_vec(),
        ),
        (
            histogram::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [DeviceSlice<u32>, DeviceAtomicSlice<u32>]).to_vec(),
        ),
        (
            churn::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [DeviceSliceMut<u32>, u32]).to_vec(),
        ),
        (
            pitched_add::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [PitchedSliceMut<f32>, PitchedSlice<f32>, f32]).to_vec(),
        ),
        (
            poke::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel true, lifetimes [], params [DevicePtr<u32>, u32]).to_vec(),
        ),
        (
            next_phases::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [CheckedSliceMut<Phase>, CheckedSlice<Phase>, CheckedSlice<bool>, DeviceAtomicSlice<u32>]).to_vec(),
        ),
        (
            step_cells::NAME,
            cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [CheckedSliceMut<Cell>, DeviceAtomicSlice<u32>]).to_vec(),
        ),
    ];
    for (name, table) in expected {
        assert_eq!(
            ptx_param_table(ptx, name).as_ref(),
            Some(&table),
            "the parameter table of {name} in the PTX is not the host's"
        );
    }
}

#[test]
fn the_simple_kernels_use_no_local_memory() {
    for name in [
        write_indices::NAME,
        churn::NAME,
        transform_items::NAME,
        poke::NAME,
        next_phases::NAME,
        step_cells::NAME,
    ] {
        assert!(
            !ptx_kernel(KERNELS.ptx(), name).contains(".local"),
            "{name} uses local memory"
        );
    }
}

#[test]
fn the_kernels_assemble_for_sm80_and_sm90() {
    assemble_ptx(KERNELS.ptx(), "launch-kernels");
    assemble_ptx(SKEWED.ptx(), "launch-kernels-skewed");
}

// --- launches, on the GPU ---

/// Launch shapes: one small block, one warp, many blocks of every size.
fn configs(rng: &mut Rng, n: usize) -> Vec<LaunchConfig> {
    let block = [32u32, 64, 128, 256, 1024][rng.below(5)];
    vec![
        LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        },
        LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        },
        LaunchConfig {
            grid_dim: ((n as u32).div_ceil(block).clamp(1, 65_535), 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        },
        LaunchConfig {
            grid_dim: (3, 2, 1),
            block_dim: (16, 4, 2),
            shared_mem_bytes: 0,
        },
    ]
}

fn random_items(rng: &mut Rng, n: usize) -> Vec<Item> {
    (0..n)
        .map(|_| Item {
            key: rng.next_u64() as u32,
            // Finite floats of many magnitudes: products round the same way
            // on both sides (IEEE `mul.rn`), no NaN payloads to compare.
            weight: (rng.below(2_000_001) as f32 - 1e6) * 2f32.powi(rng.below(40) as i32 - 20),
            id: rng.next_u64(),
        })
        .collect()
}

/// A value no kernel writes (the poison of the outputs).
const POISON: Item = Item {
    key: 0xDEAD_BEEF,
    weight: -0.0,
    id: 0x5A5A_5A5A_5A5A_5A5A,
};

fn same(a: &Item, b: &Item) -> bool {
    a.key == b.key && a.weight.to_bits() == b.weight.to_bits() && a.id == b.id
}

#[test]
#[ignore = "needs a CUDA device"]
fn typed_launches_transform_every_element_of_odd_sizes() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("typed_launches_transform_every_element_of_odd_sizes");
    for n in [0usize, 1, 2, 31, 33, 1000, 4099, 65_537, (1 << 20) + 3] {
        let input = random_items(&mut rng, n);
        let params = Params {
            add: rng.next_u64() as u32,
            scale: 1.0 + rng.below(1000) as f32 / 7.0,
        };
        let expected: Vec<Item> = input.iter().map(|&x| transform(x, params)).collect();
        let device_input = DeviceBuffer::from_slice(&ctx, &input).unwrap();
        let mut out = DeviceBuffer::<Item>::new(&ctx, n).unwrap();
        for config in configs(&mut rng, n) {
            out.fill(POISON).unwrap();
            transform_items
                .launch(&KERNELS, &stream, config, (&mut out, &device_input, params))
                .unwrap();
            let got = out.to_vec().unwrap();
            let wrong = (0..n).filter(|&i| !same(&got[i], &expected[i])).count();
            assert_eq!(wrong, 0, "n = {n}, {config:?}: {wrong} elements wrong");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn views_confine_a_kernel_to_their_elements() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("views_confine_a_kernel_to_their_elements");
    for _ in 0..20 {
        let n = 1 + rng.below(100_000);
        let (a, b) = {
            let (x, y) = (rng.below(n + 1), rng.below(n + 1));
            (x.min(y), x.max(y))
        };
        let poison: Vec<u64> = (0..n).map(|_| rng.next_u64()).collect();
        let mut out = DeviceBuffer::from_slice(&ctx, &poison).unwrap();
        let offset = rng.next_u64() >> 1;
        let config = LaunchConfig::for_num_elems(n as u32);
        write_indices
            .launch(
                &KERNELS,
                &stream,
                config,
                (out.slice_mut(a..b).unwrap(), offset),
            )
            .unwrap();
        let got = out.to_vec().unwrap();
        for i in 0..n {
            let expected = if (a..b).contains(&i) {
                offset + (i - a) as u64
            } else {
                poison[i]
            };
            assert_eq!(got[i], expected, "element {i} of {n}, view {a}..{b}");
        }
        // The two halves of `split_at_mut` in one launch of a two-slice kernel.
        let mut items = DeviceBuffer::from_slice(&ctx, &random_items(&mut rng, n)).unwrap();
        let before = items.to_vec().unwrap();
        let mid = rng.below(n + 1);
        let params = Params { add: 7, scale: 0.5 };
        {
            let (left, right) = items.split_at_mut(mid).unwrap();
            transform_items
                .launch(&KERNELS, &stream, config, (left, &right, params))
                .unwrap();
        }
        let got = items.to_vec().unwrap();
        for i in 0..n {
            let expected = if i < mid && mid + i < n {
                transform(before[mid + i], params)
            } else {
                before[i]
            };
            assert!(
                same(&got[i], &expected),
                "split at {mid} of {n}: element {i}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_memory_kind_is_a_kernel_argument() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let n = 10_007;
    let offset = 1 << 40;
    let config = LaunchConfig::for_num_elems(n as u32);
    let expected: Vec<u64> = (0..n as u64).map(|i| offset + i).collect();

    let mut device = DeviceBuffer::<u64>::zeroed(&ctx, n).unwrap();
    write_indices
        .launch(&KERNELS, &stream, config, (&mut device, offset))
        .unwrap();
    assert_eq!(device.to_vec().unwrap(), expected, "device");

    let mut pinned = PinnedBuffer::<u64>::new(&ctx, n).unwrap();
    write_indices
        .launch(&KERNELS, &stream, config, (&mut pinned, offset))
        .unwrap();
    assert_eq!(pinned.as_slice().unwrap(), &expected[..], "pinned");

    let mut unified = UnifiedBuffer::<u64>::new(&ctx, n).unwrap();
    write_indices
        .launch(&KERNELS, &stream, config, (&mut unified, offset))
        .unwrap();
    assert_eq!(unified.as_slice().unwrap(), &expected[..], "unified");

    let mut pool = PoolBuffer::<u64>::new(n, &stream).unwrap();
    write_indices
        .launch(&KERNELS, &stream, config, (&mut pool, offset))
        .unwrap();
    assert_eq!(pool.to_vec().unwrap(), expected, "pool");
}

#[test]
#[ignore = "needs a CUDA device"]
fn atomic_slices_count_every_element() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("atomic_slices_count_every_element");
    for (n, bins) in [
        (0usize, 7usize),
        (1, 1),
        (100_003, 13),
        (1 << 20, 1024),
        (5000, 0),
    ] {
        let input: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let mut expected = vec![0u32; bins];
        for &x in &input {
            if bins > 0 {
                expected[x as usize % bins] += 1;
            }
        }
        let device_input = DeviceBuffer::from_slice(&ctx, &input).unwrap();
        let mut counts = DeviceBuffer::<u32>::zeroed(&ctx, bins).unwrap();
        for config in configs(&mut rng, n) {
            counts.memset(0).unwrap();
            histogram
                .launch(&KERNELS, &stream, config, (&device_input, &mut counts))
                .unwrap();
            assert_eq!(
                counts.to_vec().unwrap(),
                expected,
                "n = {n}, {bins} bins, {config:?}"
            );
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn pitched_buffers_are_kernel_arguments() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("pitched_buffers_are_kernel_arguments");
    for (w, h) in [(1usize, 1usize), (17, 3), (1000, 33), (3, 1000), (0, 5)] {
        let data: Vec<f32> = (0..w * h)
            .map(|_| rng.below(1 << 20) as f32 / 64.0)
            .collect();
        let input = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
        let mut out = PitchedBuffer::<f32>::new(&ctx, w, h).unwrap();
        out.fill(f32::NAN).unwrap();
        let config = LaunchConfig {
            grid_dim: (4, 3, 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        pitched_add
            .launch(&KERNELS, &stream, config, (&mut out, &input, 0.25))
            .unwrap();
        let got = out.to_vec().unwrap();
        for (i, (&g, &x)) in got.iter().zip(&data).enumerate() {
            assert_eq!(g.to_bits(), (x + 0.25).to_bits(), "{w} x {h}: element {i}");
        }
    }
}

/// Rounds of the slow kernel: a chain of 2·10⁶ dependent multiply-adds per
/// thread, milliseconds on any GPU, so work not ordered after the kernel
/// would see the old values.
const ROUNDS: u32 = 2_000_000;

#[test]
fn the_fast_churn_is_the_churn() {
    let mut rng = Rng::new(7);
    for rounds in [0, 1, 2, 3, 7, 8, 1000, 4097] {
        let x = rng.next_u64() as u32;
        assert_eq!(
            churned_fast(x, rounds),
            churned(x, rounds),
            "{rounds} rounds"
        );
    }
}

fn churn_config(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(256), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_access_and_other_streams_wait_for_a_launch() {
    let ctx = gpu();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut rng = Rng::from_env("host_access_and_other_streams_wait_for_a_launch");
    let n = 1 << 16;
    let start: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let expected: Vec<u32> = start.iter().map(|&x| churned_fast(x, ROUNDS)).collect();

    // Host access (the default stream) after a launch on `a`.
    let mut data = DeviceBuffer::from_slice(&ctx, &start).unwrap();
    churn
        .launch(&KERNELS, &a, churn_config(n), (&mut data, ROUNDS))
        .unwrap();
    assert_eq!(data.to_vec().unwrap(), expected, "to_vec after the launch");

    // A copy on `b` after a launch on `a`.
    let mut data = DeviceBuffer::from_slice(&ctx, &start).unwrap();
    let mut copy = DeviceBuffer::<u32>::zeroed(&ctx, n).unwrap();
    churn
        .launch(&KERNELS, &a, churn_config(n), (&mut data, ROUNDS))
        .unwrap();
    copy.copy_from_async(&data, &b).unwrap();
    assert_eq!(copy.to_vec().unwrap(), expected, "copy on another stream");

    // A launch on `b` reading what a launch on `a` wrote.
    let mut data = DeviceBuffer::from_slice(&ctx, &start).unwrap();
    let mut counts = DeviceBuffer::<u32>::zeroed(&ctx, 2).unwrap();
    churn
        .launch(&KERNELS, &a, churn_config(n), (&mut data, ROUNDS))
        .unwrap();
    histogram
        .launch(&KERNELS, &b, churn_config(n), (&data, &mut counts))
        .unwrap();
    let odd = expected.iter().filter(|&&x| x % 2 == 1).count() as u32;
    assert_eq!(
        counts.to_vec().unwrap(),
        [n as u32 - odd, odd],
        "kernel on another stream"
    );

    // Pinned memory: the host slice waits for the kernel.
    let mut pinned = PinnedBuffer::from_slice(&ctx, &start).unwrap();
    churn
        .launch(&KERNELS, &a, churn_config(n), (&mut pinned, ROUNDS))
        .unwrap();
    assert_eq!(pinned.as_slice().unwrap(), &expected[..], "pinned as_slice");
}

/// Launches `write_indices` over `len` elements at `offset` of `buf` on
/// `stream` with `current` current on this thread, and returns whether
/// `current` was still current after the launch.
fn write_indices_into_a_view(
    buf: &mut DeviceBuffer<u64>,
    offset: usize,
    len: usize,
    first: u64,
    stream: &Arc<CudaStream>,
    current: Current<'_>,
) -> bool {
    let mut view = buf.slice_mut(offset..offset + len).unwrap();
    let config = LaunchConfig::for_num_elems(len as u32);
    let (launched, kept) = with_current(current, || {
        write_indices.launch(&KERNELS, stream, config, (&mut view, first))
    });
    launched.unwrap();
    kept
}

/// A typed launch lands in its stream's context whatever context the
/// calling thread has current (none, or another context of the same GPU),
/// and leaves that context current (its memory's last use was on the same
/// stream: there is nothing to wait for). Outputs poisoned, every element
/// checked.
#[test]
#[ignore = "needs a CUDA device"]
fn a_launch_lands_in_its_streams_context_whatever_context_is_current() {
    let ctx = gpu();
    let other = CudaContext::new_non_primary(0, 0).expect("a second (non-primary) context");
    let (stream, later) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let mut rng = Rng::from_env("a_launch_lands_in_its_streams_context");
    for current in [Current::Nothing, Current::Other(&other)] {
        for round in 0..4 {
            let len = 1 + rng.length(200_000);
            let total = len + 40;
            let mut expect: Vec<u64> = (0..total).map(|_| rng.next_u64()).collect();
            let mut buf = DeviceBuffer::from_slice(&ctx, &expect).unwrap();
            // The upload (on the default stream) done: nothing to wait for.
            buf.synchronize().unwrap();
            let offset = rng.below(40);
            // The first launch (which loads the module), with the buffer's
            // own context current.
            let first = rng.next_u64() >> 1;
            write_indices_into_a_view(&mut buf, offset, len, first, &stream, Current::Other(&ctx));
            let first = rng.next_u64() >> 1;
            let kept = write_indices_into_a_view(&mut buf, offset, len, first, &stream, current);
            assert!(
                kept,
                "{current:?}: a launch on a stream of its own changed the thread's current context"
            );
            for (i, x) in expect[offset..offset + len].iter_mut().enumerate() {
                *x = first + i as u64;
            }
            // Half the rounds: a launch on another stream, which must wait
            // for the one above (an event recorded on `stream` and waited
            // for on `later`, with `current` current), over part of the view.
            if round % 2 == 1 {
                let part = 1 + rng.below(len);
                let again = rng.next_u64() >> 1;
                write_indices_into_a_view(&mut buf, offset, part, again, &later, current);
                for (i, x) in expect[offset..offset + part].iter_mut().enumerate() {
                    *x = again + i as u64;
                }
            }
            let got = buf.to_vec().unwrap();
            if let Some(i) = (0..total).find(|&i| got[i] != expect[i]) {
                panic!(
                    "{current:?}, round {round}, len {len}, offset {offset}: element {i} is {}, want {}",
                    got[i], expect[i]
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_buffer_dropped_after_a_launch_is_freed_after_the_kernel() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let n = 1 << 18;
    for round in 0..5 {
        {
            let mut data = DeviceBuffer::<u32>::zeroed(&ctx, n).unwrap();
            churn
                .launch(&KERNELS, &stream, churn_config(n), (&mut data, ROUNDS))
                .unwrap();
            // Dropped here, while the kernel may still run.
        }
        // Often the same address: if the free had not waited, the kernel
        // would write into this buffer after the fill.
        let mut next = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
        next.fill(0x1234_5678).unwrap();
        stream.synchronize().unwrap();
        let got = next.to_vec().unwrap();
        let wrong = got.iter().filter(|&&x| x != 0x1234_5678).count();
        assert_eq!(
            wrong, 0,
            "round {round}: {wrong} elements overwritten after the free"
        );
    }
    // Pool memory is freed stream-ordered behind the kernel.
    for _ in 0..5 {
        let mut pool = PoolBuffer::<u32>::new(n, &stream).unwrap();
        pool.memset(0).unwrap();
        churn
            .launch(&KERNELS, &stream, churn_config(n), (&mut pool, ROUNDS))
            .unwrap();
        drop(pool);
        let mut next = PoolBuffer::<u32>::new(n, &stream).unwrap();
        next.fill(7).unwrap();
        assert!(next.to_vec().unwrap().iter().all(|&x| x == 7));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn an_unsafe_kernel_launches_in_unsafe() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let target = DeviceBuffer::<u32>::zeroed(&ctx, 1).unwrap();
    let ptr: DevicePtr<u32> = target.as_device_ptr();
    // SAFETY: `ptr` is the one `u32` of `target`, which nothing else uses
    // until the kernel is done (`synchronize` below).
    unsafe {
        poke.launch(
            &KERNELS,
            &stream,
            LaunchConfig::for_num_elems(64),
            (ptr, 0xC0FFEE),
        )
        .unwrap()
    };
    stream.synchronize().unwrap();
    assert_eq!(target.to_vec().unwrap(), [0xC0FFEE]);
}

/// A module whose PTX is `KERNELS`' with `edit` applied.
fn doctored(edit: impl FnOnce(&str) -> String) -> &'static Module {
    let ptx: &'static str = Box::leak(edit(KERNELS.ptx()).into_boxed_str());
    // SAFETY: the kernels of `launch-kernels`, compiled by `#[kernel]`; only
    // a fingerprint or parameter-table static is edited, which is what the
    // check must notice.
    Box::leak(Box::new(unsafe {
        Module::new("launch-kernels (doctored)", ptx)
    }))
}

fn expect_mismatch(result: cuda_mem::Result<()>, kernel: &str, module: &str) -> KernelProblem {
    match result {
        Err(
            error @ Error::KernelMismatch {
                kernel: k,
                module: m,
                problem,
            },
        ) => {
            assert_eq!((k, m), (kernel, module));
            let text = error.to_string();
            assert!(
                text.contains(kernel) && text.contains("rebuild the kernel crate"),
                "{text}"
            );
            problem
        }
        other => panic!("expected KernelMismatch for {kernel}, got {other:?}"),
    }
}

/// Launches `transform_items` over small buffers on `stream`.
fn launch_transform(module: &'static Module, stream: &Arc<CudaStream>) -> cuda_mem::Result<()> {
    let ctx = stream.context().clone();
    let input = DeviceBuffer::from_slice(&ctx, &[POISON; 4])?;
    let mut out = DeviceBuffer::<Item>::zeroed(&ctx, 4)?;
    let params = Params { add: 1, scale: 2.0 };
    transform_items.launch(
        module,
        stream,
        LaunchConfig::for_num_elems(4),
        (&mut out, &input, params),
    )
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_ptx_built_with_another_struct_layout_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let problem = expect_mismatch(
        launch_transform(&SKEWED, &stream),
        "transform_items",
        "launch-kernels-skewed",
    );
    // The launch names the parameter whose struct differs.
    assert_eq!(
        problem,
        KernelProblem::Parameter {
            index: 2,
            type_name: std::any::type_name::<Params>(),
        }
    );
    assert_ne!(
        ptx_fingerprint(SKEWED.ptx(), "transform_items").unwrap(),
        transform_items::SIGNATURE
    );
    // Refused again at the next launch (nothing cached), and by `check`.
    expect_mismatch(
        launch_transform(&SKEWED, &stream),
        "transform_items",
        "launch-kernels-skewed",
    );
    expect_mismatch(
        transform_items.check(&SKEWED, &ctx),
        "transform_items",
        "launch-kernels-skewed",
    );
    // The right PTX launches.
    launch_transform(&KERNELS, &stream).unwrap();
}

/// Launches `span_lengths` over `n` poisoned elements on `stream` and
/// returns what it wrote.
fn launch_span(
    module: &'static Module,
    stream: &Arc<CudaStream>,
    span: Span,
    n: usize,
) -> cuda_mem::Result<Vec<u32>> {
    let ctx = stream.context().clone();
    let mut out = DeviceBuffer::from_slice(&ctx, &vec![0xDEAD_BEEF_u32; n])?;
    span_lengths.launch(
        module,
        stream,
        LaunchConfig::for_num_elems(n as u32),
        (&mut out, span),
    )?;
    out.to_vec()
}

/// The GPU half of `a_struct_with_two_fields_swapped_changes_the_fingerprint`:
/// a PTX built with `Span`'s two fields swapped is refused at the first
/// launch, naming the kernel and the module, and writes nothing; the
/// right PTX computes `end - start + i`.
#[test]
#[ignore = "needs a CUDA device"]
fn a_ptx_whose_struct_swaps_two_fields_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("a_ptx_whose_struct_swaps_two_fields_is_refused");
    let start = rng.next_u64() as u32;
    let span = Span {
        start,
        end: start.wrapping_add(1 + rng.below(1000) as u32),
    };
    let n = 1 + rng.below(3000);
    let problem = expect_mismatch(
        launch_span(&SKEWED, &stream, span, n).map(drop),
        span_lengths::NAME,
        "launch-kernels-skewed",
    );
    // The launch names the parameter and its type, and so the struct.
    assert_eq!(
        problem,
        KernelProblem::Parameter {
            index: 1,
            type_name: std::any::type_name::<Span>(),
        }
    );
    let text = Error::KernelMismatch {
        kernel: span_lengths::NAME,
        module: "launch-kernels-skewed",
        problem,
    }
    .to_string();
    assert!(
        text.contains("parameter 1, of type `cuda_mem_launch_kernels::Span`")
            && text.contains("two fields swapped"),
        "{text}"
    );
    // `check` knows no parameter types: the fingerprints alone.
    assert_eq!(
        expect_mismatch(
            span_lengths.check(&SKEWED, &ctx),
            span_lengths::NAME,
            "launch-kernels-skewed",
        ),
        KernelProblem::Fingerprint {
            expected: span_lengths::SIGNATURE,
            found: ptx_fingerprint(SKEWED.ptx(), span_lengths::NAME).unwrap(),
        }
    );
    let out = launch_span(&KERNELS, &stream, span, n).unwrap();
    for (i, &x) in out.iter().enumerate() {
        assert_eq!(
            x,
            span.end.wrapping_sub(span.start).wrapping_add(i as u32),
            "element {i}"
        );
    }
}

/// A kernel declared with `#[kernel(block = [32, 4])]` has the block word in
/// its parameter table's head, where the launch compares it.
#[test]
fn a_declared_block_shape_is_in_the_parameter_table() {
    use cuda_mem::launch::{__abi_head, __abi_head_block, __block_word};
    let table = ptx_param_table(KERNELS.ptx(), "block_collectives_declared").expect("the table");
    assert_eq!(table[0], __abi_head_block(false, 2, __block_word(32, 4, 1)));
    let plain = ptx_param_table(KERNELS.ptx(), "block_collectives_256").expect("the table");
    assert_eq!(plain[0], __abi_head(false, 2));
}

/// A PTX whose table declares another block shape than the launcher (the
/// entry point would take blocks of 128 x 1 x 1 as known) is refused before
/// anything runs, although the launch's own shape is the launcher's.
#[test]
#[ignore = "needs a CUDA device"]
fn a_doctored_block_word_is_refused() {
    use cuda_mem_launch_kernels::parallel::block_collectives_declared;
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let symbol = "__cuda_mem_abi_block_collectives_declared";
    let module = doctored(|ptx| {
        let mut bytes = ptx_global_bytes(ptx, symbol).expect("the table");
        bytes[24..32].copy_from_slice(&cuda_mem::launch::__block_word(128, 1, 1).to_le_bytes());
        ptx_with_global_bytes(ptx, symbol, &bytes).expect("the table")
    });
    let mut rng = Rng::from_env("a_doctored_block_word_is_refused");
    let n = 1 + rng.below(500);
    let input = DeviceBuffer::from_slice(&ctx, &rng.values::<u32>(n)).unwrap();
    let mut out = DeviceBuffer::<[u32; 4]>::new(&ctx, n).unwrap();
    out.memset(0x5a).unwrap();
    let config = LaunchConfig {
        grid_dim: (n.div_ceil(128) as u32, 1, 1),
        block_dim: (32, 4, 1),
        shared_mem_bytes: 0,
    };
    let problem = expect_mismatch(
        block_collectives_declared.launch(module, &stream, config, (&mut out, &input)),
        "block_collectives_declared",
        "launch-kernels (doctored)",
    );
    assert_eq!(problem, KernelProblem::Parameters);
    assert!(out.to_vec().unwrap().iter().all(|&x| x == [0x5a5a_5a5a; 4]));
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_doctored_fingerprint_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let module = doctored(|ptx| {
        let wrong = (transform_items::SIGNATURE ^ 1).to_le_bytes();
        ptx_with_global_bytes(ptx, "__cuda_mem_sig_transform_items", &wrong)
            .expect("the fingerprint")
    });
    let problem = expect_mismatch(
        launch_transform(module, &stream),
        "transform_items",
        "launch-kernels (doctored)",
    );
    assert_eq!(
        problem,
        KernelProblem::Fingerprint {
            expected: transform_items::SIGNATURE,
            found: transform_items::SIGNATURE ^ 1,
        }
    );
    // The other kernels of the module are unaffected.
    let mut out = DeviceBuffer::<u64>::zeroed(&ctx, 3).unwrap();
    write_indices
        .launch(
            module,
            &stream,
            LaunchConfig::for_num_elems(3),
            (&mut out, 5),
        )
        .unwrap();
    assert_eq!(out.to_vec().unwrap(), [5, 6, 7]);
}

/// The launch side of `a_forged_crate_path_cannot_forge_the_ptx_fingerprint`:
/// the host passes a `[u64; 2]` of its choosing (here the real address and
/// length of a poisoned buffer) where the PTX takes a `DeviceSliceMut<u8>`;
/// the fingerprint the launch computes from what it pushes is not the PTX's,
/// so nothing runs and the buffer keeps its poison.
#[test]
#[ignore = "needs a CUDA device"]
fn a_kernel_whose_crate_path_forges_the_fingerprint_is_refused() {
    use cuda_mem::device::DeviceSliceMut;
    use cuda_mem::KernelParam;
    use cuda_mem_launch_kernels::forged::forged_scribble;
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("a_kernel_whose_crate_path_forges_the_fingerprint_is_refused");
    let n = 1 + rng.below(5000);
    let poison: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8 | 1).collect();
    let target = DeviceBuffer::from_slice(&ctx, &poison).unwrap();
    let raw = [target.as_device_ptr().addr(), n as u64];
    let problem = expect_mismatch(
        forged_scribble.launch(
            &KERNELS,
            &stream,
            LaunchConfig::for_num_elems(n as u32),
            (raw,),
        ),
        "forged_scribble",
        "launch-kernels",
    );
    // The launch names the parameter: `[u64; 2]` on the host, a slice in
    // the PTX.
    assert_eq!(
        problem,
        KernelProblem::Parameter {
            index: 0,
            type_name: "[u64; 2]",
        }
    );
    // The fingerprints differ as well (the PTX's from the real slice).
    let source = forged_scribble::SIGNATURE;
    assert_eq!(
        ptx_fingerprint(KERNELS.ptx(), "forged_scribble"),
        Some(cuda_mem::launch::__kernel_signature(
            false,
            source,
            &[<DeviceSliceMut<'_, u8>>::SIGNATURE]
        ))
    );
    stream.synchronize().unwrap();
    assert_eq!(target.to_vec().unwrap(), poison, "the forged kernel ran");
}

/// A parameter table that differs from the one the launch pushes (here the
/// element size of `transform_items`' output slice, doctored in the PTX)
/// is refused although the fingerprints agree: the table is compared word
/// for word, not through a hash. Missing, it is refused too.
#[test]
#[ignore = "needs a CUDA device"]
fn a_parameter_table_that_differs_is_refused() {
    let stream = gpu().new_stream().unwrap();
    let symbol = "__cuda_mem_abi_transform_items";
    let module = doctored(|ptx| {
        let mut bytes = ptx_global_bytes(ptx, symbol).expect("the parameter table");
        // Row 1 (the output slice), word 3 (its element size): byte 64.
        bytes[64] = 32;
        ptx_with_global_bytes(ptx, symbol, &bytes).unwrap()
    });
    assert_eq!(
        expect_mismatch(
            launch_transform(module, &stream),
            "transform_items",
            "launch-kernels (doctored)"
        ),
        KernelProblem::Parameters
    );
    let module = doctored(|ptx| ptx.replace("__cuda_mem_abi_transform_items", "__renamed_abi"));
    assert_eq!(
        expect_mismatch(
            launch_transform(module, &stream),
            "transform_items",
            "launch-kernels (doctored)"
        ),
        KernelProblem::NoFingerprint
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_kernel_without_its_fingerprint_is_refused() {
    let stream = gpu().new_stream().unwrap();
    let module = doctored(|ptx| ptx.replace("__cuda_mem_sig_transform_items", "__renamed_sig"));
    let problem = expect_mismatch(
        launch_transform(module, &stream),
        "transform_items",
        "launch-kernels (doctored)",
    );
    assert_eq!(problem, KernelProblem::NoFingerprint);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_missing_kernel_is_refused() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    // SAFETY: cuda-mem's own fill kernels: no `#[kernel]` fingerprints at all.
    let fill: &'static Module = Box::leak(Box::new(unsafe {
        Module::new("fill kernels", cuda_mem::fill_kernels_ptx())
    }));
    let problem = expect_mismatch(
        launch_transform(fill, &stream),
        "transform_items",
        "fill kernels",
    );
    assert_eq!(problem, KernelProblem::Missing);
    expect_mismatch(
        transform_items.check(fill, &ctx),
        "transform_items",
        "fill kernels",
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn check_loads_and_checks_up_front() {
    let ctx = gpu();
    for (name, _) in ALL {
        assert!(KERNELS.ptx().contains(name));
    }
    transform_items.check(&KERNELS, &ctx).unwrap();
    write_indices.check(&KERNELS, &ctx).unwrap();
    histogram.check(&KERNELS, &ctx).unwrap();
    churn.check(&KERNELS, &ctx).unwrap();
    pitched_add.check(&KERNELS, &ctx).unwrap();
    poke.check(&KERNELS, &ctx).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn launches_refuse_streams_they_cannot_order() {
    let ctx = gpu();
    let mut out = DeviceBuffer::<u64>::zeroed(&ctx, 8).unwrap();
    let config = LaunchConfig::for_num_elems(8);
    // The legacy default stream, passed by handle.
    let legacy = ctx.default_stream();
    let err = write_indices
        .launch(&KERNELS, &legacy, config, (&mut out, 0))
        .unwrap_err();
    assert!(matches!(err, Error::UnsupportedStream(_)), "{err}");
    // A stream of another context.
    if cuda_mem::device_count().unwrap() > 1 {
        let other = cuda_mem::context(1).unwrap().new_stream().unwrap();
        let err = write_indices
            .launch(&KERNELS, &other, config, (&mut out, 0))
            .unwrap_err();
        assert!(matches!(err, Error::ContextMismatch(_)), "{err}");
    }
    // A kernel without buffer arguments checks the stream too.
    let target = DeviceBuffer::<u32>::zeroed(&ctx, 1).unwrap();
    // SAFETY: would write the one `u32` of `target` (the launch is refused).
    let err =
        unsafe { poke.launch(&KERNELS, &legacy, config, (target.as_device_ptr(), 1)) }.unwrap_err();
    assert!(matches!(err, Error::UnsupportedStream(_)), "{err}");
}

/// A stream capturing a graph outside cuda-mem (cudarc's `begin_capture`)
/// is refused by a launch whose function is already checked and cached in
/// the context (the path that needs no context state), with buffer
/// arguments and without: the graph, replayed, writes nothing.
#[test]
#[ignore = "needs a CUDA device"]
fn cached_launches_refuse_a_capturing_stream() {
    use cuda_mem::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let ctx = gpu();
    let mut rng = Rng::from_env("cached_launches_refuse_a_capturing_stream");
    let n = 1 + rng.below(100_000);
    let (first, poison): (u32, u64) = (rng.value(), rng.value());
    let stream = ctx.new_stream().unwrap();
    let mut out = DeviceBuffer::<u64>::zeroed(&ctx, n).unwrap();
    let target = DeviceBuffer::<u32>::zeroed(&ctx, 1).unwrap();
    let config = LaunchConfig::for_num_elems(n as u32);
    // Both kernels launched once, so that their functions are cached.
    write_indices
        .launch(&KERNELS, &stream, config, (&mut out, 0))
        .unwrap();
    // SAFETY: `target` is one live `u32` that nothing else uses meanwhile.
    unsafe { poke.launch(&KERNELS, &stream, config, (target.as_device_ptr(), first)) }.unwrap();
    out.fill_async(poison, &stream).unwrap();
    stream.synchronize().unwrap();

    let capturing = ctx.new_stream().unwrap();
    capturing
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .unwrap();
    let with_buffer = write_indices.launch(&KERNELS, &capturing, config, (&mut out, 1));
    // SAFETY: would write into the one `u32` of `target`, which nothing else
    // uses (the launch is refused).
    let without = unsafe {
        poke.launch(
            &KERNELS,
            &capturing,
            config,
            (target.as_device_ptr(), !first),
        )
    };
    let graph = capturing
        .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
    for (name, result) in [("with a buffer", with_buffer), ("without", without)] {
        let err = result.expect_err(name);
        assert!(matches!(err, Error::UnsupportedStream(_)), "{name}: {err}");
        assert!(err.to_string().contains("capturing"), "{name}: {err}");
    }
    if let Some(graph) = graph.expect("end_capture") {
        graph.launch().unwrap();
        capturing.synchronize().unwrap();
    }
    assert_eq!(target.to_vec().unwrap(), [first], "the refused poke ran");
    let got = out.to_vec().unwrap();
    let bad = got.iter().position(|&x| x != poison);
    assert_eq!(bad, None, "the refused write_indices ran ({n} elements)");
}
