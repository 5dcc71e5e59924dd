//! Host side of `#[kernel]`: the launcher's constants and types.

use cm_renamed::device::{DeviceSlice, DeviceSliceMut};
use cm_renamed::prelude::*;
use cm_renamed::{kernel, DeviceCopy};

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
pub struct Pair {
    a: u32,
    b: f32,
}

/// Scales every element.
#[kernel(crate = "cm_renamed")]
pub fn scale(data: DeviceSliceMut<f32>, factor: f32) {
    let _ = (data.len(), factor);
}

#[kernel(crate = "cm_renamed")]
fn copy<'a>(out: DeviceSliceMut<'a, Pair>, input: DeviceSlice<'a, Pair>, _n: u64) {
    let _ = (out.len(), input.len());
}

/// # Safety
/// None really.
#[kernel(crate = "cm_renamed")]
unsafe fn raw(p: cm_renamed::DevicePtr<u32>) {
    let _ = p;
}

#[kernel(crate = "cm_renamed")]
fn nothing() {}

#[test]
fn launchers_have_names_and_fingerprints() {
    assert_eq!(scale::NAME, "scale");
    assert_eq!(copy::NAME, "copy");
    assert_eq!(raw::NAME, "raw");
    assert_eq!(nothing::NAME, "nothing");
    let all = [
        scale::SIGNATURE,
        copy::SIGNATURE,
        raw::SIGNATURE,
        nothing::SIGNATURE,
    ];
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert_ne!(a, b);
        }
    }
    assert_eq!(format!("{scale:?}"), "scale");
}

#[allow(dead_code)]
fn launches_type_check(
    ctx: &std::sync::Arc<cm_renamed::CudaContext>,
    module: &'static cm_renamed::Module,
) -> cm_renamed::Result<()> {
    let stream = ctx.new_stream()?;
    let config = cm_renamed::LaunchConfig::for_num_elems(1);
    let mut a = cm_renamed::DeviceBuffer::<f32>::zeroed(ctx, 4)?;
    let mut pairs = cm_renamed::DeviceBuffer::<Pair>::zeroed(ctx, 4)?;
    let pinned = cm_renamed::PinnedBuffer::<Pair>::new(ctx, 4)?;
    scale.launch(module, &stream, config, (&mut a, 2.0))?;
    scale.launch(module, &stream, config, (a.slice_mut(1..)?, 2.0))?;
    copy.launch(module, &stream, config, (&mut pairs, &pinned, 4))?;
    copy.launch(
        module,
        &stream,
        config,
        (pairs.slice_mut(..2)?, pinned.slice(2..)?, 4),
    )?;
    // SAFETY: a test of the types only.
    unsafe { raw.launch(module, &stream, config, (a.as_device_ptr().cast::<u32>(),))? };
    nothing.launch(module, &stream, config, ())?;
    Ok(())
}

#[test]
fn a_kernel_runs_on_the_host_as_a_grid_of_one_thread() {
    #[kernel(crate = "cm_renamed")]
    fn double(mut data: DeviceSliceMut<u32>, input: DeviceSlice<u32>) {
        for (i, x) in data.grid_stride_mut() {
            *x = 2 * input[i];
        }
    }
    let input = [1u32, 2, 3];
    let mut out = [0u32; 3];
    // SAFETY: both arrays outlive the slices, and `out` is only used through its slice.
    let (out_slice, in_slice) = unsafe {
        (
            DeviceSliceMut::from_raw_parts(out.as_mut_ptr(), 3),
            DeviceSlice::from_raw_parts(input.as_ptr(), 3),
        )
    };
    double::on_host(out_slice, in_slice);
    assert_eq!(out, [2, 4, 6]);
}
