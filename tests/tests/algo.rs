//! `cuda_mem::algo` on the GPU, against the host: reductions (sum, min,
//! max, count, the first index of the minimum and maximum) and scans
//! (inclusive and exclusive; sum, min and max; out of place into poisoned
//! outputs and in place) of every shipped type, on random data of odd
//! sizes (0, 1, 31, tile sizes ± 1, 2^k ± 1, 10^7 + 7), on every buffer
//! kind and on unaligned views, on many streams at once, inside a graph;
//! the NaN and signed-zero order of the float operators; compactions
//! (`select_flagged`, `unique`, `run_length_encode`); and sorts of every
//! key type, ascending and descending, keys alone and stable pairs, and
//! segmented sorts; and
//! histograms (even and by levels) of every sample type. The host
//! references fold with the same `cuda_mem::device::ops` operators (whose
//! float definitions are unit-tested against `total_cmp`), so integer and
//! `f64` results (the `f64` data are multiples of 1/8: every sum is exact)
//! are compared bit for bit, `f32` sums within the bound of any summation
//! order.

use std::sync::Arc;

use cuda_mem::algo::{self, BuiltinOp, Numeric};
use cuda_mem::device::ops::{Max, Min, Operator, Sum};
use cuda_mem::prelude::*;
use cuda_mem::{CudaStream, DeviceBuffer, Error, Graph, MemPool, PitchedBuffer};
use cuda_mem_tests::{expect_err, for_each_kind, gpu, Rng};

/// What the tests need of an element type beyond [`Numeric`].
trait Elem: Numeric + Default + Send + Sync + 'static
where
    Sum: BuiltinOp<Self>,
    Min: BuiltinOp<Self>,
    Max: BuiltinOp<Self>,
{
    /// A random value; with `ties`, from a small set (equal elements).
    fn random(rng: &mut Rng, ties: bool) -> Self;
    fn to_f64(self) -> f64;
    /// Whether sums of random values must be exact (integers wrap; the
    /// `f64` values are multiples of 1/8, so their sums are exact).
    const EXACT_SUMS: bool;
    fn bits(self) -> u64;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn random(rng: &mut Rng, ties: bool) -> Self {
                if ties { (rng.next_u64() % 61) as $t } else { rng.value() }
            }
            fn to_f64(self) -> f64 { self as f64 }
            const EXACT_SUMS: bool = true;
            fn bits(self) -> u64 { self as u64 }
        }
    )*};
}
int_elem!(i32, u32, i64, u64);

impl Elem for f32 {
    fn random(rng: &mut Rng, ties: bool) -> Self {
        let range = if ties { 41 } else { 200_001 };
        ((rng.next_u64() % range) as f32 - (range / 2) as f32) / 8.0
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    const EXACT_SUMS: bool = false;
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Elem for f64 {
    fn random(rng: &mut Rng, ties: bool) -> Self {
        let range = if ties { 41 } else { 2_000_001 };
        ((rng.next_u64() % range) as f64 - (range / 2) as f64) / 8.0
    }
    fn to_f64(self) -> f64 {
        self
    }
    const EXACT_SUMS: bool = true;
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// The sizes every type runs: the edges, around a 4-byte tile (4096), an
/// 8-byte one (2048) and a sort's tile of keys alone (8192), 2^k ± 1, and a
/// few random ones.
fn sizes(rng: &mut Rng) -> Vec<usize> {
    let mut sizes = vec![0, 1, 2, 31, 2047, 2048, 2049, 4095, 4096, 4097];
    sizes.extend([8191, 8192, 8193, 12_289]);
    sizes.extend([(1 << 16) - 1, (1 << 16) + 1, (1 << 20) - 1, (1 << 20) + 1]);
    sizes.extend((0..3).map(|_| 1 + rng.below(300_000)));
    sizes
}

/// The exact sum of some terms, their magnitude and their count: what an
/// `f32` sum of them in any order may differ from, and by how much. A scan
/// check pushes one term per element, so it stays linear in the length.
#[derive(Clone, Copy, Default)]
struct SumOf {
    exact: f64,
    magnitude: f64,
    len: usize,
}

impl SumOf {
    fn of<T: Elem>(terms: &[T]) -> Self
    where
        Sum: BuiltinOp<T>,
        Min: BuiltinOp<T>,
        Max: BuiltinOp<T>,
    {
        terms.iter().fold(Self::default(), |s, &x| s.push(x))
    }

    fn push<T: Elem>(self, term: T) -> Self
    where
        Sum: BuiltinOp<T>,
        Min: BuiltinOp<T>,
        Max: BuiltinOp<T>,
    {
        let x = term.to_f64();
        Self {
            exact: self.exact + x,
            magnitude: self.magnitude + x.abs(),
            len: self.len + 1,
        }
    }
}

/// Whether `got` is what the host's fold gives: bit for bit, or NaN for
/// NaN, or (an `f32` sum of the terms `sum_of` describes) within the error
/// bound of any order.
fn same<T: Elem>(got: T, want: T, sum_of: Option<SumOf>) -> bool
where
    Sum: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    if got.bits() == want.bits() || got.to_f64().is_nan() && want.to_f64().is_nan() {
        return true;
    }
    match sum_of {
        Some(terms) if !T::EXACT_SUMS => {
            let bound = terms.len as f64 * f64::from(f32::EPSILON) * terms.magnitude + 1e-30;
            (got.to_f64() - terms.exact).abs() <= bound
        }
        _ => false,
    }
}

/// Every reduction of `data` (on a device buffer, and on a view of it that
/// starts one element in, so not 16-byte aligned) against the host.
fn check_reductions<T: Elem>(ctx: &Arc<cuda_mem::CudaContext>, stream: &Arc<CudaStream>, data: &[T])
where
    Sum: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let padded: Vec<T> = std::iter::once(T::default())
        .chain(data.iter().copied())
        .collect();
    let buf = DeviceBuffer::from_slice(ctx, &padded).unwrap();
    let view = buf.slice(1..).unwrap();
    let n = data.len();
    let what = format!("{} x {n}", T::NAME);

    let want_sum = data.iter().fold(Sum.identity(), |a, &b| Sum.apply(a, b));
    let got = algo::sum(&view).unwrap();
    assert!(
        same(got, want_sum, Some(SumOf::of(data))),
        "sum of {what}: {got:?}, want {want_sum:?}"
    );

    let want_min = data.iter().fold(Min.identity(), |a, &b| Min.apply(a, b));
    let want_max = data.iter().fold(Max.identity(), |a, &b| Max.apply(a, b));
    match (algo::min(&view).unwrap(), algo::max(&view).unwrap()) {
        (None, None) => assert_eq!(n, 0, "{what}"),
        (Some(lo), Some(hi)) => {
            assert!(
                same(lo, want_min, None),
                "min of {what}: {lo:?}, want {want_min:?}"
            );
            assert!(
                same(hi, want_max, None),
                "max of {what}: {hi:?}, want {want_max:?}"
            );
        }
        other => panic!("{what}: {other:?}"),
    }
    let first = |want: T| {
        data.iter()
            .position(|&x| same(x, want, None))
            .map(|i| (i, data[i]))
    };
    for (got, want, name) in [
        (
            algo::min_index(&view).unwrap(),
            first(want_min),
            "min_index",
        ),
        (
            algo::max_index(&view).unwrap(),
            first(want_max),
            "max_index",
        ),
    ] {
        match (got, want) {
            (None, None) => {}
            (Some((i, v)), Some((j, w))) => {
                assert_eq!(i, j, "{name} of {what}");
                assert!(same(v, w, None), "{name} of {what}: {v:?}, want {w:?}");
            }
            other => panic!("{name} of {what}: {other:?}"),
        }
    }

    let value = if n > 0 { data[n / 3] } else { T::default() };
    let want_count = data.iter().filter(|&&x| x == value).count();
    assert_eq!(
        algo::count(&view, value).unwrap(),
        want_count,
        "count of {what}"
    );

    // Kept on the device: into a one-element buffer (poisoned), and new.
    let mut out =
        DeviceBuffer::<T>::from_slice(ctx, &[T::random(&mut Rng::new(n as u64), false)]).unwrap();
    algo::reduce_into(&view, Max, &mut out, stream).unwrap();
    assert!(
        same(out.to_vec().unwrap()[0], want_max, None),
        "reduce_into of {what}"
    );
    let kept = algo::reduce_to_buffer(&view, Sum, stream).unwrap();
    assert!(
        same(kept.to_vec().unwrap()[0], want_sum, Some(SumOf::of(data))),
        "reduce_to_buffer of {what}"
    );
    let mut index = DeviceBuffer::<u64>::from_slice(ctx, &[7]).unwrap();
    algo::min_index_into(&view, &mut index, stream).unwrap();
    let want_index = first(want_min).map_or(u64::MAX, |(i, _)| i as u64);
    assert_eq!(
        index.to_vec().unwrap(),
        [want_index],
        "min_index_into of {what}"
    );
    algo::max_index_into(&view, &mut index, stream).unwrap();
    let want_index = first(want_max).map_or(u64::MAX, |(i, _)| i as u64);
    assert_eq!(
        index.to_vec().unwrap(),
        [want_index],
        "max_index_into of {what}"
    );
    algo::count_into(&view, value, &mut index, stream).unwrap();
    assert_eq!(
        index.to_vec().unwrap(),
        [want_count as u64],
        "count_into of {what}"
    );
}

/// The host's scan of `data` with `op` from `start`.
fn host_scan<T: Elem, O: Operator<T>>(data: &[T], op: O, start: T, inclusive: bool) -> Vec<T>
where
    Sum: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let mut acc = start;
    data.iter()
        .map(|&x| {
            let before = acc;
            acc = op.apply(acc, x);
            if inclusive {
                acc
            } else {
                before
            }
        })
        .collect()
}

