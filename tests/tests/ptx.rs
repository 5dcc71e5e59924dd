//! The embedded PTX is valid: it assembles with ptxas for sm_80 and sm_90, has
//! every kernel entry, calls no external function and names no hashed
//! symbol; and it is exactly what
//! `kernels/` and `algo-kernels/` compile to today. Needs `ptxas` (no GPU) and the pinned nightly
//! with `rust-src`: `bash .ci/test` installs both (ptxas from PyPI
//! `nvidia-cuda-nvcc`, into `PTXAS`).

use std::path::PathBuf;

use cuda_mem_tests::assemble_ptx as assemble;

/// Rebuilds the kernel crate `crate_dir` (of the repository) with the
/// pinned nightly and fails when the shipped `cuda-mem/ptx/{name}.ptx`
/// differs, or when it is not what cuda-mem embeds (`embedded`); with
/// `CUDA_MEM_BLESS_PTX=1` it writes the fresh build over the shipped file
/// instead (the maintainer step after changing a kernel).
fn check_shipped_ptx(crate_dir: &str, name: &str, embedded: &str) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target = root.join("target").join(name);
    let fresh = cuda_mem::build::KernelCrate::new(root.join(crate_dir))
        .target_dir(&target)
        .ptx_path(target.join(format!("{name}.ptx")))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let fresh = std::fs::read_to_string(fresh).unwrap();
    let shipped_path = root.join(format!("cuda-mem/ptx/{name}.ptx"));
    if std::env::var_os("CUDA_MEM_BLESS_PTX").is_some_and(|v| v == "1") {
        std::fs::write(&shipped_path, &fresh).unwrap();
        eprintln!("wrote {}", shipped_path.display());
        return;
    }
    let shipped = std::fs::read_to_string(&shipped_path).unwrap();
    if shipped != fresh {
        let line = shipped
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| "the lengths".to_string(), |i| format!("line {}", i + 1));
        panic!(
            "{} differs from a fresh build of {crate_dir}/ (first at {line}); after changing a \
             kernel or the toolchain, run: CUDA_MEM_BLESS_PTX=1 cargo test -p cuda-mem-tests --test ptx",
            shipped_path.display()
        );
    }
    assert_eq!(
        embedded, fresh,
        "the PTX cuda-mem embeds is not the shipped {name}.ptx"
    );
}

/// The fill kernels ship as PTX inside the cuda-mem package, so that nobody
/// needs a nightly toolchain to build cuda-mem: the shipped file is a fresh
/// build of `kernels/`.
#[test]
fn the_shipped_fill_ptx_is_a_fresh_build_of_kernels() {
    check_shipped_ptx("kernels", "fill-kernels", cuda_mem::fill_kernels_ptx());
}

/// The same for the kernels of `cuda_mem::algo` (`algo-kernels/`).
#[test]
fn the_shipped_algo_ptx_is_a_fresh_build_of_algo_kernels() {
    check_shipped_ptx(
        "algo-kernels",
        "algo-kernels",
        cuda_mem::algo::kernels_ptx(),
    );
}

/// The shipped PTX names nothing after the crate's hash: a device function
/// that is not inlined becomes a `.func` whose Rust (v0 or legacy) mangled
/// name carries the hash of the crate, which depends on the path the crate
/// is built at, so a build at another path (a fresh clone, CI) differs from
/// the shipped file. The byte-word SoA gather's partial-group helper did.
#[test]
fn the_shipped_ptx_has_no_hashed_names() {
    for (name, ptx) in [
        ("fill-kernels", cuda_mem::fill_kernels_ptx()),
        ("algo-kernels", cuda_mem::algo::kernels_ptx()),
    ] {
        for mangled in ["_RNv", "_ZN"] {
            assert!(
                !ptx.contains(mangled),
                "{name}.ptx names a Rust-mangled symbol ({mangled}...): inline the device \
                 function (#[inline(always)]) so that the PTX does not depend on where the crate \
                 is built"
            );
        }
    }
}

/// Every shared array of the shipped kernels is 16-byte aligned: the fill
/// kernels stage their pattern and the SoA kernels their tiles with 16-byte
/// shared stores and loads (`st.shared.v4` / `ld.shared.v4`), which need
/// the array's start aligned to 16 wherever the assembler places it. Arrays
/// of `u32` were declared `.align 4`.
#[test]
fn the_shipped_shared_arrays_are_16_byte_aligned() {
    for (name, ptx) in [
        ("fill-kernels", cuda_mem::fill_kernels_ptx()),
        ("algo-kernels", cuda_mem::algo::kernels_ptx()),
    ] {
        let arrays: Vec<&str> = ptx
            .lines()
            .filter(|l| l.trim_start().starts_with(".shared "))
            .collect();
        assert!(!arrays.is_empty(), "{name}.ptx declares no shared array");
        for line in arrays {
            let align: u32 = line
                .split_whitespace()
                .skip_while(|w| *w != ".align")
                .nth(1)
                .and_then(|a| a.parse().ok())
                .unwrap_or_else(|| panic!("{name}.ptx: no .align in `{line}`"));
            assert!(
                align >= 16 && align.is_power_of_two(),
                "{name}.ptx: `{line}` is aligned to {align}: shared arrays take 16-byte \
                 accesses and need .align 16 (cuda_mem::device::shared::__align)"
            );
        }
    }
}

/// Every algorithm kernel the host launches is in the PTX, none calls an
/// external function or spills to local memory, and the PTX assembles.
#[test]
fn algo_kernels_assemble_for_sm80_and_sm90() {
    let ptx = cuda_mem::algo::kernels_ptx();
    for entry in cuda_mem::algo::kernel_names() {
        assert!(
            ptx.contains(&format!(".entry {entry}(")),
            "missing .entry {entry}"
        );
    }
    assert!(
        !ptx.contains(".extern .func"),
        "the algo kernels call an external function (a panic path?)"
    );
    assert!(!ptx.contains(".local"), "the algo kernels use local memory");
    assemble(ptx, "algo");
}

/// Each kernel's own module, the one a context loads (`kernel_ptx`: the
/// file's header and declarations, then that entry), is valid PTX.
#[test]
fn each_algo_kernel_assembles_alone() {
    for entry in cuda_mem::algo::kernel_names() {
        let ptx = cuda_mem::algo::kernel_ptx(&entry).unwrap_or_else(|| panic!("{entry}"));
        assemble(&ptx, &entry);
    }
}

#[test]
fn fill_kernels_assemble_for_sm80_and_sm90() {
    let ptx = cuda_mem::fill_kernels_ptx();
    for entry in [
        "cuda_mem_fill_small",
        "cuda_mem_fill_medium",
        "cuda_mem_fill_large",
    ] {
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

/// A kernel body moved out of its fn by an attribute macro (safe code)
/// lands in a safe context: the fixture's raw store without `unsafe` does
/// not compile (on the code before round 3 of the soundness work, it did:
/// the kernel fn sat inside the `unsafe` entry point).
#[test]
fn a_hoisted_kernel_body_is_compiled_in_a_safe_context() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("../target/nvptx-attack");
    let result = cuda_mem::build::KernelCrate::new(root.join("nvptx-attack"))
        .target_dir(&target)
        .ptx_path(target.join("nvptx_attack.ptx"))
        .build();
    let error = match result {
        Ok(path) => panic!("the hoisted kernel body compiled ({})", path.display()),
        Err(error) => error.to_string(),
    };
    assert!(
        error.contains("E0133") && error.contains("dereference of raw pointer"),
        "the build failed, but not for the unsafe dereference: {error}"
    );
}
