use cm_renamed::checked::{first_invalid, values_of_bits};
use cm_renamed::{CheckedDeviceCopy, DeviceCopy};

#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(u8)]
enum Small { A = 3, B = 200 }

#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(u16)]
enum Medium { A = 1000, B }

#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(u32)]
enum Large { A = 0xdead_beef }

#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(i32)]
enum Signed { Low = -5, Zero = 0, High = 7 }

// Nested: a checked struct in a checked struct, an array of a `DeviceCopy`
// struct, a tuple struct.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Plain { x: f32, y: f32 }

#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Inner { signed: Signed, large: Large }

#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Outer { inner: Inner, plain: [Plain; 2], medium: Medium, small: Small, on: bool, bytes: [u8; 4] }

#[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Flags(bool, bool, u16);

fn is_device_copy<T: DeviceCopy>() {}

fn main() {
    is_device_copy::<OuterBits>();
    is_device_copy::<FlagsBits>();
    assert_eq!(Small::B.into_bits(), 200u8);
    assert_eq!(Medium::try_from_bits(1001), Some(Medium::B));
    assert_eq!(Large::try_from_bits(0xdead_beee), None);
    assert_eq!(Signed::try_from_bits(-5), Some(Signed::Low));
    assert_eq!(Signed::try_from_bits(-6), None);
    let outer = Outer {
        inner: Inner { signed: Signed::High, large: Large::A },
        plain: [Plain { x: 1.0, y: -2.0 }; 2],
        medium: Medium::A,
        small: Small::A,
        on: true,
        bytes: [1, 2, 3, 4],
    };
    let bits = outer.into_bits();
    assert_eq!(core::mem::size_of::<OuterBits>(), core::mem::size_of::<Outer>());
    assert_eq!(Outer::try_from_bits(bits), Some(outer));
    let mut bad = bits;
    bad.inner.signed = 1;
    assert_eq!(Outer::try_from_bits(bad), None);
    let mut bad = bits;
    bad.on = 2;
    assert!(!Outer::is_valid_bit_pattern(bad));
    let flags = Flags(true, false, 9);
    assert_eq!(Flags::try_from_bits(flags.into_bits()), Some(flags));
    let list = [bits, bits, bad];
    assert_eq!(first_invalid::<Outer>(&list), Some(2));
    assert_eq!(values_of_bits::<Outer>(&list).unwrap_err().index, 2);
}
