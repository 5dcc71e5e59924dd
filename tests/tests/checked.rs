//! `Checked` memory of `CheckedDeviceCopy` types (`bool`, an enum whose
//! discriminants leave gaps, a struct of both) on the GPU: round trips in
//! every memory kind, `memset` refusing bytes that are no value, raw bits
//! that are no value caught by every checked read with the first index
//! named, and kernels (`tests/launch-kernels`, module `checked`) that read
//! checked and write values, over odd sizes and unaligned views, outputs
//! poisoned first and every element checked.

use cuda_mem::prelude::*;

use cuda_mem::bytes_of_slice;
use cuda_mem::checked::InvalidBitPattern;
use cuda_mem::{
    Checked, CheckedDeviceBuffer, CheckedDeviceCopy, CheckedPinnedBuffer, CheckedPoolBuffer,
    CheckedUnifiedBuffer, DeviceBuffer, Error, LaunchConfig, Module,
};
use cuda_mem_launch_kernels::checked::{next_phase, next_phases, step, step_cells, Cell, Phase};
use cuda_mem_tests::{gpu, random_launch_config, Rng};

static KERNELS: Module = cuda_mem::include_kernels!("launch-kernels");

const PHASES: [Phase; 3] = [Phase::Solid, Phase::Liquid, Phase::Gas];

fn random_phases(rng: &mut Rng, n: usize) -> Vec<Phase> {
    (0..n).map(|_| PHASES[rng.below(3)]).collect()
}

fn random_flags(rng: &mut Rng, n: usize) -> Vec<bool> {
    (0..n).map(|_| rng.below(2) == 1).collect()
}

fn random_cells(rng: &mut Rng, n: usize) -> Vec<Cell> {
    (0..n)
        .map(|_| Cell {
            phase: PHASES[rng.below(3)],
            alive: rng.below(2) == 1,
            heat: rng.next_u64() as u16,
        })
        .collect()
}

/// A byte that is no `Phase` (not 1, 2 or 4).
fn bad_phase_byte(rng: &mut Rng) -> u8 {
    loop {
        let b = rng.next_u64() as u8;
        if Phase::try_from_bits(b).is_none() {
            return b;
        }
    }
}

/// The index that a checked read of `result` reports, or panics.
fn invalid_index<T: std::fmt::Debug>(result: cuda_mem::Result<T>) -> usize {
    match result {
        Err(Error::InvalidBitPattern(InvalidBitPattern { index, .. })) => index,
        other => panic!("expected Err(InvalidBitPattern), got {other:?}"),
    }
}

/// Every checked read of `flags` (raw bits `bits`) refuses it at the first
/// byte that is not 0 or 1, or returns exactly the values.
fn check_reads<M: Memory<u8>>(flags: &Checked<bool, M>, bits: &[u8], what: &str) {
    let first = bits.iter().position(|&b| b > 1);
    assert_eq!(flags.first_invalid().unwrap(), first, "{what}");
    match first {
        Some(index) => {
            assert_eq!(invalid_index(flags.to_vec()), index, "{what}");
            let mut host = vec![true; bits.len()];
            assert_eq!(
                invalid_index(flags.copy_to_host(&mut host)),
                index,
                "{what}"
            );
            assert!(host.iter().all(|&b| b), "{what}: copy_to_host wrote on Err");
            // A view after the bad element reads clean when the rest is.
            if bits[index + 1..].iter().all(|&b| b <= 1) {
                let tail = flags.slice(index + 1..).unwrap().to_vec().unwrap();
                assert!(tail
                    .iter()
                    .zip(&bits[index + 1..])
                    .all(|(&v, &b)| u8::from(v) == b));
            }
        }
        None => {
            let values = flags.to_vec().unwrap();
            assert!(
                values.iter().zip(bits).all(|(&v, &b)| u8::from(v) == b),
                "{what}"
            );
        }
    }
}

