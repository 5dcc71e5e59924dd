//! A kernel over a structure of arrays of [`Bytes`], whose `DeviceSoA`
//! impl is written by hand and breaks the trait's contract on purpose: its
//! field table is one 64-byte field in the host build (a `SoaBuffer` of one
//! struct is 256 bytes) and, when `SPLIT_ON_DEVICE`, 64 one-byte fields in
//! the kernel build (field 63 of struct 0 at byte 63 * 256 = 16128), so a
//! launch from the host's buffer would write 16 KiB past it. Before
//! `DeviceSoA` was an `unsafe trait`, this compiled in a crate that forbids
//! unsafe code (now a safe impl is E0200: `cuda-mem-derive/tests/ui/fail/
//! soa_impl_needs_unsafe.rs`). What remains is the check for a stale PTX:
//! the `ptx` test builds this crate with `SPLIT_ON_DEVICE` false (host and
//! kernel agree: the PTX a host of this crate expects) and true, and checks
//! that the two PTX differ in what the launch compares (the SoA parameter's
//! fingerprint covers the field table).
#![no_std]

use cuda_mem::device::SoaSliceMut;
use cuda_mem::soa::{DeviceSoA, FieldFamily, FieldMaker, FieldReader, FieldVisitor, SoaField};

/// Whether the kernel build's table is 64 one-byte fields.
const SPLIT_ON_DEVICE: bool = true /* split */;

const SPLIT: bool = SPLIT_ON_DEVICE && cfg!(target_arch = "nvptx64");

#[derive(Clone, Copy, cuda_mem::DeviceCopy)]
#[repr(C)]
pub struct Bytes {
    pub bytes: [u8; 64],
}

const WHOLE: [SoaField; 1] = [SoaField::of::<[u8; 64]>("bytes", 0)];

const SPLIT_FIELDS: [SoaField; 64] = {
    let mut fields = [SoaField::of::<u8>("bytes", 0); 64];
    let mut i = 0;
    while i < 64 {
        fields[i].offset = i;
        i += 1;
    }
    fields
};

// SAFETY: none when `SPLIT_ON_DEVICE`: the table differs between the host
// build and the kernel build, which the contract forbids; this fixture is
// built only to read its PTX, never launched.
unsafe impl DeviceSoA for Bytes {
    const FIELDS: &'static [SoaField] = if SPLIT { &SPLIT_FIELDS } else { &WHOLE };
    type Fields<Fam: FieldFamily> = ();

    fn make_fields<Fam: FieldFamily>(_: &mut impl FieldMaker<Fam>) -> Self::Fields<Fam> {}

    fn visit_fields(&self, visitor: &mut impl FieldVisitor) {
        if SPLIT {
            for (i, byte) in self.bytes.iter().enumerate() {
                visitor.field(i, byte);
            }
        } else {
            visitor.field(0, &self.bytes);
        }
    }

    fn read_fields(reader: &mut impl FieldReader) -> Self {
        let mut bytes = [0u8; 64];
        if SPLIT {
            for (i, byte) in bytes.iter_mut().enumerate() {
                *byte = reader.field::<u8>(i);
            }
        } else {
            bytes = reader.field::<[u8; 64]>(0);
        }
        Bytes { bytes }
    }
}

/// Writes every byte of each thread's struct: field by field, by the
/// kernel build's table.
#[cuda_mem::kernel]
pub fn scribble(mut soa: SoaSliceMut<Bytes>) {
    if let Some(mut item) = soa.this_thread_mut() {
        item.set(Bytes { bytes: [0xa5; 64] });
    }
}
