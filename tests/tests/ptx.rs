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

/// Builds `nvptx-reexpand/` (kernels whose macro arguments expand
/// differently each time they are expanded; see its `lib.rs`) and returns
/// its PTX.
fn reexpand_ptx() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("../target/nvptx-reexpand");
    let ptx_path = cuda_mem::build::KernelCrate::new(root.join("nvptx-reexpand"))
        .target_dir(&target)
        .ptx_path(target.join("nvptx_reexpand.ptx"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::read_to_string(ptx_path).unwrap()
}

/// The body of the `.entry` named `kernel` in `ptx`.
fn entry_body<'p>(ptx: &'p str, kernel: &str) -> &'p str {
    let start = ptx
        .find(&format!(".entry {kernel}("))
        .unwrap_or_else(|| panic!("no entry {kernel} in the PTX"));
    let body = &ptx[start..];
    &body[..body.find("\n}").map_or(body.len(), |end| end + 2)]
}

/// The bytes of the `.global .b8` array `name` of `ptx`.
fn global_bytes(ptx: &str, name: &str) -> Vec<u64> {
    let line = ptx
        .lines()
        .find(|line| line.contains(&format!(" {name}[")))
        .unwrap_or_else(|| panic!("no {name} in the PTX"));
    let values = &line[line.find('{').unwrap() + 1..line.rfind('}').unwrap()];
    values
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect()
}

/// `shared_array!` must declare the `.shared` array that its `SharedArray`
/// indexes: one expansion of the caller's type and length for both. A
/// length token that expands to 1 for the `global_asm!` declaration and to
/// 1024 for the `SharedArray<_, LEN>` (a proc macro with a counter, from a
/// crate that forbids unsafe code) gave a 4-byte declaration and a safe
/// `atomic(1023)` 4092 bytes into it: an out-of-bounds shared-memory write.
#[test]
fn a_shared_array_declares_every_element_its_methods_reach() {
    let ptx = reexpand_ptx();
    let body = entry_body(&ptx, "reexpand_shared");
    let declared: u64 = ptx
        .lines()
        .find_map(|line| {
            let line = line.trim();
            let rest = line.strip_prefix(".shared .align 16 .b8 __cuda_mem_shared_")?;
            let size = &rest[rest.find('[')? + 1..rest.find(']')?];
            size.parse().ok()
        })
        .expect("no shared array declared in the PTX");
    if body.contains("atom.") {
        // The kernel's `atomic(1023)` of `u32`s is in its array: element
        // 1023 ends at byte 4096 of the declaration.
        assert!(
            declared >= 4096,
            "the kernel's shared array hands out element 1023 (an atomic at byte 4092) but the \
             PTX declares only {declared} bytes for it: `shared_array!` expanded the length \
             twice, and the two expansions differ\n{body}"
        );
    }
}

/// The parameter table (and fingerprint) that the PTX holds for a kernel
/// must describe the parameters its entry point takes. `#[kernel]` and
/// `__kernel_entry!` paste each parameter type in several places; a type
/// that expands to `[u32; 64]` elements in some and to `[u32; 1]` in the
/// others (the fixture `nvptx-reexpand-param`, a proc macro with a counter,
/// from a crate that forbids unsafe code) gave, before every paste was tied
/// to one, a table saying "a `DeviceSliceMut` of 4-byte elements" (what the
/// host checks its launch against) for a kernel that strides and writes
/// 256-byte elements: out of the launched buffer by 64 times. Built once
/// for each count of first expansions from 1 to 12: each build must fail
/// with a type error (the pastes disagree) or hold a table whose element
/// covers every store of the entry point.
#[test]
fn a_kernels_parameter_table_describes_the_types_its_entry_takes() {
    let template = fixture_source("nvptx-reexpand-param");
    let (mut built, mut refused) = (Vec::new(), Vec::new());
    for firsts in 1..=12 {
        let source = template.replace("4 /* n */", &firsts.to_string());
        assert_ne!(source, template, "the fixture lost its `4 /* n */` marker");
        let result =
            build_fixture_copy("nvptx-reexpand-param", &format!("firsts-{firsts}"), &source);
        let ptx = match result {
            Err(error) => {
                let error = error.to_string();
                assert!(
                    error.contains("E0308"),
                    "{firsts} first expansions: the build failed, but not for the pastes' \
                     type mismatch: {error}"
                );
                refused.push(firsts);
                continue;
            }
            Ok(path) => std::fs::read_to_string(path).unwrap(),
        };
        built.push(firsts);
        let abi = global_bytes(&ptx, "__cuda_mem_abi_reexpand_param");
        // Rows of five little-endian u64 words: the head, then the
        // parameter (kind, size, align, element size, element align).
        let word = |row: usize, w: usize| {
            (0..8).fold(0u64, |v, b| v | abi[row * 40 + w * 8 + b] << (8 * b))
        };
        let element_size = word(1, 3);
        let body = entry_body(&ptx, "reexpand_param");
        // The kernel writes the first and the last `u32` of its element:
        // the largest store offset is the element's last 4 bytes.
        let last_store = body
            .lines()
            .filter(|line| line.trim_start().starts_with("st.global"))
            .map(|line| {
                line.split('[')
                    .nth(1)
                    .and_then(|a| a.split(']').next())
                    .map_or(0, |address| {
                        address
                            .split('+')
                            .nth(1)
                            .map_or(0, |off| off.trim().parse::<u64>().unwrap())
                    })
            })
            .max()
            .expect("no store in the kernel");
        assert!(
            last_store + 4 <= element_size,
            "{firsts} first expansions: the PTX's parameter table says the kernel takes a \
             slice of {element_size}-byte elements, but its entry point writes byte \
             {last_store}..{} of each element: a paste of the parameter type outside the \
             entry's own\n{body}",
            last_store + 4
        );
    }
    // Some count is past every paste (all of them `[u32; 64]`), so at least
    // one copy builds and its table is checked.
    assert!(!built.is_empty(), "no copy built (refused: {refused:?})");
}

