//! Structures of arrays (`#[derive(DeviceSoA)]`, `SoaBuffer`) on the GPU:
//! transpositions both ways (4-byte words for a struct of whole words,
//! bytes for one with `u8` and `u16` fields) from host slices and from
//! device arrays of structs through unaligned views, in every memory kind,
//! of odd and random sizes, every element checked and the bytes around a
//! view checked untouched; fills of whole structs and of one field; field
//! views read and written; copies between kinds.

use cuda_mem::prelude::*;

use cuda_mem::soa::{DeviceSoA, SoaBuffer};
use cuda_mem::{DeviceBuffer, DeviceSoA, Error, Pinned, Pool, Unified};
use cuda_mem_tests::{gpu, random_launch_config, Rng};

/// Seven fields of whole 4-byte words (48 bytes): the word kernels.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Particle {
    pos: [f32; 3],
    vel: [f32; 3],
    mass: f32,
    charge: f32,
    id: u64,
    kind: u32,
    age: f32,
}

/// Fields of 1, 3, 2, 2 and 4 bytes (12 bytes): the byte kernels.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Pixel {
    alpha: u8,
    rgb: [u8; 3],
    depth: u16,
    mask: u16,
    label: u32,
}

fn random_particles(rng: &mut Rng, n: usize) -> Vec<Particle> {
    (0..n).map(|_| rng.value::<Particle>()).collect()
}

fn random_pixels(rng: &mut Rng, n: usize) -> Vec<Pixel> {
    (0..n).map(|_| rng.value::<Pixel>()).collect()
}

/// Bit-for-bit equality (random bits make NaNs, which `==` refuses).
fn same<T: DeviceCopy>(a: &[T], b: &[T]) -> bool {
    cuda_mem::bytes_of_slice(a) == cuda_mem::bytes_of_slice(b)
}

fn sizes(rng: &mut Rng) -> Vec<usize> {
    let mut v = vec![0, 1, 2, 31, 819, 820, 4097];
    v.extend((0..3).map(|_| 1 + rng.below(300_000)));
    v
}

/// Host slices in, structs and fields out, in every kind; the word and
/// the byte kernels.
#[test]
#[ignore = "needs a CUDA device"]
fn structs_round_trip_through_every_kind() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("structs_round_trip_through_every_kind");
    for n in sizes(&mut rng) {
        let particles = random_particles(&mut rng, n);
        let pixels = random_pixels(&mut rng, n);
        macro_rules! check {
            ($what:literal, $soa:expr, $host:expr) => {{
                let soa = $soa;
                let host = $host;
                assert_eq!(soa.len(), n);
                assert!(
                    same(&soa.to_vec().unwrap(), host),
                    "{} n {n}: to_vec",
                    $what
                );
                soa
            }};
        }
        let device = check!(
            "device",
            ParticleSoA::from_slice(&ctx, &particles).unwrap(),
            &particles
        );
        let fields = device.fields();
        let masses: Vec<f32> = particles.iter().map(|p| p.mass).collect();
        let ids: Vec<u64> = particles.iter().map(|p| p.id).collect();
        let vels: Vec<[f32; 3]> = particles.iter().map(|p| p.vel).collect();
        assert!(same(&fields.mass.to_vec().unwrap(), &masses), "n {n}: mass");
        assert!(same(&fields.id.to_vec().unwrap(), &ids), "n {n}: id");
        assert!(same(&fields.vel.to_vec().unwrap(), &vels), "n {n}: vel");
        check!(
            "pinned",
            SoaBuffer::<Particle, Pinned>::from_slice(&ctx, &particles).unwrap(),
            &particles
        );
        check!(
            "unified",
            SoaBuffer::<Pixel, Unified>::from_slice(&ctx, &pixels).unwrap(),
            &pixels
        );
        let pool = check!(
            "pool",
            {
                let mut soa = SoaBuffer::<Pixel, Pool>::new(n, &stream).unwrap();
                soa.copy_from_host(&pixels).unwrap();
                soa
            },
            &pixels
        );
        let depths: Vec<u16> = pixels.iter().map(|p| p.depth).collect();
        let rgbs: Vec<[u8; 3]> = pixels.iter().map(|p| p.rgb).collect();
        assert_eq!(
            pool.fields().depth.to_vec().unwrap(),
            depths,
            "n {n}: depth"
        );
        assert_eq!(pool.fields().rgb.to_vec().unwrap(), rgbs, "n {n}: rgb");
        pool.free_on_stream(&stream).unwrap();
        // Between kinds: one copy of the allocation.
        let mut back = SoaBuffer::<Particle, Pinned>::new(&ctx, n).unwrap();
        back.copy_from(&device).unwrap();
        assert!(
            same(&back.to_vec().unwrap(), &particles),
            "n {n}: copy_from"
        );
    }
}

