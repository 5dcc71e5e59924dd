//! The [`DeviceCopy`] trait. (Placeholder: the derive work fleshes this out.)

/// Types that can be copied to and from the device byte for byte.
///
/// # Safety
/// No padding, every bit pattern valid, no host pointers, C layout, align <= 256.
pub unsafe trait DeviceCopy: Copy {}

macro_rules! impl_primitives {
    ($($t:ty),*) => { $(
        // SAFETY: primitive integers and floats have no padding and every bit pattern is valid.
        unsafe impl DeviceCopy for $t {}
    )* };
}
impl_primitives!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// SAFETY: arrays of DeviceCopy have no gaps between elements.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}
