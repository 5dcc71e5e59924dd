//! Differential random testing: random sequences of operations over every
//! buffer kind run on the GPU and, side by side, on a plain host model (the
//! bytes of every buffer); every byte read back at every check and sync point
//! must match. On a divergence the test prints the seed and the operation,
//! then shrinks: it replays prefixes on fresh buffers to find the shortest one
//! after which the contents differ, drops the operations the failure does not
//! need, and prints what is left.
//!
//! The engine (generator, model, runner, shrinker) is
//! `cuda_mem_tests::differential`; this file holds the GPU backend and the
//! tests. The CPU tests (not ignored) check the generator's determinism and
//! coverage and that the shrinker finds a fault injected into a fake backend.
//!
//! Replay: `CUDA_MEM_SEED=<seed> CUDA_MEM_DIFF_OPS=<n>` (default 10,000).
//!
//! Under compute-sanitizer (detected, or `CUDA_MEM_SANITIZER=1`) fresh device
//! and pool allocations are memset before use, so that reading memory the
//! model treats as undefined does not count as an uninitialised read
//! (initcheck); the model still treats it as undefined.

use cuda_mem::algo;
use cuda_mem::device::ops::Sum;
use cuda_mem::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_mem::{
    Advice, AsView, Buffer, CudaContext, CudaStream, DeviceBuffer, DeviceCopy, DeviceVec,
    HostAccessible, Location, MemPool, PinnedBuffer, PitchedBuffer, PoolBuffer, Result,
    UnifiedBuffer, View, ViewMut,
};
use cuda_mem_tests::differential::{
    self as diff, Backend, Elem, FakeBackend, Init, Kind, Op, Overtake, Read, ReadWay, Strm, Target,
};
use cuda_mem_tests::{env_count, gpu, seed_from_env, under_sanitizer, Rng};

#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
struct E12 {
    a: u32,
    b: f32,
    c: [u8; 4],
}

#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
struct E100 {
    a: [u32; 25],
}

#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
struct E300 {
    a: [u16; 150],
}

const _: () =
    assert!(size_of::<E12>() == 12 && size_of::<E100>() == 100 && size_of::<E300>() == 300);

/// Values of `T` from tightly packed bytes.
fn typed<T: DeviceCopy>(bytes: &[u8]) -> Vec<T> {
    assert_eq!(bytes.len() % size_of::<T>(), 0);
    bytes
        .chunks_exact(size_of::<T>())
        // SAFETY: `T: DeviceCopy`, so every bit pattern is a valid `T`; the chunk
        // holds `size_of::<T>()` bytes and `read_unaligned` copes with its alignment.
        .map(|c| unsafe { c.as_ptr().cast::<T>().read_unaligned() })
        .collect()
}

/// One buffer of any kind.
enum AnyBuf<T> {
    Device(DeviceBuffer<T>),
    Pinned(PinnedBuffer<T>),
    Unified(UnifiedBuffer<T>),
    Pool(PoolBuffer<T>),
    Pitched(PitchedBuffer<T>),
    Vec(DeviceVec<T>),
}

/// `$one_d` with `$b` bound to the buffer of a 1D kind, or `$pitched` with
/// `$p` bound to the pitched buffer (the same method names, different types).
macro_rules! by_kind {
    ($buf:expr, $b:ident => $one_d:expr, $p:ident => $pitched:expr) => {
        match $buf {
            AnyBuf::Device($b) => $one_d,
            AnyBuf::Pinned($b) => $one_d,
            AnyBuf::Unified($b) => $one_d,
            AnyBuf::Pool($b) => $one_d,
            AnyBuf::Vec($b) => $one_d,
            AnyBuf::Pitched($p) => $pitched,
        }
    };
}

impl<T: DeviceCopy> AnyBuf<T> {
    fn len(&self) -> usize {
        by_kind!(self, b => b.len(), p => p.len())
    }

    /// Elements of `t`, as indices of the tightly packed contents.
    fn elements(&self, t: Target) -> (usize, usize) {
        match (self, t) {
            (_, Target::Whole) => (0, self.len()),
            (AnyBuf::Pitched(p), Target::Row(r, a, b)) => (r * p.width() + a, r * p.width() + b),
            (_, Target::Range(a, b)) => (a, b),
            (_, t) => unreachable!("{t:?}"),
        }
    }
}

/// A buffer with its element type.
enum Slot {
    U8(AnyBuf<u8>),
    U32(AnyBuf<u32>),
    E12(AnyBuf<E12>),
    E100(AnyBuf<E100>),
    E300(AnyBuf<E300>),
}

/// `$body` with `$b` bound to the typed buffer of a slot.
macro_rules! typed_slot {
    ($slot:expr, $b:ident => $body:expr) => {
        match $slot {
            Slot::U8($b) => $body,
            Slot::U32($b) => $body,
            Slot::E12($b) => $body,
            Slot::E100($b) => $body,
            Slot::E300($b) => $body,
        }
    };
}

/// `$body` with `$a` and `$b` bound to the typed buffers of two slots of one
/// element type (the runner only passes valid operations).
macro_rules! typed_pair {
    ($x:expr, $y:expr, $a:ident, $b:ident => $body:expr) => {
        match ($x, $y) {
            (Slot::U8($a), Slot::U8($b)) => $body,
            (Slot::U32($a), Slot::U32($b)) => $body,
            (Slot::E12($a), Slot::E12($b)) => $body,
            (Slot::E100($a), Slot::E100($b)) => $body,
            (Slot::E300($a), Slot::E300($b)) => $body,
            _ => unreachable!("element types differ"),
        }
    };
}

