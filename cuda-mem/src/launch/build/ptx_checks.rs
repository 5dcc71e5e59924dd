//! The checks of the PTX a kernel build wrote: references the driver could not
//! resolve, and the declarations of `shared_array!`'s arrays (repeated ones
//! removed, missing ones refused).

/// A line of PTX that declares a function or variable defined elsewhere.
/// `vprintf` is fine: ptxas resolves it itself (device printing); so is the
/// dynamic shared memory (`.extern .shared`), which the launch provides.
pub(super) fn is_forbidden_extern(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with(".extern")
        && !line.starts_with(".extern .shared")
        && !(line.starts_with(".extern .func") && line.contains("vprintf"))
}

/// `ptx` without the repeated declarations of `shared_array!`'s arrays
/// (the same line again, as a place expanded once per kernel gives it), or
/// `None` when there are none. Declarations of one name that differ are left
/// for the driver to refuse.
pub(super) fn without_repeated_shared_arrays(ptx: &str) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    let mut repeated = false;
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with(".shared ")
            && trimmed.contains("__cuda_mem_shared_")
            && !seen.insert(trimmed.to_string())
        {
            repeated = true;
            continue;
        }
        out.push_str(line);
    }
    repeated.then_some(out)
}

/// A shared array of `cuda_mem::device::shared` (`__cuda_mem_shared_<n>` or
/// `__cuda_mem_dynamic_shared`) that the PTX uses but does not declare.
pub(super) fn undeclared_shared_array(ptx: &str) -> Option<String> {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut declared = Vec::new();
    let mut used = Vec::new();
    for line in ptx.lines() {
        let trimmed = line.trim_start();
        let declaration = trimmed.starts_with(".shared") || trimmed.starts_with(".extern .shared");
        let mut rest = line;
        while let Some(at) = rest.find("__cuda_mem_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|&c| is_name_char(c))
                .collect();
            rest = &rest[at + name.len()..];
            if name.starts_with("__cuda_mem_shared_") || name == "__cuda_mem_dynamic_shared" {
                if declaration {
                    declared.push(name);
                } else {
                    used.push(name);
                }
            }
        }
    }
    used.into_iter().find(|name| !declared.contains(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vprintf_is_the_only_allowed_extern() {
        assert!(!is_forbidden_extern(
            ".extern .func  (.param .b32 func_retval0) vprintf"
        ));
        assert!(is_forbidden_extern(
            ".extern .func _ZN4core9panicking5panic17h"
        ));
        assert!(!is_forbidden_extern(".entry cuda_mem_fill_small("));
        assert!(is_forbidden_extern(
            ".extern .global .align 8 .b8 _RNvNtNtCs2pbRs8dvQsm_4libm4math4exp23TBL[4096];"
        ));
        assert!(!is_forbidden_extern(
            ".extern .shared .align 16 .b8 __cuda_mem_dynamic_shared[];"
        ));
    }

    #[test]
    fn a_shared_array_declared_once_per_kernel_is_declared_once() {
        let ptx = ".shared .align 4 .b8 __cuda_mem_shared_7[128];\n\
                   .shared .align 4 .b8 __cuda_mem_shared_8[64];\n\
                   .shared .align 4 .b8 __cuda_mem_shared_7[128];\n\
                   \tcvta.shared.u64 %rd1, __cuda_mem_shared_7;\n";
        let once = without_repeated_shared_arrays(ptx).unwrap();
        assert_eq!(once.matches("__cuda_mem_shared_7[128]").count(), 1);
        assert_eq!(once.matches("__cuda_mem_shared_8[64]").count(), 1);
        assert!(once.ends_with("\tcvta.shared.u64 %rd1, __cuda_mem_shared_7;\n"));
        assert_eq!(without_repeated_shared_arrays(&once), None);
    }

    #[test]
    fn shared_arrays_must_be_declared_where_they_are_used() {
        let declared = ".shared .align 4 .b8 __cuda_mem_shared_123[64];\n\
                        .extern .shared .align 16 .b8 __cuda_mem_dynamic_shared[];\n\
                        \tcvta.shared.u64 %rd1, __cuda_mem_shared_123;\n\
                        \tcvta.shared.u64 %rd2, __cuda_mem_dynamic_shared;\n";
        assert_eq!(undeclared_shared_array(declared), None);
        let missing = "\tcvta.shared.u64 %rd1, __cuda_mem_shared_9;\n";
        assert_eq!(
            undeclared_shared_array(missing).as_deref(),
            Some("__cuda_mem_shared_9")
        );
        let dynamic = "\tcvta.shared.u64 %rd2, __cuda_mem_dynamic_shared;\n";
        assert_eq!(
            undeclared_shared_array(dynamic).as_deref(),
            Some("__cuda_mem_dynamic_shared")
        );
    }
}
