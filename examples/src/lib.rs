//! Shared helpers of the examples.

/// Opens device 0, or prints a one-line reason and exits with status 1.
///
/// ```no_run
/// let ctx = cuda_mem_examples::gpu_or_exit("quickstart");
/// ```
pub fn gpu_or_exit(example: &str) -> std::sync::Arc<cuda_mem::CudaContext> {
    match cuda_mem::context(0) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("{example}: needs a CUDA GPU: {e}");
            std::process::exit(1);
        }
    }
}