/// What every operation needs besides the buffers.
struct Env {
    ctx: Arc<CudaContext>,
    /// The stream of `Strm::Default` for operations that take one: a third
    /// stream (cuda-mem refuses the legacy default stream by handle; its
    /// stream-less calls queue there themselves).
    s0: Arc<CudaStream>,
    s1: Arc<CudaStream>,
    s2: Arc<CudaStream>,
    s3: Arc<CudaStream>,
    pool: MemPool,
    /// Memset fresh device and pool memory (see the file docs).
    init_fresh: bool,
}

impl Env {
    fn stream(&self, s: Strm) -> &Arc<CudaStream> {
        match s {
            Strm::Default => &self.s0,
            Strm::S1 => &self.s1,
            Strm::S2 => &self.s2,
            Strm::S3 => &self.s3,
        }
    }
}

/// The library on the GPU.
struct Gpu {
    env: Env,
    slots: Vec<Option<Slot>>,
    poison: Rng,
}

impl Gpu {
    fn new(ctx: &Arc<CudaContext>) -> Self {
        Self {
            env: Env {
                ctx: ctx.clone(),
                s0: ctx.new_stream().expect("stream"),
                s1: ctx.new_stream().expect("stream"),
                s2: ctx.new_stream().expect("stream"),
                s3: ctx.new_stream().expect("stream"),
                pool: MemPool::new(ctx).expect("MemPool"),
                init_fresh: under_sanitizer(),
            },
            slots: (0..diff::SLOTS).map(|_| None).collect(),
            poison: Rng::new(0x5eed),
        }
    }
}