/// Transpositions from and to device arrays of structs through views at
/// odd offsets: the elements outside a view keep their poison.
#[test]
#[ignore = "needs a CUDA device"]
fn views_of_device_structs_transpose_both_ways() {
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let mut rng = Rng::from_env("views_of_device_structs_transpose_both_ways");
    for _ in 0..8 {
        let total = 1 + rng.below(200_000);
        let a = rng.below(total);
        let n = rng.below(total - a + 1);
        // Particles: structs in from a view, out into a poisoned view.
        let structs = random_particles(&mut rng, total);
        let aos = DeviceBuffer::from_slice(&ctx, &structs).unwrap();
        let mut soa = ParticleSoA::new(&ctx, n).unwrap();
        soa.copy_from_aos_async(&aos.slice(a..a + n).unwrap(), &stream)
            .unwrap();
        let poison = random_particles(&mut rng, total);
        let mut out = DeviceBuffer::from_slice(&ctx, &poison).unwrap();
        let b = rng.below(total - n + 1);
        soa.copy_to_aos_async(&mut out.slice_mut(b..b + n).unwrap(), &stream)
            .unwrap();
        let got = out.to_vec().unwrap();
        assert!(same(&got[..b], &poison[..b]), "before the view");
        assert!(
            same(&got[b..b + n], &structs[a..a + n]),
            "the view, {n} at {a} -> {b}"
        );
        assert!(same(&got[b + n..], &poison[b + n..]), "after the view");
        // Pixels (bytes): the same through the default stream.
        let structs = random_pixels(&mut rng, total);
        let aos = DeviceBuffer::from_slice(&ctx, &structs).unwrap();
        let mut soa = PixelSoA::new(&ctx, n).unwrap();
        soa.copy_from_aos(&aos.slice(a..a + n).unwrap()).unwrap();
        let poison = random_pixels(&mut rng, total);
        let mut out = DeviceBuffer::from_slice(&ctx, &poison).unwrap();
        soa.copy_to_aos(&mut out.slice_mut(b..b + n).unwrap())
            .unwrap();
        let got = out.to_vec().unwrap();
        assert_eq!(&got[..b], &poison[..b]);
        assert_eq!(
            &got[b..b + n],
            &structs[a..a + n],
            "pixels {n} at {a} -> {b}"
        );
        assert_eq!(&got[b + n..], &poison[b + n..]);
        // Lengths must match.
        let short = DeviceBuffer::<Pixel>::new(&ctx, n + 1).unwrap();
        assert!(matches!(
            soa.copy_from_aos(&short),
            Err(Error::LengthMismatch { .. })
        ));
    }
}

/// One word: the smallest struct of the warp-tile word kernels (1024 in a
/// warp's tile).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Word {
    w: u32,
}

/// Fields of 1, 5, 2 and 2 words: a lane's units cross from one field to
/// the next within a batch.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Mixed {
    a: u32,
    b: [u32; 5],
    c: u64,
    d: [f32; 2],
}

/// 4 KiB: the largest struct of the warp-tile kernels, one struct a tile,
/// whose 1-word fields are shorter than a warp.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Page {
    head: u32,
    body: [u32; 1021],
    mark: f32,
    tail: u32,
}

/// 4 KiB and 12 bytes: the block-tile word kernels.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Big {
    head: [u32; 3],
    body: [f32; 1024],
}

/// Three bytes: the block-tile byte kernels (a struct not of whole words).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Rgb {
    r: u8,
    g: u8,
    b: u8,
}

