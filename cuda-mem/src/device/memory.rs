//! Global-memory loads and stores of a chosen width: the 16-byte vector
//! accesses (`ld/st.global.v4.b32`) that bandwidth-bound kernels are made
//! of, and single bytes, emitted exactly (the compiler only vectorises what
//! it can prove aligned, and only knows the global space for kernel
//! parameters).
//!
//! Elsewhere than `nvptx64` they are plain reads and writes through the
//! pointer.

/// Stores 16 bytes, `value[0]` at the lowest address: `st.global.v4.b32`.
///
/// # Safety
/// `ptr` is 16-byte aligned, points to 16 bytes of global (device, managed
/// or mapped pinned) memory this thread may write, and no other thread
/// accesses them concurrently.
///
/// ```
/// let mut dst = [[0u32; 4]; 2];
/// // SAFETY: aligned enough on the host, writable, one thread.
/// unsafe { cuda_mem::device::store_global_v4(&mut dst[1], [1, 2, 3, 4]) };
/// assert_eq!(dst[1], [1, 2, 3, 4]);
/// ```
#[inline(always)]
pub unsafe fn store_global_v4(ptr: *mut [u32; 4], value: [u32; 4]) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract; the asm only stores the 16 bytes.
    unsafe {
        core::arch::asm!(
            "st.global.v4.b32 [{a}], {{{x}, {y}, {z}, {w}}};",
            a = in(reg64) ptr,
            x = in(reg32) value[0],
            y = in(reg32) value[1],
            z = in(reg32) value[2],
            w = in(reg32) value[3],
            options(nostack, preserves_flags)
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: valid for writes, no concurrent access.
    unsafe {
        ptr.write(value)
    }
}

/// Loads 16 bytes, the lowest address into `[0]`: `ld.global.v4.b32`.
///
/// # Safety
/// `ptr` is 16-byte aligned, points to 16 readable bytes of global memory,
/// and no other thread writes them concurrently.
///
/// ```
/// let src = [[5u32, 6, 7, 8]];
/// // SAFETY: readable, nobody writes it.
/// assert_eq!(unsafe { cuda_mem::device::load_global_v4(&src[0]) }, [5, 6, 7, 8]);
/// ```
#[inline(always)]
pub unsafe fn load_global_v4(ptr: *const [u32; 4]) -> [u32; 4] {
    #[cfg(target_arch = "nvptx64")]
    {
        let (x, y, z, w): (u32, u32, u32, u32);
        // SAFETY: the caller's contract; the asm only loads the 16 bytes.
        unsafe {
            core::arch::asm!(
                "ld.global.v4.b32 {{{x}, {y}, {z}, {w}}}, [{a}];",
                a = in(reg64) ptr,
                x = out(reg32) x,
                y = out(reg32) y,
                z = out(reg32) z,
                w = out(reg32) w,
                options(readonly, nostack, preserves_flags)
            );
        }
        [x, y, z, w]
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: valid for reads, no concurrent write.
    unsafe {
        ptr.read()
    }
}

/// Stores one byte: `st.global.b8`.
///
/// # Safety
/// `ptr` points to a byte of global memory this thread may write, which no
/// other thread accesses concurrently.
///
/// ```
/// let mut b = [0u8; 3];
/// // SAFETY: writable, one thread.
/// unsafe { cuda_mem::device::store_global_u8(&mut b[2], 9) };
/// assert_eq!(b, [0, 0, 9]);
/// ```
#[inline(always)]
pub unsafe fn store_global_u8(ptr: *mut u8, value: u8) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's contract; the asm only stores the byte.
    unsafe {
        core::arch::asm!(
            "st.global.b8 [{a}], {b};",
            a = in(reg64) ptr,
            b = in(reg16) value as u16,
            options(nostack, preserves_flags)
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: valid for writes, no concurrent access.
    unsafe {
        ptr.write(value)
    }
}