/// An exclusive view of `t` (a range of a 1D buffer, part of a row of a pitched one).
fn with_mut<T: DeviceCopy, R>(
    buf: &mut AnyBuf<T>,
    t: Target,
    f: impl FnOnce(ViewMut<'_, T>) -> Result<R>,
) -> Result<R> {
    match (buf, t) {
        (AnyBuf::Pitched(p), Target::Row(r, a, b)) => {
            let mut row = p.row_mut(r)?;
            f(row.slice_mut(a..b)?)
        }
        (buf, Target::Range(a, b)) => {
            by_kind!(buf, x => f(x.slice_mut(a..b)?), _p => unreachable!("a range of a pitched buffer"))
        }
        (_, t) => unreachable!("{t:?} is not a view"),
    }
}

/// A mutable view of `t`, the whole of a 1D buffer included (what
/// `cuda_mem::algo` writes: contiguous elements).
fn with_contiguous_mut<T: DeviceCopy, R>(
    buf: &mut AnyBuf<T>,
    t: Target,
    f: impl FnOnce(ViewMut<'_, T>) -> Result<R>,
) -> Result<R> {
    match t {
        Target::Whole => {
            by_kind!(buf, x => f(x.slice_mut(..)?), _p => unreachable!("a whole pitched buffer"))
        }
        t => with_mut(buf, t, f),
    }
}

/// A shared view of `t` (the whole of a 1D buffer through `AsView`).
fn with_ref<T: DeviceCopy, R>(
    buf: &AnyBuf<T>,
    t: Target,
    f: impl FnOnce(View<'_, T>) -> Result<R>,
) -> Result<R> {
    match (buf, t) {
        (AnyBuf::Pitched(p), Target::Row(r, a, b)) => {
            let row = p.row(r)?;
            f(row.slice(a..b)?)
        }
        (AnyBuf::Pitched(_), t) => unreachable!("{t:?} of a pitched buffer is not a view"),
        (buf, Target::Whole) => by_kind!(buf, x => f(x.as_view()), _p => unreachable!()),
        (buf, Target::Range(a, b)) => by_kind!(buf, x => f(x.slice(a..b)?), _p => unreachable!()),
        (_, t) => unreachable!("{t:?}"),
    }
}

/// Calls the synchronous form for `Strm::Default`, else the `_async` form.
macro_rules! sync_or_async {
    ($env:expr, $s:expr, $x:ident . $sync:ident ( $($arg:expr),* ) / $asy:ident) => {
        if $s == Strm::Default {
            $x.$sync($($arg),*)
        } else {
            $x.$asy($($arg,)* $env.stream($s))
        }
    };
}

fn fill<T: DeviceCopy>(env: &Env, buf: &mut AnyBuf<T>, t: Target, s: Strm, v: T) -> Result<()> {
    match t {
        Target::Whole => by_kind!(buf,
            b => sync_or_async!(env, s, b.fill(v) / fill_async),
            p => sync_or_async!(env, s, p.fill(v) / fill_async)),
        _ => with_mut(buf, t, |mut x| {
            sync_or_async!(env, s, x.fill(v) / fill_async)
        }),
    }
}

fn memset<T: DeviceCopy>(env: &Env, buf: &mut AnyBuf<T>, t: Target, s: Strm, v: u8) -> Result<()> {
    match t {
        Target::Whole => by_kind!(buf,
            b => sync_or_async!(env, s, b.memset(v) / memset_async),
            p => sync_or_async!(env, s, p.memset(v) / memset_async)),
        _ => with_mut(buf, t, |mut x| {
            sync_or_async!(env, s, x.memset(v) / memset_async)
        }),
    }
}

fn upload<T: DeviceCopy>(buf: &mut AnyBuf<T>, t: Target, data: &[T]) -> Result<()> {
    match t {
        Target::Whole => by_kind!(buf, b => b.copy_from_host(data), p => p.copy_from_host(data)),
        _ => with_mut(buf, t, |mut x| x.copy_from_host(data)),
    }
}

fn host_write<T: DeviceCopy>(buf: &mut AnyBuf<T>, t: Target, data: &[T]) -> Result<()> {
    let (a, b) = buf.elements(t);
    let host = match buf {
        AnyBuf::Pinned(x) => x.as_mut_slice()?,
        AnyBuf::Unified(x) => x.as_mut_slice()?,
        _ => unreachable!("host write to device memory"),
    };
    host[a..b].copy_from_slice(data);
    Ok(())
}

fn upload_async<T: DeviceCopy, H: HostAccessible>(
    dst: &mut AnyBuf<T>,
    t: Target,
    h: &Buffer<T, H>,
    s: &Arc<CudaStream>,
) -> Result<()> {
    match t {
        Target::Whole => by_kind!(dst,
            b => b.copy_from_host_async(h, s),
            p => p.copy_from_host_async(h, s)),
        _ => with_mut(dst, t, |mut x| x.copy_from_host_async(h, s)),
    }
}

fn download_async<T: DeviceCopy, H: HostAccessible>(
    src: &AnyBuf<T>,
    t: Target,
    h: &mut Buffer<T, H>,
    s: &Arc<CudaStream>,
) -> Result<()> {
    match t {
        Target::Whole => by_kind!(src,
            b => b.copy_to_host_async(h, s),
            p => p.copy_to_host_async(h, s)),
        _ => with_ref(src, t, |x| x.copy_to_host_async(h, s)),
    }
}

/// `copy_from` between two buffers (two pitched ones: the 2D copy).
fn copy<T: DeviceCopy>(
    env: &Env,
    dst: &mut AnyBuf<T>,
    dt: Target,
    src: &AnyBuf<T>,
    st: Target,
    s: Strm,
) -> Result<()> {
    if let (AnyBuf::Pitched(pd), AnyBuf::Pitched(ps), Target::Whole) = (&mut *dst, src, dt) {
        return sync_or_async!(env, s, pd.copy_from(ps) / copy_from_async);
    }
    with_ref(src, st, |sv| match dt {
        Target::Whole => by_kind!(dst,
            b => sync_or_async!(env, s, b.copy_from(&sv) / copy_from_async),
            _p => unreachable!("a 1D view into a whole pitched buffer")),
        _ => with_mut(dst, dt, |mut dv| {
            sync_or_async!(env, s, dv.copy_from(&sv) / copy_from_async)
        }),
    })
}

/// `copy_from` between two disjoint ranges of one buffer, through `split_at_mut`.
fn copy_within<T: DeviceCopy>(
    env: &Env,
    buf: &mut AnyBuf<T>,
    dt: Target,
    st: Target,
    s: Strm,
) -> Result<()> {
    let (Target::Range(da, db), Target::Range(sa, sb)) = (dt, st) else {
        unreachable!("copy within a buffer of {dt:?} and {st:?}");
    };
    let dst_left = db <= sa;
    let mid = if dst_left { sa } else { da };
    by_kind!(buf, b => {
        let (mut left, mut right) = b.split_at_mut(mid)?;
        let (mut d, sv) = if dst_left {
            (left.slice_mut(da..db)?, right.slice(sa - mid..sb - mid)?)
        } else {
            (right.slice_mut(da - mid..db - mid)?, left.slice(sa..sb)?)
        };
        sync_or_async!(env, s, d.copy_from(&sv) / copy_from_async)
    }, _p => unreachable!("copy within a pitched buffer"))
}

fn alloc<T: DeviceCopy>(
    env: &Env,
    kind: Kind,
    (w, h): (usize, usize),
    init: Init,
    s: Strm,
    pad: u8,
) -> Result<AnyBuf<T>> {
    let n = w * h;
    let data = |seed| typed::<T>(&diff::data_bytes(seed, n * size_of::<T>()));
    let (ctx, stream) = (&env.ctx, env.stream(s));
    Ok(match kind {
        Kind::Device => AnyBuf::Device(match init {
            Init::Uninit => {
                let mut b = DeviceBuffer::new(ctx, n)?;
                if env.init_fresh {
                    b.memset(0)?;
                }
                b
            }
            Init::Zeroed => DeviceBuffer::zeroed(ctx, n)?,
            Init::FromSlice(seed) => DeviceBuffer::from_slice(ctx, &data(seed))?,
        }),
        Kind::Pinned => AnyBuf::Pinned(match init {
            Init::FromSlice(seed) => PinnedBuffer::from_slice(ctx, &data(seed))?,
            _ => PinnedBuffer::new(ctx, n)?,
        }),
        Kind::Unified => AnyBuf::Unified(match init {
            Init::FromSlice(seed) => UnifiedBuffer::from_slice(ctx, &data(seed))?,
            _ => UnifiedBuffer::new(ctx, n)?,
        }),
        Kind::Pool | Kind::MemPool => {
            let mut b = if kind == Kind::Pool {
                PoolBuffer::new(n, stream)?
            } else {
                PoolBuffer::from_pool(&env.pool, n, stream)?
            };
            match init {
                Init::Uninit if !env.init_fresh => {}
                Init::Uninit | Init::Zeroed => b.memset_async(0, stream)?,
                Init::FromSlice(seed) => b.copy_from_host(&data(seed))?,
            }
            AnyBuf::Pool(b)
        }
        Kind::Vec => {
            let zero = typed::<T>(&vec![0; size_of::<T>()])[0];
            AnyBuf::Vec(match init {
                // Mapped ahead of the length, then grown in place by `resize`.
                Init::Uninit => {
                    let mut v = DeviceVec::with_capacity(ctx, n / 2)?;
                    v.resize(n, zero)?;
                    v
                }
                Init::Zeroed => {
                    let mut v = DeviceVec::new(ctx)?;
                    v.resize(n, zero)?;
                    v
                }
                Init::FromSlice(seed) => DeviceVec::from_slice(ctx, &data(seed))?,
            })
        }
        Kind::Pitched => {
            let mut p = PitchedBuffer::new(ctx, w, h)?;
            p.raw_memset_padded(pad)?;
            match init {
                Init::Uninit => {}
                Init::Zeroed => p.memset(0)?,
                Init::FromSlice(seed) => p.copy_from_host(&data(seed))?,
            }
            AnyBuf::Pitched(p)
        }
    })
}

fn read<T: DeviceCopy>(
    env: &Env,
    buf: &AnyBuf<T>,
    t: Target,
    way: ReadWay,
    poison: &mut Rng,
) -> Result<Read> {
    let (a, b) = buf.elements(t);
    let n = b - a;
    let values: Vec<T> = match way {
        ReadWay::ToVec => match t {
            Target::Whole => by_kind!(buf, x => x.to_vec()?, p => p.to_vec()?),
            _ => with_ref(buf, t, |v| v.to_vec())?,
        },
        ReadWay::CopyToHost => {
            let mut out: Vec<T> = poison.values(n);
            match t {
                Target::Whole => {
                    by_kind!(buf, x => x.copy_to_host(&mut out)?, p => p.copy_to_host(&mut out)?)
                }
                _ => with_ref(buf, t, |v| v.copy_to_host(&mut out))?,
            }
            out
        }
        ReadWay::HostSlice => match buf {
            AnyBuf::Pinned(x) => x.as_slice()?[a..b].to_vec(),
            AnyBuf::Unified(x) => x.as_slice()?[a..b].to_vec(),
            _ => unreachable!("as_slice of device memory"),
        },
        ReadWay::ViaPinned(s) => {
            let mut h = PinnedBuffer::<T>::new(&env.ctx, n)?;
            h.as_mut_slice()?.copy_from_slice(&poison.values(n));
            download_async(buf, t, &mut h, env.stream(s))?;
            h.as_slice()?.to_vec()
        }
        ReadWay::RawPadded => {
            let AnyBuf::Pitched(p) = buf else {
                unreachable!("raw bytes of a 1D buffer")
            };
            let raw = p.raw_padded_bytes()?;
            let (pitch, row) = (p.pitch(), p.width() * size_of::<T>());
            let (mut logical, mut padding) = (Vec::new(), Vec::new());
            for r in 0..p.height() {
                logical.extend_from_slice(&raw[r * pitch..r * pitch + row]);
                padding.extend_from_slice(&raw[r * pitch + row..(r + 1) * pitch]);
            }
            return Ok(Read {
                logical,
                padding: Some(padding),
            });
        }
    };
    Ok(Read {
        logical: cuda_mem::bytes_of_slice(&values).to_vec(),
        padding: None,
    })
}

const ADVICE: [Advice; 6] = [
    Advice::ReadMostly(true),
    Advice::ReadMostly(false),
    Advice::PreferredLocation(Some(Location::Device)),
    Advice::PreferredLocation(None),
    Advice::AccessedBy(Location::Device, true),
    Advice::AccessedBy(Location::Device, false),
];

impl Gpu {
    fn apply_op(&mut self, op: &Op) -> Result<()> {
        let (env, slots) = (&self.env, &mut self.slots);
        match *op {
            Op::Alloc {
                slot,
                kind,
                elem,
                width,
                height,
                init,
                stream,
                pad,
            } => {
                let shape = (width, height);
                slots[slot] = Some(match elem {
                    Elem::U8 => Slot::U8(alloc(env, kind, shape, init, stream, pad)?),
                    Elem::U32 => Slot::U32(alloc(env, kind, shape, init, stream, pad)?),
                    Elem::E12 => Slot::E12(alloc(env, kind, shape, init, stream, pad)?),
                    Elem::E100 => Slot::E100(alloc(env, kind, shape, init, stream, pad)?),
                    Elem::E300 => Slot::E300(alloc(env, kind, shape, init, stream, pad)?),
                });
                Ok(())
            }
            Op::Drop { slot } => {
                drop(slots[slot].take());
                Ok(())
            }
            Op::FreeOnStream { slot, stream } => {
                let s = slots[slot].take().expect("valid op");
                typed_slot!(s, b => match b {
                    AnyBuf::Pool(p) => p.free_on_stream(env.stream(stream)),
                    _ => unreachable!("free_on_stream of a non-pool buffer"),
                })
            }
            Op::Fill {
                slot,
                target,
                stream,
                value,
            } => typed_slot!(slots[slot].as_mut().expect("valid op"), b => {
                let v = value_for(b, value);
                fill(env, b, target, stream, v)
            }),
            Op::Memset {
                slot,
                target,
                stream,
                byte,
            } => {
                typed_slot!(slots[slot].as_mut().expect("valid op"), b => memset(env, b, target, stream, byte))
            }
            Op::Upload { slot, target, data } => {
                typed_slot!(slots[slot].as_mut().expect("valid op"), b => {
                    let values = data_for(b, target, data);
                    upload(b, target, &values)
                })
            }
            Op::HostWrite { slot, target, data } => {
                typed_slot!(slots[slot].as_mut().expect("valid op"), b => {
                    let values = data_for(b, target, data);
                    host_write(b, target, &values)
                })
            }
            Op::UploadAsync {
                dst,
                target,
                src,
                stream,
            } => {
                let host = slots[src].take().expect("valid op");
                let s = env.stream(stream);
                let r = typed_pair!(slots[dst].as_mut().expect("valid op"), &host, d, h => match h {
                    AnyBuf::Pinned(h) => upload_async(d, target, h, s),
                    AnyBuf::Unified(h) => upload_async(d, target, h, s),
                    _ => unreachable!("an async upload from device memory"),
                });
                slots[src] = Some(host);
                r
            }
            Op::DownloadAsync {
                src,
                target,
                dst,
                stream,
            } => {
                let mut host = slots[dst].take().expect("valid op");
                let s = env.stream(stream);
                let r = typed_pair!(slots[src].as_ref().expect("valid op"), &mut host, d, h => match h {
                    AnyBuf::Pinned(h) => download_async(d, target, h, s),
                    AnyBuf::Unified(h) => download_async(d, target, h, s),
                    _ => unreachable!("an async download into device memory"),
                });
                slots[dst] = Some(host);
                r
            }
            Op::Copy {
                dst,
                dst_target,
                src,
                src_target,
                stream,
            } => {
                if dst == src {
                    return typed_slot!(slots[dst].as_mut().expect("valid op"),
                        b => copy_within(env, b, dst_target, src_target, stream));
                }
                let from = slots[src].take().expect("valid op");
                let r = typed_pair!(slots[dst].as_mut().expect("valid op"), &from, d, s =>
                    copy(env, d, dst_target, s, src_target, stream));
                slots[src] = Some(from);
                r
            }
            Op::Prefetch {
                slot,
                to_device,
                stream,
            } => typed_slot!(slots[slot].as_ref().expect("valid op"), b => match b {
                AnyBuf::Unified(u) if to_device => u.prefetch_to_device(env.stream(stream)),
                AnyBuf::Unified(u) => u.prefetch_to_host(env.stream(stream)),
                _ => unreachable!("prefetch of non-unified memory"),
            }),
            Op::Advise { slot, advice } => {
                typed_slot!(slots[slot].as_ref().expect("valid op"), b => match b {
                    AnyBuf::Unified(u) => u.advise(ADVICE[advice as usize % ADVICE.len()]),
                    _ => unreachable!("advice on non-unified memory"),
                })
            }
            Op::Grow {
                slot,
                n,
                data,
                via,
                stream,
            } => typed_slot!(slots[slot].as_mut().expect("valid op"), b => match b {
                AnyBuf::Vec(v) => grow(env, v, n, data, via, stream),
                _ => unreachable!("growth of a buffer that is not a DeviceVec"),
            }),
            Op::Shrink { slot, len, fit } => {
                typed_slot!(slots[slot].as_mut().expect("valid op"), b => match b {
                    AnyBuf::Vec(v) => {
                        v.truncate(len);
                        if fit { v.shrink_to_fit() } else { Ok(()) }
                    }
                    _ => unreachable!("shrinking a buffer that is not a DeviceVec"),
                })
            }
            Op::Scan {
                dst,
                dst_target,
                src,
                src_target,
                inclusive,
                stream,
            } => {
                let s = env.stream(stream);
                if dst == src {
                    let Some(Slot::U32(b)) = slots[dst].as_mut() else {
                        unreachable!("a scan of a slot that is not u32")
                    };
                    return with_contiguous_mut(b, dst_target, |mut v| {
                        if inclusive {
                            algo::inclusive_scan_in_place(&mut v, Sum, s)
                        } else {
                            algo::exclusive_scan_in_place(&mut v, Sum, s)
                        }
                    });
                }
                let from = slots[src].take().expect("valid op");
                let r = match (slots[dst].as_mut(), &from) {
                    (Some(Slot::U32(d)), Slot::U32(x)) => with_ref(x, src_target, |sv| {
                        with_contiguous_mut(d, dst_target, |mut dv| {
                            if inclusive {
                                algo::inclusive_scan(&sv, &mut dv, Sum, s)
                            } else {
                                algo::exclusive_scan(&sv, &mut dv, Sum, s)
                            }
                        })
                    }),
                    _ => unreachable!("a scan between slots that are not u32"),
                };
                slots[src] = Some(from);
                r
            }
            Op::Reduce {
                src,
                src_target,
                dst,
                at,
                stream,
            } => {
                let s = env.stream(stream);
                let from = slots[src].take().expect("valid op");
                let r = match (slots[dst].as_mut(), &from) {
                    (Some(Slot::U32(d)), Slot::U32(x)) => with_ref(x, src_target, |sv| {
                        with_mut(d, Target::Range(at, at + 1), |mut dv| {
                            algo::reduce_into(&sv, Sum, &mut dv, s)
                        })
                    }),
                    _ => unreachable!("a reduction between slots that are not u32"),
                };
                slots[src] = Some(from);
                r
            }
            Op::Sort {
                slot,
                target,
                descending,
                stream,
            } => {
                let s = env.stream(stream);
                let Some(Slot::U32(b)) = slots[slot].as_mut() else {
                    unreachable!("a sort of a slot that is not u32")
                };
                let order = if descending {
                    algo::SortOrder::Descending
                } else {
                    algo::SortOrder::Ascending
                };
                with_contiguous_mut(b, target, |mut v| algo::sort(&mut v, order, s))
            }
            Op::Check { .. } | Op::SyncAll => unreachable!("the runner reads and syncs itself"),
        }
    }
}

/// Appends `n` elements of the data of seed `data` to `v` (see `Op::Grow`).
fn grow<T: DeviceCopy>(
    env: &Env,
    v: &mut DeviceVec<T>,
    n: usize,
    data: u64,
    via: u8,
    s: Strm,
) -> Result<()> {
    let values = typed::<T>(&diff::data_bytes(data, n * size_of::<T>()));
    match via % 3 {
        0 => v.extend_from_host(&values),
        1 => {
            // From an unaligned view: one element of padding in front.
            let mut padded = values.clone();
            padded.insert(0, typed::<T>(&vec![0xa5; size_of::<T>()])[0]);
            let src = DeviceBuffer::from_slice(&env.ctx, &padded)?;
            let view = src.slice(1..)?;
            sync_or_async!(
                env,
                s,
                v.extend_from_device(&view) / extend_from_device_async
            )
        }
        _ => {
            let mut p = v.pusher();
            for x in values {
                p.push(x)?;
            }
            p.finish()
        }
    }
}

/// The fill value of seed `seed` for `buf`'s element type.
fn value_for<T: DeviceCopy>(_: &AnyBuf<T>, seed: u64) -> T {
    typed(&diff::fill_value(seed, size_of::<T>()))[0]
}

/// The data of seed `seed` for target `t` of `buf`.
fn data_for<T: DeviceCopy>(buf: &AnyBuf<T>, t: Target, seed: u64) -> Vec<T> {
    let (a, b) = buf.elements(t);
    typed(&diff::data_bytes(seed, (b - a) * size_of::<T>()))
}

impl Backend for Gpu {
    fn apply(&mut self, op: &Op) -> std::result::Result<(), String> {
        self.apply_op(op).map_err(|e| e.to_string())
    }

    fn sync(&mut self) -> std::result::Result<(), String> {
        let env = &self.env;
        env.s1.synchronize().map_err(|e| format!("stream 1: {e}"))?;
        env.s2.synchronize().map_err(|e| format!("stream 2: {e}"))?;
        env.s3.synchronize().map_err(|e| format!("stream 3: {e}"))?;
        env.ctx.synchronize().map_err(|e| format!("context: {e}"))
    }

    fn read(&mut self, slot: usize, t: Target, way: ReadWay) -> std::result::Result<Read, String> {
        let (env, poison) = (&self.env, &mut self.poison);
        let s = self.slots[slot].as_ref().ok_or("read of an empty slot")?;
        typed_slot!(s, b => read(env, b, t, way, poison)).map_err(|e| e.to_string())
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn random_operation_sequences_match_the_host_model() {
    let seed = seed_from_env("differential");
    let n = env_count("CUDA_MEM_DIFF_OPS", 10_000);
    differential_run("differential", seed, n, &diff::generate(seed, n));
}

/// Per-range ordering: many operations over overlapping and disjoint views
/// of few buffers on the synchronous calls and three streams
/// (`diff::generate_views`).
#[test]
#[ignore = "needs a CUDA device"]
fn views_of_few_buffers_on_four_streams_match_the_host_model() {
    let seed = seed_from_env("differential views");
    let n = env_count("CUDA_MEM_DIFF_OPS", 10_000);
    differential_run(
        "differential views",
        seed,
        n,
        &diff::generate_views(seed, n),
    );
}

/// The pinned cache: pinned buffers dropped while their asynchronous copies
/// may still run, and buffers of the same size allocated at once, written
/// and checked (`diff::generate_pinned_reuse`).
#[test]
#[ignore = "needs a CUDA device"]
fn pinned_buffers_reallocated_under_running_copies_match_the_host_model() {
    let seed = seed_from_env("differential pinned reuse");
    let n = env_count("CUDA_MEM_DIFF_OPS", 10_000);
    differential_run(
        "differential pinned reuse",
        seed,
        n,
        &diff::generate_pinned_reuse(seed, n),
    );
}

/// Runs `ops` (from `seed`, `n` of them) on the GPU against the model and
/// prints the ops, reads and divergences (0, or the divergence shrunk).
fn differential_run(label: &str, seed: u64, n: usize, ops: &[Op]) {
    let ctx = gpu();
    let start = Instant::now();
    let mut backend = Gpu::new(&ctx);
    let result = diff::run(ops, &mut backend, true);
    drop(backend);
    let elapsed = start.elapsed();
    match result {
        Ok(stats) => {
            eprintln!(
                "{label}: {} ops in {:.2?} ({:.1} µs/op), {} reads, {} bytes compared, 0 divergences",
                stats.executed(),
                elapsed,
                elapsed.as_secs_f64() * 1e6 / stats.executed().max(1) as f64,
                stats.reads,
                stats.bytes_checked
            );
            eprintln!("{label}: per operation {:?}", stats.per_op);
            assert_eq!(
                stats.skipped, 0,
                "the generator only makes valid operations"
            );
            assert_eq!(stats.executed(), n);
        }
        Err(div) => {
            eprintln!(
                "{label}: 1 divergence (replay with CUDA_MEM_SEED={seed} CUDA_MEM_DIFF_OPS={n})"
            );
            eprintln!("{label}: at {div}");
            eprintln!("{label}: shrinking (fresh buffers for every replay) ...");
            let mut fresh = || Box::new(Gpu::new(&ctx)) as Box<dyn Backend>;
            let shrunk = diff::shrink(
                ops,
                div.index,
                &mut fresh,
                400,
                Some(Instant::now() + Duration::from_secs(300)),
            );
            if shrunk.flaky {
                eprintln!(
                    "{label}: the failure did not reproduce on a replay of the first {} ops (timing-dependent)",
                    shrunk.prefix_len
                );
            } else {
                eprintln!(
                    "{label}: shortest failing prefix: {} ops (then every buffer checked); its last op:\n{}",
                    shrunk.prefix_len,
                    diff::describe(&ops[shrunk.prefix_len - 1..shrunk.prefix_len], 1)
                );
                eprintln!(
                    "{label}: {} ops of it still fail ({} replays): {}\n{}",
                    shrunk.ops.len(),
                    shrunk.replays,
                    shrunk
                        .divergence
                        .as_ref()
                        .map_or(String::new(), |d| d.to_string()),
                    diff::describe(&shrunk.ops, 200)
                );
            }
            panic!(
                "{label} run diverged with CUDA_MEM_SEED={seed} at op #{}: {}",
                div.index, div.detail
            );
        }
    }
}

// ---- CPU tests of the engine (no GPU) ----

#[test]
fn generated_sequences_are_deterministic_and_cover_every_operation() {
    let a = diff::generate(7, 20_000);
    assert_eq!(a, diff::generate(7, 20_000), "same seed, same sequence");
    assert_ne!(
        a,
        diff::generate(8, 20_000),
        "another seed, another sequence"
    );
    assert_eq!(
        &a[..500],
        &diff::generate(7, 500)[..],
        "a shorter run is a prefix"
    );

    let stats =
        diff::run(&a, &mut FakeBackend::correct(), true).expect("the model agrees with itself");
    assert_eq!(
        stats.skipped, 0,
        "every generated op is valid where it stands"
    );
    eprintln!(
        "{} reads, {} bytes compared; per op {:?}",
        stats.reads, stats.bytes_checked, stats.per_op
    );
    for name in [
        "alloc",
        "drop",
        "free_on_stream",
        "fill",
        "memset",
        "copy_from_host",
        "host write",
        "copy_from_host_async",
        "copy_to_host_async",
        "copy_from",
        "prefetch",
        "advise",
        "grow",
        "shrink",
        "algo scan",
        "algo reduce_into",
        "algo sort",
        "check",
        "sync all",
    ] {
        assert!(
            stats.per_op.get(name).copied().unwrap_or(0) > 0,
            "no {name} in {:?}",
            stats.per_op
        );
    }

    let mut kinds = std::collections::HashSet::new();
    let (mut empty, mut unaligned, mut within, mut copy_2d, mut ways, mut fill_streams) = (
        0,
        0,
        0,
        0,
        std::collections::HashSet::new(),
        std::collections::HashSet::new(),
    );
    for op in &a {
        match *op {
            Op::Alloc {
                kind,
                elem,
                width,
                height,
                ..
            } => {
                kinds.insert((kind, elem));
                empty += usize::from(width * height == 0);
            }
            Op::Fill {
                target: Target::Range(x, _),
                stream,
                ..
            } => {
                fill_streams.insert(stream);
                unaligned += usize::from(x % 16 != 0);
            }
            Op::Copy { dst, src, .. } if dst == src => within += 1,
            Op::Copy {
                dst_target: Target::Whole,
                src_target: Target::Whole,
                ..
            } => copy_2d += 1,
            Op::Check { way, .. } => {
                ways.insert(way);
            }
            _ => {}
        }
    }
    assert_eq!(
        kinds.len(),
        Kind::ALL.len() * Elem::ALL.len(),
        "every kind with every element type"
    );
    assert!(
        empty > 0 && unaligned > 0 && within > 0 && copy_2d > 0,
        "{empty} {unaligned} {within} {copy_2d}"
    );
    assert_eq!(
        fill_streams.len(),
        3,
        "fills on the default stream and both streams"
    );
    assert_eq!(ways.len(), 7, "every read way: {ways:?}");
    // The algorithms in place and between buffers, on rows of pitched
    // buffers too, inclusive and exclusive.
    let scans = |f: &dyn Fn(&Op) -> bool| a.iter().filter(|op| f(op)).count();
    assert!(scans(&|op| matches!(*op, Op::Scan { dst, src, .. } if dst == src)) > 0);
    assert!(scans(&|op| matches!(*op, Op::Scan { dst, src, .. } if dst != src)) > 0);
    assert!(
        scans(&|op| matches!(
            *op,
            Op::Scan {
                src_target: Target::Row(..),
                ..
            }
        )) > 0
    );
    assert!(
        scans(&|op| matches!(
            *op,
            Op::Scan {
                inclusive: false,
                ..
            }
        )) > 0
    );
}

#[test]
fn the_shrinker_finds_an_injected_fault() {
    // The fault: a fill on stream 2 of a non-empty 1D range that starts at an
    // odd element corrupts the range's last byte.
    fn faulty(op: &Op) -> bool {
        matches!(*op, Op::Fill { target: Target::Range(a, b), stream: Strm::S2, .. } if a % 2 == 1 && b > a)
    }
    let broken = || Box::new(FakeBackend::with_fault(faulty)) as Box<dyn Backend>;
    let with_checks = diff::generate(11, 5_000);
    let first_fault = with_checks.iter().position(faulty).expect("a faulty op");
    let div = diff::run(&with_checks, broken().as_mut(), true).expect_err("the fault is detected");
    assert!(div.index > first_fault, "{div}");
    assert!(diff::run(&with_checks, &mut FakeBackend::correct(), true).is_ok());

    // Without the checks in between, only a final check sees the fault, after
    // later ops: the prefix search must find the faulty op. (A prefix that
    // still shows the corruption at its end: later ops may overwrite it.)
    let ops: Vec<Op> = with_checks
        .iter()
        .copied()
        .filter(|op| !matches!(op, Op::Check { .. } | Op::SyncAll))
        .collect();
    let first_fault = ops.iter().position(faulty).expect("a faulty op");
    let end = (first_fault + 20..ops.len().min(first_fault + 500))
        .find(|&end| diff::run(&ops[..end], broken().as_mut(), true).is_err())
        .expect("a corruption that survives 20 ops");
    let ops = &ops[..end];
    let div = diff::run(ops, broken().as_mut(), true).expect_err("the final check sees it");
    assert_eq!(div.index, ops.len(), "{div}");
    let shrunk = diff::shrink(ops, div.index, &mut { broken }, 10_000, None);
    eprintln!(
        "{} ops, first faulty op #{first_fault}, {div}\nshortest failing prefix {} ops; \
         shrunk to {} ops in {} replays:\n{}",
        ops.len(),
        shrunk.prefix_len,
        shrunk.ops.len(),
        shrunk.replays,
        diff::describe(&shrunk.ops, 10)
    );
    assert!(!shrunk.flaky);
    assert_eq!(
        shrunk.prefix_len,
        first_fault + 1,
        "the prefix ends with the first faulty op"
    );
    assert!(
        diff::run(&shrunk.ops, broken().as_mut(), true).is_err(),
        "the shrunk sequence fails"
    );
    // All that is needed: the allocation of the buffer (and what makes the
    // range exist: a growth of an empty `DeviceVec`), then the faulty fill;
    // without any one of them the run passes.
    assert!(
        shrunk.ops.len() <= 3,
        "not minimal:\n{}",
        diff::describe(&shrunk.ops, 50)
    );
    for i in 0..shrunk.ops.len() {
        let mut fewer = shrunk.ops.clone();
        fewer.remove(i);
        assert!(
            diff::run(&fewer, broken().as_mut(), true).is_ok(),
            "op {i} of the shrunk sequence is not needed:\n{}",
            diff::describe(&shrunk.ops, 50)
        );
    }
    assert!(
        matches!(shrunk.ops[0], Op::Alloc { .. }) && faulty(shrunk.ops.last().expect("ops")),
        "{}",
        diff::describe(&shrunk.ops, 50)
    );
}

/// A byte span of a slot: (slot, start, end).
type Span = (usize, usize, usize);

/// The byte spans an operation writes and reads, in the state `model` holds
/// before it.
fn spans(model: &diff::Model, op: &Op) -> Vec<Span> {
    [op.written(), op.read()]
        .into_iter()
        .flatten()
        .filter_map(|(slot, t)| {
            let (x, y) = model.shape(slot)?.span(t)?;
            (y > x).then_some((slot, x, y))
        })
        .collect()
}

#[test]
fn view_sequences_use_overlapping_and_disjoint_views_on_every_stream() {
    let seed = seed_from_env("differential views (generator)");
    let n = 10_000;
    let ops = diff::generate_views(seed, n);
    assert_eq!(
        ops,
        diff::generate_views(seed, n),
        "same seed, same sequence"
    );
    assert_eq!(
        &ops[..500],
        &diff::generate_views(seed, 500)[..],
        "a shorter run is a prefix"
    );
    let stats =
        diff::run(&ops, &mut FakeBackend::correct(), true).expect("the model agrees with itself");
    assert_eq!(
        stats.skipped, 0,
        "every generated op is valid where it stands"
    );

    // Consecutive operations on two streams over one buffer: how often their
    // bytes meet (they must stay ordered) and how often not (they may overlap
    // in time).
    let mut model = diff::Model::new();
    let (mut meet, mut apart) = (0, 0);
    let mut streams = std::collections::HashSet::new();
    let mut kinds = std::collections::HashSet::new();
    let mut prev: Option<(Strm, Vec<Span>)> = None;
    for op in &ops {
        let now = spans(&model, op);
        if let (Some((ps, pspans)), Some(s)) = (&prev, op.stream()) {
            let same_slot = pspans.iter().any(|a| now.iter().any(|b| a.0 == b.0));
            let meets = pspans
                .iter()
                .any(|a| now.iter().any(|b| a.0 == b.0 && a.1 < b.2 && b.1 < a.2));
            if *ps != s && same_slot {
                if meets {
                    meet += 1;
                } else {
                    apart += 1;
                }
            }
        }
        prev = op.stream().map(|s| (s, now));
        if let Op::Alloc { slot, kind, .. } = *op {
            if slot < 2 {
                kinds.insert(kind);
            }
        }
        if let Op::Fill { stream, .. } | Op::Copy { stream, .. } = *op {
            streams.insert(stream);
        }
        model.apply(op);
    }
    eprintln!(
        "views: {} ops, {} reads, {} bytes compared; consecutive ops of two streams on one \
         buffer: {meet} touch the same bytes, {apart} do not; per op {:?}",
        stats.executed(),
        stats.reads,
        stats.bytes_checked,
        stats.per_op
    );
    assert!(
        meet > n / 50 && apart > n / 50,
        "{meet} meeting, {apart} apart"
    );
    assert_eq!(streams.len(), 4, "the synchronous calls and three streams");
    assert_eq!(kinds.len(), Kind::ALL.len(), "every kind: {kinds:?}");
}

#[test]
fn reordering_disjoint_views_never_shows_and_reordering_overlapping_ones_is_caught() {
    let seed = seed_from_env("differential reordering (fake)");
    let n = 10_000;
    for (name, ops) in [
        ("views", diff::generate_views(seed, n)),
        ("mixed", diff::generate(seed, n)),
    ] {
        // What per-range ordering allows must be invisible.
        let mut disjoint = FakeBackend::reordering(Overtake::Disjoint);
        let stats = diff::run(&ops, &mut disjoint, true)
            .unwrap_or_else(|d| panic!("{name}: reordering disjoint views showed: {d}"));
        assert!(disjoint.overtaken > 0, "{name}: nothing was reordered");
        // What an ordering that ignored overlaps would allow must be caught.
        let mut any = FakeBackend::reordering(Overtake::Any);
        let div = diff::run(&ops, &mut any, true);
        eprintln!(
            "{name}: {} ops; {} disjoint overtakes unseen; reordering overlapping views too: {}",
            stats.executed(),
            disjoint.overtaken,
            div.as_ref()
                .map_or_else(|d| format!("caught at {d}"), |_| "not caught".into())
        );
        if name == "views" {
            assert!(div.is_err(), "views: overlapping views reordered unnoticed");
        }
    }
}

#[test]
fn a_pinned_cache_that_reuses_busy_blocks_is_caught() {
    let seed = seed_from_env("differential pinned reuse (fake)");
    let n = 5_000;
    let ops = diff::generate_pinned_reuse(seed, n);
    assert_eq!(ops, diff::generate_pinned_reuse(seed, n), "deterministic");
    let stats =
        diff::run(&ops, &mut FakeBackend::correct(), true).expect("the model agrees with itself");
    assert_eq!(stats.skipped, 0);
    // Every part of the pattern is there: copies both ways on a stream,
    // then the drop and the re-allocation.
    for name in [
        "copy_to_host_async",
        "copy_from_host_async",
        "drop",
        "alloc",
        "check",
    ] {
        assert!(
            stats.per_op.get(name).copied().unwrap_or(0) > n / 50,
            "{name}: {:?}",
            stats.per_op
        );
    }
    let mut busy = FakeBackend::reusing_busy_blocks();
    let caught = diff::run(&ops, &mut busy, true);
    eprintln!(
        "pinned reuse: {} late DMAs; {}",
        busy.late_dmas,
        caught
            .as_ref()
            .map_or_else(|d| format!("caught at {d}"), |_| "not caught".into())
    );
    assert!(busy.late_dmas > 0, "the fake never reused a busy block");
    assert!(
        caught.is_err(),
        "a cache that hands out blocks under running DMAs went unnoticed"
    );
}