/// Element `i` of a scan is right: bit for bit, or for an `f32` sum within
/// the bound of any order of its terms.
fn check_scan_output<T: Elem>(
    got: &[T],
    want: &[T],
    data: &[T],
    inclusive: bool,
    is_sum: bool,
    what: &str,
) where
    Sum: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    assert_eq!(got.len(), want.len(), "{what}");
    let mut terms = SumOf::default();
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if inclusive {
            terms = terms.push(data[i]);
        }
        assert!(
            same(g, w, is_sum.then_some(terms)),
            "{what}: element {i} is {g:?}, want {w:?}"
        );
        if !inclusive {
            terms = terms.push(data[i]);
        }
    }
}

/// Runs the scan with `op` (inclusive or not) from `input` into `target`
/// and in place over `in_place`, and returns the host's scan of `data`.
fn scan_both<T: Elem, O: BuiltinOp<T>>(
    (input, mut target, in_place, inclusive): (
        &DeviceBuffer<T>,
        cuda_mem::ViewMut<'_, T>,
        &mut DeviceBuffer<T>,
        bool,
    ),
    op: O,
    data: &[T],
    stream: &Arc<CudaStream>,
) -> Vec<T>
where
    Sum: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    if inclusive {
        algo::inclusive_scan(input, &mut target, op, stream).unwrap();
        algo::inclusive_scan_in_place(in_place, op, stream).unwrap();
        host_scan(data, op, op.identity(), true)
    } else {
        algo::exclusive_scan(input, &mut target, op, stream).unwrap();
        algo::exclusive_scan_in_place(in_place, op, stream).unwrap();
        host_scan(data, op, op.exclusive_start(), false)
    }
}

/// Every scan of `data` against the host: out of place into a poisoned
/// output (a view one element into a larger buffer, whose first and last
/// elements must stay untouched), and in place.
fn check_scans<T: Elem>(
    ctx: &Arc<cuda_mem::CudaContext>,
    stream: &Arc<CudaStream>,
    data: &[T],
    rng: &mut Rng,
) where
    Sum: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let n = data.len();
    let input = DeviceBuffer::from_slice(ctx, data).unwrap();
    for inclusive in [true, false] {
        for op_name in ["sum", "min", "max"] {
            let what = format!(
                "{} {op_name} scan ({}) of {n}",
                T::NAME,
                if inclusive { "inclusive" } else { "exclusive" }
            );
            let poison = T::random(rng, false);
            let mut out = DeviceBuffer::from_slice(ctx, &vec![poison; n + 2]).unwrap();
            let mut in_place = DeviceBuffer::from_slice(ctx, data).unwrap();
            let want = {
                let target = out.slice_mut(1..=n).unwrap();
                let run = (&input, target, &mut in_place, inclusive);
                match op_name {
                    "sum" => scan_both(run, Sum, data, stream),
                    "min" => scan_both(run, Min, data, stream),
                    _ => scan_both(run, Max, data, stream),
                }
            };
            let got = out.to_vec().unwrap();
            assert_eq!(
                got[0].bits(),
                poison.bits(),
                "{what}: wrote before the output"
            );
            assert_eq!(
                got[n + 1].bits(),
                poison.bits(),
                "{what}: wrote after the output"
            );
            check_scan_output(&got[1..=n], &want, data, inclusive, op_name == "sum", &what);
            check_scan_output(
                &in_place.to_vec().unwrap(),
                &want,
                data,
                inclusive,
                op_name == "sum",
                &format!("{what}, in place"),
            );
        }
    }
}

