//! Copies: between any two kinds of memory, shapes and contexts
//! ([`Elems::copy_from`], the one place that picks the driver call, after
//! the stream check every such copy needs, [`check_copy_stream`]), and the
//! synchronous copies from and to host memory (staged through pinned memory
//! by `staging`, or 2D through the driver), with the driver's copy
//! descriptors they fill in. What only a copy between two contexts needs
//! (peer access, pool access) is `peer`'s.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};

use crate::copy::device_copy::{bytes_of_slice, bytes_of_slice_mut, DeviceCopy};
use crate::engine::elems::Elems;
use crate::engine::shape::{copy_shape, host_span, partially_overlap, CopyShape};
use crate::engine::{peer, staging};
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::raw::RawMemory;
use crate::order::StreamOrder;

/// One side of a 2D copy.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Side {
    /// Device memory (device, pool or pitched) at this address.
    Device(u64),
    /// Memory the driver reaches through unified addressing (pinned, managed).
    Unified(u64),
    /// Pageable (or pinned) host memory, read from.
    HostSrc(*const c_void),
    /// Pageable (or pinned) host memory, written to.
    HostDst(*mut c_void),
}

impl Side {
    /// `addr` of `mem` as a copy side.
    fn of(mem: &RawMemory, addr: u64) -> Self {
        if mem.is_device_resident() {
            Side::Device(addr)
        } else {
            Side::Unified(addr)
        }
    }
}

/// The `CUDA_MEMCPY2D` of a copy of `height` rows of `width_bytes` bytes.
///
/// Built as a struct literal rather than `mem::zeroed()`: `CUmemorytype` is a
/// Rust enum without a zero variant, so an all-zero `CUDA_MEMCPY2D` is not a
/// valid value even for an instant.
pub(crate) fn memcpy2d(
    dst: Side,
    dst_pitch: usize,
    src: Side,
    src_pitch: usize,
    width_bytes: usize,
    height: usize,
) -> sys::CUDA_MEMCPY2D {
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_UNIFIED};
    let parts = |side: Side| match side {
        Side::Device(a) => (CU_MEMORYTYPE_DEVICE, a, std::ptr::null_mut::<c_void>()),
        Side::Unified(a) => (CU_MEMORYTYPE_UNIFIED, a, std::ptr::null_mut()),
        Side::HostSrc(p) => (CU_MEMORYTYPE_HOST, 0, p.cast_mut()),
        Side::HostDst(p) => (CU_MEMORYTYPE_HOST, 0, p),
    };
    let (src_type, src_device, src_host) = parts(src);
    let (dst_type, dst_device, dst_host) = parts(dst);
    sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: src_type,
        srcHost: src_host.cast_const(),
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: width_bytes,
        Height: height,
    }
}

/// The `CUDA_MEMCPY3D_PEER` of a copy of `rows` rows of `row_bytes` bytes
/// between device memory of two contexts, one slice deep.
fn memcpy3d_peer(
    (dst, dst_ctx, dst_pitch): (u64, sys::CUcontext, usize),
    (src, src_ctx, src_pitch): (u64, sys::CUcontext, usize),
    row_bytes: usize,
    rows: usize,
) -> sys::CUDA_MEMCPY3D_PEER {
    use sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
    sys::CUDA_MEMCPY3D_PEER {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: src,
        srcArray: std::ptr::null_mut(),
        srcContext: src_ctx,
        srcPitch: src_pitch,
        srcHeight: rows,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst,
        dstArray: std::ptr::null_mut(),
        dstContext: dst_ctx,
        dstPitch: dst_pitch,
        dstHeight: rows,
        WidthInBytes: row_bytes,
        Height: rows,
        Depth: 1,
    }
}

/// `host`, or the registered mapping of the same pinned pages (see
/// `pinned_pages::registered_or_self`).
fn host_dma_or_self(host: *mut c_void, bytes: usize) -> *mut c_void {
    crate::memory::pinned_pages::registered_or_self(host.cast(), bytes).cast()
}

/// Checks that `stream` may queue a copy between the allocations `a` and
/// `b`: a stream of their context, or of either of their two contexts.
fn check_copy_stream(a: &RawMemory, b: &RawMemory, stream: &CudaStream) -> Result<()> {
    let ctx = stream.context().cu_ctx();
    if a.state.ctx.cu_ctx() == b.state.ctx.cu_ctx() || a.state.ctx.cu_ctx() == ctx {
        return a.state.check_stream(stream);
    }
    if b.state.ctx.cu_ctx() == ctx {
        return b.state.check_stream(stream);
    }
    Err(Error::ContextMismatch(
        "the stream of a copy between two contexts (it must be of one of them)",
    ))
}

