//! [`Pusher`]: appends single elements to a [`DeviceVec`] in batches, one copy
//! per batch of 1 MiB.

use crate::buffers::device_vec::DeviceVec;
use crate::copy::device_copy::DeviceCopy;
use crate::error::Result;
use crate::memory::raw::element_size;

/// Appends single elements to a [`DeviceVec`] in batches: made by
/// [`DeviceVec::pusher`]. It collects up to [`Pusher::BATCH`] elements on
/// the host and appends them with one copy. It borrows the vector
/// exclusively, so nothing can see the vector before the batch is in.
///
/// Call [`finish`](Self::finish) to append the last batch and see its
/// error; dropping the pusher appends it too, but can only report a driver
/// error to the context (as every `Drop` in this crate does).
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let mut v = cuda_mem::DeviceVec::<u64>::new(&ctx)?;
/// let mut p = v.pusher();
/// (0..100).try_for_each(|i| p.push(i))?;
/// assert_eq!(p.len(), 100);
/// p.finish()?;
/// assert_eq!(v.len(), 100);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct Pusher<'a, T: DeviceCopy> {
    pub(super) vec: &'a mut DeviceVec<T>,
    pub(super) batch: Vec<T>,
}

impl<T: DeviceCopy> Pusher<'_, T> {
    /// Elements per batch: 1 MiB of them (at least one).
    ///
    /// ```
    /// assert_eq!(cuda_mem::Pusher::<u32>::BATCH, 1 << 18);
    /// ```
    pub const BATCH: usize = {
        let n = (1 << 20) / element_size::<T>();
        if n == 0 {
            1
        } else {
            n
        }
    };

    /// Appends `value` (to the batch; a full batch is copied to the device).
    /// On an error the batch stays, and the vector is as it was.
    ///
    /// ```no_run
    /// # fn f(p: &mut cuda_mem::Pusher<'_, f32>) -> cuda_mem::Result<()> {
    /// p.push(1.0)?;
    /// # Ok(()) }
    /// ```
    pub fn push(&mut self, value: T) -> Result<()> {
        self.batch.push(value);
        if self.batch.len() >= Self::BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Appends the batch collected so far to the vector now.
    ///
    /// ```no_run
    /// # fn f(p: &mut cuda_mem::Pusher<'_, f32>) -> cuda_mem::Result<()> {
    /// p.flush()?;
    /// # Ok(()) }
    /// ```
    pub fn flush(&mut self) -> Result<()> {
        if !self.batch.is_empty() {
            self.vec.extend_from_host(&self.batch)?;
            self.batch.clear();
        }
        Ok(())
    }

    /// The vector's length once the batch is in.
    ///
    /// ```no_run
    /// # fn f(p: &cuda_mem::Pusher<'_, f32>) {
    /// let n = p.len();
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.vec.len + self.batch.len()
    }

    /// Whether the vector will be empty once the batch is in.
    ///
    /// ```no_run
    /// # fn f(p: &cuda_mem::Pusher<'_, f32>) {
    /// let nothing = p.is_empty();
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the last batch and ends the pushing.
    ///
    /// ```no_run
    /// # fn f(mut p: cuda_mem::Pusher<'_, f32>) -> cuda_mem::Result<()> {
    /// p.push(2.0)?;
    /// p.finish()?;
    /// # Ok(()) }
    /// ```
    pub fn finish(mut self) -> Result<()> {
        self.flush()
    }
}

impl<T: DeviceCopy> Drop for Pusher<'_, T> {
    fn drop(&mut self) {
        let result = self.flush();
        crate::error::record_in(&self.vec.mem.state.ctx, result);
    }
}

impl<T: DeviceCopy> std::fmt::Debug for Pusher<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pusher")
            .field("vec", &self.vec)
            .field("batched", &self.batch.len())
            .finish()
    }
}
