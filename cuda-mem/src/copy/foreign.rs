//! `DeviceCopy` for the math types of glam (feature `glam`) and mint
//! (feature `mint`), so that they can be buffer elements and fields of
//! derived structs.
//!
//! cudarc's `DeviceRepr` cannot be implemented here for them (neither the
//! trait nor the types are cuda-mem's), so they are not kernel arguments by
//! value on their own; put them in a derived struct, which is.

use crate::copy::device_copy::DeviceCopy;
use crate::copy::layout::StructLayout;

/// The fingerprint of a `#[repr(C)]` struct of `N` consecutive `E` fields
/// named `names[..N]` (the same as a derived struct `{ x: E, y: E, ... }`
/// of that size and alignment).
#[cfg(feature = "glam")]
const fn consecutive<E: DeviceCopy>(size: usize, align: usize, names: &[&str], n: usize) -> u64 {
    let mut layout = StructLayout::new(size, align);
    let mut i = 0;
    while i < n {
        layout = layout.field(
            names[i],
            i * core::mem::size_of::<E>(),
            core::mem::size_of::<E>(),
            E::__LAYOUT,
        );
        i += 1;
    }
    layout.finish()
}

/// The fields of glam's vectors and quaternions.
#[cfg(feature = "glam")]
const XYZW: &[&str] = &["x", "y", "z", "w"];
/// The columns of glam's matrices.
#[cfg(feature = "glam")]
const AXES: &[&str] = &["x_axis", "y_axis", "z_axis", "w_axis"];

#[cfg(feature = "glam")]
macro_rules! glam_impls {
    ($($t:ident: $n:literal x $e:ty, $names:ident;)*) => { $(
        // SAFETY: glam implements `bytemuck::Pod` for this type (the `where`
        // bound checks it): `Copy`, no padding, every bit pattern valid, no
        // pointers. It is `N` consecutive `E`s (a `#[repr(C)]` struct, or a
        // SIMD vector of the same layout), alignment at most 16.
        unsafe impl DeviceCopy for glam::$t
        where
            glam::$t: bytemuck::Pod,
        {
            const __LAYOUT: u64 = consecutive::<$e>(
                core::mem::size_of::<Self>(),
                core::mem::align_of::<Self>(),
                $names,
                $n,
            );
        }
    )* };
}

// Vectors and quaternions: `N` scalars; matrices: `N` column vectors. Not
// `Vec3A`, `Mat3A`, `Affine2` and `Affine3A`, whose SIMD alignment leaves
// padding (glam does not make them `Pod`), nor the `Affine3`/`DAffine*`
// compounds (use the matrix and the translation in a derived struct).
#[cfg(feature = "glam")]
glam_impls! {
    Vec2: 2 x f32, XYZW; Vec3: 3 x f32, XYZW; Vec4: 4 x f32, XYZW; Quat: 4 x f32, XYZW;
    Mat2: 2 x glam::Vec2, AXES; Mat3: 3 x glam::Vec3, AXES; Mat4: 4 x glam::Vec4, AXES;
    DVec2: 2 x f64, XYZW; DVec3: 3 x f64, XYZW; DVec4: 4 x f64, XYZW; DQuat: 4 x f64, XYZW;
    DMat2: 2 x glam::DVec2, AXES; DMat3: 3 x glam::DVec3, AXES; DMat4: 4 x glam::DVec4, AXES;
    I8Vec2: 2 x i8, XYZW; I8Vec3: 3 x i8, XYZW; I8Vec4: 4 x i8, XYZW;
    U8Vec2: 2 x u8, XYZW; U8Vec3: 3 x u8, XYZW; U8Vec4: 4 x u8, XYZW;
    I16Vec2: 2 x i16, XYZW; I16Vec3: 3 x i16, XYZW; I16Vec4: 4 x i16, XYZW;
    U16Vec2: 2 x u16, XYZW; U16Vec3: 3 x u16, XYZW; U16Vec4: 4 x u16, XYZW;
    IVec2: 2 x i32, XYZW; IVec3: 3 x i32, XYZW; IVec4: 4 x i32, XYZW;
    UVec2: 2 x u32, XYZW; UVec3: 3 x u32, XYZW; UVec4: 4 x u32, XYZW;
    I64Vec2: 2 x i64, XYZW; I64Vec3: 3 x i64, XYZW; I64Vec4: 4 x i64, XYZW;
    U64Vec2: 2 x u64, XYZW; U64Vec3: 3 x u64, XYZW; U64Vec4: 4 x u64, XYZW;
}

#[cfg(feature = "mint")]
macro_rules! mint_impls {
    ($($t:ident<T $(, $marker:ident)?> { $($field:ident: $ft:ty),+ };)*) => { $(
        // SAFETY: mint declares this type `#[repr(C)]` with fields that are
        // all `T` or mint vectors of `T`: one element type, so no padding
        // (every size is a multiple of `T`'s alignment, and the struct's
        // alignment is `T`'s); `T: DeviceCopy` makes every bit pattern valid
        // and rules out pointers, and the alignment is `T`'s. `__LAYOUT`
        // re-checks the real layout for every `T` cuda-mem uses.
        unsafe impl<T: DeviceCopy $(, $marker: Copy)?> DeviceCopy for mint::$t<T $(, $marker)?> {
            const __LAYOUT: u64 = StructLayout::new(
                core::mem::size_of::<Self>(),
                core::mem::align_of::<Self>(),
            )
            $(.field(
                core::stringify!($field),
                core::mem::offset_of!(Self, $field),
                core::mem::size_of::<$ft>(),
                <$ft as DeviceCopy>::__LAYOUT,
            ))+
            .finish();
        }
    )* };
}

