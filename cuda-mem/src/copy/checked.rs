//! [`CheckedDeviceCopy`]: types that go to the device as the bits of a
//! [`DeviceCopy`] type but take only some of its bit patterns (`bool`,
//! fieldless enums, structs of them), converted both ways by safe code that
//! checks every value coming back; [`InvalidBitPattern`], what a failed
//! check reports; and [`first_invalid`].

use crate::copy::device_copy::DeviceCopy;

/// A type stored in device memory as its [`Bits`](Self::Bits), a
/// [`DeviceCopy`] type, where only some bit patterns are values: `bool`
/// (the bytes 0 and 1 of a `u8`), a fieldless enum (its discriminants), a
/// struct with such fields. Device code and `memset` can write any bits, so
/// every value that comes back goes through [`try_from_bits`](Self::try_from_bits),
/// which refuses the bits that are not a value.
///
/// Every `DeviceCopy` type is `CheckedDeviceCopy`, as its own bits, every
/// pattern valid. Derive it for your enums and structs with
/// [`#[derive(CheckedDeviceCopy)]`](macro@crate::CheckedDeviceCopy), or
/// write the two conversions by hand: the trait is safe to implement,
/// because nothing reinterprets memory as `Self`; the values are made by
/// `try_from_bits` alone. (Its cost: a pass over the data where a `DeviceCopy`
/// type is copied as it is.)
///
/// ```
/// use cuda_mem::CheckedDeviceCopy;
///
/// #[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
/// #[repr(u8)]
/// enum Phase { Solid = 1, Liquid = 2, Gas = 4 }
///
/// assert_eq!(Phase::Gas.into_bits(), 4u8);
/// assert_eq!(Phase::try_from_bits(2), Some(Phase::Liquid));
/// assert_eq!(Phase::try_from_bits(3), None); // a byte a kernel could write
/// assert_eq!(bool::try_from_bits(1), Some(true));
/// assert_eq!(bool::try_from_bits(2), None);
/// // `DeviceCopy` types are their own bits:
/// assert_eq!(<f32 as CheckedDeviceCopy>::try_from_bits(0.5), Some(0.5));
/// ```
pub trait CheckedDeviceCopy: Copy {
    /// The type the values are stored as: same size, every bit pattern
    /// valid.
    type Bits: DeviceCopy;

    /// The bits of `self`.
    fn into_bits(self) -> Self::Bits;

    /// The value whose bits are `bits`, or `None` when `bits` are not a
    /// value of `Self`.
    fn try_from_bits(bits: Self::Bits) -> Option<Self>;

    /// Whether `bits` are a value of `Self`.
    ///
    /// ```
    /// use cuda_mem::CheckedDeviceCopy;
    /// assert!(bool::is_valid_bit_pattern(0));
    /// assert!(!bool::is_valid_bit_pattern(0xff));
    /// ```
    #[inline]
    fn is_valid_bit_pattern(bits: Self::Bits) -> bool {
        Self::try_from_bits(bits).is_some()
    }
}

impl<T: DeviceCopy> CheckedDeviceCopy for T {
    type Bits = T;

    #[inline(always)]
    fn into_bits(self) -> T {
        self
    }

    #[inline(always)]
    fn try_from_bits(bits: T) -> Option<T> {
        Some(bits)
    }

    #[inline(always)]
    fn is_valid_bit_pattern(_: T) -> bool {
        true
    }
}

/// `false` is the byte 0, `true` the byte 1 (Rust's own layout of `bool`);
/// every other byte is refused.
impl CheckedDeviceCopy for bool {
    type Bits = u8;

    #[inline(always)]
    fn into_bits(self) -> u8 {
        u8::from(self)
    }

