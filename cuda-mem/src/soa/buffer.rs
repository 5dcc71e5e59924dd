//! [`SoaBuffer<T, K>`]: `len` structs of a [`DeviceSoA`] type kept as a
//! structure of arrays in memory of kind `K` (one allocation, one region per
//! field), its constructors, fills, copies (transposed on the GPU) and field
//! views through the families [`Views`] and [`ViewsMut`].

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use crate::buffers::buffer::{Buffer, Device, MemoryKind, Pinned, Pool, Unified};
use crate::buffers::ops::{Memory, MemoryMut};
use crate::copy::device_copy::DeviceCopy;
use crate::copy::soa::{
    check_fields, region_offset, DeviceSoA, FieldFamily, FieldMaker, FieldVisitor, SoaField,
    REGION_ALIGN,
};
use crate::engine::{Elems, View, ViewMut};
use crate::error::{Error, Result};
use crate::memory::raw::RawMemory;
use crate::order::streams::AsStream;
use crate::soa::transpose;

/// The byte offset of each field's region for `len` structs
/// ([`region_offset`], which kernels use to find them), and the total.
fn regions(fields: &[SoaField], len: usize) -> Result<(Vec<usize>, usize)> {
    // The allocation, in checked arithmetic: `len` times the struct's size,
    // plus `REGION_ALIGN` per field, the most any table of this many fields
    // over this size reaches (each region starts at most `REGION_ALIGN - 1`
    // bytes after the one before ends). Every region's start and end lie
    // below it, so `region_offset`'s unchecked sums cannot overflow once it
    // fits. A kernel finds the arrays by its own build's table; the launch
    // compares the struct's size and the number of fields in the clear
    // (`KernelParam::__FIELDS`), so even a table that differed from this one
    // (which `DeviceSoA`'s contract forbids) would stay inside.
    let bound = fields
        .iter()
        .try_fold(0usize, |size, f| size.checked_add(f.size))
        .and_then(|size| len.checked_mul(size))
        .and_then(|bytes| bytes.checked_add(REGION_ALIGN.checked_mul(fields.len())?))
        .ok_or(Error::SizeOverflow {
            what: "the regions of a SoaBuffer",
        })?;
    let at = (0..fields.len())
        .map(|i| region_offset(fields, len, i))
        .collect();
    Ok((at, bound))
}

/// `Err` unless `T`'s field table describes `T` (see [`check_fields`]).
fn checked_layout<T: DeviceSoA>() -> Result<()> {
    match check_fields(T::FIELDS, size_of::<T>(), align_of::<T>()) {
        None => Ok(()),
        Some(why) => Err(Error::InvalidArgument(why)),
    }
}

/// `len` structs of `T` kept as a structure of arrays: each field of every
/// struct in an array of its own, in memory of kind `K` ([`Device`] by
/// default; [`Pinned`], [`Unified`], [`Pool`]). `#[derive(DeviceSoA)]`
/// names the device one `{Name}SoA`.
///
/// A kernel that reads 2 of a struct's 8 fields reads a quarter of the
/// bytes from a structure of arrays. The arrays stay in step: they are one
/// allocation, the same length, filled, copied and transposed together;
/// [`fields`](Self::fields) and [`fields_mut`](Self::fields_mut) give each
/// field's array as a [`View`] / [`ViewMut`] that works wherever a view
/// does (fills, copies, `cuda_mem::algo`, kernel arguments).
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::DeviceSoA;
///
/// #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
/// #[repr(C)]
/// struct Particle { pos: [f32; 3], vel: [f32; 3], mass: f32, charge: f32 }
///
/// let ctx = cuda_mem::context(0)?;
/// let host = vec![Particle { pos: [0.0; 3], vel: [1.0; 3], mass: 2.0, charge: -1.0 }; 1000];
/// let mut soa = ParticleSoA::from_slice(&ctx, &host)?; // transposed on the GPU
/// soa.fields_mut().mass.fill(3.0)?; // one field, at memset speed
/// let masses: Vec<f32> = soa.fields().mass.to_vec()?;
/// assert!(masses.iter().all(|&m| m == 3.0));
/// assert_eq!(soa.to_vec()?[0].charge, -1.0); // back to structs, on the GPU
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct SoaBuffer<T: DeviceSoA, K: MemoryKind = Device> {
    bytes: Buffer<u8, K>,
    regions: Vec<usize>,
    len: usize,
    _t: PhantomData<fn() -> T>,
}

