//! cudarc's `DeviceSlice` / `DevicePtr` / `DevicePtrMut` for every buffer
//! kind, view, `PitchedBuffer` and `DeviceVec`: what cudarc's own calls
//! (copies, NCCL, raw launches) see of cuda-mem's memory.

use std::sync::Arc;

use cudarc::driver::{CudaStream, SyncOnDrop};

use crate::buffers::buffer::{Buffer, MemoryKind};
use crate::buffers::device_vec::DeviceVec;
use crate::buffers::pitched::PitchedBuffer;
use crate::copy::device_copy::DeviceCopy;
use crate::engine::{Elems, View, ViewMut};

// The cudarc boundary. Foreign traits cannot have a blanket impl over
// `Memory`, so each type has its three impls, all forwarding to the engine.
//
// `DeviceSlice::stream()` is a stream cuda-mem keeps for this purpose and
// never queues work on; cudarc uses it only for copies between two
// contexts, which cuda-mem refuses at this boundary (use `copy_from`, a peer
// copy cuda-mem orders on both sides).
//
// `DevicePtr` / `DevicePtrMut` are for cudarc's own calls (`memcpy_dtoh`,
// NCCL, `launch` through raw pointers): `stream` waits for earlier work on
// the memory, and the guard synchronises `stream` when dropped, so the use
// is complete before anything else touches the memory. A use cuda-mem
// cannot order or describe (a capturing stream, a copy between two
// contexts, padded 2D memory) gets address 0, which makes the driver fail
// the cudarc call. For asynchronous kernel launches use `kernel_arg`.

/// The address and guard of a cudarc `DevicePtr(Mut)` call on `elems`.
fn cudarc_ptr<'s, T: DeviceCopy>(
    elems: Elems<'_, T>,
    stream: &'s CudaStream,
) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
    (
        elems.address_for_cudarc(stream),
        SyncOnDrop::Sync(Some(stream)),
    )
}

/// See the cudarc boundary notes in `buffers/cudarc_boundary.rs`.
impl<T: DeviceCopy, K: MemoryKind> cudarc::driver::DeviceSlice<T> for Buffer<T, K> {
    fn len(&self) -> usize {
        self.elems().len_for_cudarc()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.elems().cudarc_stream()
    }
}
/// See the cudarc boundary notes in `buffers/cudarc_boundary.rs`.
impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for View<'_, T> {
    fn len(&self) -> usize {
        self.elems.len_for_cudarc()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.elems.cudarc_stream()
    }
}
/// See the cudarc boundary notes in `buffers/cudarc_boundary.rs`.
impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for ViewMut<'_, T> {
    fn len(&self) -> usize {
        self.elems.len_for_cudarc()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.elems.cudarc_stream()
    }
}
/// See the cudarc boundary notes in `buffers/cudarc_boundary.rs`: a padded buffer (pitch larger
/// than a row, several rows) gets address 0; copy it into a packed buffer
/// for cudarc or NCCL.
impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for PitchedBuffer<T> {
    fn len(&self) -> usize {
        self.elems().len_for_cudarc()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.elems().cudarc_stream()
    }
}

impl<T: DeviceCopy, K: MemoryKind> cudarc::driver::DevicePtr<T> for Buffer<T, K> {
    fn device_ptr<'s>(
        &'s self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems(), stream)
    }
}
impl<T: DeviceCopy> cudarc::driver::DevicePtr<T> for View<'_, T> {
    fn device_ptr<'s>(
        &'s self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems, stream)
    }
}
impl<T: DeviceCopy> cudarc::driver::DevicePtr<T> for ViewMut<'_, T> {
    fn device_ptr<'s>(
        &'s self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems, stream)
    }
}
impl<T: DeviceCopy> cudarc::driver::DevicePtr<T> for PitchedBuffer<T> {
    fn device_ptr<'s>(
        &'s self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems(), stream)
    }
}

impl<T: DeviceCopy, K: MemoryKind> cudarc::driver::DevicePtrMut<T> for Buffer<T, K> {
    fn device_ptr_mut<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems(), stream)
    }
}
impl<T: DeviceCopy> cudarc::driver::DevicePtrMut<T> for ViewMut<'_, T> {
    fn device_ptr_mut<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems, stream)
    }
}
impl<T: DeviceCopy> cudarc::driver::DevicePtrMut<T> for PitchedBuffer<T> {
    fn device_ptr_mut<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems(), stream)
    }
}

/// See the cudarc boundary notes in `buffers/cudarc_boundary.rs`.
impl<T: DeviceCopy> cudarc::driver::DeviceSlice<T> for DeviceVec<T> {
    fn len(&self) -> usize {
        self.elems().len_for_cudarc()
    }
    fn stream(&self) -> &Arc<CudaStream> {
        self.elems().cudarc_stream()
    }
}
impl<T: DeviceCopy> cudarc::driver::DevicePtr<T> for DeviceVec<T> {
    fn device_ptr<'s>(
        &'s self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems(), stream)
    }
}
impl<T: DeviceCopy> cudarc::driver::DevicePtrMut<T> for DeviceVec<T> {
    fn device_ptr_mut<'s>(
        &'s mut self,
        stream: &'s CudaStream,
    ) -> (cudarc::driver::sys::CUdeviceptr, SyncOnDrop<'s>) {
        cudarc_ptr(self.elems(), stream)
    }
}