/// memset of 0x02 into `bool` memory: refused through `Checked::memset`
/// (nothing written), and written through the raw bits, then caught by
/// every checked read, naming the first such element; in every kind.
#[test]
#[ignore = "needs a CUDA device"]
fn a_memset_of_2_into_bools_is_refused_or_caught_at_its_index() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("a_memset_of_2_into_bools_is_refused_or_caught_at_its_index");
    for round in 0..12 {
        let n = 1 + rng.below(if round % 3 == 0 { 300_000 } else { 1000 });
        let values = random_flags(&mut rng, n);
        let bits: Vec<u8> = values.iter().map(|&v| u8::from(v)).collect();
        let (a, b) = {
            let (x, y) = (rng.below(n), rng.below(n));
            (x.min(y), x.max(y) + 1)
        };
        let mut corrupted = bits.clone();
        corrupted[a..b].fill(2);
        macro_rules! kind {
            ($name:literal, $make:expr) => {{
                let mut flags = $make;
                assert_eq!(
                    flags.bits().to_vec().unwrap(),
                    bits,
                    "{}: from_slice",
                    $name
                );
                check_reads(&flags, &bits, $name);
                // Refused, and nothing written.
                for byte in [2u8, 0x80, 0xff, 2 + rng.below(254) as u8] {
                    assert!(
                        matches!(flags.memset(byte), Err(Error::InvalidArgument(_))),
                        "{}: memset({byte}) accepted",
                        $name
                    );
                }
                assert_eq!(
                    flags.bits().to_vec().unwrap(),
                    bits,
                    "{}: a refused memset wrote",
                    $name
                );
                // Raw bits: written, then caught at the first index.
                flags.bits_mut().slice_mut(a..b).unwrap().memset(2).unwrap();
                let raw = flags.bits().to_vec().unwrap();
                assert_eq!(raw, corrupted, "{}: raw memset {a}..{b}", $name);
                check_reads(&flags, &raw, $name);
                assert_eq!(invalid_index(flags.to_vec()), a, "{}", $name);
                flags
            }};
        }
        kind!(
            "device",
            CheckedDeviceBuffer::from_slice(&ctx, &values).unwrap()
        );
        kind!(
            "pinned",
            CheckedPinnedBuffer::from_slice(&ctx, &values).unwrap()
        );
        kind!(
            "unified",
            CheckedUnifiedBuffer::from_slice(&ctx, &values).unwrap()
        );
        let pool = kind!("pool", {
            let mut pool = CheckedPoolBuffer::filled(n, false, &stream).unwrap();
            pool.copy_from_host(&values).unwrap();
            pool
        });
        pool.free_on_stream(&stream).unwrap();
        // memset of 0 and 1 are values: every element false, then true.
        let mut flags = CheckedDeviceBuffer::<bool>::filled(&ctx, n, true).unwrap();
        flags.memset(0).unwrap();
        assert_eq!(flags.to_vec().unwrap(), vec![false; n]);
        flags.memset_async(1, &stream).unwrap();
        assert_eq!(flags.to_vec().unwrap(), vec![true; n]);
    }
}