/// The family of shared views: [`SoaBuffer::fields`] gives each field as a
/// [`View`].
///
/// ```no_run
/// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
/// # #[repr(C)]
/// # struct Particle { pos: [f32; 3], mass: f32 }
/// # fn f(soa: &ParticleSoA) {
/// let fields: ParticleFields<cuda_mem::soa::Views<'_>> = soa.fields();
/// let mass: cuda_mem::View<'_, f32> = fields.mass;
/// # }
/// ```
pub struct Views<'a>(PhantomData<&'a ()>);

impl<'a> FieldFamily for Views<'a> {
    type Of<F: DeviceCopy + 'static> = View<'a, F>;
}

/// The family of exclusive views: [`SoaBuffer::fields_mut`] gives each
/// field as a [`ViewMut`], all of them at once (their arrays are disjoint).
///
/// ```no_run
/// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
/// # #[repr(C)]
/// # struct Particle { pos: [f32; 3], mass: f32 }
/// # fn f(soa: &mut ParticleSoA) {
/// let fields: ParticleFields<cuda_mem::soa::ViewsMut<'_>> = soa.fields_mut();
/// let (pos, mass) = (fields.pos, fields.mass); // both at once
/// # }
/// ```
pub struct ViewsMut<'a>(PhantomData<&'a mut ()>);

impl<'a> FieldFamily for ViewsMut<'a> {
    type Of<F: DeviceCopy + 'static> = ViewMut<'a, F>;
}

/// Makes each field's view over its region, checking that the type asked
/// for has the table's size and alignment, and (for exclusive views) that
/// no field is made twice.
struct Regions<'a, T> {
    mem: &'a RawMemory,
    regions: &'a [usize],
    len: usize,
    made: u64,
    _t: PhantomData<T>,
}

impl<'a, T: DeviceSoA> Regions<'a, T> {
    /// The elements of field `index` as `F`s.
    #[track_caller]
    fn elems<F: DeviceCopy>(&mut self, index: usize, exclusive: bool) -> Elems<'a, F> {
        assert!(
            field_is::<T, F>(index),
            "the DeviceSoA impl of `{}` made field {index} as a `{}`, which is not the size and \
             alignment its FIELDS table gives (derive DeviceSoA rather than writing it by hand)",
            std::any::type_name::<T>(),
            std::any::type_name::<F>()
        );
        let bit = 1u64 << index;
        assert!(
            !exclusive || self.made & bit == 0,
            "the DeviceSoA impl of `{}` made field {index} twice (derive DeviceSoA rather than \
             writing it by hand)",
            std::any::type_name::<T>()
        );
        self.made |= bit;
        Elems::at(self.mem, self.regions[index], self.len)
    }
}

impl<'a, T: DeviceSoA> FieldMaker<Views<'a>> for Regions<'a, T> {
    fn field<F: DeviceCopy + 'static>(&mut self, index: usize) -> View<'a, F> {
        View {
            elems: self.elems(index, false),
        }
    }
}

impl<'a, T: DeviceSoA> FieldMaker<ViewsMut<'a>> for Regions<'a, T> {
    fn field<F: DeviceCopy + 'static>(&mut self, index: usize) -> ViewMut<'a, F> {
        ViewMut {
            elems: self.elems(index, true),
            _exclusive: PhantomData,
        }
    }
}

/// Whether `T`'s `FIELDS` table has a field `index` of `F`'s size and
/// alignment: what a hand-written `DeviceSoA` impl may get wrong, and every
/// visitor and maker checks before it touches the field's region.
fn field_is<T: DeviceSoA, F>(index: usize) -> bool {
    T::FIELDS
        .get(index)
        .is_some_and(|f| f.size == size_of::<F>() && f.align == align_of::<F>())
}

/// Fills each field's region with the value's field, keeping the first
/// error.
struct FillFields<'a, T> {
    mem: &'a RawMemory,
    regions: &'a [usize],
    len: usize,
    stream: &'a Arc<CudaStream>,
    result: Result<()>,
    _t: PhantomData<T>,
}

impl<T: DeviceSoA> FieldVisitor for FillFields<'_, T> {
    fn field<F: DeviceCopy>(&mut self, index: usize, value: &F) {
        if self.result.is_err() {
            return;
        }
        // A field of another size would fill past its region (and past the
        // allocation, for the last one).
        let (true, Some(&at)) = (field_is::<T, F>(index), self.regions.get(index)) else {
            self.result = Err(Error::InvalidArgument(
                "the DeviceSoA impl visited a field as a type that is not the size and alignment \
                 its FIELDS table gives, or a field the table does not have; nothing more was \
                 filled (derive DeviceSoA rather than writing it by hand)",
            ));
            return;
        };
        self.result = Elems::<F>::at(self.mem, at, self.len).fill(value, self.stream);
    }
}

