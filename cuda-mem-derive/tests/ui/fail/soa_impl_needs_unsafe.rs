//! A hand-written `DeviceSoA` impl in safe code: the trait is `unsafe`
//! (its field table must be the same in the host's build and the
//! kernels'), so this is E0200. While it was safe, a table with a `cfg!`
//! in it (one field on the host, 64 in the kernel) made a kernel write
//! 16 KiB past a `SoaBuffer` from a crate that forbids unsafe code.
#![forbid(unsafe_code)]
use cm_renamed::soa::{DeviceSoA, FieldFamily, FieldMaker, FieldReader, FieldVisitor, SoaField};
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Bytes {
    bytes: [u8; 64],
}

const WHOLE: [SoaField; 1] = [SoaField::of::<[u8; 64]>("bytes", 0)];

impl DeviceSoA for Bytes {
    const FIELDS: &'static [SoaField] = &WHOLE;
    type Fields<Fam: FieldFamily> = ();
    fn make_fields<Fam: FieldFamily>(_: &mut impl FieldMaker<Fam>) -> Self::Fields<Fam> {}
    fn visit_fields(&self, visitor: &mut impl FieldVisitor) {
        visitor.field(0, &self.bytes);
    }
    fn read_fields(reader: &mut impl FieldReader) -> Self {
        Bytes { bytes: reader.field(0) }
    }
}

fn main() {}