/// Fields of 1, 3, 2, 6 and 4 bytes in 16: the byte-word kernels, with a
/// field's bytes in a group crossing from one struct to the next, fields
/// of halfwords (`depth`, `name`) and of a word (`code`).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Tagged {
    kind: u8,
    rgb: [u8; 3],
    depth: u16,
    name: [u8; 6],
    code: [u8; 4],
}

/// 512 bytes: the largest struct of the byte-word kernels (8 in a warp's
/// tile).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Record {
    head: u8,
    body: [u8; 509],
    tail: u16,
}

/// 516 bytes of byte fields: the block-tile byte kernels again.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct LongRecord {
    head: [u8; 3],
    body: [u8; 513],
}

/// `T`'s structs from a device view to a structure of arrays and back into
/// a poisoned view, and from and to the host, at odd and random lengths.
fn transposes_both_ways<T: DeviceSoA + PartialEq + std::fmt::Debug>(
    rng: &mut Rng,
    stream: &std::sync::Arc<cuda_mem::CudaStream>,
    most: usize,
) {
    let ctx = gpu();
    let name = std::any::type_name::<T>();
    let mut lens = vec![1, 2, 31, 33, 1023, 1025];
    lens.extend((0..3).map(|_| 1 + rng.below(most)));
    for n in lens {
        let total = n + rng.below(40);
        let a = rng.below(total - n + 1);
        let structs: Vec<T> = rng.values(total);
        let aos = DeviceBuffer::from_slice(&ctx, &structs).unwrap();
        let mut soa = SoaBuffer::<T, cuda_mem::Device>::new(&ctx, n).unwrap();
        soa.copy_from_aos_async(&aos.slice(a..a + n).unwrap(), stream)
            .unwrap();
        let poison: Vec<T> = rng.values(total);
        let mut out = DeviceBuffer::from_slice(&ctx, &poison).unwrap();
        let b = rng.below(total - n + 1);
        soa.copy_to_aos_async(&mut out.slice_mut(b..b + n).unwrap(), stream)
            .unwrap();
        let got = out.to_vec().unwrap();
        assert!(same(&got[..b], &poison[..b]), "{name}: before the view");
        assert!(
            same(&got[b..b + n], &structs[a..a + n]),
            "{name}: the view, {n} at {a} -> {b}"
        );
        assert!(
            same(&got[b + n..], &poison[b + n..]),
            "{name}: after the view"
        );
        let host: Vec<T> = rng.values(n);
        soa.copy_from_host(&host).unwrap();
        assert!(same(&soa.to_vec().unwrap(), &host), "{name}: host, {n}");
    }
}

/// Word structs of every tile shape: one word, fields of several words,
/// one struct a warp's tile (4 KiB), and a struct too large for a warp's
/// tile (the block-tile kernels).
#[test]
#[ignore = "needs a CUDA device"]
fn every_struct_shape_transposes_both_ways() {
    let stream = gpu().new_stream().unwrap();
    let mut rng = Rng::from_env("every_struct_shape_transposes_both_ways");
    transposes_both_ways::<Word>(&mut rng, &stream, 3_000_000);
    transposes_both_ways::<Mixed>(&mut rng, &stream, 300_000);
    transposes_both_ways::<Page>(&mut rng, &stream, 3_000);
    transposes_both_ways::<Big>(&mut rng, &stream, 3_000);
}

/// Structs with fields of any bytes, of every kernel: 3 bytes (block
/// tiles), 16 and 512 bytes (byte words through warp tiles), 516 bytes
/// (block tiles).
#[test]
#[ignore = "needs a CUDA device"]
fn every_byte_struct_shape_transposes_both_ways() {
    let stream = gpu().new_stream().unwrap();
    let mut rng = Rng::from_env("every_byte_struct_shape_transposes_both_ways");
    transposes_both_ways::<Rgb>(&mut rng, &stream, 3_000_000);
    transposes_both_ways::<Tagged>(&mut rng, &stream, 1_000_000);
    transposes_both_ways::<Record>(&mut rng, &stream, 20_000);
    transposes_both_ways::<LongRecord>(&mut rng, &stream, 20_000);
}

