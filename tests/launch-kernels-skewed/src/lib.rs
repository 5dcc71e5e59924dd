//! `transform_items` of `launch-kernels`, token for token, over a `Params`
//! with one field more, and `span_lengths` over a `Span` whose two fields
//! (of one type) are swapped: what a PTX built from an older (or newer)
//! version of a shared struct looks like. The host, compiled with
//! `launch-kernels`' `Params` and `Span`, must refuse to launch either.
#![no_std]

use cuda_mem::device::{DeviceSlice, DeviceSliceMut};
use cuda_mem::{kernel, DeviceCopy};

/// As in `launch-kernels`.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Item {
    /// A key.
    pub key: u32,
    /// A weight.
    pub weight: f32,
    /// An identifier.
    pub id: u64,
}

/// `launch-kernels`' `Params` with a field more (16 bytes instead of 8).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Params {
    /// Added to the key (wrapping).
    pub add: u32,
    /// Multiplies the weight.
    pub scale: f32,
    /// The field the host does not know.
    pub extra: u64,
}

/// As in `launch-kernels`.
#[inline]
pub fn transform(item: Item, params: Params) -> Item {
    Item {
        key: item.key.wrapping_mul(3).wrapping_add(params.add),
        weight: item.weight * params.scale,
        id: !item.id,
    }
}

/// `out[i] = transform(input[i], params)` for every `i` both have.
#[kernel]
pub fn transform_items(mut out: DeviceSliceMut<Item>, input: DeviceSlice<Item>, params: Params) {
    for (i, slot) in out.grid_stride_mut() {
        if let Some(&item) = input.get(i) {
            *slot = transform(item, params);
        }
    }
}

/// `launch-kernels`' `Span` with its two fields swapped: the same size,
/// alignment, offsets and field types, only the names moved.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Span {
    /// One past the last value.
    pub end: u32,
    /// The first value.
    pub start: u32,
}

/// As in `launch-kernels`, token for token.
#[kernel]
pub fn span_lengths(mut out: DeviceSliceMut<u32>, span: Span) {
    for (i, slot) in out.grid_stride_mut() {
        *slot = span.end.wrapping_sub(span.start).wrapping_add(i as u32);
    }
}
