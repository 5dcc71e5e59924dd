//! Behaviour without a CUDA driver or device (CI has neither): every entry
//! point returns an error instead of panicking. On a GPU machine the same test
//! runs again in a child process with the GPUs hidden (`CUDA_VISIBLE_DEVICES=`),
//! where the driver loads but reports no device.
//!
//! Every other entry point of the crate needs a `CudaContext`, which only
//! `cuda_mem::context` (or cudarc) hands out: these are all there is to check.

use std::time::Duration;

use cuda_mem_tests::{run_test_in_child, skip_driver_errors_under_sanitizer};

#[test]
fn without_a_gpu_every_entry_point_returns_an_error() {
    if cuda_mem::is_available() {
        // A GPU machine: the GPU suite covers the other side.
        assert!(cuda_mem::context(0).is_ok());
        return;
    }
    let err = cuda_mem::context(0).unwrap_err();
    eprintln!("no GPU here: cuda_mem::context(0) -> Err({err})");
    assert!(
        matches!(
            err,
            cuda_mem::Error::DriverNotFound | cuda_mem::Error::NoDevice(_)
        ),
        "{err}"
    );
    assert!(cuda_mem::device_count().is_err() || cuda_mem::device_count() == Ok(0));
    // The message says what is missing and what to do.
    let text = err.to_string();
    assert!(
        text.contains("CUDA driver (libcuda) was not found") || text.contains("no CUDA device"),
        "{text}"
    );
    // Twice: the probe is cached and must not start panicking later.
    assert!(!cuda_mem::is_available());
    assert!(cuda_mem::context(1).is_err());
    assert!(cuda_mem::context(usize::MAX).is_err());
    assert!(cuda_mem::context(0).is_err());
}

/// The driver is there but shows no device: `CUDA_VISIBLE_DEVICES` set to
/// nothing. The test above, run in a child process, must take its no-GPU
/// path and pass.
#[test]
#[ignore = "needs a CUDA device"]
fn with_the_gpus_hidden_every_entry_point_returns_an_error() {
    if skip_driver_errors_under_sanitizer(
        "with_the_gpus_hidden",
        "cuInit fails with CUDA_ERROR_NO_DEVICE on purpose in the child",
    ) {
        return;
    }
    assert!(cuda_mem::is_available(), "this test needs a GPU to hide");
    let run = run_test_in_child(
        "without_a_gpu_every_entry_point_returns_an_error",
        &[("CUDA_VISIBLE_DEVICES", "")],
        Duration::from_secs(120),
    );
    let out = run.output();
    assert!(run.status.is_some(), "the child hung:\n{out}");
    assert!(run.status.unwrap().success(), "the child failed:\n{out}");
    assert!(
        out.contains("no GPU here: cuda_mem::context(0) -> Err(no CUDA device is available"),
        "the child did not take the no-device path:\n{out}"
    );
    assert!(out.contains("1 passed"), "{out}");
}