/// `fill` sets every field of every struct; a field's view fills, and
/// takes host data in a sub-range, leaving the other fields alone.
#[test]
#[ignore = "needs a CUDA device"]
fn fills_of_structs_and_of_one_field() {
    let ctx = gpu();
    let mut rng = Rng::from_env("fills_of_structs_and_of_one_field");
    for n in sizes(&mut rng) {
        let value = rng.value::<Particle>();
        let mut soa = ParticleSoA::new(&ctx, n).unwrap();
        soa.fill(value).unwrap();
        assert!(same(&soa.to_vec().unwrap(), &vec![value; n]), "n {n}: fill");
        let mut expected = vec![value; n];
        let mass = rng.value::<f32>();
        let (a, b) = {
            let (x, y) = (rng.below(n + 1), rng.below(n + 1));
            (x.min(y), x.max(y))
        };
        let pos: Vec<[f32; 3]> = (a..b).map(|_| rng.value()).collect();
        {
            let mut fields = soa.fields_mut();
            fields.mass.fill(mass).unwrap();
            fields
                .pos
                .slice_mut(a..b)
                .unwrap()
                .copy_from_host(&pos)
                .unwrap();
        }
        for (i, p) in expected.iter_mut().enumerate() {
            p.mass = mass;
            if (a..b).contains(&i) {
                p.pos = pos[i - a];
            }
        }
        assert!(
            same(&soa.to_vec().unwrap(), &expected),
            "n {n}: field fill, pos {a}..{b}"
        );
        let mut pixels = PixelSoA::new(&ctx, n).unwrap();
        let px = rng.value::<Pixel>();
        pixels.fill(px).unwrap();
        pixels.fields_mut().label.fill(7).unwrap();
        let mut want = px;
        want.label = 7;
        assert_eq!(pixels.to_vec().unwrap(), vec![want; n], "n {n}: pixels");
    }
}

/// The layout of [`Liar`], derived.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Honest {
    small: u8,
    pad: [u8; 3],
    word: u32,
}

/// A hand-written `DeviceSoA` impl whose `visit_fields`
/// hands field 0, a `u8`, over as an 8 KiB array: everything else is
/// [`Honest`]'s.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Liar {
    small: u8,
    pad: [u8; 3],
    word: u32,
}

// SAFETY: `Honest`'s table, the same in every build (the field types
// visited are checked, not promised).
unsafe impl DeviceSoA for Liar {
    const FIELDS: &'static [cuda_mem::soa::SoaField] = Honest::FIELDS;
    type Fields<Fam: cuda_mem::soa::FieldFamily> = <Honest as DeviceSoA>::Fields<Fam>;

    fn make_fields<Fam: cuda_mem::soa::FieldFamily>(
        maker: &mut impl cuda_mem::soa::FieldMaker<Fam>,
    ) -> Self::Fields<Fam> {
        Honest::make_fields(maker)
    }

    fn visit_fields(&self, visitor: &mut impl cuda_mem::soa::FieldVisitor) {
        visitor.field(0, &[u64::from(self.small); 1024]);
        visitor.field(1, &self.pad);
        visitor.field(2, &self.word);
    }

    fn read_fields(reader: &mut impl cuda_mem::soa::FieldReader) -> Self {
        let h = Honest::read_fields(reader);
        Liar {
            small: h.small,
            pad: h.pad,
            word: h.word,
        }
    }
}

/// A fill through a `visit_fields` that hands a field over as a type of
/// another size is refused, and writes nothing: it filled `len * 8192`
/// bytes from field 0's region, through the other fields' arrays and past
/// the allocation.
#[test]
#[ignore = "needs a CUDA device"]
fn a_fill_refuses_a_field_of_another_size() {
    let ctx = gpu();
    let mut rng = Rng::from_env("a_fill_refuses_a_field_of_another_size");
    for n in [1, 31, 4097, 1 + rng.below(100_000)] {
        let before: Vec<Liar> = (0..n)
            .map(|_| Liar {
                small: rng.value(),
                pad: rng.value(),
                word: rng.value(),
            })
            .collect();
        let mut soa = SoaBuffer::<Liar>::from_slice(&ctx, &before).unwrap();
        // A neighbour allocated right after, which an overrun would reach.
        let neighbour: Vec<u32> = (0..4096).map(|_| rng.value()).collect();
        let next = DeviceBuffer::from_slice(&ctx, &neighbour).unwrap();
        let value = Liar {
            small: 0xa5,
            pad: [1, 2, 3],
            word: rng.value(),
        };
        match soa.fill(value) {
            Err(Error::InvalidArgument(why)) => assert!(why.contains("FIELDS"), "{why}"),
            other => panic!("n {n}: the lying fill was not refused: {other:?}"),
        }
        assert_eq!(
            soa.to_vec().unwrap(),
            before,
            "n {n}: the refused fill wrote"
        );
        assert_eq!(
            next.to_vec().unwrap(),
            neighbour,
            "n {n}: the neighbour changed"
        );
    }
}