impl<T: DeviceSoA, K: MemoryKind> SoaBuffer<T, K> {
    fn from_bytes(bytes: Buffer<u8, K>, regions: Vec<usize>, len: usize) -> Self {
        Self {
            bytes,
            regions,
            len,
            _t: PhantomData,
        }
    }

    /// The number of structs.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &ParticleSoA) {
    /// let n = soa.len();
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no structs.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &ParticleSoA) {
    /// if soa.is_empty() { return }
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The context the memory belongs to.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &ParticleSoA) {
    /// let ctx = soa.context();
    /// # }
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        self.bytes.context()
    }

    /// The allocation's bytes and the number of structs (kernel
    /// arguments: the device finds the arrays by `region_offset`).
    pub(crate) fn arrays(&self) -> (Elems<'_, u8>, usize) {
        (self.bytes.elems(), self.len)
    }

    fn makers(&self) -> Regions<'_, T> {
        Regions {
            mem: self.bytes.elems().mem,
            regions: &self.regions,
            len: self.len,
            made: 0,
            _t: PhantomData,
        }
    }

    /// Each field's array, as a shared [`View`]: `soa.fields().mass`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &ParticleSoA) -> cuda_mem::Result<()> {
    /// let masses: Vec<f32> = soa.fields().mass.to_vec()?;
    /// # Ok(()) }
    /// ```
    pub fn fields(&self) -> T::Fields<Views<'_>> {
        T::make_fields(&mut self.makers())
    }

    /// Each field's array, as an exclusive [`ViewMut`], all at once:
    /// `soa.fields_mut().mass.fill(1.0)?`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &mut ParticleSoA) -> cuda_mem::Result<()> {
    /// let mut fields = soa.fields_mut();
    /// fields.mass.fill(1.0)?;
    /// fields.pos.fill([0.0; 3])?;
    /// # Ok(()) }
    /// ```
    pub fn fields_mut(&mut self) -> T::Fields<ViewsMut<'_>> {
        T::make_fields(&mut self.makers())
    }

    /// Sets every struct to `value`: each field's array filled with the
    /// field's value, at `fill`'s speed, on the context's default stream.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &mut ParticleSoA) -> cuda_mem::Result<()> {
    /// soa.fill(Particle { pos: [0.0; 3], mass: 1.0 })?;
    /// # Ok(()) }
    /// ```
    pub fn fill(&mut self, value: T) -> Result<()> {
        let stream = self.bytes.elems().default_stream().clone();
        self.fill_async(value, &stream)
    }

    /// Like [`fill`](Self::fill), queued on `stream`.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &mut ParticleSoA, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// soa.fill_async(Particle { pos: [0.0; 3], mass: 1.0 }, s)?;
    /// # Ok(()) }
    /// ```
    pub fn fill_async(&mut self, value: T, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        let mut fill = FillFields::<T> {
            mem: self.bytes.elems().mem,
            regions: &self.regions,
            len: self.len,
            stream,
            result: Ok(()),
            _t: PhantomData,
        };
        value.visit_fields(&mut fill);
        fill.result
    }

    /// Transposes the structs of `src` (any buffer or view of `T`s, of this
    /// context, as long as this) into the fields' arrays, on the GPU,
    /// queued on `stream`.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &mut ParticleSoA, aos: &cuda_mem::DeviceBuffer<Particle>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// soa.copy_from_aos_async(aos, s)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from_aos_async(
        &mut self,
        src: &(impl Memory<T> + ?Sized),
        stream: &impl AsStream,
    ) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        transpose::scatter::<T>(
            src.elems(),
            (self.bytes.elems(), &self.regions, self.len),
            stream,
        )
    }

    /// Like [`copy_from_aos_async`](Self::copy_from_aos_async), on the
    /// context's default stream.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &mut ParticleSoA, aos: &cuda_mem::DeviceBuffer<Particle>) -> cuda_mem::Result<()> {
    /// soa.copy_from_aos(aos)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from_aos(&mut self, src: &(impl Memory<T> + ?Sized)) -> Result<()> {
        let stream = self.bytes.elems().default_stream().clone();
        self.copy_from_aos_async(src, &stream)
    }

    /// Transposes the fields' arrays into the structs of `dst` (any buffer
    /// or view of `T`s, of this context, as long as this), on the GPU,
    /// queued on `stream`.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &ParticleSoA, aos: &mut cuda_mem::DeviceBuffer<Particle>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// soa.copy_to_aos_async(aos, s)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_to_aos_async(
        &self,
        dst: &mut (impl MemoryMut<T> + ?Sized),
        stream: &impl AsStream,
    ) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        transpose::gather::<T>(
            dst.elems(),
            (self.bytes.elems(), &self.regions, self.len),
            stream,
        )
    }

    /// Like [`copy_to_aos_async`](Self::copy_to_aos_async), on the
    /// context's default stream.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &ParticleSoA, aos: &mut cuda_mem::DeviceBuffer<Particle>) -> cuda_mem::Result<()> {
    /// soa.copy_to_aos(aos)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_to_aos(&self, dst: &mut (impl MemoryMut<T> + ?Sized)) -> Result<()> {
        let stream = self.bytes.elems().default_stream();
        self.copy_to_aos_async(dst, stream)
    }

    /// Copies `src`'s structs in (lengths must match): uploaded as they
    /// are, then transposed on the GPU. Returns once `src` may be reused.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &mut ParticleSoA, host: &[Particle]) -> cuda_mem::Result<()> {
    /// soa.copy_from_host(host)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        if src.len() != self.len {
            return Err(Error::LengthMismatch {
                expected: self.len,
                actual: src.len(),
            });
        }
        let stream = self.bytes.elems().default_stream().clone();
        let mut aos = Buffer::<T, Pool>::new(src.len(), &stream)?;
        aos.copy_from_host(src)?;
        self.copy_from_aos_async(&aos, &stream)?;
        aos.free_on_stream(&stream)
    }

    /// The structs, transposed back on the GPU and downloaded.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &ParticleSoA) -> cuda_mem::Result<()> {
    /// let structs: Vec<Particle> = soa.to_vec()?;
    /// # Ok(()) }
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let stream = self.bytes.elems().default_stream().clone();
        let mut aos = Buffer::<T, Pool>::new(self.len, &stream)?;
        self.copy_to_aos_async(&mut aos, &stream)?;
        let out = aos.to_vec()?;
        aos.free_on_stream(&stream)?;
        Ok(out)
    }

    /// Copies every field of `src`, a structure of arrays of the same
    /// length in memory of any kind: one copy of the whole allocation.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &mut ParticleSoA, host_side: &cuda_mem::soa::SoaBuffer<Particle, cuda_mem::Pinned>) -> cuda_mem::Result<()> {
    /// soa.copy_from(host_side)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from<L: MemoryKind>(&mut self, src: &SoaBuffer<T, L>) -> Result<()> {
        if src.len != self.len {
            return Err(Error::LengthMismatch {
                expected: self.len,
                actual: src.len,
            });
        }
        self.bytes.copy_from(&src.bytes)
    }

    /// Waits for every queued operation on the memory.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: &ParticleSoA) -> cuda_mem::Result<()> {
    /// soa.synchronize()?;
    /// # Ok(()) }
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.bytes.synchronize()
    }
}

