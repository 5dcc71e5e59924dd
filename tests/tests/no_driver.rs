//! Behaviour without a CUDA driver or device (CI has neither): every entry
//! point returns an error instead of panicking.

#[test]
fn without_a_gpu_every_entry_point_returns_an_error() {
    if cuda_mem::is_available() {
        // A GPU machine: the GPU suite covers the other side.
        assert!(cuda_mem::context(0).is_ok());
        return;
    }
    let err = cuda_mem::context(0).unwrap_err();
    assert!(
        matches!(
            err,
            cuda_mem::Error::DriverNotFound | cuda_mem::Error::NoDevice(_)
        ),
        "{err}"
    );
    assert!(cuda_mem::device_count().is_err() || cuda_mem::device_count() == Ok(0));
    assert!(!err.to_string().is_empty());
    // Twice: the probe is cached and must not start panicking later.
    assert!(!cuda_mem::is_available());
    assert!(cuda_mem::context(1).is_err());
}