/// `select_flagged`, `unique` and `run_length_encode` of `data` (a view
/// one element into its buffer) against the host, into poisoned outputs
/// whose elements past the count must stay poisoned; and the `_into`
/// forms' counts.
fn check_compactions<T: Elem>(
    ctx: &Arc<cuda_mem::CudaContext>,
    stream: &Arc<CudaStream>,
    data: &[T],
    rng: &mut Rng,
) where
    Sum: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let n = data.len();
    let what = format!("{} x {n}", T::NAME);
    let padded: Vec<T> = std::iter::once(T::default())
        .chain(data.iter().copied())
        .collect();
    let buf = DeviceBuffer::from_slice(ctx, &padded).unwrap();
    let input = buf.slice(1..).unwrap();
    let flags: Vec<u8> = (0..n).map(|_| [0u8, 1, 0, 255][rng.below(4)]).collect();
    let flag_buf = DeviceBuffer::from_slice(ctx, &flags).unwrap();
    let poison = T::random(rng, false);
    let same_bits = |got: &[T], want: &[T]| {
        got.len() == want.len() && got.iter().zip(want).all(|(a, b)| a.bits() == b.bits())
    };

    // select_flagged
    let want: Vec<T> = data
        .iter()
        .zip(&flags)
        .filter(|(_, &f)| f != 0)
        .map(|(&x, _)| x)
        .collect();
    let mut out = DeviceBuffer::from_slice(ctx, &vec![poison; n]).unwrap();
    let got_n = algo::select_flagged(&input, &flag_buf, &mut out, stream).unwrap();
    let got = out.to_vec().unwrap();
    assert_eq!(got_n, want.len(), "select_flagged count of {what}");
    assert!(same_bits(&got[..got_n], &want), "select_flagged of {what}");
    assert!(
        got[got_n..].iter().all(|x| x.bits() == poison.bits()),
        "select_flagged wrote past its count ({what})"
    );
    let mut count = DeviceBuffer::<u64>::from_slice(ctx, &[u64::MAX]).unwrap();
    algo::select_flagged_into(&input, &flag_buf, &mut out, &mut count, stream).unwrap();
    assert_eq!(
        count.to_vec().unwrap(),
        [want.len() as u64],
        "select_flagged_into count of {what}"
    );

    // unique and run_length_encode (`==`: NaN equals nothing).
    let mut heads = Vec::new();
    let mut lengths = Vec::new();
    for (i, &x) in data.iter().enumerate() {
        if i == 0 || x != data[i - 1] {
            heads.push(x);
            lengths.push(1u32);
        } else {
            *lengths.last_mut().unwrap() += 1;
        }
    }
    let mut out = DeviceBuffer::from_slice(ctx, &vec![poison; n]).unwrap();
    let got_n = algo::unique(&input, &mut out, stream).unwrap();
    let got = out.to_vec().unwrap();
    assert_eq!(got_n, heads.len(), "unique count of {what}");
    assert!(same_bits(&got[..got_n], &heads), "unique of {what}");
    assert!(
        got[got_n..].iter().all(|x| x.bits() == poison.bits()),
        "unique wrote past its count ({what})"
    );
    algo::unique_into(&input, &mut out, &mut count, stream).unwrap();
    assert_eq!(
        count.to_vec().unwrap(),
        [heads.len() as u64],
        "unique_into count of {what}"
    );

    let mut values = DeviceBuffer::from_slice(ctx, &vec![poison; n]).unwrap();
    let mut lens = DeviceBuffer::from_slice(ctx, &vec![u32::MAX; n]).unwrap();
    let runs = algo::run_length_encode(&input, &mut values, &mut lens, stream).unwrap();
    let (got_values, got_lens) = (values.to_vec().unwrap(), lens.to_vec().unwrap());
    assert_eq!(runs, heads.len(), "run_length_encode runs of {what}");
    assert!(
        same_bits(&got_values[..runs], &heads),
        "run_length_encode values of {what}"
    );
    assert_eq!(
        got_lens[..runs],
        lengths[..],
        "run_length_encode lengths of {what}"
    );
    assert!(
        got_lens[runs..].iter().all(|&l| l == u32::MAX),
        "run_length_encode wrote past its runs ({what})"
    );
    algo::run_length_encode_into(&input, &mut values, &mut lens, &mut count, stream).unwrap();
    assert_eq!(
        count.to_vec().unwrap(),
        [heads.len() as u64],
        "run_length_encode_into runs of {what}"
    );
}

