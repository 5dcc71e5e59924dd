//! The device std's parallel building blocks on the GPU, against host
//! models, on fresh random data, odd sizes, unaligned views, partial warps
//! and blocks, and several launch shapes (3D ones for the partitions): the
//! in-bounds iterations (`grid_stride_zip`, `this_thread_zip`,
//! `DeviceSlice::grid_stride`, `slice`, `aligned_chunks`), shared memory's
//! safe accesses and atomic add, the warp and block collectives, the write
//! partitions (`DeviceTilesMut`, `DeviceChunksMut`, `PitchedTilesMut`, whose
//! every element's owner is checked), and the launch's refusal of a grid of
//! 2^63 threads or more. Outputs are poisoned first and every element is
//! checked. The kernels are in `tests/launch-kernels` (module `parallel`).

use cuda_mem::prelude::*;

use cuda_mem::{DeviceBuffer, DeviceCopy, Error, LaunchConfig, Module, PitchedBuffer};
use cuda_mem_launch_kernels::parallel::*;
use cuda_mem_tests::{gpu, Rng};

static KERNELS: Module = cuda_mem::include_kernels!("launch-kernels");

fn config(grid: (u32, u32, u32), block: (u32, u32, u32)) -> LaunchConfig {
    LaunchConfig {
        grid_dim: grid,
        block_dim: block,
        shared_mem_bytes: 0,
    }
}

fn threads(c: &LaunchConfig) -> usize {
    let (g, b) = (c.grid_dim, c.block_dim);
    (g.0 * g.1 * g.2) as usize * (b.0 * b.1 * b.2) as usize
}

/// Random launch shapes, 1D and 3D, some of one block, some with partial
/// warps.
fn shapes(rng: &mut Rng) -> Vec<LaunchConfig> {
    let mut v = vec![
        config((1, 1, 1), (1, 1, 1)),
        config((1, 1, 1), (33, 1, 1)),
        config((3, 1, 1), (100, 1, 1)),
        config((7, 2, 1), (32, 3, 1)),
        config((2, 3, 2), (5, 3, 2)),
    ];
    for _ in 0..3 {
        let block = (1 + rng.below(200) as u32, 1 + rng.below(3) as u32, 1);
        let grid = (
            1 + rng.below(40) as u32,
            1 + rng.below(3) as u32,
            1 + rng.below(2) as u32,
        );
        v.push(config(grid, block));
    }
    v
}

