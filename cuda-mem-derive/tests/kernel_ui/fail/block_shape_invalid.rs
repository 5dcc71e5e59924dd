//! `#[kernel(block = ...)]` shapes CUDA cannot launch, and malformed ones:
//! each is an error at the option.
#![allow(dead_code)]
use cm_renamed::kernel;

#[kernel(crate = "cm_renamed", block = [0])]
fn zero() {}

#[kernel(crate = "cm_renamed", block = [32, 64])]
fn too_many_threads() {}

#[kernel(crate = "cm_renamed", block = [1, 1, 128])]
fn too_deep() {}

#[kernel(crate = "cm_renamed", block = [1, 2, 3, 4])]
fn four_sizes() {}

#[kernel(crate = "cm_renamed", block = 256)]
fn not_an_array() {}

#[kernel(crate = "cm_renamed", block = [32], block = [64])]
fn twice() {}

fn main() {}