fn every_size<T: Elem>()
where
    Sum: BuiltinOp<T>,
    Min: BuiltinOp<T>,
    Max: BuiltinOp<T>,
{
    let mut rng = Rng::from_env(&format!("algo_{}", T::NAME));
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for n in sizes(&mut rng) {
        let ties = rng.below(2) == 0;
        let data: Vec<T> = (0..n).map(|_| T::random(&mut rng, ties)).collect();
        check_reductions(&ctx, &stream, &data);
        check_scans(&ctx, &stream, &data, &mut rng);
        check_compactions(&ctx, &stream, &data, &mut rng);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn i32_reductions_and_scans_match_the_host() {
    every_size::<i32>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn u32_reductions_and_scans_match_the_host() {
    every_size::<u32>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn i64_reductions_and_scans_match_the_host() {
    every_size::<i64>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn u64_reductions_and_scans_match_the_host() {
    every_size::<u64>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn f32_reductions_and_scans_match_the_host() {
    every_size::<f32>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn f64_reductions_and_scans_match_the_host() {
    every_size::<f64>();
}

/// 10^7 + 7 elements: thousands of tiles look back, and the reduction's
/// grid is full.
#[test]
#[ignore = "needs a CUDA device"]
fn ten_million_and_seven_elements() {
    let mut rng = Rng::from_env("algo_ten_million");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let data: Vec<u32> = (0..10_000_007)
        .map(|_| u32::random(&mut rng, false))
        .collect();
    check_reductions(&ctx, &stream, &data);
    check_scans(&ctx, &stream, &data, &mut rng);
    let data: Vec<f64> = (0..10_000_007)
        .map(|_| f64::random(&mut rng, true))
        .collect();
    check_reductions(&ctx, &stream, &data);
    check_scans(&ctx, &stream, &data, &mut rng);
}

/// NaN, -0.0 and +0.0 at random places of arrays of many tiles: min and
/// max are IEEE minimum / maximum (NaN wins, -0.0 below +0.0), the arg
/// reductions give the first NaN or the first of the signed zero that wins,
/// and the min / max scans carry the NaN from its first index on.
#[test]
#[ignore = "needs a CUDA device"]
fn floats_order_nan_and_signed_zeros() {
    let mut rng = Rng::from_env("algo_float_order");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for n in [1usize, 2, 3, 4097, 100_003] {
        for case in 0..4 {
            let mut data: Vec<f32> = (0..n)
                .map(|_| f32::random(&mut rng, true).abs() + 1.0)
                .collect();
            let at = |rng: &mut Rng| rng.below(n);
            match case {
                0 => {
                    let (i, j) = (at(&mut rng), at(&mut rng));
                    data[i] = 0.0;
                    data[j] = -0.0;
                }
                1 => {
                    let i = at(&mut rng);
                    data[i] = f32::NAN;
                }
                2 => {
                    data.iter_mut()
                        .for_each(|x| *x = if rng.below(2) == 0 { 0.0 } else { -0.0 });
                }
                _ => {
                    let i = at(&mut rng);
                    data[i] = -f32::NAN;
                    let j = at(&mut rng);
                    data[j] = f32::NEG_INFINITY;
                }
            }
            check_reductions(&ctx, &stream, &data);
            let wide: Vec<f64> = data.iter().map(|&x| f64::from(x)).collect();
            check_reductions(&ctx, &stream, &wide);
            if n < 5000 {
                check_scans(&ctx, &stream, &data, &mut rng);
                check_scans(&ctx, &stream, &wide, &mut rng);
            }
            check_compactions(&ctx, &stream, &data, &mut rng);
            check_compactions(&ctx, &stream, &wide, &mut rng);
        }
    }
}

/// Every buffer kind, through `impl Memory`: the sum, the sort, `unique`
/// and the inclusive scan of the same random data.
#[test]
#[ignore = "needs a CUDA device"]
fn every_buffer_kind() {
    let mut rng = Rng::from_env("algo_every_kind");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    let n = 1 + rng.below(50_000);
    let data: Vec<i64> = (0..n).map(|_| i64::random(&mut rng, false)).collect();
    let want_sum = data.iter().fold(0i64, |a, &b| a.wrapping_add(b));
    let want_scan = host_scan(&data, Sum, 0, true);
    let mut want_sorted = data.clone();
    want_sorted.sort_unstable();
    let mut want_unique = want_sorted.clone();
    want_unique.dedup();
    for_each_kind!(&ctx, &stream, &pool, &data, |buf, name| {
        assert_eq!(algo::sum(&buf).unwrap(), want_sum, "{name}");
        algo::sort(&mut buf, algo::SortOrder::Ascending, &stream).unwrap();
        assert_eq!(buf.to_vec().unwrap(), want_sorted, "sort, {name}");
        let mut runs = DeviceBuffer::<i64>::zeroed(&ctx, n).unwrap();
        let k = algo::unique(&buf, &mut runs, &stream).unwrap();
        assert_eq!(
            runs.to_vec().unwrap()[..k],
            want_unique[..],
            "unique, {name}"
        );
        buf.copy_from_host(&data).unwrap();
        algo::inclusive_scan_in_place(&mut buf, Sum, &stream).unwrap();
        assert_eq!(buf.to_vec().unwrap(), want_scan, "{name}");
    });
}

/// Scans, reductions and sorts of 16 buffers on 8 streams at once, each
/// checked.
#[test]
#[ignore = "needs a CUDA device"]
fn many_streams_at_once() {
    let mut rng = Rng::from_env("algo_many_streams");
    let ctx = gpu();
    let streams: Vec<_> = (0..8).map(|_| ctx.new_stream().unwrap()).collect();
    let inputs: Vec<Vec<u32>> = (0..16)
        .map(|_| {
            let n = 1 + rng.below(400_000);
            (0..n).map(|_| u32::random(&mut rng, false)).collect()
        })
        .collect();
    let mut bufs: Vec<_> = inputs
        .iter()
        .map(|d| DeviceBuffer::from_slice(&ctx, d).unwrap())
        .collect();
    let mut sums: Vec<_> = (0..16)
        .map(|_| DeviceBuffer::<u32>::zeroed(&ctx, 1).unwrap())
        .collect();
    let mut sorted: Vec<_> = inputs
        .iter()
        .map(|d| DeviceBuffer::from_slice(&ctx, d).unwrap())
        .collect();
    for (k, ((buf, sum), other)) in bufs.iter_mut().zip(&mut sums).zip(&mut sorted).enumerate() {
        let s = &streams[k % 8];
        algo::reduce_into(&*buf, Sum, sum, s).unwrap();
        algo::exclusive_scan_in_place(buf, Sum, s).unwrap();
        algo::sort(other, algo::SortOrder::Descending, s).unwrap();
    }
    for (k, data) in inputs.iter().enumerate() {
        let want_sum = data.iter().fold(0u32, |a, &b| a.wrapping_add(b));
        assert_eq!(sums[k].to_vec().unwrap(), [want_sum], "buffer {k}");
        let mut want = data.clone();
        want.sort_unstable_by(|a, b| b.cmp(a));
        assert_eq!(sorted[k].to_vec().unwrap(), want, "sorted buffer {k}");
        assert_eq!(
            bufs[k].to_vec().unwrap(),
            host_scan(data, Sum, 0, false),
            "buffer {k}"
        );
    }
}

/// The one-launch reductions meet in state memory each stream keeps (its
/// counter left at 0 by every launch): reductions of random sizes (one
/// block, a few, the whole device: the kept block grows) on more streams
/// than keep a block (so blocks are let go and made again), sums, counts,
/// arg-maxes and a histogram one after another on each, a graph (a sum and
/// a histogram) launched between them on one of the streams (its launches
/// use memory nodes of their own), and two threads reducing on one stream
/// at once. Every output is poisoned first and every result checked.
#[test]
#[ignore = "needs a CUDA device"]
fn reductions_keep_their_state_per_stream() {
    let mut rng = Rng::from_env("algo_kept_state");
    let ctx = gpu();
    let streams: Vec<_> = (0..21).map(|_| ctx.new_stream().unwrap()).collect();
    let sizes = [
        1usize,
        4097,
        3 + rng.below(50_000),
        (1 << 22) + rng.below(1000),
        31,
    ];
    let inputs: Vec<Vec<u32>> = sizes
        .iter()
        .map(|&n| (0..n).map(|_| u32::random(&mut rng, true)).collect())
        .collect();
    let bufs: Vec<_> = inputs
        .iter()
        .map(|d| DeviceBuffer::from_slice(&ctx, d).unwrap())
        .collect();
    let want_sum = |d: &[u32]| d.iter().fold(0u32, |a, &b| a.wrapping_add(b));
    let want_arg = |d: &[u32]| {
        let top = *d.iter().max().unwrap();
        d.iter().position(|&x| x == top).unwrap() as u64
    };

    let mut graph_input = DeviceBuffer::from_slice(&ctx, &inputs[3]).unwrap();
    let mut graph_total = DeviceBuffer::<u32>::zeroed(&ctx, 1).unwrap();
    let mut graph_bins = DeviceBuffer::<u32>::zeroed(&ctx, 61).unwrap();
    let mut graph = Graph::capture(
        &streams[5],
        (&mut graph_input, &mut graph_total, &mut graph_bins),
        |s, (input, mut total, mut bins)| {
            algo::reduce_into(&input, Sum, &mut total, s)?;
            algo::histogram_even(&input, 0..61u32, &mut bins, s)
        },
    )
    .unwrap();

    for round in 0..3 {
        let mut outs = Vec::new();
        for (k, s) in streams.iter().enumerate() {
            let which = (k + round) % sizes.len();
            let poison = rng.next_u64();
            let mut sum = DeviceBuffer::from_slice(&ctx, &[poison as u32]).unwrap();
            let mut count = DeviceBuffer::from_slice(&ctx, &[poison]).unwrap();
            let mut arg = DeviceBuffer::from_slice(&ctx, &[poison]).unwrap();
            let value = inputs[which][rng.below(sizes[which])];
            algo::reduce_into(&bufs[which], Sum, &mut sum, s).unwrap();
            algo::count_into(&bufs[which], value, &mut count, s).unwrap();
            algo::max_index_into(&bufs[which], &mut arg, s).unwrap();
            let mut bins = DeviceBuffer::from_slice(&ctx, &[poison; 37]).unwrap();
            algo::histogram_even(&bufs[which], 0..61u32, &mut bins, s).unwrap();
            if k == 5 {
                let (_, mut total, mut bins) = graph.buffers();
                total.fill(poison as u32).unwrap();
                bins.fill(poison as u32).unwrap();
                graph.launch(s).unwrap();
            }
            outs.push((which, value, sum, count, arg, bins));
        }
        for (k, (which, value, sum, count, arg, bins)) in outs.into_iter().enumerate() {
            let d = &inputs[which];
            let what = format!("round {round}, stream {k}, {} elements", d.len());
            assert_eq!(sum.to_vec().unwrap(), [want_sum(d)], "sum, {what}");
            let want_count = d.iter().filter(|&&x| x == value).count() as u64;
            assert_eq!(count.to_vec().unwrap(), [want_count], "count, {what}");
            assert_eq!(arg.to_vec().unwrap(), [want_arg(d)], "max_index, {what}");
            let mut want_bins = [0u64; 37];
            d.iter().for_each(|&x| want_bins[x as usize * 37 / 61] += 1);
            assert_eq!(bins.to_vec().unwrap(), want_bins, "histogram, {what}");
        }
        let (_, total, bins) = graph.buffers();
        assert_eq!(
            total.to_vec().unwrap(),
            [want_sum(&inputs[3])],
            "graph, round {round}"
        );
        let mut want_bins = vec![0u32; 61];
        inputs[3].iter().for_each(|&x| want_bins[x as usize] += 1);
        assert_eq!(
            bins.to_vec().unwrap(),
            want_bins,
            "graph histogram, round {round}"
        );
    }

    // Two threads on one stream: their launches interleave on it.
    let shared = ctx.new_stream().unwrap();
    std::thread::scope(|scope| {
        for t in 0..2usize {
            let (ctx, shared, bufs, inputs) = (&ctx, &shared, &bufs, &inputs);
            scope.spawn(move || {
                let mut outs = Vec::new();
                for i in 0..40 {
                    let which = (i * 3 + t) % bufs.len();
                    let mut sum = DeviceBuffer::from_slice(ctx, &[0x5a5a_5a5au32]).unwrap();
                    algo::reduce_into(&bufs[which], Sum, &mut sum, shared).unwrap();
                    outs.push((which, sum));
                }
                for (i, (which, sum)) in outs.into_iter().enumerate() {
                    let want = inputs[which].iter().fold(0u32, |a, &b| a.wrapping_add(b));
                    assert_eq!(sum.to_vec().unwrap(), [want], "thread {t}, call {i}");
                }
            });
        }
    });
}

/// A stream that ran reductions and that its caller dropped is let go by
/// the next reduction in the context, with the state memory it kept (it
/// used to stay held until 16 other streams had run reductions, and its
/// block until the process exited: compute-sanitizer's leak check
/// reported it). Its results are right, and so is the next stream's; and
/// the reduction that lets streams go leaves the thread's current context
/// as one that does not (cudarc's stream drop makes its context current).
#[test]
#[ignore = "needs a CUDA device"]
fn a_dropped_stream_lets_its_reduction_state_go() {
    use cuda_mem_tests::{with_current, Current};
    let mut rng = Rng::from_env("algo_dropped_stream");
    let ctx = gpu();
    let n = 1 + rng.below(100_000);
    let data: Vec<u32> = (0..n).map(|_| u32::random(&mut rng, false)).collect();
    let want = data.iter().fold(0u32, |a, &b| a.wrapping_add(b));
    let input = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let poison = rng.next_u64() as u32 | 1;
    let next = ctx.new_stream().unwrap();
    // A sum on `next` with no context current (nothing else queued on the
    // buffers, so no ordering makes one current); whether it left none.
    let sum_on_next = |what: &str| {
        let mut sum = DeviceBuffer::from_slice(&ctx, &[poison]).unwrap();
        sum.synchronize().unwrap();
        input.synchronize().unwrap();
        let (done, left_none) = with_current(Current::Nothing, || {
            algo::reduce_into(&input, Sum, &mut sum, &next)
        });
        done.unwrap();
        assert_eq!(sum.to_vec().unwrap(), [want], "{what}");
        left_none
    };
    // The first lets go of what earlier tests dropped; the second is what
    // a reduction that lets nothing go leaves current.
    sum_on_next("the first sum on the next stream");
    let control = sum_on_next("the second sum on the next stream");
    let mut weaks = Vec::new();
    for k in 0..1 + rng.below(4) {
        let stream = ctx.new_stream().unwrap();
        let mut sum = DeviceBuffer::from_slice(&ctx, &[poison]).unwrap();
        algo::reduce_into(&input, Sum, &mut sum, &stream).unwrap();
        assert_eq!(sum.to_vec().unwrap(), [want], "stream {k}");
        // The sum's ledger lets the stream go with the buffer; the input's
        // with a host wait.
        drop(sum);
        input.synchronize().unwrap();
        weaks.push(Arc::downgrade(&stream));
    }
    let left_none = sum_on_next("the sum that lets the streams go");
    assert_eq!(
        left_none, control,
        "a reduction that let dropped streams go changed the thread's current context"
    );
    for (k, weak) in weaks.iter().enumerate() {
        assert!(
            weak.upgrade().is_none(),
            "stream {k} of {}: still held after its caller dropped it and another stream ran a \
             reduction",
            weaks.len()
        );
    }
}

/// Recorded into a graph (the temporaries are memory nodes) and replayed
/// with new inputs: every launch computes from the input of its time.
#[test]
#[ignore = "needs a CUDA device"]
fn inside_a_graph() {
    let mut rng = Rng::from_env("algo_graph");
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let n = 1 + rng.below(200_000);
    let mut input = DeviceBuffer::<u64>::zeroed(&ctx, n).unwrap();
    let mut scanned = DeviceBuffer::<u64>::zeroed(&ctx, n).unwrap();
    let mut total = DeviceBuffer::<u64>::zeroed(&ctx, 1).unwrap();
    let mut graph = Graph::capture(
        &s,
        (&mut input, &mut scanned, &mut total),
        |s, (input, mut scanned, mut total)| {
            algo::inclusive_scan(&input, &mut scanned, Max, s)?;
            algo::reduce_into(&input, Sum, &mut total, s)
        },
    )
    .unwrap();
    for round in 0..3 {
        let data: Vec<u64> = (0..n).map(|_| u64::random(&mut rng, false)).collect();
        let (mut input, mut scanned, mut total) = graph.buffers();
        input.copy_from_host(&data).unwrap();
        scanned.fill(0x5a5a).unwrap();
        total.fill(0x5a5a).unwrap();
        graph.launch(&s).unwrap();
        let (_, scanned, total) = graph.buffers();
        assert_eq!(
            scanned.to_vec().unwrap(),
            host_scan(&data, Max, 0, true),
            "round {round}"
        );
        let want = data.iter().fold(0u64, |a, &b| a.wrapping_add(b));
        assert_eq!(total.to_vec().unwrap(), [want], "round {round}");
    }
}

/// A compaction recorded into a graph (`unique_into`: the count stays on
/// the device) and replayed with new inputs; the waiting form is refused
/// inside the capture, which goes on.
#[test]
#[ignore = "needs a CUDA device"]
fn compactions_inside_a_graph() {
    let mut rng = Rng::from_env("algo_graph_compaction");
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let n = 1 + rng.below(100_000);
    let mut input = DeviceBuffer::<i32>::zeroed(&ctx, n).unwrap();
    let mut out = DeviceBuffer::<i32>::zeroed(&ctx, n).unwrap();
    let mut count = DeviceBuffer::<u64>::zeroed(&ctx, 1).unwrap();
    let mut graph = Graph::capture(
        &s,
        (&mut input, &mut out, &mut count),
        |s, (input, mut out, mut count)| {
            let refused = algo::unique(&input, &mut out, s);
            assert!(
                matches!(refused, Err(Error::UnsupportedStream(m)) if m.contains("_into")),
                "{refused:?}"
            );
            algo::unique_into(&input, &mut out, &mut count, s)
        },
    )
    .unwrap();
    for round in 0..3 {
        let data: Vec<i32> = (0..n).map(|_| (rng.next_u64() % 3) as i32).collect();
        let (mut input, _, _) = graph.buffers();
        input.copy_from_host(&data).unwrap();
        graph.launch(&s).unwrap();
        let mut want = data.clone();
        want.dedup();
        let (_, out, count) = graph.buffers();
        assert_eq!(
            count.to_vec().unwrap(),
            [want.len() as u64],
            "round {round}"
        );
        assert_eq!(
            out.to_vec().unwrap()[..want.len()],
            want[..],
            "round {round}"
        );
    }
}

/// What the algorithms refuse, and why.
#[test]
#[ignore = "needs a CUDA device"]
fn refusals_say_what_to_do() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let padded = PitchedBuffer::<u32>::new(&ctx, 3, 4).unwrap();
    if padded.pitch() > 3 * 4 {
        let e = expect_err(
            algo::sum(&padded),
            &["contiguous", "packed buffer"],
            "a padded 2D buffer",
        );
        assert!(
            matches!(e, Error::InvalidArgument(m) if m.contains("packed buffer")),
            "{e}"
        );
    }
    let x = DeviceBuffer::<u32>::zeroed(&ctx, 5).unwrap();
    let mut wrong = DeviceBuffer::<u32>::zeroed(&ctx, 4).unwrap();
    let e = expect_err(
        algo::inclusive_scan(&x, &mut wrong, Sum, &s),
        &["length"],
        "a shorter output",
    );
    assert_eq!(
        e,
        Error::LengthMismatch {
            expected: 4,
            actual: 5
        }
    );
    let mut two = DeviceBuffer::<u32>::zeroed(&ctx, 2).unwrap();
    let e = expect_err(
        algo::reduce_into(&x, Sum, &mut two, &s),
        &["length"],
        "a two-element output",
    );
    assert_eq!(
        e,
        Error::LengthMismatch {
            expected: 1,
            actual: 2
        }
    );
    // Empty inputs: the identity, `None`, and no launch needed.
    let empty = DeviceBuffer::<f32>::zeroed(&ctx, 0).unwrap();
    assert!(algo::sum(&empty).unwrap().to_bits() == (-0.0f32).to_bits());
    assert_eq!(algo::min(&empty).unwrap(), None);
    assert_eq!(algo::max_index(&empty).unwrap(), None);
    assert_eq!(algo::count(&empty, 1.0).unwrap(), 0);
    // Compactions: outputs shorter than the input, flags of another length.
    let flags = DeviceBuffer::<u8>::zeroed(&ctx, 4).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(&ctx, 5).unwrap();
    let e = expect_err(
        algo::select_flagged(&x, &flags, &mut out, &s),
        &["length"],
        "four flags for five elements",
    );
    assert_eq!(
        e,
        Error::LengthMismatch {
            expected: 5,
            actual: 4
        }
    );
    let mut short = DeviceBuffer::<u32>::zeroed(&ctx, 4).unwrap();
    expect_err(
        algo::unique(&x, &mut short, &s),
        &["length"],
        "a short output",
    );
    let mut lengths = DeviceBuffer::<u32>::zeroed(&ctx, 3).unwrap();
    expect_err(
        algo::run_length_encode(&x, &mut out, &mut lengths, &s),
        &["length"],
        "short lengths",
    );
    let empty_u = DeviceBuffer::<u32>::zeroed(&ctx, 0).unwrap();
    let mut none = DeviceBuffer::<u32>::zeroed(&ctx, 0).unwrap();
    assert_eq!(algo::unique(&empty_u, &mut none, &s).unwrap(), 0);
}

/// What the sort tests need of a key type.
trait Key: algo::SortKey + std::fmt::Debug + Send + Sync + 'static {
    /// A random key; with `ties`, from a small set.
    fn random_key(rng: &mut Rng, ties: bool) -> Self;
    /// The sort's order (floats: `total_cmp`).
    fn order(a: &Self, b: &Self) -> std::cmp::Ordering;
    fn key_bits(self) -> u64;
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            fn random_key(rng: &mut Rng, ties: bool) -> Self {
                if ties { (rng.next_u64() % 13) as $t } else { rng.value() }
            }
            fn order(a: &Self, b: &Self) -> std::cmp::Ordering { a.cmp(b) }
            fn key_bits(self) -> u64 { self as u64 }
        }
    )*};
}
int_key!(u8, i8, u16, i16, u32, i32, u64, i64);

macro_rules! float_key {
    ($($t:ty, $bits:ty);*) => {$(
        impl Key for $t {
            fn random_key(rng: &mut Rng, ties: bool) -> Self {
                match rng.below(if ties { 8 } else { 40 }) {
                    0 => <$t>::NAN,
                    1 => -<$t>::NAN,
                    2 => 0.0,
                    3 => -0.0,
                    4 => <$t>::INFINITY,
                    5 => <$t>::NEG_INFINITY,
                    _ if ties => (rng.below(5) as $t) - 2.0,
                    // Any bits: subnormals, NaNs with payloads, everything.
                    _ => <$t>::from_bits(rng.value::<$bits>()),
                }
            }
            fn order(a: &Self, b: &Self) -> std::cmp::Ordering { a.total_cmp(b) }
            fn key_bits(self) -> u64 { self.to_bits() as u64 }
        }
    )*};
}
float_key!(f32, u32; f64, u64);

/// Sorts `keys` (and their indices as values) on the GPU, in a view one
/// element into a poisoned buffer, and compares with the host's stable
/// sort: keys bit for bit, values in the stable order, the poison intact.
fn check_sort<K: Key>(
    ctx: &Arc<cuda_mem::CudaContext>,
    stream: &Arc<CudaStream>,
    keys: &[K],
    rng: &mut Rng,
) {
    use algo::SortOrder;
    let n = keys.len();
    let poison = K::random_key(rng, false);
    for order in [SortOrder::Ascending, SortOrder::Descending] {
        let what = format!("{} x {n} {order:?}", K::NAME);
        let mut want: Vec<(K, u32)> = keys.iter().copied().zip(0..).collect();
        match order {
            SortOrder::Ascending => want.sort_by(|a, b| K::order(&a.0, &b.0)),
            SortOrder::Descending => want.sort_by(|a, b| K::order(&b.0, &a.0)),
        }
        let bits = |v: &[K]| v.iter().map(|&k| k.key_bits()).collect::<Vec<_>>();
        let want_keys: Vec<K> = want.iter().map(|p| p.0).collect();

        // Keys alone, in a view.
        let mut host = vec![poison; n + 2];
        host[1..=n].copy_from_slice(keys);
        let mut buf = DeviceBuffer::from_slice(ctx, &host).unwrap();
        algo::sort(&mut buf.slice_mut(1..=n).unwrap(), order, stream).unwrap();
        let got = buf.to_vec().unwrap();
        assert_eq!(bits(&got[1..=n]), bits(&want_keys), "sort of {what}");
        assert_eq!(
            bits(&[got[0], got[n + 1]]),
            bits(&[poison, poison]),
            "sort of {what} wrote outside"
        );

        // Pairs: random 4-byte values (carried through the passes), in a
        // view one element in, and 12-byte ones (moved by the sort's
        // permutation), each stable.
        let mut k = DeviceBuffer::from_slice(ctx, keys).unwrap();
        let values: Vec<u32> = rng.values(n);
        let value_poison: [u32; 1] = rng.values(1).try_into().unwrap();
        let mut host_values = vec![value_poison[0]; n + 2];
        host_values[1..=n].copy_from_slice(&values);
        let mut v = DeviceBuffer::from_slice(ctx, &host_values).unwrap();
        algo::sort_pairs(&mut k, &mut v.slice_mut(1..=n).unwrap(), order, stream).unwrap();
        assert_eq!(
            bits(&k.to_vec().unwrap()),
            bits(&want_keys),
            "sort_pairs keys of {what}"
        );
        let want_values: Vec<u32> = want.iter().map(|p| values[p.1 as usize]).collect();
        let got_values = v.to_vec().unwrap();
        assert_eq!(
            got_values[1..=n],
            want_values,
            "sort_pairs values (stability) of {what}"
        );
        assert_eq!(
            [got_values[0], got_values[n + 1]],
            [value_poison[0]; 2],
            "sort_pairs of {what} wrote outside the values"
        );
        let wide: Vec<[u32; 3]> = (0..n as u32).map(|i| [i, !i, i.rotate_left(7)]).collect();
        let mut k = DeviceBuffer::from_slice(ctx, keys).unwrap();
        let mut w = DeviceBuffer::from_slice(ctx, &wide).unwrap();
        algo::sort_pairs(&mut k, &mut w, order, stream).unwrap();
        let want_wide: Vec<[u32; 3]> = want.iter().map(|p| wide[p.1 as usize]).collect();
        assert_eq!(
            w.to_vec().unwrap(),
            want_wide,
            "sort_pairs of 12-byte values, {what}"
        );
    }
}

fn every_sort_size<K: Key>() {
    let mut rng = Rng::from_env(&format!("algo_sort_{}", K::NAME));
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for n in sizes(&mut rng) {
        sort_random::<K>(&ctx, &stream, n, &mut rng);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn sorts_of_8_and_16_bit_keys_match_the_host() {
    every_sort_size::<u8>();
    every_sort_size::<i8>();
    every_sort_size::<u16>();
    every_sort_size::<i16>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn sorts_of_32_bit_keys_match_the_host() {
    every_sort_size::<u32>();
    every_sort_size::<i32>();
    every_sort_size::<f32>();
}

#[test]
#[ignore = "needs a CUDA device"]
fn sorts_of_64_bit_keys_match_the_host() {
    every_sort_size::<u64>();
    every_sort_size::<i64>();
    every_sort_size::<f64>();
}

/// Sorts keys of type `K` of `n` random keys, with many ties or none.
fn sort_random<K: Key>(
    ctx: &Arc<cuda_mem::CudaContext>,
    stream: &Arc<CudaStream>,
    n: usize,
    rng: &mut Rng,
) {
    let ties = rng.below(2) == 0;
    let keys: Vec<K> = (0..n).map(|_| K::random_key(rng, ties)).collect();
    check_sort(ctx, stream, &keys, rng);
}

/// The passes with values over keys of up to 4 bytes, each forced in turn
/// (`__force_pairs_pass`: the plain 384 x 22, the wide 384 x 23 of 4-byte
/// keys and the narrow 256 x 16, which devices with less shared memory an SM
/// than the H200 take), and the device's own choice: keys and values of
/// every small key type at the edges of each pass's tile (one key short
/// of a tile, a tile, one key past it) and over several tiles and a
/// partial one.
#[test]
#[ignore = "needs a CUDA device"]
fn pairs_of_small_keys_sort_in_every_pass() {
    let mut rng = Rng::from_env("pairs_of_small_keys_sort_in_every_pass");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for pass in ["auto", "plain", "wide", "narrow"] {
        algo::__force_pairs_pass(pass);
        // The tiles of the pass each key size takes: the wide pass is of
        // 4-byte keys alone (others keep the device's choice), and on the
        // H200 the device's choice is the wide pass for 4-byte keys and
        // the plain one for the others.
        let tile = |size: usize| match pass {
            "narrow" => 256 * 16,
            "plain" => 384 * 22,
            _ if size == 4 => 384 * 23,
            _ => 384 * 22,
        };
        let mut sizes = |size: usize| {
            let t = tile(size);
            [t - 1, t, t + 1, 3 * t + rng.below(t)]
        };
        let (small, word) = (sizes(1), sizes(4));
        for n in small {
            sort_random::<u8>(&ctx, &stream, n, &mut rng);
            sort_random::<i8>(&ctx, &stream, n, &mut rng);
            sort_random::<u16>(&ctx, &stream, n, &mut rng);
            sort_random::<i16>(&ctx, &stream, n, &mut rng);
        }
        for n in word {
            sort_random::<u32>(&ctx, &stream, n, &mut rng);
            sort_random::<i32>(&ctx, &stream, n, &mut rng);
            sort_random::<f32>(&ctx, &stream, n, &mut rng);
        }
    }
    algo::__force_pairs_pass("auto");
}

/// 10^7 + 7 keys and pairs: many blocks, many tiles per block.
#[test]
#[ignore = "needs a CUDA device"]
fn sorts_of_ten_million_and_seven() {
    let mut rng = Rng::from_env("algo_sort_ten_million");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let keys: Vec<u32> = (0..10_000_007)
        .map(|_| u32::random_key(&mut rng, false))
        .collect();
    check_sort(&ctx, &stream, &keys, &mut rng);
    let keys: Vec<f32> = (0..10_000_007)
        .map(|_| f32::random_key(&mut rng, true))
        .collect();
    check_sort(&ctx, &stream, &keys, &mut rng);
}

/// A sort and a stable sort of pairs recorded into a graph and replayed
/// with new keys.
#[test]
#[ignore = "needs a CUDA device"]
fn sorts_inside_a_graph() {
    let mut rng = Rng::from_env("algo_sort_graph");
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let n = 1 + rng.below(100_000);
    let mut keys = DeviceBuffer::<i64>::zeroed(&ctx, n).unwrap();
    let mut values = DeviceBuffer::<u32>::zeroed(&ctx, n).unwrap();
    let mut graph = Graph::capture(&s, (&mut keys, &mut values), |s, (mut keys, mut values)| {
        algo::sort_pairs(&mut keys, &mut values, algo::SortOrder::Descending, s)
    })
    .unwrap();
    for round in 0..3 {
        let data: Vec<i64> = (0..n).map(|_| i64::random_key(&mut rng, true)).collect();
        let (mut keys, mut values) = graph.buffers();
        keys.copy_from_host(&data).unwrap();
        values
            .copy_from_host(&(0..n as u32).collect::<Vec<_>>())
            .unwrap();
        graph.launch(&s).unwrap();
        let mut want: Vec<(i64, u32)> = data.iter().copied().zip(0..).collect();
        want.sort_by_key(|p| std::cmp::Reverse(p.0));
        let (keys, values) = graph.buffers();
        let got: Vec<(i64, u32)> = keys
            .to_vec()
            .unwrap()
            .into_iter()
            .zip(values.to_vec().unwrap())
            .collect();
        assert_eq!(got, want, "round {round}");
    }
}

/// `histogram_even` and `histogram_range` of random samples into `u32` and
/// `u64` counters (poisoned first: overwritten), against the host applying
/// the same bin rules (`device::wide::{even_bin, range_bin}`), with bins in
/// shared memory (up to 4096) and past it, and a view one sample in.
fn check_histograms<K>(ctx: &Arc<cuda_mem::CudaContext>, stream: &Arc<CudaStream>, rng: &mut Rng)
where
    K: Key + cuda_mem::device::wide::HistogramSample,
{
    use cuda_mem::device::wide::{even_bin, range_bin};
    for &n in &[0usize, 1, 31, 4097, 100_003] {
        let samples: Vec<K> = (0..n + 1)
            .map(|_| {
                let ties = rng.below(2) == 0;
                K::random_key(rng, ties)
            })
            .collect();
        let buf = DeviceBuffer::from_slice(ctx, &samples).unwrap();
        let view = buf.slice(1..).unwrap();
        let data = &samples[1..];
        for bins in [1usize, 7, 256, 4096, 4097, 10_000] {
            let what = format!("{} x {n}, {bins} bins", K::NAME);
            // Levels: sorted random samples (ties and all); the even range
            // from two of them.
            let mut levels: Vec<K> = (0..=bins).map(|_| K::random_key(rng, false)).collect();
            levels.sort_by(K::order);
            let (lower, upper) = (levels[0], levels[bins]);
            let mut want_even = vec![0u64; bins];
            let mut want_range = vec![0u64; bins];
            for &x in data {
                if let Some(b) = even_bin(x, lower, upper, false, bins as u32) {
                    want_even[b as usize] += 1;
                }
                if let Some(b) = range_bin(x, bins + 1, |k| levels[k]) {
                    want_range[b as usize] += 1;
                }
            }
            let edges = DeviceBuffer::from_slice(ctx, &levels).unwrap();
            let mut c32 = DeviceBuffer::from_slice(ctx, &vec![0xdead_beef_u32; bins]).unwrap();
            let mut c64 = DeviceBuffer::from_slice(ctx, &vec![u64::MAX; bins]).unwrap();
            if lower.partial_cmp(&upper) == Some(std::cmp::Ordering::Less) {
                algo::histogram_even(&view, lower..upper, &mut c32, stream).unwrap();
                let got: Vec<u64> = c32.to_vec().unwrap().into_iter().map(u64::from).collect();
                assert_eq!(got, want_even, "histogram_even (u32) of {what}");
                algo::histogram_even(&view, lower..upper, &mut c64, stream).unwrap();
                assert_eq!(
                    c64.to_vec().unwrap(),
                    want_even,
                    "histogram_even (u64) of {what}"
                );
                // The closed range: `upper` itself in the last bin.
                let mut want_closed = vec![0u64; bins];
                for &x in data {
                    if let Some(b) = even_bin(x, lower, upper, true, bins as u32) {
                        want_closed[b as usize] += 1;
                    }
                }
                algo::histogram_even(&view, lower..=upper, &mut c64, stream).unwrap();
                assert_eq!(
                    c64.to_vec().unwrap(),
                    want_closed,
                    "histogram_even (closed) of {what}"
                );
            } else {
                expect_err(
                    algo::histogram_even(&view, lower..upper, &mut c32, stream),
                    &["lower < upper"],
                    "bounds out of order",
                );
            }
            algo::histogram_range(&view, &edges, &mut c64, stream).unwrap();
            assert_eq!(
                c64.to_vec().unwrap(),
                want_range,
                "histogram_range (u64) of {what}"
            );
            algo::histogram_range(&view, &edges, &mut c32, stream).unwrap();
            let got: Vec<u64> = c32.to_vec().unwrap().into_iter().map(u64::from).collect();
            assert_eq!(got, want_range, "histogram_range (u32) of {what}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn histograms_match_the_host_for_every_sample_type() {
    let mut rng = Rng::from_env("algo_histograms");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    check_histograms::<u8>(&ctx, &stream, &mut rng);
    check_histograms::<i8>(&ctx, &stream, &mut rng);
    check_histograms::<u16>(&ctx, &stream, &mut rng);
    check_histograms::<i16>(&ctx, &stream, &mut rng);
    check_histograms::<u32>(&ctx, &stream, &mut rng);
    check_histograms::<i32>(&ctx, &stream, &mut rng);
    check_histograms::<u64>(&ctx, &stream, &mut rng);
    check_histograms::<i64>(&ctx, &stream, &mut rng);
    check_histograms::<f32>(&ctx, &stream, &mut rng);
    check_histograms::<f64>(&ctx, &stream, &mut rng);
}

/// `segmented_sort` and `segmented_sort_pairs` over random segments (empty
/// ones among them, one segment, many small ones) against the host's
/// stable sort of each segment.
fn check_segmented<K: Key>(
    ctx: &Arc<cuda_mem::CudaContext>,
    stream: &Arc<CudaStream>,
    rng: &mut Rng,
) {
    use algo::SortOrder;
    for &n in &[0usize, 1, 2, 100, 4099, 100_003] {
        for shape in 0..3 {
            let mut offsets = vec![0u32];
            while (*offsets.last().unwrap() as usize) < n {
                let step = match shape {
                    0 => n,
                    1 => rng.below(5),
                    _ => rng.below(3000),
                };
                offsets.push((*offsets.last().unwrap() as usize + step).min(n) as u32);
            }
            if n == 0 {
                offsets.push(0);
            }
            let keys: Vec<K> = (0..n).map(|_| K::random_key(rng, true)).collect();
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                let what = format!(
                    "{} x {n}, {} segments, {order:?}",
                    K::NAME,
                    offsets.len() - 1
                );
                let mut want: Vec<(K, u32)> = keys.iter().copied().zip(0..).collect();
                for w in offsets.windows(2) {
                    let seg = &mut want[w[0] as usize..w[1] as usize];
                    match order {
                        SortOrder::Ascending => seg.sort_by(|a, b| K::order(&a.0, &b.0)),
                        SortOrder::Descending => seg.sort_by(|a, b| K::order(&b.0, &a.0)),
                    }
                }
                let bits = |v: &[K]| v.iter().map(|&k| k.key_bits()).collect::<Vec<_>>();
                let want_keys: Vec<K> = want.iter().map(|p| p.0).collect();
                let offs = DeviceBuffer::from_slice(ctx, &offsets).unwrap();
                let mut k = DeviceBuffer::from_slice(ctx, &keys).unwrap();
                algo::segmented_sort(&mut k, &offs, order, stream).unwrap();
                assert_eq!(
                    bits(&k.to_vec().unwrap()),
                    bits(&want_keys),
                    "segmented_sort of {what}"
                );
                let mut k = DeviceBuffer::from_slice(ctx, &keys).unwrap();
                let mut v =
                    DeviceBuffer::from_slice(ctx, &(0..n as u32).collect::<Vec<_>>()).unwrap();
                algo::segmented_sort_pairs(&mut k, &mut v, &offs, order, stream).unwrap();
                assert_eq!(
                    bits(&k.to_vec().unwrap()),
                    bits(&want_keys),
                    "segmented_sort_pairs keys of {what}"
                );
                let want_values: Vec<u32> = want.iter().map(|p| p.1).collect();
                assert_eq!(
                    v.to_vec().unwrap(),
                    want_values,
                    "segmented_sort_pairs values of {what}"
                );
                // Values of 12 bytes, which follow the sort's permutation
                // (4-byte ones ride along with their keys).
                let wide = |i: u32| [i, !i, i.wrapping_mul(0x9e37_79b9)];
                let mut k = DeviceBuffer::from_slice(ctx, &keys).unwrap();
                let mut v =
                    DeviceBuffer::from_slice(ctx, &(0..n as u32).map(wide).collect::<Vec<_>>())
                        .unwrap();
                algo::segmented_sort_pairs(&mut k, &mut v, &offs, order, stream).unwrap();
                assert_eq!(
                    v.to_vec().unwrap(),
                    want_values.iter().map(|&i| wide(i)).collect::<Vec<_>>(),
                    "segmented_sort_pairs 12-byte values of {what}"
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn segmented_sorts_match_the_host() {
    let mut rng = Rng::from_env("algo_segmented");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    check_segmented::<u32>(&ctx, &stream, &mut rng);
    check_segmented::<i16>(&ctx, &stream, &mut rng);
    check_segmented::<f64>(&ctx, &stream, &mut rng);
}
