//! Host transfers as futures: [`Download`] (device memory into a new `Vec`)
//! and [`Upload`] (a `Vec` into device memory, the `Vec` handed back), both
//! staged through a pinned block of the context's
//! [`PinnedCache`](crate::PinnedCache) and both resolved by a
//! [`Completion`], so the polling thread never waits for the GPU.
//!
//! Each stages through a private [`PinnedBuffer`] that no one else can
//! reach: its only queued use is the transfer's DMA, which the completion
//! covers. A future dropped or forgotten before the DMA is done drops (or
//! leaks) that buffer like any other: its block goes back to the cache with
//! an event behind the DMA, and the cache hands it out again only once the
//! event has fired. The device side is an ordinary queued use of its buffer,
//! in that buffer's stream order: freeing the buffer, or any later
//! operation on it, waits for the DMA whatever became of the future.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use cudarc::driver::CudaStream;

use crate::buffers::buffer::PinnedBuffer;
use crate::copy::device_copy::DeviceCopy;
use crate::error::Result;
use crate::order::completion::Completion;

/// A [`Future`] of a device-to-host copy into a new `Vec<T>`, from
/// [`Memory::download`](crate::Memory::download): the DMA into a pinned
/// block is queued when it is made; once it is done, the first poll copies
/// the block into the `Vec` (a `memcpy` on the polling thread) and returns
/// it.
///
/// ```no_run
/// # async fn f(buf: &cuda_mem::DeviceBuffer<u32>, stream: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// use cuda_mem::prelude::*;
/// let values: Vec<u32> = buf.download(stream)?.await?;
/// # Ok(()) }
/// ```
#[must_use = "a download queues its copy at once, but its values come only through `.await`"]
pub struct Download<T: DeviceCopy> {
    staged: Staged<T>,
}

/// A private staging buffer and the completion of its one queued copy.
struct Staged<T: DeviceCopy> {
    done: Completion,
    /// Taken, idle, once the copy is done.
    staging: Option<PinnedBuffer<T>>,
}

impl<T: DeviceCopy> Staged<T> {
    /// Queues `copy` (into or out of `staging`) on `stream`, and its
    /// completion behind it.
    fn queue(
        mut staging: PinnedBuffer<T>,
        stream: &Arc<CudaStream>,
        copy: impl FnOnce(&mut PinnedBuffer<T>) -> Result<()>,
    ) -> Result<Self> {
        copy(&mut staging)?;
        Ok(Self {
            done: Completion::of_stream(stream)?,
            staging: Some(staging),
        })
    }

    /// The staging buffer, idle, once its copy is done (`None` after the
    /// first time).
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<PinnedBuffer<T>>>> {
        if let Err(e) = std::task::ready!(Pin::new(&mut self.done).poll(cx)) {
            return Poll::Ready(Err(e));
        }
        let staging = self.staging.take();
        if let Some(staging) = &staging {
            // SAFETY: the staging buffer's only queued use is the copy
            // `queue` made on the completion's stream, which has finished,
            // and it was never a kernel argument.
            unsafe { staging.mem.order.assume_idle() };
        }
        Poll::Ready(Ok(staging))
    }
}

impl<T: DeviceCopy> Download<T> {
    /// Queues the copy of `len` elements (rows packed) into a pinned block
    /// on `stream`; `copy` is the queued copy (`copy_to_host_async`).
    pub(crate) fn start(
        ctx: &Arc<cudarc::driver::CudaContext>,
        len: usize,
        stream: &Arc<CudaStream>,
        copy: impl FnOnce(&mut PinnedBuffer<T>) -> Result<()>,
    ) -> Result<Self> {
        let staging = PinnedBuffer::<T>::new_unspecified(ctx, len)?;
        Ok(Self {
            staged: Staged::queue(staging, stream, copy)?,
        })
    }
}

impl<T: DeviceCopy> Future for Download<T> {
    type Output = Result<Vec<T>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Vec<T>>> {
        Poll::Ready(match std::task::ready!(self.staged.poll_idle(cx)) {
            Ok(Some(staging)) => staging.as_slice().map(<[T]>::to_vec),
            Ok(None) => Err(crate::error::Error::InvalidArgument(
                "this download was polled after it returned its values; await it once",
            )),
            Err(e) => Err(e),
        })
    }
}

impl<T: DeviceCopy> Unpin for Download<T> {}

impl<T: DeviceCopy> std::fmt::Debug for Download<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Download")
            .field("done", &self.staged.done)
            .field("taken", &self.staged.staging.is_none())
            .finish()
    }
}

/// A [`Future`] of a host-to-device copy from a `Vec<T>`, from
/// [`MemoryMut::upload`](crate::MemoryMut::upload): the `Vec` is copied into
/// a pinned block (a `memcpy` on the calling thread) and the DMA queued
/// when it is made; it resolves to the `Vec`, handed back for reuse, once
/// the DMA is done.
///
/// ```no_run
/// # async fn f(buf: &mut cuda_mem::DeviceBuffer<u32>, stream: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// use cuda_mem::prelude::*;
/// let data = vec![7u32; buf.len()];
/// let data = buf.upload(data, stream)?.await?; // the same Vec, back
/// # Ok(()) }
/// ```
#[must_use = "an upload queues its copy at once; `.await` it to know it is done"]
pub struct Upload<T: DeviceCopy> {
    /// The staging buffer is kept until the copy is done (dropped earlier,
    /// its block is guarded).
    staged: Staged<T>,
    /// Handed back when the copy is done.
    data: Option<Vec<T>>,
}

impl<T: DeviceCopy> Upload<T> {
    /// Copies `data` into a pinned block and queues `copy` from it on
    /// `stream` (`copy_from_host_async`).
    pub(crate) fn start(
        ctx: &Arc<cudarc::driver::CudaContext>,
        data: Vec<T>,
        stream: &Arc<CudaStream>,
        copy: impl FnOnce(&PinnedBuffer<T>) -> Result<()>,
    ) -> Result<Self> {
        let staging = PinnedBuffer::<T>::from_slice(ctx, &data)?;
        Ok(Self {
            staged: Staged::queue(staging, stream, |staging| copy(staging))?,
            data: Some(data),
        })
    }
}

impl<T: DeviceCopy> Future for Upload<T> {
    type Output = Result<Vec<T>>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<Vec<T>>> {
        if let Err(e) = std::task::ready!(self.staged.poll_idle(cx)) {
            return Poll::Ready(Err(e));
        }
        // The idle staging buffer, if this is the first time, is dropped
        // here.
        Poll::Ready(self.data.take().ok_or(crate::error::Error::InvalidArgument(
            "this upload was polled after it handed its Vec back; await it once",
        )))
    }
}

impl<T: DeviceCopy> Unpin for Upload<T> {}

impl<T: DeviceCopy> std::fmt::Debug for Upload<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload")
            .field("done", &self.staged.done)
            .field("taken", &self.data.is_none())
            .finish()
    }
}