impl<T: DeviceCopy> Elems<'_, T> {
    /// Synchronous copy from host memory (returns once `src` may be reused).
    /// `src_pitch: None`: `src` is exactly `len` packed elements. `Some(p)`:
    /// `src` holds the rows `p` elements apart (`p >= width`), at least
    /// `(rows - 1) * p + width` elements.
    pub(crate) fn copy_from_host(self, src: &[T], src_pitch: Option<usize>) -> Result<()> {
        let packed = src_pitch.is_none();
        let src_pitch = src_pitch.unwrap_or(self.shape.width);
        let need = host_span(self.shape.width, self.shape.rows, src_pitch)?;
        if (packed && src.len() != self.len()) || src.len() < need {
            return Err(Error::LengthMismatch {
                expected: if packed { self.len() } else { need },
                actual: src.len(),
            });
        }
        if self.len() == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let stream = self.default_stream();
        if self.is_contiguous() && (src_pitch == self.shape.width || self.shape.rows <= 1) {
            return self.run(stream, || {
                self.mem.state.bind()?;
                // The destination lies inside the allocation and `run` ordered
                // the legacy default stream after earlier work on it.
                staging::copy_from_host(
                    &self.mem.state,
                    stream,
                    self.addr(),
                    bytes_of_slice(&src[..self.len()]),
                )
            });
        }
        let size = size_of::<T>();
        let host = &src[..need];
        let p = memcpy2d(
            Side::of(self.mem, self.addr()),
            self.shape.pitch,
            Side::HostSrc(
                host_dma_or_self(host.as_ptr().cast_mut().cast(), size_of_val(host)).cast_const(),
            ),
            src_pitch * size,
            self.shape.row_bytes(),
            self.shape.rows,
        );
        self.run(stream, || {
            self.mem.state.bind()?;
            // SAFETY: the source is `host`, a live borrowed slice spanning the
            // rows at `src_pitch` (or the registered mapping of the same pinned
            // pages), read completely when the synchronous copy returns; the
            // destination rows lie inside the allocation; `run` ordered the
            // legacy default stream after earlier work on it.
            unsafe { sys::cuMemcpy2D_v2(&p).result() }.op("cuMemcpy2D")
        })
    }

    /// Synchronous copy to host memory (returns once the data is there), the
    /// mirror of [`Elems::copy_from_host`]; host bytes between rows (when
    /// `dst_pitch > width`) are left as they were.
    pub(crate) fn copy_to_host(self, dst: &mut [T], dst_pitch: Option<usize>) -> Result<()> {
        let packed = dst_pitch.is_none();
        let dst_pitch = dst_pitch.unwrap_or(self.shape.width);
        let need = host_span(self.shape.width, self.shape.rows, dst_pitch)?;
        if (packed && dst.len() != self.len()) || dst.len() < need {
            return Err(Error::LengthMismatch {
                expected: if packed { dst.len() } else { need },
                actual: if packed { self.len() } else { dst.len() },
            });
        }
        if self.len() == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let stream = self.default_stream();
        if self.is_contiguous() && (dst_pitch == self.shape.width || self.shape.rows <= 1) {
            return self.run(stream, || {
                self.mem.state.bind()?;
                // The source lies inside the allocation and `run` ordered the
                // legacy default stream after earlier work on it; any bytes
                // written into `dst` make valid `T`s (DeviceCopy).
                staging::copy_to_host(
                    &self.mem.state,
                    stream,
                    bytes_of_slice_mut(&mut dst[..self.len()]),
                    self.addr(),
                )
            });
        }
        let size = size_of::<T>();
        let host = &mut dst[..need];
        let p = memcpy2d(
            Side::HostDst(host_dma_or_self(
                host.as_mut_ptr().cast(),
                size_of_val(host),
            )),
            dst_pitch * size,
            Side::of(self.mem, self.addr()),
            self.shape.pitch,
            self.shape.row_bytes(),
            self.shape.rows,
        );
        self.run(stream, || {
            self.mem.state.bind()?;
            // SAFETY: the destination is `host`, a live exclusive slice
            // spanning the rows at `dst_pitch` (or the registered mapping of
            // the same pinned pages), complete when the synchronous copy
            // returns, and any bytes are a valid `T`; only the elements of
            // each device row are read (never the padding); `run` ordered the
            // legacy default stream after earlier work on the memory.
            unsafe { sys::cuMemcpy2D_v2(&p).result() }.op("cuMemcpy2D")
        })
    }

    pub(crate) fn to_vec(self) -> Result<Vec<T>> {
        let mut out = Vec::<T>::with_capacity(self.len());
        // SAFETY: the capacity holds `len` elements (`T` is not zero-sized:
        // buffers refuse those); they are zeroed through the raw pointer
        // before any reference to them exists, and all-zero bytes are a valid
        // `T` (DeviceCopy), so `set_len` exposes initialised values only.
        unsafe {
            std::ptr::write_bytes(out.as_mut_ptr(), 0, self.len());
            out.set_len(self.len());
        }
        self.copy_to_host(&mut out, None)?;
        Ok(out)
    }

    /// Copies `src` into `self` (any kinds, any contexts, any shapes of the
    /// same length: see [`copy_shape`]) on `stream`, which must belong to the
    /// destination's or the source's context. The one place that picks the
    /// driver call: `cuMemcpyAsync` / `cuMemcpyPeerAsync` for contiguous
    /// memory, `cuMemcpy2DAsync` / `cuMemcpy3DPeerAsync` when a side has
    /// padded rows; the peer forms between device memory of two contexts.
    pub(crate) fn copy_from(self, src: Elems<'_, T>, stream: &Arc<CudaStream>) -> Result<()> {
        if src.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                actual: src.len(),
            });
        }
        let shape = copy_shape(&self.shape, &src.shape)?;
        check_copy_stream(self.mem, src.mem, stream)?;
        let (dst_state, src_state) = (&self.mem.state, &src.mem.state);
        let same_context = dst_state.ctx.cu_ctx() == src_state.ctx.cu_ctx();
        if self.len() == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let (dst_addr, src_addr) = (self.addr(), src.addr());
        if self.mem.addr == src.mem.addr && partially_overlap(&self.shape, &src.shape) {
            return Err(Error::InvalidArgument(
                "source and destination overlap; copy through a temporary buffer",
            ));
        }
        // Device memory of two contexts: a peer copy. Anything else (one
        // context, or pinned / unified memory, which every context addresses)
        // is a unified-addressing copy.
        let _peer_copy = if same_context {
            None
        } else {
            Some(peer::prepare_copy(self.mem, src.mem)?)
        };
        let peer = !same_context && self.mem.is_device_resident() && src.mem.is_device_resident();
        let (dst_ctx, src_ctx) = (dst_state.ctx.cu_ctx(), src_state.ctx.cu_ctx());
        // Unified addressing on both sides, as `cuMemcpyAsync` does for the
        // linear form: the driver resolves each address to its own memory
        // (device, pool, pinned or managed, of either context).
        let (dst_side, src_side) = (Side::Unified(dst_addr), Side::Unified(src_addr));
        StreamOrder::run_pair(self.ordered(), src.ordered(), stream, || {
            stream.context().bind_to_thread().op("cuCtxSetCurrent")?;
            let s = stream.cu_stream();
            // SAFETY: both sides' elements (contiguous, or `rows` rows of
            // `row_bytes` at their pitches, never touching row padding) lie
            // inside live allocations and do not partially overlap; both are
            // ordered after earlier work on them and recorded on `stream`, so
            // host access and frees wait for the copy. A peer copy names each
            // side's own context.
            unsafe {
                match shape {
                    CopyShape::Linear { bytes } if peer => {
                        sys::cuMemcpyPeerAsync(dst_addr, dst_ctx, src_addr, src_ctx, bytes, s)
                            .result()
                            .op("cuMemcpyPeerAsync")
                    }
                    CopyShape::Linear { bytes } => sys::cuMemcpyAsync(dst_addr, src_addr, bytes, s)
                        .result()
                        .op("cuMemcpyAsync"),
                    CopyShape::Rect {
                        row_bytes,
                        rows,
                        dst_pitch,
                        src_pitch,
                    } if peer => {
                        let p = memcpy3d_peer(
                            (dst_addr, dst_ctx, dst_pitch),
                            (src_addr, src_ctx, src_pitch),
                            row_bytes,
                            rows,
                        );
                        sys::cuMemcpy3DPeerAsync(&p, s)
                            .result()
                            .op("cuMemcpy3DPeerAsync")
                    }
                    CopyShape::Rect {
                        row_bytes,
                        rows,
                        dst_pitch,
                        src_pitch,
                    } => {
                        let p = memcpy2d(dst_side, dst_pitch, src_side, src_pitch, row_bytes, rows);
                        sys::cuMemcpy2DAsync_v2(&p, s)
                            .result()
                            .op("cuMemcpy2DAsync")
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcpy2d_sets_both_sides() {
        let host = [0u8; 8];
        let p = memcpy2d(
            Side::Device(0x1000),
            512,
            Side::HostSrc(host.as_ptr().cast()),
            8,
            8,
            1,
        );
        assert_eq!(p.dstMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_DEVICE);
        assert_eq!(p.dstDevice, 0x1000);
        assert!(p.dstHost.is_null());
        assert_eq!(p.srcMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_HOST);
        assert_eq!(p.srcHost, host.as_ptr().cast());
        assert_eq!(
            (p.srcPitch, p.dstPitch, p.WidthInBytes, p.Height),
            (8, 512, 8, 1)
        );
        let q = memcpy2d(Side::Unified(0x2000), 8, Side::Device(0x3000), 256, 8, 4);
        assert_eq!(q.dstMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED);
        assert_eq!((q.dstDevice, q.srcDevice), (0x2000, 0x3000));
    }

    #[test]
    fn memcpy3d_peer_names_both_contexts() {
        let (a, b) = (0x10 as sys::CUcontext, 0x20 as sys::CUcontext);
        let p = memcpy3d_peer((0x1000, a, 512), (0x2000, b, 96), 84, 5);
        assert_eq!((p.dstDevice, p.dstContext, p.dstPitch), (0x1000, a, 512));
        assert_eq!((p.srcDevice, p.srcContext, p.srcPitch), (0x2000, b, 96));
        assert_eq!((p.WidthInBytes, p.Height, p.Depth), (84, 5, 1));
    }
}