/// 64 bytes, as one field in [`WholeTable`]'s hand-written `DeviceSoA`
/// impl and as 64 one-byte fields in [`ByteTable`]'s: one struct layout
/// (the same `DeviceCopy` layout fingerprint), two structure-of-arrays
/// layouts.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct WholeTable {
    bytes: [u8; 64],
}

/// [`WholeTable`]'s struct with a table of 64 one-byte fields.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct ByteTable {
    bytes: [u8; 64],
}

const ONE_FIELD: [cuda_mem::soa::SoaField; 1] =
    [cuda_mem::soa::SoaField::of::<[u8; 64]>("bytes", 0)];

const BYTE_FIELDS: [cuda_mem::soa::SoaField; 64] = {
    let mut fields = [cuda_mem::soa::SoaField::of::<u8>("bytes", 0); 64];
    let mut i = 0;
    while i < 64 {
        fields[i].offset = i;
        i += 1;
    }
    fields
};

/// A hand-written `DeviceSoA` impl over `FIELDS`: each field read
/// and visited as the table's type.
macro_rules! table_soa {
    ($t:ident, $fields:expr, $field:ty, $count:literal) => {
        // SAFETY: a constant table, the same in every build.
        unsafe impl DeviceSoA for $t {
            const FIELDS: &'static [cuda_mem::soa::SoaField] = &$fields;
            type Fields<Fam: cuda_mem::soa::FieldFamily> = ();

            fn make_fields<Fam: cuda_mem::soa::FieldFamily>(
                _: &mut impl cuda_mem::soa::FieldMaker<Fam>,
            ) -> Self::Fields<Fam> {
            }

            fn visit_fields(&self, visitor: &mut impl cuda_mem::soa::FieldVisitor) {
                let parts: [$field; $count] = cuda_mem::__private::bytemuck::cast(self.bytes);
                for (i, part) in parts.iter().enumerate() {
                    visitor.field(i, part);
                }
            }

            fn read_fields(reader: &mut impl cuda_mem::soa::FieldReader) -> Self {
                let parts: [$field; $count] = core::array::from_fn(|i| reader.field::<$field>(i));
                $t {
                    bytes: cuda_mem::__private::bytemuck::cast(parts),
                }
            }
        }
    };
}

table_soa!(WholeTable, ONE_FIELD, [u8; 64], 1);
table_soa!(ByteTable, BYTE_FIELDS, u8, 64);

/// What a launch compares with the PTX for a kernel parameter of type `P`:
/// its fingerprint and its row of the parameter table.
fn launch_checks<P: cuda_mem::launch::KernelParam>() -> (u64, cuda_mem::launch::ParamAbi) {
    (
        cuda_mem::launch::__param_signature::<fn(P), P>(),
        cuda_mem::launch::__param_abi::<fn(P), P>(),
    )
}