    #[inline(always)]
    fn try_from_bits(bits: u8) -> Option<bool> {
        match bits {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

/// What a checked read found: element `index` holds bits that are not a
/// value of `type_name`.
///
/// ```
/// use cuda_mem::checked::InvalidBitPattern;
/// let e = InvalidBitPattern { index: 3, type_name: "bool" };
/// assert!(e.to_string().contains("element 3"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvalidBitPattern {
    /// The first element whose bits are not a value.
    pub index: usize,
    /// The element type (`core::any::type_name`).
    pub type_name: &'static str,
}

impl core::fmt::Display for InvalidBitPattern {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "element {} holds bits that are not a `{}` (device code or a memset wrote them); \
             read the raw bits to see them, and fix the writer",
            self.index, self.type_name
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for InvalidBitPattern {}

/// The index of the first of `bits` that is not a value of `T`, or `None`
/// when every one is.
///
/// ```
/// use cuda_mem::checked::first_invalid;
/// assert_eq!(first_invalid::<bool>(&[0, 1, 1, 7, 2]), Some(3));
/// assert_eq!(first_invalid::<bool>(&[1, 0]), None);
/// assert_eq!(first_invalid::<u32>(&[u32::MAX]), None);
/// ```
pub fn first_invalid<T: CheckedDeviceCopy>(bits: &[T::Bits]) -> Option<usize> {
    bits.iter().position(|&b| !T::is_valid_bit_pattern(b))
}

/// Writes the value of every element of `src` to `dst` (of equal length)
/// through `write`, and whether every one was a value. Branch-free (a
/// vector loop for `bool`s): bits that are no value write `src[0]`'s value
/// instead; when `src[0]` itself is none, nothing is written. The one
/// conversion loop of slices: [`values_of_bits`], and `Checked` memory's
/// reads in parallel lanes.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn convert_into<C: CheckedDeviceCopy, D>(
    src: &[C::Bits],
    dst: &mut [D],
    write: impl Fn(&mut D, C),
) -> bool {
    let Some(&first) = src.first() else {
        return true;
    };
    let Some(fallback) = C::try_from_bits(first) else {
        return false;
    };
    let mut all = true;
    for (d, &b) in dst.iter_mut().zip(src) {
        let value = C::try_from_bits(b);
        all &= value.is_some();
        write(d, value.unwrap_or(fallback));
    }
    all
}

/// What a checked read of `bits` reports: the first element that is no
/// value of `C` (`bits.len()` when there is none, which no caller asks).
#[cfg(feature = "std")]
pub(crate) fn invalid_at<C: CheckedDeviceCopy>(bits: &[C::Bits]) -> InvalidBitPattern {
    InvalidBitPattern {
        index: first_invalid::<C>(bits).unwrap_or(bits.len()),
        type_name: core::any::type_name::<C>(),
    }
}

/// The values of `bits`, or the first index whose bits are not a value.
///
/// ```
/// use cuda_mem::checked::{values_of_bits, InvalidBitPattern};
/// assert_eq!(values_of_bits::<bool>(&[1, 0]), Ok(vec![true, false]));
/// assert_eq!(
///     values_of_bits::<bool>(&[1, 0, 9]),
///     Err(InvalidBitPattern { index: 2, type_name: "bool" })
/// );
/// ```
#[cfg(feature = "std")]
pub fn values_of_bits<T: CheckedDeviceCopy>(
    bits: &[T::Bits],
) -> Result<std::vec::Vec<T>, InvalidBitPattern> {
    let mut out = std::vec::Vec::<T>::with_capacity(bits.len());
    let spare = &mut out.spare_capacity_mut()[..bits.len()];
    if !convert_into::<T, _>(bits, spare, |d, v| {
        d.write(v);
    }) {
        return Err(invalid_at::<T>(bits));
    }
    // SAFETY: `convert_into` returned `true`, so it wrote all of the first
    // `bits.len()` elements of the capacity; `T: Copy`, nothing to drop.
    unsafe { out.set_len(bits.len()) };
    Ok(out)
}

/// The bits of `values`, to upload.
///
/// ```
/// use cuda_mem::checked::bits_of_values;
/// assert_eq!(bits_of_values(&[true, false, true]), vec![1u8, 0, 1]);
/// ```
#[cfg(feature = "std")]
pub fn bits_of_values<T: CheckedDeviceCopy>(values: &[T]) -> std::vec::Vec<T::Bits> {
    values.iter().map(|&v| v.into_bits()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every byte: 0 and 1 are the two `bool`s, and round-trip; no other
    /// byte is one.
    #[test]
    fn bool_takes_the_bytes_0_and_1_alone() {
        for b in 0..=u8::MAX {
            match bool::try_from_bits(b) {
                Some(v) => {
                    assert!(b <= 1);
                    assert_eq!(v.into_bits(), b);
                }
                None => assert!(b > 1),
            }
        }
        assert_eq!(true.into_bits(), 1);
        assert_eq!(false.into_bits(), 0);
    }

    #[test]
    fn device_copy_types_are_their_own_bits() {
        assert_eq!(f64::try_from_bits(-0.5), Some(-0.5));
        assert_eq!([1u16, 2].into_bits(), [1, 2]);
        assert!(u8::is_valid_bit_pattern(255));
    }

    #[test]
    fn the_first_invalid_element_is_named() {
        let bits = [1u8, 0, 1, 1, 3, 2];
        assert_eq!(first_invalid::<bool>(&bits), Some(4));
        let err = values_of_bits::<bool>(&bits).unwrap_err();
        assert_eq!(err.index, 4);
        assert_eq!(err.type_name, "bool");
        assert_eq!(
            values_of_bits::<bool>(&bits_of_values(&[true, false])),
            Ok(vec![true, false])
        );
        assert_eq!(first_invalid::<bool>(&[]), None);
    }
}