/// The line of `ptx` that declares the global `name`.
fn global_line<'p>(ptx: &'p str, name: &str) -> &'p str {
    ptx.lines()
        .find(|line| {
            line.contains(".global")
                && line
                    .split(|c: char| c.is_whitespace() || c == '[' || c == ';')
                    .any(|word| word == name)
        })
        .unwrap_or_else(|| panic!("no {name} in the PTX"))
        .trim()
}

/// The `src/lib.rs` of the fixture crate `tests/<fixture>`.
fn fixture_source(fixture: &str) -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(fixture).join("src/lib.rs")).unwrap()
}

/// Builds a copy of the fixture crate `tests/<fixture>` whose `src/lib.rs`
/// is `source`: in `target/nvptx-fixture-copies/<fixture>-<variant>` (its
/// manifest's paths into the repository made absolute, its lock file
/// kept), all copies into one target directory. The PTX's path, or the
/// build's error.
fn build_fixture_copy(
    fixture: &str,
    variant: &str,
    source: &str,
) -> Result<PathBuf, cuda_mem::build::BuildError> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let original = root.join(fixture);
    let work = root.join("../target/nvptx-fixture-copies");
    let manifest = std::fs::read_to_string(original.join("Cargo.toml"))
        .unwrap()
        .replace(
            "path = \"../../",
            &format!("path = \"{}/../", root.display()),
        );
    let dir = work.join(format!("{fixture}-{variant}"));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(original.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), source).unwrap();
    cuda_mem::build::KernelCrate::new(&dir)
        .target_dir(work.join("target"))
        .ptx_path(work.join(format!("{fixture}-{variant}.ptx")))
        .build()
}

/// What the host checks a launch of the kernel `scribble` against (its
/// fingerprint's and its parameter table's declarations), and the entry's
/// body, in the PTX at `ptx_path`.
fn scribble_statics(ptx_path: PathBuf) -> [String; 3] {
    let ptx = std::fs::read_to_string(ptx_path).unwrap();
    [
        global_line(&ptx, "__cuda_mem_sig_scribble").to_string(),
        global_line(&ptx, "__cuda_mem_abi_scribble").to_string(),
        entry_body(&ptx, "scribble").to_string(),
    ]
}

/// Fails unless the kernel `scribble` built with the host's field table
/// (`host`) and with another (`split`, [`scribble_statics`] of each) are
/// two kernels whose fingerprints or parameter tables differ, so that the
/// host refuses to launch the split one. `case` says what the split is.
fn assert_split_table_refused(host: &[String; 3], split: &[String; 3], case: &str) {
    assert_ne!(
        host[2], split[2],
        "the fixture's two builds compiled to one kernel: the split table was not used"
    );
    assert!(
        host[0] != split[0] || host[1] != split[1],
        "a kernel that indexes its structure of arrays by a field table other than the host's \
         ({case}) has the fingerprint and parameter table the host expects: the launch is not \
         refused\n{}\n{}",
        split[0],
        split[1]
    );
}