/// Enums and structs of them round-trip through every kind, fill and
/// memset take values only, views and copies between kinds keep the bits.
#[test]
#[ignore = "needs a CUDA device"]
fn enums_and_structs_round_trip_in_every_kind() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("enums_and_structs_round_trip_in_every_kind");
    for _ in 0..10 {
        let n = 1 + rng.below(70_000);
        let phases = random_phases(&mut rng, n);
        let cells = random_cells(&mut rng, n);

        let device = CheckedDeviceBuffer::from_slice(&ctx, &phases).unwrap();
        assert_eq!(device.to_vec().unwrap(), phases);
        let mut pinned = CheckedPinnedBuffer::<Phase>::filled(&ctx, n, Phase::Gas).unwrap();
        assert_eq!(pinned.to_vec().unwrap(), vec![Phase::Gas; n]);
        pinned.copy_from(&device).unwrap();
        assert_eq!(pinned.to_vec().unwrap(), phases);
        let host_bits: Vec<u8> = phases.iter().map(|&p| p as u8).collect();
        assert_eq!(pinned.bits().as_slice().unwrap(), &host_bits[..]);

        // memset: 1, 2 and 4 are phases; 0, 3 and 5.. are not.
        let mut unified = CheckedUnifiedBuffer::from_slice(&ctx, &phases).unwrap();
        for byte in [0u8, 3, 5, 0xff, bad_phase_byte(&mut rng)] {
            assert!(unified.memset(byte).is_err(), "memset({byte}) into phases");
        }
        assert_eq!(unified.to_vec().unwrap(), phases, "a refused memset wrote");
        unified.memset(4).unwrap();
        assert_eq!(unified.to_vec().unwrap(), vec![Phase::Gas; n]);

        // A view at an odd offset: fill, copy in, read back.
        let (a, b) = {
            let (x, y) = (rng.below(n + 1), rng.below(n + 1));
            (x.min(y), x.max(y))
        };
        let mut pool = CheckedPoolBuffer::filled(n, Phase::Solid, &stream).unwrap();
        pool.slice_mut(a..b).unwrap().fill(Phase::Liquid).unwrap();
        let mut expected = vec![Phase::Solid; n];
        expected[a..b].fill(Phase::Liquid);
        assert_eq!(pool.to_vec().unwrap(), expected);
        pool.slice_mut(a..b)
            .unwrap()
            .copy_from_host(&phases[a..b])
            .unwrap();
        expected[a..b].copy_from_slice(&phases[a..b]);
        assert_eq!(pool.to_vec().unwrap(), expected);
        assert_eq!(pool.slice(a..b).unwrap().to_vec().unwrap(), &phases[a..b]);
        pool.free_on_stream(&stream).unwrap();

        // Structs: round trip, fill, memset (only 1 makes a `Cell`: phase
        // Solid, alive, heat 0x0101), and a bad phase byte inside one.
        let mut grid = CheckedDeviceBuffer::from_slice(&ctx, &cells).unwrap();
        assert_eq!(grid.to_vec().unwrap(), cells);
        let one = cells[rng.below(n)];
        grid.fill(one).unwrap();
        assert_eq!(grid.to_vec().unwrap(), vec![one; n]);
        assert!(grid.memset(0).is_err() && grid.memset(2).is_err());
        grid.memset(1).unwrap();
        let solid = Cell {
            phase: Phase::Solid,
            alive: true,
            heat: 0x0101,
        };
        assert_eq!(grid.to_vec().unwrap(), vec![solid; n]);
        let k = rng.below(n);
        let mut raw = grid.bits().slice(k..k + 1).unwrap().to_vec().unwrap();
        raw[0].phase = bad_phase_byte(&mut rng);
        grid.bits_mut()
            .slice_mut(k..k + 1)
            .unwrap()
            .copy_from_host(&raw)
            .unwrap();
        assert_eq!(invalid_index(grid.to_vec()), k);
        // The same with a bool that is not one.
        grid.memset(1).unwrap();
        raw[0] = solid.into_bits();
        raw[0].alive = 2 + rng.below(254) as u8;
        grid.bits_mut()
            .slice_mut(k..k + 1)
            .unwrap()
            .copy_from_host(&raw)
            .unwrap();
        assert_eq!(invalid_index(grid.to_vec()), k);
    }
}