/// A `DeviceSoA`'s `FIELDS` decide where a kernel's `SoaSlice` /
/// `SoaSliceMut` finds each field's array (`region_offset`): the host lays
/// a `SoaBuffer` out by the host build's table, the kernel reads and writes
/// by the device build's. While the trait was safe, a kernel crate that
/// forbids unsafe code could give the one type two tables (`cfg!(target_arch
/// = "nvptx64")` in its `FIELDS`): on the host one 64-byte field (a buffer
/// of one struct is 256 bytes), in the kernel 64 one-byte fields (field 63
/// of struct 0 at byte 63 * 256 = 16128), and `fields_mut()` / `set` then
/// wrote 16 KiB past the buffer. The trait is `unsafe` now (a table that
/// differs between builds breaks its contract), and, for a stale PTX, the
/// launch's check covers the table. What the launch compares with the PTX (the
/// parameter's fingerprint and its row of the table) must tell the two
/// tables apart, as it tells two struct layouts apart; it says the same
/// for both (`SOA`, `T`'s `DeviceCopy` layout, `T`'s size and alignment).
#[test]
fn a_soa_parameters_checks_cover_its_field_table() {
    use cuda_mem::soa::{region_offset, SoaSlice, SoaSliceMut};
    // One struct layout, two structure-of-arrays layouts.
    assert_eq!(
        <WholeTable as DeviceCopy>::__LAYOUT,
        <ByteTable as DeviceCopy>::__LAYOUT
    );
    assert_eq!(region_offset(WholeTable::FIELDS, 1, 1), 256);
    assert_eq!(region_offset(ByteTable::FIELDS, 1, 63), 63 * 256);
    let read = launch_checks::<SoaSlice<WholeTable>>();
    let read_bytes = launch_checks::<SoaSlice<ByteTable>>();
    assert_ne!(
        read, read_bytes,
        "a SoaSlice over one field of 64 bytes and one over 64 fields of a byte pass the same \
         launch checks: a host buffer laid out by the one is launched into a kernel that \
         indexes it by the other"
    );
    let write = launch_checks::<SoaSliceMut<WholeTable>>();
    let write_bytes = launch_checks::<SoaSliceMut<ByteTable>>();
    assert_ne!(
        write, write_bytes,
        "a SoaSliceMut over one field of 64 bytes and one over 64 fields of a byte pass the \
         same launch checks: the kernel writes by a table the host's buffer does not have"
    );
}

#[test]
fn the_derived_tables_describe_the_structs() {
    assert_eq!(
        cuda_mem::soa::check_fields(
            Particle::FIELDS,
            size_of::<Particle>(),
            align_of::<Particle>()
        ),
        None
    );
    assert_eq!(
        Particle::FIELDS.iter().map(|f| f.name).collect::<Vec<_>>(),
        ["pos", "vel", "mass", "charge", "id", "kind", "age"]
    );
    assert_eq!(Pixel::FIELDS[2].offset, 4);
    assert_eq!(Pixel::FIELDS[2].size, 2);
}

mod kernels {
    use super::*;
    use cuda_mem::Module;
    use cuda_mem_launch_kernels::soa::{bump, bumped, label_plus_tag, soa_gather, Mixed};

    static KERNELS: Module = cuda_mem::include_kernels!("launch-kernels");