/// The constructors of the kinds made from a context.
macro_rules! context_constructors {
    ($($kind:ident),*) => { $(
        impl<T: DeviceSoA> SoaBuffer<T, $kind> {
            /// Allocates `len` structs' arrays; the contents are
            /// unspecified (every field is `DeviceCopy`: any bits are a
            /// value). `Err(InvalidArgument)` when `T`'s field table does
            /// not describe it (a hand-written `DeviceSoA`).
            ///
            /// ```no_run
            /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
            /// # #[repr(C)]
            /// # struct Particle { pos: [f32; 3], mass: f32 }
            #[doc = concat!("let soa = SoaBuffer::<Particle, cuda_mem::", stringify!($kind), ">::new(&cuda_mem::context(0)?, 100)?;")]
            /// # use cuda_mem::soa::SoaBuffer;
            /// # Ok::<(), cuda_mem::Error>(())
            /// ```
            pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
                checked_layout::<T>()?;
                let (regions, bytes) = regions(T::FIELDS, len)?;
                Ok(Self::from_bytes(Buffer::<u8, $kind>::new(ctx, bytes)?, regions, len))
            }

            /// Allocates the arrays of `values`' structs, transposed on
            /// the GPU.
            ///
            /// ```no_run
            /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
            /// # #[repr(C)]
            /// # struct Particle { pos: [f32; 3], mass: f32 }
            /// let host = [Particle { pos: [1.0; 3], mass: 2.0 }; 10];
            #[doc = concat!("let soa = SoaBuffer::<Particle, cuda_mem::", stringify!($kind), ">::from_slice(&cuda_mem::context(0)?, &host)?;")]
            /// # use cuda_mem::soa::SoaBuffer;
            /// # Ok::<(), cuda_mem::Error>(())
            /// ```
            pub fn from_slice(ctx: &Arc<CudaContext>, values: &[T]) -> Result<Self> {
                let mut soa = Self::new(ctx, values.len())?;
                soa.copy_from_host(values)?;
                Ok(soa)
            }
        }
    )* };
}