#[cfg(feature = "mint")]
mint_impls! {
    Vector2<T> { x: T, y: T };
    Vector3<T> { x: T, y: T, z: T };
    Vector4<T> { x: T, y: T, z: T, w: T };
    Point2<T> { x: T, y: T };
    Point3<T> { x: T, y: T, z: T };
    Quaternion<T> { v: mint::Vector3<T>, s: T };
    EulerAngles<T, B> { a: T, b: T, c: T, marker: core::marker::PhantomData<B> };
    RowMatrix2<T> { x: mint::Vector2<T>, y: mint::Vector2<T> };
    RowMatrix2x3<T> { x: mint::Vector3<T>, y: mint::Vector3<T> };
    RowMatrix2x4<T> { x: mint::Vector4<T>, y: mint::Vector4<T> };
    RowMatrix3x2<T> { x: mint::Vector2<T>, y: mint::Vector2<T>, z: mint::Vector2<T> };
    RowMatrix3<T> { x: mint::Vector3<T>, y: mint::Vector3<T>, z: mint::Vector3<T> };
    RowMatrix3x4<T> { x: mint::Vector4<T>, y: mint::Vector4<T>, z: mint::Vector4<T> };
    RowMatrix4x2<T> { x: mint::Vector2<T>, y: mint::Vector2<T>, z: mint::Vector2<T>, w: mint::Vector2<T> };
    RowMatrix4x3<T> { x: mint::Vector3<T>, y: mint::Vector3<T>, z: mint::Vector3<T>, w: mint::Vector3<T> };
    RowMatrix4<T> { x: mint::Vector4<T>, y: mint::Vector4<T>, z: mint::Vector4<T>, w: mint::Vector4<T> };
    ColumnMatrix2<T> { x: mint::Vector2<T>, y: mint::Vector2<T> };
    ColumnMatrix2x3<T> { x: mint::Vector2<T>, y: mint::Vector2<T>, z: mint::Vector2<T> };
    ColumnMatrix2x4<T> { x: mint::Vector2<T>, y: mint::Vector2<T>, z: mint::Vector2<T>, w: mint::Vector2<T> };
    ColumnMatrix3x2<T> { x: mint::Vector3<T>, y: mint::Vector3<T> };
    ColumnMatrix3<T> { x: mint::Vector3<T>, y: mint::Vector3<T>, z: mint::Vector3<T> };
    ColumnMatrix3x4<T> { x: mint::Vector3<T>, y: mint::Vector3<T>, z: mint::Vector3<T>, w: mint::Vector3<T> };
    ColumnMatrix4x2<T> { x: mint::Vector4<T>, y: mint::Vector4<T> };
    ColumnMatrix4x3<T> { x: mint::Vector4<T>, y: mint::Vector4<T>, z: mint::Vector4<T> };
    ColumnMatrix4<T> { x: mint::Vector4<T>, y: mint::Vector4<T>, z: mint::Vector4<T>, w: mint::Vector4<T> };
}

#[cfg(test)]
mod tests {
    #[allow(unused_imports)]
    use crate::{bytes_of, bytes_of_slice, DeviceCopy};

    #[allow(dead_code)]
    fn element<T: DeviceCopy>() -> u64 {
        crate::copy::private::check_element::<T>();
        T::__LAYOUT
    }

    #[cfg(feature = "glam")]
    #[test]
    fn glam_types_are_device_copy_and_match_a_plain_struct() {
        element::<glam::Vec2>();
        element::<glam::Mat4>();
        element::<glam::DQuat>();
        element::<glam::U8Vec4>();
        element::<[glam::IVec3; 2]>();
        let v = glam::Vec3::new(1.0, 2.0, 3.0);
        assert_eq!(bytes_of(&v), bytemuck::bytes_of(&v));
        let m = glam::Mat2::from_cols_array(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(bytes_of(&m), bytemuck::bytes_of(&m));

        // A derived mirror with the same fields has the same fingerprint.
        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Float3 {
            x: f32,
            y: f32,
            z: f32,
        }
        assert_eq!(element::<glam::Vec3>(), element::<Float3>());
        assert_ne!(element::<glam::Vec3>(), element::<glam::IVec3>());
        assert_ne!(element::<glam::Vec3>(), element::<glam::UVec3>());
    }

    #[cfg(feature = "mint")]
    #[test]
    fn mint_types_are_device_copy_and_match_a_plain_struct() {
        element::<mint::Vector3<f32>>();
        element::<mint::Point2<u16>>();
        element::<mint::Quaternion<f64>>();
        element::<mint::ColumnMatrix4<f32>>();
        element::<mint::RowMatrix2x3<i8>>();
        element::<mint::EulerAngles<f32, mint::IntraXYZ>>();
        let q = mint::Quaternion {
            v: mint::Vector3 {
                x: 1_u8,
                y: 2,
                z: 3,
            },
            s: 4,
        };
        assert_eq!(bytes_of(&q), &[1, 2, 3, 4]);
        let m = [mint::Vector2 {
            x: 0x0201_u16,
            y: 0x0403,
        }];
        assert_eq!(bytes_of_slice(&m), &[1, 2, 3, 4]);

        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Double3 {
            x: f64,
            y: f64,
            z: f64,
        }
        assert_eq!(element::<mint::Vector3<f64>>(), element::<Double3>());
        assert_eq!(element::<mint::Point3<f64>>(), element::<Double3>());
        assert_ne!(
            element::<mint::Vector3<f64>>(),
            element::<mint::Vector3<i64>>()
        );
    }
}
