//! [`DevicePtr<T>`]: a typed device address that can live inside device structs.

use core::fmt;
use core::marker::PhantomData;

/// A typed address in the device's (unified) address space.
///
/// `#[repr(transparent)]` over a `u64`, so it has the layout of a `T*` in CUDA
/// C++ and of a `*mut T` in a Rust kernel. It is the way to put pointers into
/// structs that go to the device: raw pointers and references are not
/// [`DeviceCopy`](crate::DeviceCopy) because a host address means nothing there.
///
/// Holding a `DevicePtr` does not keep the memory alive and dereferencing it on
/// the host is impossible; buffers hand them out (`buffer.device_ptr()`) and
/// kernels use them.
///
/// ```
/// use cuda_mem::{DeviceCopy, DevicePtr};
///
/// #[derive(Clone, Copy, DeviceCopy)]
/// #[repr(C)]
/// struct Mesh {
///     vertices: DevicePtr<[f32; 3]>,
///     count: u64,
/// }
///
/// let null = Mesh { vertices: DevicePtr::null(), count: 0 };
/// assert!(null.vertices.is_null());
///
/// // `Pod` (for `T: 'static`), like every derived struct:
/// let bytes: &[u8] = bytemuck::bytes_of(&null);
/// assert_eq!(bytes, &[0; 16]);
/// ```
#[repr(transparent)]
pub struct DevicePtr<T> {
    addr: u64,
    _points_to: PhantomData<*mut T>,
}

impl<T> DevicePtr<T> {
    /// The null device pointer.
    ///
    /// ```
    /// assert_eq!(cuda_mem::DevicePtr::<u32>::null().addr(), 0);
    /// ```
    pub const fn null() -> Self {
        Self {
            addr: 0,
            _points_to: PhantomData,
        }
    }

    /// Wraps a raw device address.
    ///
    /// Safe: a `DevicePtr` is only an address. Whoever dereferences it (a
    /// kernel) must make sure it points to live memory holding `T`s.
    ///
    /// ```
    /// let p = cuda_mem::DevicePtr::<f32>::from_addr(0x7f00_0000_0000);
    /// assert_eq!(p.addr(), 0x7f00_0000_0000);
    /// ```
    pub const fn from_addr(addr: u64) -> Self {
        Self {
            addr,
            _points_to: PhantomData,
        }
    }

    /// The raw address (a `CUdeviceptr`).
    ///
    /// ```
    /// assert_eq!(cuda_mem::DevicePtr::<u8>::from_addr(64).addr(), 64);
    /// ```
    pub const fn addr(self) -> u64 {
        self.addr
    }

    /// Whether this is the null pointer.
    ///
    /// ```
    /// assert!(cuda_mem::DevicePtr::<u8>::null().is_null());
    /// ```
    pub const fn is_null(self) -> bool {
        self.addr == 0
    }

    /// The address `count` elements further on, or `None` on overflow.
    ///
    /// ```
    /// let p = cuda_mem::DevicePtr::<u32>::from_addr(256);
    /// assert_eq!(p.checked_add(4).unwrap().addr(), 272);
    /// assert!(cuda_mem::DevicePtr::<u32>::from_addr(u64::MAX).checked_add(1).is_none());
    /// ```
    pub const fn checked_add(self, count: usize) -> Option<Self> {
        let Some(bytes) = (count as u64).checked_mul(core::mem::size_of::<T>() as u64) else {
            return None;
        };
        match self.addr.checked_add(bytes) {
            Some(addr) => Some(Self::from_addr(addr)),
            None => None,
        }
    }

    /// The same address seen as a pointer to `U`.
    ///
    /// ```
    /// let p = cuda_mem::DevicePtr::<u32>::from_addr(256);
    /// assert_eq!(p.cast::<u8>().addr(), 256);
    /// ```
    pub const fn cast<U>(self) -> DevicePtr<U> {
        DevicePtr::from_addr(self.addr)
    }

    /// The pointer as a raw `*mut T`, for use inside a kernel.
    ///
    /// ```
    /// let p = cuda_mem::DevicePtr::<u32>::from_addr(256);
    /// assert_eq!(p.as_raw() as usize, 256);
    /// ```
    pub fn as_raw(self) -> *mut T {
        self.addr as usize as *mut T
    }
}

impl<T> Clone for DevicePtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevicePtr<T> {}

impl<T> PartialEq for DevicePtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.addr == other.addr
    }
}
impl<T> Eq for DevicePtr<T> {}

impl<T> fmt::Debug for DevicePtr<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DevicePtr({:#x})", self.addr)
    }
}

impl<T> Default for DevicePtr<T> {
    fn default() -> Self {
        Self::null()
    }
}

// SAFETY: a DevicePtr is a plain integer address; it grants no access to
// anything on the host, so sharing or sending it between threads is harmless.
unsafe impl<T> Send for DevicePtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for DevicePtr<T> {}

// SAFETY: `#[repr(transparent)]` over `u64` (8 bytes, no padding, every bit
// pattern valid, no host pointer) — the `DeviceCopy` contract.
unsafe impl<T> crate::copy::device_copy::DeviceCopy for DevicePtr<T> {
    const __LAYOUT: u64 = crate::copy::layout::scalar(crate::copy::layout::DEVICE_PTR, 8, 8);
}

// SAFETY: `#[repr(transparent)]` over `u64`: all zeros is the null pointer.
unsafe impl<T> bytemuck::Zeroable for DevicePtr<T> {}
// SAFETY: `#[repr(transparent)]` over `u64` (the `PhantomData` is zero-sized):
// `Copy`, no padding, every bit pattern valid; `T: 'static` for `Pod: 'static`.
unsafe impl<T: 'static> bytemuck::Pod for DevicePtr<T> {}

#[cfg(feature = "host")]
// SAFETY: same layout as the `u64` cudarc passes for a `CUdeviceptr`.
unsafe impl<T> cudarc::driver::DeviceRepr for DevicePtr<T> {}
#[cfg(feature = "host")]
// SAFETY: all-zero bits is the null pointer, a valid value.
unsafe impl<T> cudarc::driver::ValidAsZeroBits for DevicePtr<T> {}