context_constructors!(Device, Pinned, Unified);

impl<T: DeviceSoA> SoaBuffer<T, Pool> {
    /// Allocates `len` structs' arrays from the device's current pool,
    /// ordered on `stream`; contents unspecified (see
    /// [`SoaBuffer::new`]).
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// let ctx = cuda_mem::context(0)?;
    /// let stream = ctx.new_stream()?;
    /// let soa = cuda_mem::soa::SoaBuffer::<Particle, cuda_mem::Pool>::new(1 << 20, &stream)?;
    /// soa.free_on_stream(&stream)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(len: usize, stream: &impl AsStream) -> Result<Self> {
        let stream = crate::order::streams::cuda_stream(stream);
        checked_layout::<T>()?;
        let (regions, bytes) = regions(T::FIELDS, len)?;
        Ok(Self::from_bytes(
            Buffer::<u8, Pool>::new(bytes, stream)?,
            regions,
            len,
        ))
    }

    /// Frees the memory on `stream`, after every queued use.
    ///
    /// ```no_run
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Particle { pos: [f32; 3], mass: f32 }
    /// # fn f(soa: cuda_mem::soa::SoaBuffer<Particle, cuda_mem::Pool>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// soa.free_on_stream(s)?;
    /// # Ok(()) }
    /// ```
    pub fn free_on_stream(self, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.bytes.free_on_stream(stream)
    }
}

impl<T: DeviceSoA, K: MemoryKind> std::fmt::Debug for SoaBuffer<T, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SoaBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("kind", &K::NAME)
            .field("len", &self.len)
            .field(
                "fields",
                &T::FIELDS.iter().map(|f| f.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check every visitor and maker makes of a field's type: the
    /// table's size and alignment, and an index the table has.
    #[test]
    #[allow(dead_code)] // the derive's `TwoSoA` alias
    fn a_fields_type_must_be_the_tables() {
        #[derive(Clone, Copy, crate::DeviceCopy, crate::DeviceSoA)]
        #[repr(C)]
        struct Two {
            small: u16,
            pad: u16,
            word: u32,
        }
        assert!(field_is::<Two, u16>(0));
        assert!(field_is::<Two, [u8; 2]>(1) == (align_of::<[u8; 2]>() == 2));
        assert!(field_is::<Two, u32>(2));
        assert!(field_is::<Two, f32>(2));
        assert!(!field_is::<Two, u32>(0));
        assert!(!field_is::<Two, [u64; 1024]>(0));
        assert!(!field_is::<Two, u8>(0));
        assert!(!field_is::<Two, [u16; 2]>(2));
        assert!(!field_is::<Two, u32>(3));
    }

    #[test]
    fn regions_start_aligned_and_hold_their_fields() {
        let fields = [
            SoaField::of::<[f32; 3]>("pos", 0),
            SoaField::of::<u8>("tag", 12),
            SoaField::of::<[u8; 3]>("rgb", 13),
        ];
        for len in [0, 1, 7, 1000, 12_345] {
            let (at, total) = regions(&fields, len).unwrap();
            assert_eq!(at[0], 0);
            for i in 0..fields.len() {
                assert_eq!(at[i] % REGION_ALIGN, 0);
                let end = at[i] + len * fields[i].size;
                assert!(end <= at.get(i + 1).copied().unwrap_or(total));
            }
            assert!(total >= at[2] + len * 3);
            // Room for any table of three fields over these 16 bytes.
            assert_eq!(total, len * 16 + 3 * REGION_ALIGN);
        }
        assert!(regions(&fields, usize::MAX / 2).is_err());
    }
}
