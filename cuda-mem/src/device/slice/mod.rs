//! [`DeviceSlice`] and [`DeviceSliceMut`]: a buffer or view as a kernel
//! parameter, `#[repr(C)] { ptr, len }`, exactly what the host pushes; and
//! their checked forms for `bool`s and enums, [`CheckedSlice`] and
//! [`CheckedSliceMut`].
//!
//! A kernel runs its body once per thread, and every thread receives the same
//! parameter values. So a [`DeviceSliceMut`] in a kernel is seen by all
//! threads at once: its safe API only reaches elements that belong to the
//! calling thread, and reaching any other element is `unsafe`. A
//! [`DeviceSlice`] is read-only for everyone while the kernel runs (the host
//! side holds a shared borrow of the memory and no other queued work writes
//! it), so any thread may read any element.
//!
//! # Who owns which element of a `DeviceSliceMut`
//!
//! Element `i` belongs to the thread whose
//! [`global_linear_idx`](super::global_linear_idx) is `i % total_threads()`.
//! That rule depends only on the launch, never on what a thread did with its
//! copy of the parameter, so every safe method follows it:
//! [`this_thread_mut`](DeviceSliceMut::this_thread_mut) gives element
//! `global_linear_idx()` and [`grid_stride_mut`](DeviceSliceMut::grid_stride_mut)
//! the elements `global_linear_idx() + k * total_threads()`, and both borrow
//! the slice mutably, so a thread holds at most one `&mut` to each of its
//! elements. (A safe method that re-based indices, such as `split_at_mut`,
//! would break the rule: a thread that split its copy would reach elements
//! that another, which did not, also reaches. There is none.) Reading or
//! writing any other element is `unsafe`: [`read`](DeviceSliceMut::read),
//! [`write`](DeviceSliceMut::write), [`get_mut`](DeviceSliceMut::get_mut).

mod checked;
mod read;
mod write;
mod zip;

pub use checked::{CheckedMut, CheckedSlice, CheckedSliceMut};
pub use read::{Align16, DeviceSlice, GridStrideRef};
pub use write::{DeviceSliceMut, GridStrideMut, GridStrideZip};
pub use zip::ZipInputs;