/// `next_phases` over views at odd offsets: every element with valid
/// inputs gets `next_phase`, every other one the byte 0 and a count; the
/// elements outside the output view keep their poison.
#[test]
#[ignore = "needs a CUDA device"]
fn kernels_read_checked_and_write_values_over_views() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("kernels_read_checked_and_write_values_over_views");
    for n in [1usize, 2, 31, 33, 1000, 4099, 65_537, (1 << 20) + 3] {
        let mut phase_bits: Vec<u8> = random_phases(&mut rng, n)
            .iter()
            .map(|&p| p as u8)
            .collect();
        let mut hot_bits: Vec<u8> = random_flags(&mut rng, n)
            .iter()
            .map(|&h| u8::from(h))
            .collect();
        // Some bits that are no value, in each input.
        for _ in 0..rng.below(5) {
            let i = rng.below(n);
            phase_bits[i] = bad_phase_byte(&mut rng);
        }
        for _ in 0..rng.below(5) {
            let i = rng.below(n);
            hot_bits[i] = 2 + rng.below(254) as u8;
        }
        let phases =
            Checked::<Phase, _>::from_bits(DeviceBuffer::from_slice(&ctx, &phase_bits).unwrap());
        let hot = Checked::<bool, _>::from_bits(DeviceBuffer::from_slice(&ctx, &hot_bits).unwrap());
        // Views: the inputs from `s`, the output from `o`, `len` elements.
        let s = rng.below(n);
        let o = rng.below(n);
        let len = rng.below(n - s.max(o) + 1);
        let poison = bad_phase_byte(&mut rng);
        let mut out = CheckedDeviceBuffer::<Phase>::filled(&ctx, n, Phase::Solid).unwrap();
        out.bits_mut().memset(poison).unwrap();
        let mut invalid = DeviceBuffer::<u32>::zeroed(&ctx, 1).unwrap();
        next_phases
            .launch(
                &KERNELS,
                &stream,
                random_launch_config(&mut rng, len),
                (
                    out.slice_mut(o..o + len).unwrap(),
                    phases.slice(s..s + len).unwrap(),
                    &hot.slice(s..).unwrap(),
                    &mut invalid,
                ),
            )
            .unwrap();
        let got = out.bits().to_vec().unwrap();
        let mut bad = 0;
        for (i, &g) in got.iter().enumerate() {
            let expected = if (o..o + len).contains(&i) {
                let j = s + i - o;
                match (
                    Phase::try_from_bits(phase_bits[j]),
                    bool::try_from_bits(hot_bits[j]),
                ) {
                    (Some(p), Some(h)) => next_phase(p, h) as u8,
                    _ => {
                        bad += 1;
                        0
                    }
                }
            } else {
                poison
            };
            assert_eq!(
                g, expected,
                "n {n}, element {i}, out view {o}.., inputs {s}.., {len} long"
            );
        }
        assert_eq!(
            invalid.to_vec().unwrap(),
            [bad],
            "n {n}: invalid inputs counted"
        );
        let first_bad = got.iter().position(|&b| Phase::try_from_bits(b).is_none());
        assert_eq!(out.first_invalid().unwrap(), first_bad);
        if let Some(index) = first_bad {
            assert_eq!(invalid_index(out.to_vec()), index);
        }
    }
}

/// `step_cells` in place on every kind a kernel can take (one cell a
/// thread), with some cells corrupted: those stay as they were and are
/// counted, the others step.
#[test]
#[ignore = "needs a CUDA device"]
fn kernels_step_structs_of_checked_fields_in_every_kind() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("kernels_step_structs_of_checked_fields_in_every_kind");
    for n in [1usize, 3, 257, 10_007, 300_001] {
        let cells = random_cells(&mut rng, n);
        let mut bits: Vec<_> = cells.iter().map(|&c| c.into_bits()).collect();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(n);
            if rng.below(2) == 0 {
                bits[i].phase = bad_phase_byte(&mut rng);
            } else {
                bits[i].alive = 2 + rng.below(254) as u8;
            }
        }
        let expected: Vec<_> = bits
            .iter()
            .map(|&b| Cell::try_from_bits(b).map_or(b, |c| step(c).into_bits()))
            .collect();
        let bad = bits
            .iter()
            .filter(|&&b| !Cell::is_valid_bit_pattern(b))
            .count() as u32;
        let launch = LaunchConfig::for_num_elems(n as u32);
        macro_rules! kind {
            ($name:literal, $cells:expr) => {{
                let mut grid = $cells;
                grid.bits_mut().copy_from_host(&bits).unwrap();
                let mut invalid = DeviceBuffer::<u32>::zeroed(&ctx, 1).unwrap();
                step_cells
                    .launch(&KERNELS, &stream, launch, (&mut grid, &mut invalid))
                    .unwrap();
                let got = grid.bits().to_vec().unwrap();
                assert!(
                    bytes_of_slice(&got) == bytes_of_slice(&expected),
                    "{} n {n}: cells differ",
                    $name
                );
                assert_eq!(invalid.to_vec().unwrap(), [bad], "{} n {n}", $name);
            }};
        }
        kind!(
            "device",
            CheckedDeviceBuffer::<Cell>::filled(&ctx, n, cells[0]).unwrap()
        );
        kind!(
            "pinned",
            CheckedPinnedBuffer::<Cell>::filled(&ctx, n, cells[0]).unwrap()
        );
        kind!(
            "unified",
            CheckedUnifiedBuffer::<Cell>::filled(&ctx, n, cells[0]).unwrap()
        );
        kind!(
            "pool",
            CheckedPoolBuffer::<Cell>::filled(n, cells[0], &stream).unwrap()
        );
    }
}