#[test]
#[ignore = "needs a CUDA device"]
fn zip_loops_stop_at_the_shortest_input() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("zip_loops_stop_at_the_shortest_input");
    for shape in shapes(&mut rng) {
        let (ny, nx) = (rng.length(5000), rng.length(5000));
        let y0: Vec<f32> = (0..ny).map(|_| rng.value::<u16>() as f32 / 7.0).collect();
        let xs: Vec<f32> = (0..nx).map(|_| rng.value::<u16>() as f32 / 3.0).collect();
        let a = 0.5 + rng.below(100) as f32 / 64.0;
        let mut y = DeviceBuffer::from_slice(&ctx, &y0).unwrap();
        let x = DeviceBuffer::from_slice(&ctx, &xs).unwrap();
        zip_axpy
            .launch(&KERNELS, &s, shape, (&mut y, &x, a))
            .unwrap();
        let got = y.to_vec().unwrap();
        for i in 0..ny {
            let want = if i < nx {
                a.mul_add(xs[i], y0[i])
            } else {
                y0[i]
            };
            assert_eq!(
                got[i].to_bits(),
                want.to_bits(),
                "element {i} of {ny} (x has {nx})"
            );
        }

        // One element per thread, two inputs (an unaligned view of one).
        let (n, na, nb) = (rng.length(3000), rng.length(3000), rng.length(3000) + 1);
        let a_host: Vec<u32> = rng.values(na);
        let b_host: Vec<u32> = rng.values(nb);
        let a_buf = DeviceBuffer::from_slice(&ctx, &a_host).unwrap();
        let b_buf = DeviceBuffer::from_slice(&ctx, &b_host).unwrap();
        let b_view = b_buf.slice(1..).unwrap();
        let mut out = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
        out.memset(0xa5).unwrap();
        zip_pair
            .launch(&KERNELS, &s, shape, (&mut out, &a_buf, &b_view))
            .unwrap();
        let got = out.to_vec().unwrap();
        let t = threads(&shape);
        for i in 0..n {
            let want = if i < na && i < nb - 1 && i < t {
                a_host[i]
                    .wrapping_mul(3)
                    .wrapping_add(b_host[i + 1])
                    .wrapping_add(i as u32)
            } else {
                0xa5a5_a5a5
            };
            assert_eq!(got[i], want, "zip_pair element {i} of {n}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn read_slices_cut_and_read_in_aligned_chunks() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("read_slices_cut_and_read_in_aligned_chunks");
    for shape in shapes(&mut rng) {
        let n = rng.length(20_000) + 8;
        let host: Vec<u32> = rng.values(n);
        let buf = DeviceBuffer::from_slice(&ctx, &host).unwrap();
        // A view at an odd offset: its start is not 16-byte aligned.
        let offset = rng.below(7);
        let view = buf.slice(offset..).unwrap();
        let len = n - offset;
        let start = rng.below(len / 2 + 1);
        let end = start + rng.below(len - start + 1);
        for (start, end, valid) in [
            (start, end, true),
            (end + 1, end, false),
            (0, len + 1, false),
        ] {
            let mut sums = DeviceBuffer::<u64>::zeroed(&ctx, 3).unwrap();
            range_sums
                .launch(
                    &KERNELS,
                    &s,
                    shape,
                    (&view, start as u64, end as u64, &mut sums),
                )
                .unwrap();
            let got = sums.to_vec().unwrap();
            if valid {
                let want: u64 = host[offset + start..offset + end]
                    .iter()
                    .map(|&v| v as u64)
                    .sum();
                assert_eq!(got, [want, want, 0], "range {start}..{end} of {len}");
            } else {
                assert_eq!(got[..2], [0, 0], "range {start}..{end} of {len}");
                assert_eq!(
                    got[2],
                    u64::MAX,
                    "range {start}..{end} of {len}: not refused"
                );
            }
        }
    }
}

/// One round trip of [`shared_round_trip`]'s kernels for `T`.
fn round_trip<T: DeviceCopy + PartialEq + std::fmt::Debug>(
    kernel: impl Fn(&mut DeviceBuffer<T>, &DeviceBuffer<T>, LaunchConfig),
    rng: &mut Rng,
) {
    let ctx = gpu();
    for block in [1u32, 7, 32, 33, 100, 256, 1024] {
        let blocks = 1 + rng.below(5) as u32;
        let n = (block * blocks) as usize;
        let input: Vec<T> = rng.values(n);
        let input_buf = DeviceBuffer::from_slice(&ctx, &input).unwrap();
        let mut out = DeviceBuffer::<T>::new(&ctx, n).unwrap();
        out.memset(0x5a).unwrap();
        kernel(&mut out, &input_buf, config((blocks, 1, 1), (block, 1, 1)));
        let got = out.to_vec().unwrap();
        for (g, got) in got.iter().enumerate() {
            let (b, r) = (g / block as usize, g % block as usize);
            let want = input[b * block as usize + (r + 1) % block as usize];
            assert_eq!(*got, want, "thread {g} (block size {block})");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn shared_memory_round_trips_every_element_size() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("shared_memory_round_trips_every_element_size");
    round_trip::<u8>(
        |o, i, c| shared_u8.launch(&KERNELS, &s, c, (o, i)).unwrap(),
        &mut rng,
    );
    round_trip::<u16>(
        |o, i, c| shared_u16.launch(&KERNELS, &s, c, (o, i)).unwrap(),
        &mut rng,
    );
    round_trip::<u64>(
        |o, i, c| shared_u64.launch(&KERNELS, &s, c, (o, i)).unwrap(),
        &mut rng,
    );
    round_trip::<[u8; 3]>(
        |o, i, c| shared_bytes3.launch(&KERNELS, &s, c, (o, i)).unwrap(),
        &mut rng,
    );
    round_trip::<[u32; 3]>(
        |o, i, c| shared_words3.launch(&KERNELS, &s, c, (o, i)).unwrap(),
        &mut rng,
    );
    round_trip::<[u64; 3]>(
        |o, i, c| shared_wide.launch(&KERNELS, &s, c, (o, i)).unwrap(),
        &mut rng,
    );
    drop(ctx);
}

#[test]
#[ignore = "needs a CUDA device"]
fn shared_atomic_adds_count_every_value() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("shared_atomic_adds_count_every_value");
    for shape in shapes(&mut rng) {
        let n = rng.length(50_000);
        let host: Vec<u32> = rng.values(n);
        let input = DeviceBuffer::from_slice(&ctx, &host).unwrap();
        let mut bins = DeviceBuffer::<u32>::zeroed(&ctx, 64).unwrap();
        shared_bins
            .launch(&KERNELS, &s, shape, (&input, &mut bins))
            .unwrap();
        let mut want = vec![0u32; 64];
        for &v in &host {
            want[(v % 64) as usize] += 1;
        }
        assert_eq!(bins.to_vec().unwrap(), want, "{n} values, {shape:?}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn warp_collectives_match_the_host_per_warp() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("warp_collectives_match_the_host_per_warp");
    for block in [1u32, 5, 32, 33, 64, 100, 255, 1024] {
        let blocks = 1 + rng.below(4) as u32;
        let total = (block * blocks) as usize;
        // Some threads past the input (they add 0).
        let n = total - rng.below(total.min(40));
        let input: Vec<u32> = (0..n)
            .map(|_| rng.value::<u32>() >> rng.below(32))
            .collect();
        let input_buf = DeviceBuffer::from_slice(&ctx, &input).unwrap();
        let mut out = DeviceBuffer::<[u32; 5]>::new(&ctx, total).unwrap();
        out.memset(0xee).unwrap();
        warp_collectives
            .launch(
                &KERNELS,
                &s,
                config((blocks, 1, 1), (block, 1, 1)),
                (&mut out, &input_buf),
            )
            .unwrap();
        let got = out.to_vec().unwrap();
        for b in 0..blocks as usize {
            for w in 0..(block as usize).div_ceil(32) {
                let first = w * 32;
                let lanes = (block as usize - first).min(32);
                let vals: Vec<u32> = (0..lanes)
                    .map(|l| {
                        input
                            .get(b * block as usize + first + l)
                            .copied()
                            .unwrap_or(0)
                    })
                    .collect();
                let sum = vals.iter().fold(0u32, |a, &v| a.wrapping_add(v));
                let max = vals.iter().copied().max().unwrap();
                let mut run = 0u32;
                for (l, &v) in vals.iter().enumerate() {
                    let g = b * block as usize + first + l;
                    let exclusive = run;
                    run = run.wrapping_add(v);
                    assert_eq!(
                        got[g],
                        [sum, max, run, exclusive, lanes as u32],
                        "block size {block}, block {b}, warp {w}, lane {l}"
                    );
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn block_collectives_match_the_host_per_block() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("block_collectives_match_the_host_per_block");
    for block in [96u32, 100, 256] {
        let blocks = 1 + rng.below(6) as u32;
        let total = (block * blocks) as usize;
        let n = total - rng.below(60);
        let input: Vec<u32> = rng.values(n);
        let input_buf = DeviceBuffer::from_slice(&ctx, &input).unwrap();
        let mut out = DeviceBuffer::<[u32; 4]>::new(&ctx, total).unwrap();
        out.memset(0x77).unwrap();
        let c = config((blocks, 1, 1), (block, 1, 1));
        match block {
            96 => block_collectives_96.launch(&KERNELS, &s, c, (&mut out, &input_buf)),
            100 => block_collectives_100.launch(&KERNELS, &s, c, (&mut out, &input_buf)),
            _ => block_collectives_256.launch(&KERNELS, &s, c, (&mut out, &input_buf)),
        }
        .unwrap();
        let got = out.to_vec().unwrap();
        for b in 0..blocks as usize {
            let vals: Vec<u32> = (0..block as usize)
                .map(|r| input.get(b * block as usize + r).copied().unwrap_or(0))
                .collect();
            let sum = vals.iter().fold(0u32, |a, &v| a.wrapping_add(v));
            let max = vals.iter().copied().max().unwrap();
            let mut run = 0u32;
            for (r, &v) in vals.iter().enumerate() {
                assert_eq!(
                    got[b * block as usize + r],
                    [sum, max, run, sum],
                    "block size {block}, block {b}, thread {r}"
                );
                run = run.wrapping_add(v);
            }
        }
    }
}

/// A kernel declared for `32 x 4` blocks: right on its shape (every
/// element, against the host, with extra blocks past the data), refused
/// with `Err(BlockShape)` on any other before anything runs (its output
/// stays poisoned), and `max_occupancy` takes the declared size.
#[test]
#[ignore = "needs a CUDA device"]
fn a_declared_block_shape_computes_and_refuses_other_shapes() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("a_declared_block_shape_computes_and_refuses_other_shapes");
    for _ in 0..4 {
        let n = rng.length(3000);
        let input: Vec<u32> = rng.values(n);
        let input_buf = DeviceBuffer::from_slice(&ctx, &input).unwrap();
        let mut out = DeviceBuffer::<[u32; 4]>::new(&ctx, n).unwrap();
        out.memset(0x77).unwrap();
        let blocks = n.div_ceil(128) as u32 + rng.below(3) as u32;
        let right = config((blocks.max(1), 1, 1), (32, 4, 1));
        block_collectives_declared
            .launch(&KERNELS, &s, right, (&mut out, &input_buf))
            .unwrap();
        let got = out.to_vec().unwrap();
        for b in 0..n.div_ceil(128) {
            let vals: Vec<u32> = (0..128)
                .map(|r| input.get(b * 128 + r).copied().unwrap_or(0))
                .collect();
            let sum = vals.iter().fold(0u32, |a, &v| a.wrapping_add(v));
            let max = vals.iter().copied().max().unwrap();
            let mut run = 0u32;
            for (r, &v) in vals.iter().enumerate() {
                if let Some(g) = got.get(b * 128 + r) {
                    assert_eq!(*g, [sum, max, run, sum], "n = {n}, block {b}, thread {r}");
                }
                run = run.wrapping_add(v);
            }
        }
        for wrong in [(128, 1, 1), (4, 32, 1), (32, 4, 2), (32, 2, 2)] {
            let mut poisoned = DeviceBuffer::<[u32; 4]>::new(&ctx, n).unwrap();
            poisoned.memset(0x5a).unwrap();
            let c = config((blocks.max(1), 1, 1), wrong);
            match block_collectives_declared.launch(&KERNELS, &s, c, (&mut poisoned, &input_buf)) {
                Err(
                    e @ Error::BlockShape {
                        kernel,
                        declared,
                        launched,
                    },
                ) => {
                    assert_eq!(
                        (kernel, declared, launched),
                        ("block_collectives_declared", (32, 4, 1), wrong)
                    );
                    let text = e.to_string();
                    assert!(text.contains("block_dim: (32, 4, 1)"), "{text}");
                }
                other => panic!("a launch with blocks of {wrong:?}: {other:?}"),
            }
            assert!(
                poisoned
                    .to_vec()
                    .unwrap()
                    .iter()
                    .all(|&x| x == [0x5a5a_5a5a; 4]),
                "blocks of {wrong:?} wrote"
            );
        }
    }
    let best = block_collectives_declared
        .max_occupancy(&KERNELS, &ctx, 0)
        .unwrap();
    assert_eq!(best.block_size, 128);
}

/// `PitchedSlice::cross` against the host: every cell of random arrays
/// (with no interior, a thin one, and larger), over 2D and 3D launches.
#[test]
#[ignore = "needs a CUDA device"]
fn cross_reads_the_interior_cells_and_their_neighbours() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("cross_reads_the_interior_cells_and_their_neighbours");
    let mut sizes = vec![(1usize, 1usize), (2, 2), (3, 3), (1, 7), (7, 1), (3, 40)];
    for _ in 0..3 {
        sizes.push((1 + rng.below(300), 1 + rng.below(120)));
    }
    for (w, h) in sizes {
        let data: Vec<u32> = rng.values(w * h);
        let input = PitchedBuffer::from_slice(&ctx, &data, w, h).unwrap();
        for shape in [
            config((4, 3, 1), (32, 8, 1)),
            config((2, 2, 3), (16, 4, 2)),
            config((1, 1, 1), (7, 3, 1)),
        ] {
            let mut out = PitchedBuffer::<u32>::new(&ctx, w, h).unwrap();
            out.fill(0x1234_5678).unwrap();
            cross_mix
                .launch(&KERNELS, &s, shape, (&mut out, &input))
                .unwrap();
            let got = out.to_vec().unwrap();
            for y in 0..h {
                for x in 0..w {
                    let at = |x: usize, y: usize| data[y * w + x];
                    let want = if (1..w.saturating_sub(1)).contains(&x)
                        && (1..h.saturating_sub(1)).contains(&y)
                    {
                        cross_value(cuda_mem::device::Cross {
                            center: at(x, y),
                            left: at(x - 1, y),
                            right: at(x + 1, y),
                            up: at(x, y - 1),
                            down: at(x, y + 1),
                        })
                    } else {
                        u32::MAX
                    };
                    assert_eq!(
                        got[y * w + x],
                        want,
                        "{w} x {h}, cell ({x}, {y}), {shape:?}"
                    );
                }
            }
        }
    }
}

/// Pitched parameters are at most `u32::MAX` rows and columns (the device
/// types' cell addresses are 32-bit multiply-adds): an empty array taller
/// than that is refused before anything runs, and one just inside is taken.
#[test]
#[ignore = "needs a CUDA device"]
fn pitched_parameters_above_u32_max_rows_are_refused() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut out = PitchedBuffer::<u32>::new(&ctx, 3, 2).unwrap();
    out.fill(7).unwrap();
    for (rows, ok) in [
        (1usize << 32, false),
        ((1usize << 32) + 5, false),
        (u32::MAX as usize, true),
    ] {
        let tall = PitchedBuffer::<u32>::new(&ctx, 0, rows).unwrap();
        let got = cross_mix.launch(
            &KERNELS,
            &s,
            config((1, 1, 1), (32, 8, 1)),
            (&mut out, &tall),
        );
        match (got, ok) {
            (Ok(()), true) => {}
            (Err(Error::InvalidArgument(why)), false) => assert!(why.contains("u32::MAX"), "{why}"),
            (other, _) => panic!("{rows} rows: {other:?}"),
        }
    }
    s.synchronize().unwrap();
    // The kernel ran once, for the array inside the limit: its input has no
    // interior cell, so every output cell says so.
    assert_eq!(out.to_vec().unwrap(), vec![u32::MAX; 6]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn partitions_give_every_element_to_its_owner() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("partitions_give_every_element_to_its_owner");
    for shape in shapes(&mut rng) {
        let (g, b) = (shape.grid_dim, shape.block_dim);
        let blocks = (g.0 * g.1 * g.2) as usize;
        let block = (b.0 * b.1 * b.2) as usize;
        let t = blocks * block;

        let n = rng.length(4000);
        let mut out = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
        out.memset(0xff).unwrap();
        tile_owners
            .launch(&KERNELS, &s, shape, (&mut out,))
            .unwrap();
        let got = out.to_vec().unwrap();
        for (e, got) in got.iter().enumerate() {
            let (j, k) = (e / 7, e % 7);
            let want = (((j % blocks) as u32) << 16) | (k % block) as u32;
            assert_eq!(*got, want, "tile element {e} of {n}, {shape:?}");
        }

        let mut out = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
        out.memset(0xff).unwrap();
        chunk_owners
            .launch(&KERNELS, &s, shape, (&mut out,))
            .unwrap();
        let got = out.to_vec().unwrap();
        for (e, &got) in got.iter().enumerate() {
            assert_eq!(
                got,
                ((e / 5) % t) as u32 + 1,
                "chunk element {e} of {n}, {shape:?}"
            );
        }

        let (w, h) = (1 + rng.below(70), 1 + rng.below(40));
        let mut image = PitchedBuffer::<u32>::new(&ctx, w, h).unwrap();
        image.memset(0xff).unwrap();
        pitched_tile_owners
            .launch(&KERNELS, &s, shape, (&mut image,))
            .unwrap();
        let got = image.to_vec().unwrap();
        let (gx, gy) = (g.0 as usize, (g.1 * g.2) as usize);
        let (bx, by) = (b.0 as usize, (b.1 * b.2) as usize);
        for y in 0..h {
            for x in 0..w {
                let (tx, ty) = (x / 8, y / 4);
                let block_rank = tx % gx + gx * (ty % gy);
                let thread_rank = (x % 8) % bx + bx * ((y % 4) % by);
                let want = ((block_rank as u32) << 16) | thread_rank as u32;
                assert_eq!(
                    got[y * w + x],
                    want,
                    "cell ({x}, {y}) of {w}x{h}, {shape:?}"
                );
            }
        }
    }
}

/// `PitchedTilesMut::this_block_tile_mut` with `thread_element_mut` and
/// `set_thread_element`: each block writes its own tile's cells (the
/// threads' first three cells along each axis), and no other cell, for
/// random sizes and launch shapes (2D and 3D, partial tiles).
#[test]
#[ignore = "needs a CUDA device"]
fn a_block_writes_its_own_tile_cell_by_cell() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("a_block_writes_its_own_tile_cell_by_cell");
    let mut shapes = vec![
        config((2, 3, 1), (8, 4, 1)),
        config((3, 2, 2), (3, 1, 1)),
        config((1, 1, 3), (2, 1, 2)),
    ];
    for _ in 0..3 {
        let grid = (
            1 + rng.below(9) as u32,
            1 + rng.below(5) as u32,
            1 + rng.below(2) as u32,
        );
        let block = (
            1 + rng.below(9) as u32,
            1 + rng.below(4) as u32,
            1 + rng.below(2) as u32,
        );
        shapes.push(config(grid, block));
    }
    for shape in shapes {
        let (w, h) = (1 + rng.below(80), 1 + rng.below(30));
        let mut image = PitchedBuffer::<u32>::new(&ctx, w, h).unwrap();
        image.memset(0xff).unwrap();
        pitched_block_tile_cells
            .launch(&KERNELS, &s, shape, (&mut image,))
            .unwrap();
        let got = image.to_vec().unwrap();
        let (g, b) = (shape.grid_dim, shape.block_dim);
        let (gx, gy) = (g.0 as usize, (g.1 * g.2) as usize);
        let (bx, by) = (b.0 as usize, (b.1 * b.2) as usize);
        for y in 0..h {
            for x in 0..w {
                // Tile (x / 8, y / 4) is a block's own when that block
                // exists; its cell (x % 8, y % 4) is written when it is one
                // of a thread's first three along each axis.
                let written = x / 8 < gx && y / 4 < gy && x % 8 < 3 * bx && y % 4 < 3 * by;
                let want = if written {
                    ((y as u32) << 16) | x as u32
                } else {
                    u32::MAX
                };
                assert_eq!(
                    got[y * w + x],
                    want,
                    "cell ({x}, {y}) of {w}x{h}, {shape:?}"
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_grid_of_2_63_threads_is_refused() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&ctx, 8).unwrap();
    // 2^31 - 1 blocks along x, 2^16 - 1 along y and z, 1024 threads: about
    // 2^73 threads, within CUDA's limits.
    let huge = config((i32::MAX as u32, 65_535, 65_535), (1024, 1, 1));
    let e = chunk_owners
        .launch(&KERNELS, &s, huge, (&mut out,))
        .unwrap_err();
    assert!(e.to_string().contains("2^63"), "{e}");
    assert_eq!(out.to_vec().unwrap(), [0; 8]);
}