/// A `DeviceSoA`'s `FIELDS` decide where a kernel's `SoaSliceMut` finds
/// each field's array. The fixture `nvptx-soa-table` gives its struct one
/// 64-byte field on the host and 64 one-byte fields in the kernel
/// (`cfg!(target_arch)`), so the host lays a one-struct `SoaBuffer` out in
/// 256 bytes and the kernel's `set` writes its last field at byte 16128.
/// That took only safe code while the trait was safe (it is `unsafe` now,
/// and a table that differs between builds breaks its contract); the
/// launch's check covers the table too, for a stale PTX: built once with
/// the kernel's table equal to the host's (what the host expects) and once
/// split, the two PTX must differ in their fingerprint or parameter table,
/// or the host launches the split one into its buffer.
#[test]
fn a_soa_kernel_whose_field_table_differs_from_the_hosts_is_refused() {
    let template = fixture_source("nvptx-soa-table");
    let [host, split] = [false, true].map(|split| {
        let source = template.replace("true /* split */", &split.to_string());
        assert_ne!(
            source, template,
            "the fixture lost its `true /* split */` marker"
        );
        let ptx = build_fixture_copy("nvptx-soa-table", &format!("split-{split}"), &source)
            .unwrap_or_else(|e| panic!("split {split}: {e}"));
        scribble_statics(ptx)
    });
    assert_split_table_refused(&host, &split, "a table split by cfg!(target_arch)");
}

/// Two `shared_array!` places are two arrays ("one array per block for each
/// place the macro is written"), also when one `macro_rules!` writes both
/// and one call stamps them (the fixture `nvptx-shared-sites`, a crate that
/// forbids unsafe code): their names hash the place's tokens, line and
/// column, which inside a macro are the outermost call's, so both got one
/// name and the builder kept one declaration. The kernel's two counters
/// were one (its unsafe `read` / `write`, whose contract is about each
/// array's own elements, then race with the other array's; arrays of
/// different element types of one size alias as mixed-size atomics).
#[test]
fn two_shared_array_places_stamped_by_one_macro_call_are_two_arrays() {
    let used = shared_arrays_of_two_counts("nvptx-shared-sites", "nvptx_shared_sites.ptx");
    assert_eq!(used.len(), 2, "one array for both places: {used:?}");
}

/// The `.shared` arrays that the entry `two_counts` of the fixture crate
/// `fixture` uses, built into `ptx_name` (a fixture with two
/// `shared_array!` places in that kernel).
fn shared_arrays_of_two_counts(fixture: &str, ptx_name: &str) -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("../target/nvptx-shared-sites");
    let ptx_path = cuda_mem::build::KernelCrate::new(root.join(fixture))
        .target_dir(&target)
        .ptx_path(target.join(ptx_name))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let ptx = std::fs::read_to_string(ptx_path).unwrap();
    let body = entry_body(&ptx, "two_counts");
    let mut used: Vec<String> = body
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.starts_with("__cuda_mem_shared_"))
        .map(String::from)
        .collect();
    used.sort_unstable();
    used.dedup();
    used
}

/// Two `shared_array!` places written apart, in a crate that forbids unsafe
/// code (the fixture `nvptx-shared-collide`): `__site` XOR-ed `line << 32 |
/// column` onto a 64-bit FNV-1a hash of the place's tokens and number, so two
/// places whose hashes differed only in low bits of each half (found by
/// choosing their length tokens, `1 + 0 * K`: about 2^22 tries a side) were
/// put at a line and column that cancelled the difference. They got one
/// name, the builder kept one of the two identical declarations, and the
/// kernel's two arrays were one. Names are 128 bits now, two lanes of
/// different kinds over every part.
#[test]
fn two_shared_array_places_whose_hashes_differ_by_a_line_and_column_are_two_arrays() {
    let used = shared_arrays_of_two_counts("nvptx-shared-collide", "nvptx_shared_collide.ptx");
    assert_eq!(used.len(), 2, "one array for both places: {used:?}");
}

/// A derived `DeviceSoA` struct (safe code: `tests/nvptx-soa-collide`
/// forbids unsafe code) whose fields are behind `#[cfg(target_arch)]`: one
/// 8-byte field in the host's build, two 4-byte fields in the kernel's.
/// Built as the host sees it (every `target_arch = "nvptx64"` replaced) and
/// as it is, the two PTX must differ in their fingerprint or parameter
/// table, or the host launches the split one into its buffer (the second
/// field written at byte 256 of an 8-byte region). The field names make the
/// two tables' FNV-1a fingerprints collide.
#[test]
fn a_derived_soa_whose_cfg_fields_hash_alike_is_refused() {
    let template = fixture_source("nvptx-soa-collide");
    let [host, split] = [false, true].map(|split| {
        let source = if split {
            template.clone()
        } else {
            template.replace("target_arch = \"nvptx64\"", "target_arch = \"x86_64\"")
        };
        let ptx = build_fixture_copy("nvptx-soa-collide", &format!("split-{split}"), &source)
            .unwrap_or_else(|e| panic!("split {split}: {e}"));
        scribble_statics(ptx)
    });
    assert_split_table_refused(&host, &split, "a derived struct with cfg'd fields");
}
