//! `buffers/`: the buffers and their features, what users hold. It owns
//! [`Buffer<T, K>`](buffer::Buffer) and its memory kinds,
//! [`PitchedBuffer`](pitched::PitchedBuffer),
//! [`DeviceVec`](device_vec::DeviceVec), [`Checked`](checked::Checked)
//! memory of `bool`s and enums, the allocator-API types
//! (`allocators`), the operations every one of them has, defined once
//! ([`Memory`](ops::Memory), [`MemoryMut`](ops::MemoryMut)), their cudarc
//! trait impls, and the checked NCCL collectives on them (`nccl`).
//!
//! May use: `engine/`, `memory/`, `context`, `order/`, `copy/`, `error`.

pub(crate) mod allocators;
pub(crate) mod awaitable;
pub(crate) mod buffer;
pub(crate) mod checked;
mod cudarc_boundary;
pub(crate) mod device_vec;
pub(crate) mod host_access;
#[cfg(feature = "nccl")]
pub mod nccl;
pub(crate) mod ops;
pub(crate) mod pitched;
