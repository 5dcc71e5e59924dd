//! The layout fingerprint behind
//! [`DeviceCopy::__LAYOUT`](crate::DeviceCopy::__LAYOUT): a 64-bit FNV-1a
//! hash of sizes, alignments, field names and offsets, and the fields' own
//! fingerprints.
//!
//! It only uses values on which every CUDA target agrees with its host
//! (x86-64, aarch64 and nvptx64 are all 64-bit and little-endian), so the
//! same struct has the same fingerprint on the host and in a kernel crate.

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Kind tags (the first word hashed).
pub const UNSIGNED: u64 = 1;
/// Signed integers.
pub const SIGNED: u64 = 2;
/// IEEE binary floats (`f16`, `f32`, `f64`).
pub const FLOAT: u64 = 3;
/// `bfloat16`.
pub const BFLOAT: u64 = 4;
/// `[T; N]`.
pub const ARRAY: u64 = 5;
/// A struct: its fields' names, offsets and fingerprints.
pub const STRUCT: u64 = 6;
/// `PhantomData<T>`.
pub const PHANTOM: u64 = 7;
/// A device address (`DevicePtr<T>`).
pub const DEVICE_PTR: u64 = 8;
/// A type known only by its size and alignment.
pub const OPAQUE: u64 = 9;

/// Mixes `word` into the hash `hash` (FNV-1a over its 8 little-endian bytes).
///
/// ```
/// use cuda_mem::__private::layout::mix;
/// assert_ne!(mix(0, 1), mix(0, 2));
/// ```
#[must_use]
pub const fn mix(mut hash: u64, word: u64) -> u64 {
    let bytes = word.to_le_bytes();
    let mut i = 0;
    while i < 8 {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

/// A scalar of kind `tag` (e.g. [`UNSIGNED`]).
///
/// ```
/// use cuda_mem::__private::layout::{scalar, SIGNED, UNSIGNED};
/// assert_ne!(scalar(UNSIGNED, 4, 4), scalar(SIGNED, 4, 4));
/// ```
#[must_use]
pub const fn scalar(tag: u64, size: usize, align: usize) -> u64 {
    mix(mix(mix(FNV_OFFSET, tag), size as u64), align as u64)
}

/// `[T; n]` with `T`'s fingerprint `element`.
///
/// ```
/// use cuda_mem::__private::layout::array;
/// assert_ne!(array(1, 3), array(1, 4));
/// ```
#[must_use]
pub const fn array(element: u64, n: usize) -> u64 {
    mix(
        mix(mix(FNV_OFFSET, super::layout::ARRAY), element),
        n as u64,
    )
}

/// A type known only by its size and alignment (the default of
/// hand-written `DeviceCopy` impls).
///
/// ```
/// assert_ne!(cuda_mem::__private::layout::opaque(8, 8), cuda_mem::__private::layout::opaque(8, 4));
/// ```
#[must_use]
pub const fn opaque(size: usize, align: usize) -> u64 {
    scalar(OPAQUE, size, align)
}

/// Mixes the name `name` into `hash`: its length, then FNV-1a over its
/// bytes, a raw identifier's `r#` left out (`r#type` is the field
/// `type`).
///
/// ```
/// use cuda_mem::__private::layout::name;
/// assert_ne!(name(0, "start"), name(0, "end"));
/// assert_eq!(name(0, "r#type"), name(0, "type"));
/// assert_ne!(name(0, "ab"), name(0, "a"));
/// ```
#[must_use]
pub const fn name(hash: u64, name: &str) -> u64 {
    let bytes = name.as_bytes();
    let skip = if bytes.len() > 2 && bytes[0] == b'r' && bytes[1] == b'#' {
        2
    } else {
        0
    };
    let mut hash = mix(hash, (bytes.len() - skip) as u64);
    let mut i = skip;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

/// Builds a struct's fingerprint field by field (each field's name,
/// offset and fingerprint, in declaration order, so two fields of one
/// type swapped or renamed change it), and checks on the way that the
/// non-zero-sized fields tile the struct from offset 0 to its size in
/// declaration order: no padding, the `repr(C)` order.
///
/// The checks panic, which fails the constant that uses them: for a
/// derived struct that is its `__LAYOUT`, evaluated by every buffer
/// (through `__CHECK`) and byte view of cuda-mem.
///
/// ```
/// use cuda_mem::__private::layout::{scalar, StructLayout, FLOAT};
/// let f32_ = scalar(FLOAT, 4, 4);
/// let pair = StructLayout::new(8, 4).field("x", 0, 4, f32_).field("y", 4, 4, f32_).finish();
/// assert_ne!(pair, StructLayout::new(8, 4).field("x", 0, 4, f32_).finish_unchecked());
/// let swapped = StructLayout::new(8, 4).field("y", 0, 4, f32_).field("x", 4, 4, f32_).finish();
/// assert_ne!(pair, swapped);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct StructLayout {
    size: usize,
    next: usize,
    hash: u64,
}

impl StructLayout {
    /// A struct of `size` bytes and alignment `align`.
    #[must_use]
    pub const fn new(size: usize, align: usize) -> Self {
        Self {
            size,
            next: 0,
            hash: scalar(STRUCT, size, align),
        }
    }

    /// The next field in declaration order: its name (as written: an
    /// identifier, or a tuple struct's index), offset, size and
    /// fingerprint.
    #[must_use]
    pub const fn field(self, name: &str, offset: usize, size: usize, layout: u64) -> Self {
        let next = if size == 0 {
            self.next
        } else {
            assert!(
                offset == self.next,
                "`#[derive(DeviceCopy)]`: this struct has padding before a field, or fields \
                 out of declaration order, at this instantiation: its real layout is not the \
                 one the derive checked (`repr(C)` or `repr(transparent)`, no padding); did an \
                 attribute macro after `#[derive(DeviceCopy)]` change its `repr`?"
            );
            offset + size
        };
        Self {
            size: self.size,
            next,
            hash: mix(mix(self::name(self.hash, name), offset as u64), layout),
        }
    }

    /// The fingerprint; panics if the fields leave bytes at the end.
    #[must_use]
    pub const fn finish(self) -> u64 {
        assert!(
            self.next == self.size,
            "`#[derive(DeviceCopy)]`: this struct has padding at its end at this \
             instantiation: its real layout is not the one the derive checked; did an \
             attribute macro after `#[derive(DeviceCopy)]` change its `repr`?"
        );
        self.hash
    }

    /// The fingerprint, without the end check (for tests).
    #[must_use]
    pub const fn finish_unchecked(self) -> u64 {
        self.hash
    }
}
