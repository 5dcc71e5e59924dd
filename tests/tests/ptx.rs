//! The embedded PTX is valid: it assembles with ptxas for sm_80 and sm_90, has
//! every kernel entry and calls no external function. Needs `ptxas` (no GPU):
//! `bash .ci/test` installs it (PyPI `nvidia-cuda-nvcc`) and sets `PTXAS`.

use std::path::PathBuf;

use cuda_mem_tests::assemble_ptx as assemble;

#[test]
fn fill_kernels_assemble_for_sm80_and_sm90() {
    let ptx = cuda_mem::fill_kernels_ptx();
    for entry in ["cuda_mem_fill_small", "cuda_mem_fill_large"] {
        assert!(
            ptx.contains(&format!(".entry {entry}(")),
            "missing .entry {entry}"
        );
    }
    assert!(
        !ptx.contains(".extern .func"),
        "the PTX calls an external function (a panic path?)"
    );
    assert!(
        !ptx.contains(".local"),
        "the fill kernels use local memory (a runtime-indexed parameter?)"
    );
    assert!(
        ptx.contains("st.global.v4.b32"),
        "the fill kernels do not use 16-byte stores"
    );
    assemble(ptx, "fill");
}

/// A `no_std` user crate deriving `DeviceCopy` on a shared struct, compiled for
/// nvptx64 with the public builder: proves the derive works on the kernel side.
#[test]
fn a_user_kernel_crate_with_derived_structs_builds_for_nvptx() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("../target/nvptx-user");
    let ptx_path = cuda_mem::build::KernelCrate::new(root.join("nvptx-user"))
        .target_dir(&target)
        .ptx_path(target.join("nvptx_user.ptx"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let ptx = std::fs::read_to_string(ptx_path).unwrap();
    assert!(
        ptx.contains(".entry "),
        "no kernel entry in the user crate's PTX"
    );
    assemble(&ptx, "nvptx-user");
}