    /// `SoaSlice::get`, `SoaSliceMut`'s owned structs and `fields()` in
    /// kernels, over random structs of odd sizes, outputs poisoned first and
    /// every element checked; the buffer in every kind a kernel takes.
    #[test]
    #[ignore = "needs a CUDA device"]
    fn kernels_read_and_update_structures_of_arrays() {
        let ctx = gpu();
        let stream = ctx.new_stream().unwrap();
        let mut rng = Rng::from_env("kernels_read_and_update_structures_of_arrays");
        for n in [1usize, 2, 33, 1000, 4099, 65_537, (1 << 20) + 3] {
            let items: Vec<Mixed> = (0..n).map(|_| rng.value::<Mixed>()).collect();
            let mut soa = SoaBuffer::<Mixed, cuda_mem::Device>::from_slice(&ctx, &items).unwrap();
            // Whole structs out.
            let poison: Vec<Mixed> = (0..n).map(|_| rng.value::<Mixed>()).collect();
            let mut out = DeviceBuffer::from_slice(&ctx, &poison).unwrap();
            soa_gather
                .launch(
                    &KERNELS,
                    &stream,
                    random_launch_config(&mut rng, n),
                    (&soa, &mut out),
                )
                .unwrap();
            // (A grid smaller than `n` covers it too: grid-stride loops.)
            assert_eq!(out.to_vec().unwrap(), items, "n {n}: soa_gather");
            // Updated in place.
            let add = rng.next_u64() as u32;
            bump.launch(
                &KERNELS,
                &stream,
                random_launch_config(&mut rng, n),
                (&mut soa, add),
            )
            .unwrap();
            let expected: Vec<Mixed> = items.iter().map(|&m| bumped(m, add)).collect();
            assert_eq!(soa.to_vec().unwrap(), expected, "n {n}: bump");
            // Two fields' arrays and a plain slice.
            let extra: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
            let extra_d = DeviceBuffer::from_slice(&ctx, &extra).unwrap();
            let mut sums = DeviceBuffer::from_slice(&ctx, &vec![0xdead_beefu32; n]).unwrap();
            label_plus_tag
                .launch(
                    &KERNELS,
                    &stream,
                    random_launch_config(&mut rng, n),
                    (&soa, &extra_d, &mut sums),
                )
                .unwrap();
            let want: Vec<u32> = expected
                .iter()
                .zip(&extra)
                .map(|(m, &x)| m.label.wrapping_add(m.tag as u32).wrapping_add(x))
                .collect();
            assert_eq!(sums.to_vec().unwrap(), want, "n {n}: label_plus_tag");
            // Pinned and unified structures of arrays are kernel arguments too.
            let mut pinned = SoaBuffer::<Mixed, Pinned>::from_slice(&ctx, &items).unwrap();
            bump.launch(
                &KERNELS,
                &stream,
                random_launch_config(&mut rng, n),
                (&mut pinned, add),
            )
            .unwrap();
            let mut unified = SoaBuffer::<Mixed, Unified>::new(&ctx, n).unwrap();
            unified.copy_from(&pinned).unwrap();
            let mut out = DeviceBuffer::from_slice(&ctx, &poison).unwrap();
            soa_gather
                .launch(
                    &KERNELS,
                    &stream,
                    random_launch_config(&mut rng, n),
                    (&unified, &mut out),
                )
                .unwrap();
            assert_eq!(
                out.to_vec().unwrap(),
                expected,
                "n {n}: pinned bump, unified gather"
            );
        }
    }
}

/// One derived struct whose fields are behind `#[cfg(target_arch)]`, as
/// the host's build sees it (one field of 8 bytes) and as a kernel crate's
/// does (two of 4): safe code, the derive's own `unsafe impl`. The field
/// names were chosen (a van Oorschot–Wiener collision search over 14-letter
/// names, about 2^33 FNV-1a evaluations, minutes on two cores) so that the
/// 64-bit FNV-1a chain that is the whole launch check of a SoA parameter
/// beyond its size and alignment (`__LAYOUT`, then `soa_layout` over
/// `FIELDS`) ends in one value.
mod cfg_host_build {
    #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    #[repr(C)]
    pub struct Split {
        pub f1ijp2t1b0hx5c: [u32; 2],
    }
}

/// [`cfg_host_build::Split`] as the kernel crate's build sees it.
mod cfg_kernel_build {
    #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    #[repr(C)]
    pub struct Split {
        pub b: u32,
        pub fu5ddtos24232o: u32,
    }
}

/// The host lays a `SoaBuffer` of one `Split` out as one 8-byte region; a
/// kernel built with the other table writes its second field at byte 256,
/// past the allocation. The launch's checks must tell the two tables apart
/// word for word, not only by a 64-bit FNV-1a hash that safe code (field
/// names, `cfg`) can make collide.
#[test]
fn a_soa_parameters_checks_tell_tables_apart_whose_hashes_collide() {
    use cfg_host_build::Split as Host;
    use cfg_kernel_build::Split as Kernel;
    use cuda_mem::soa::{region_offset, SoaSliceMut};
    assert_ne!(Host::FIELDS.len(), Kernel::FIELDS.len());
    assert_eq!(region_offset(Kernel::FIELDS, 1, 1), 256);
    let host = launch_checks::<SoaSliceMut<Host>>();
    let kernel = launch_checks::<SoaSliceMut<Kernel>>();
    assert_ne!(
        host, kernel,
        "a SoaSliceMut of one 8-byte field and one of two 4-byte fields pass the same launch \
         checks: a kernel built with the other cfg writes past the host's buffer"
    );
}
