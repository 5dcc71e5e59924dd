//! The module graph of `cuda-mem/src` is layered, and has no cycle (CPU
//! only). The test reads every source file, finds the paths it uses (`use
//! crate::…`, `use super::…`, and `crate::…` / `super::…` paths in code),
//! resolves names that a module only re-exports (`lib.rs`'s `pub use
//! buffers::buffer::Buffer`, a folder's `pub use …`) to the module that
//! defines them, and checks, file by file (a file's inline modules are part
//! of it; unit tests are not):
//!
//! - every top-level module (a folder or a file of `src`) is in [`LAYERS`],
//!   and imports only from its own layer and the layers below;
//! - no files import each other in a cycle, directly or through others
//!   (a folder's `mod.rs` counts as a file like any other).
//!
//! Failures print each offending edge with the file and line of its first
//! use. New files are picked up by themselves; a new folder or top-level
//! file must be given a layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers of `cuda-mem/src`, from the bottom up: each top-level module
/// (a folder or a file of `src`), its layer, and what it owns. A module may
/// import from its own layer and the layers below, never from above. The
/// crate root (`lib.rs`) is the facade over them all: it declares the
/// modules and re-exports the public API, and holds the exported macros,
/// which any layer may name.
const LAYERS: &[(&str, u32, &str)] = &[
    ("error", 0, "error.rs: `Error` and `Result`"),
    (
        "copy",
        0,
        "copy/: the type contract (`DeviceCopy`, `DevicePtr`, layout fingerprints, the \
         derive's proof); no_std, shared with kernels",
    ),
    ("test_rng", 0, "test_rng.rs: the unit tests' random numbers"),
    (
        "device",
        1,
        "device/: the device std of kernels written in Rust; no_std",
    ),
    (
        "current",
        1,
        "current.rs: the calling thread's current context (binding; stream calls without it)",
    ),
    (
        "order",
        1,
        "order/: stream ordering of byte ranges, which streams cuda-mem can order, its own \
         graph captures",
    ),
    (
        "context",
        2,
        "context.rs: driver probing, contexts and the state cuda-mem keeps per context",
    ),
    (
        "stream",
        2,
        "stream.rs: `Stream`, the stream only cuda-mem queues work on (in a context handle \
         of its own)",
    ),
    (
        "memory",
        3,
        "memory/: memory kinds and their allocation (raw allocations, pinned pages and their \
         cache, pools, virtual memory, the record of imports)",
    ),
    (
        "engine",
        4,
        "engine/: the one engine behind every buffer (shapes, memset, fill, copies, staged \
         host copies, peer access, views)",
    ),
    (
        "buffers",
        5,
        "buffers/: the buffers and their features (Buffer, PitchedBuffer, DeviceVec, \
         allocators, Memory / MemoryMut, the cudarc boundary, NCCL)",
    ),
    (
        "graph",
        6,
        "graph/: CUDA graphs of buffer operations and kernel launches",
    ),
    (
        "algo",
        6,
        "algo/: device-wide algorithms (reductions, scans) and their shipped kernels",
    ),
    (
        "ipc",
        6,
        "ipc/: CUDA IPC: buffers and events shared between processes",
    ),
    (
        "soa",
        7,
        "soa/: structures of arrays (SoaBuffer, its field views, the GPU transpositions)",
    ),
    (
        "launch",
        7,
        "launch/: typed kernel launches (the host side takes buffers, views and graph handles)",
    ),
    (
        "build",
        7,
        "launch/build/, module `build`: compiles kernel crates to PTX from build scripts",
    ),
];

/// A module path below the crate root, e.g. `["device", "slice"]`; the root is `[]`.
type ModPath = Vec<String>;

/// One source file's module and its text without comments, strings and chars.
struct Source {
    module: ModPath,
    file: String,
    code: String,
}

/// Where one module uses another: the file and line of the first use.
type Edges = BTreeMap<ModPath, BTreeMap<ModPath, String>>;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cuda-mem/src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `code` with comments, string literals and char literals blanked out
/// (newlines kept, so line numbers still match the file).
fn strip(code: &str) -> String {
    let b = code.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let blank = |c: u8| if c == b'\n' { b'\n' } else { b' ' };
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    out.extend_from_slice(b"  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if b[i] == b'"' || (b[i] == b'r' && matches!(b.get(i + 1), Some(b'"' | b'#'))) {
            // A string (raw strings: r"…", r#"…"#).
            let raw = b[i] == b'r';
            let mut hashes = 0;
            if raw {
                out.push(b' ');
                i += 1;
                while b[i] == b'#' {
                    hashes += 1;
                    out.push(b' ');
                    i += 1;
                }
                if b[i] != b'"' {
                    continue; // `r#ident`
                }
            }
            out.push(b' ');
            i += 1;
            while i < b.len() {
                if !raw && b[i] == b'\\' {
                    out.push(b' ');
                    out.push(blank(b[i + 1]));
                    i += 2;
                } else if b[i] == b'"' && b[i + 1..].iter().take(hashes).all(|&c| c == b'#') {
                    out.extend(std::iter::repeat_n(b' ', hashes + 1));
                    i += hashes + 1;
                    break;
                } else {
                    out.push(blank(b[i]));
                    i += 1;
                }
            }
        } else if b[i] == b'\'' && char_literal_len(&b[i..]).is_some() {
            let n = char_literal_len(&b[i..]).unwrap();
            out.extend(std::iter::repeat_n(b' ', n));
            i += n;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The length of a char or byte-char literal at the start of `b` (not a lifetime).
fn char_literal_len(b: &[u8]) -> Option<usize> {
    let rest = &b[1..];
    if rest.first() == Some(&b'\\') {
        return rest.iter().skip(1).position(|&c| c == b'\'').map(|p| p + 3);
    }
    let len = (1..=rest.len().min(4)).find(|&n| std::str::from_utf8(&rest[..n]).is_ok())?;
    (rest.get(len) == Some(&b'\'')).then_some(len + 2)
}

/// Every source file with its module path; `#[path = "…"] mod name;` is followed.
fn sources() -> Vec<Source> {
    let root = src_dir();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, strip(&text))
        })
        .collect();
    // The module of a file from its place in the tree.
    let natural = |path: &Path| -> ModPath {
        let rel = path.strip_prefix(&root).unwrap();
        let mut module: ModPath = rel
            .parent()
            .into_iter()
            .flat_map(|p| p.iter())
            .map(|s| s.to_string_lossy().into_owned())
            .collect();
        let stem = rel.file_stem().unwrap().to_string_lossy().into_owned();
        if rel.parent() == Some(Path::new("")) && stem == "lib" {
        } else if stem != "mod" {
            module.push(stem);
        }
        module
    };
    // `#[path = "x.rs"] mod name;`: the file x.rs is the module `name` of
    // the declaring file's module (`lib.rs`'s `#[path = "launch/build/mod.rs"]
    // pub mod build;` is `build`, not `launch::build`).
    let mut renamed: BTreeMap<PathBuf, ModPath> = BTreeMap::new();
    for (path, _) in &texts {
        let raw = std::fs::read_to_string(path).unwrap();
        let mut pending: Option<String> = None;
        for line in raw.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("#[path = \"") {
                pending = rest.split('"').next().map(str::to_string);
            } else if let (Some(file), Some(name)) = (&pending, mod_decl(line)) {
                let mut module = natural(path);
                module.push(name);
                renamed.insert(path.parent().unwrap().join(file), module);
                pending = None;
            } else if !line.starts_with("#[") && !line.starts_with("//") {
                pending = None;
            }
        }
    }
    // The other files of a folder whose `mod.rs` is such a file are that
    // module's children: `launch/build/rustup.rs` is `build::rustup`.
    let under_renamed = |path: &Path| -> Option<ModPath> {
        renamed.iter().find_map(|(file, module)| {
            if file.file_name()? != "mod.rs" {
                return None;
            }
            let rel = path.strip_prefix(file.parent()?).ok()?;
            let mut module = module.clone();
            module.extend(
                rel.parent()
                    .into_iter()
                    .flat_map(|p| p.iter())
                    .map(|s| s.to_string_lossy().into_owned()),
            );
            let stem = rel.file_stem()?.to_string_lossy().into_owned();
            if stem != "mod" {
                module.push(stem);
            }
            Some(module)
        })
    };
    texts
        .into_iter()
        .map(|(path, code)| {
            let rel = path.strip_prefix(&root).unwrap();
            let module = renamed
                .get(&path)
                .cloned()
                .or_else(|| under_renamed(&path))
                .unwrap_or_else(|| natural(&path));
            Source {
                module,
                file: format!("cuda-mem/src/{}", rel.display()),
                code,
            }
        })
        .collect()
}

/// The name in `mod name;` / `pub(crate) mod name;` / `mod name {`.
fn mod_decl(line: &str) -> Option<String> {
    let at = line.find("mod ")?;
    let before = line[..at].trim();
    if !(before.is_empty() || before.starts_with("pub")) {
        return None;
    }
    let name: String = line[at + 4..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

/// Expands a use tree (`a::{b, c::{d as e, self}}`) into full paths, each
/// with the name it binds (`None` for a glob).
fn expand_use(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
    let tree = tree.trim().trim_start_matches("::");
    if tree.is_empty() {
        return;
    }
    // Split on the first top-level `{`.
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = segments(&tree[..open]);
        let close = tree.rfind('}').unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let mut base = prefix.to_vec();
        base.extend(head);
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&inner[start..i], &base, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use(&inner[start..], &base, out);
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p, Some(a.trim().to_string())),
        None => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(segments(path));
    if full.last().is_some_and(|s| s == "*") {
        full.pop();
        out.push((full, None));
        return;
    }
    if full.last().is_some_and(|s| s == "self") {
        full.pop();
    }
    let name = alias.or_else(|| full.last().cloned());
    out.push((full, name));
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A `use` statement or a path in code, in module `module` at `line`.
struct Use {
    /// Inside the file: the inline modules around it (`mod tests { … }`).
    inline: Vec<String>,
    line: usize,
    reexport: bool,
    path: Vec<String>,
    name: Option<String>,
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Every `use` item and every `crate::…` / `super::…` / `self::…` path in
/// `code`, and the inline modules (`mod name { … }`) it declares; modules
/// under `#[cfg(test)]` are skipped.
fn uses(code: &str) -> (Vec<Use>, Vec<Vec<String>>) {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut inlines = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut line = 1;
    let mut i = 0;
    let word_at = |i: usize, w: &str| {
        b[i..].starts_with(w.as_bytes())
            && (i == 0 || !is_ident(b[i - 1]) && b[i - 1] != b'$')
            && b.get(i + w.len()).is_none_or(|&c| !is_ident(c))
    };
    let inline_names = |inline: &[(String, usize)]| inline.iter().map(|(n, _)| n.clone()).collect();
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        if word_at(i, "mod") {
            let rest = &code[i + 3..];
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let after = rest.trim_start()[name.len()..].trim_start();
            if after.starts_with('{') {
                if code[..i].trim_end().ends_with("#[cfg(test)]") {
                    // Unit tests are not part of the library's module graph:
                    // skip to the end of the module.
                    let open = i + code[i..].find('{').unwrap();
                    let mut level = 0;
                    let mut end = open;
                    for (j, c) in code[open..].char_indices() {
                        match c {
                            '{' => level += 1,
                            '}' => level -= 1,
                            _ => {}
                        }
                        if level == 0 {
                            end = open + j;
                            break;
                        }
                    }
                    line += code[i..end].matches('\n').count();
                    i = end + 1;
                    continue;
                }
                inline.push((name, depth));
                inlines.push(inline_names(&inline));
            }
        }
        if word_at(i, "use") {
            let end = code[i..].find(';').map_or(b.len(), |e| i + e);
            let before = code[..i].rsplit(['\n', ';', '{', '}']).next().unwrap_or("");
            let reexport = before.contains("pub");
            let mut expanded = Vec::new();
            expand_use(&code[i + 3..end], &[], &mut expanded);
            for (path, name) in expanded {
                out.push(Use {
                    inline: inline_names(&inline),
                    line,
                    reexport,
                    path,
                    name,
                });
            }
            line += code[i..end].matches('\n').count();
            i = end;
            continue;
        }
        let path_start = ["crate::", "super::", "self::"].into_iter().find(|start| {
            word_at(i, &start[..start.len() - 2]) && b[i..].starts_with(start.as_bytes())
        });
        if path_start.is_some() {
            {
                let mut end = i;
                while end < b.len() && (is_ident(b[end]) || b[end..].starts_with(b"::")) {
                    end += if b[end] == b':' { 2 } else { 1 };
                }
                out.push(Use {
                    inline: inline_names(&inline),
                    line,
                    reexport: false,
                    path: segments(&code[i..end]),
                    name: None,
                });
                i = end;
                continue;
            }
        }
        i += 1;
    }
    (out, inlines)
}

/// The crate's modules and what each re-exports, for resolving paths.
struct Crate {
    modules: BTreeSet<ModPath>,
    /// module -> name -> the path it re-exports.
    reexports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
}

impl Crate {
    /// The absolute form of `path`, used in `module` (inside its inline
    /// modules `inline`); `None` for paths outside the crate.
    fn absolute(&self, module: &ModPath, inline: &[String], path: &[String]) -> Option<ModPath> {
        let mut here: ModPath = module.clone();
        here.extend(inline.iter().cloned());
        let mut rest = path;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                here.clear();
                rest = &rest[1..];
            }
            Some("super") | Some("self") => {
                while let Some(seg) = rest.first() {
                    match seg.as_str() {
                        "super" => {
                            here.pop();
                        }
                        "self" => {}
                        _ => break,
                    }
                    rest = &rest[1..];
                }
            }
            _ => return None,
        }
        here.extend(rest.iter().cloned());
        Some(here)
    }

    /// The module that defines what `path` (absolute) names: submodules are
    /// entered, re-exports followed; the deepest module reached.
    fn target(&self, path: &[String]) -> ModPath {
        let mut here: ModPath = Vec::new();
        let mut rest: Vec<String> = path.to_vec();
        for _ in 0..32 {
            let Some(seg) = rest.first().cloned() else {
                return here;
            };
            let mut child = here.clone();
            child.push(seg.clone());
            if self.modules.contains(&child) {
                here = child;
                rest.remove(0);
            } else if let Some(to) = self.reexports.get(&here).and_then(|r| r.get(&seg)) {
                let mut next = to.clone();
                next.extend(rest[1..].iter().cloned());
                here.clear();
                rest = next;
            } else {
                return here;
            }
        }
        here
    }
}

/// The module graph of cuda-mem's library code, file by file.
struct Graph {
    /// Dependency edges between files, each named by its module (`mod.rs`
    /// by its folder's); a use inside a file's inline modules is the
    /// file's, a use of an inline module (`private::layout` when it was
    /// one) is a use of its file, and a file's use of itself is no edge.
    edges: Edges,
    /// How many uses became edges.
    count: usize,
    /// Uses of a name through `lib.rs`'s re-exports (`crate::Buffer`)
    /// instead of its module path (`crate::buffer::Buffer`): file, line, path.
    via_root: Vec<(String, usize, String)>,
}

fn graph() -> Graph {
    let sources = sources();
    let files: BTreeSet<ModPath> = sources.iter().map(|s| s.module.clone()).collect();
    let mut modules = files.clone();
    let mut all: Vec<(usize, Vec<Use>)> = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let (uses, inlines) = uses(&s.code);
        for inline in inlines {
            modules.insert(s.module.iter().cloned().chain(inline).collect());
        }
        all.push((i, uses));
    }
    let mut krate = Crate {
        modules,
        reexports: BTreeMap::new(),
    };
    for (i, uses) in &all {
        let module = &sources[*i].module;
        for u in uses.iter().filter(|u| u.reexport && u.inline.is_empty()) {
            let (Some(name), Some(abs)) = (&u.name, krate.absolute(module, &[], &u.path)) else {
                // `pub use child::…` is relative to the module itself.
                if let Some(name) = &u.name {
                    let mut abs = module.clone();
                    abs.extend(u.path.iter().cloned());
                    if krate.modules.contains(&abs[..module.len() + 1]) {
                        krate
                            .reexports
                            .entry(module.clone())
                            .or_default()
                            .insert(name.clone(), abs);
                    }
                }
                continue;
            };
            krate
                .reexports
                .entry(module.clone())
                .or_default()
                .insert(name.clone(), abs);
        }
    }
    let mut edges = Edges::new();
    let mut count = 0;
    let mut via_root = Vec::new();
    let root_reexports = krate
        .reexports
        .get(&Vec::new())
        .cloned()
        .unwrap_or_default();
    for (i, uses) in &all {
        let source = &sources[*i];
        for u in uses.iter().filter(|u| !u.reexport) {
            let from: ModPath = source.module.iter().chain(&u.inline).cloned().collect();
            let abs = match krate.absolute(&source.module, &u.inline, &u.path) {
                Some(abs) => abs,
                // `use child::x;` inside a module names its own submodule.
                None => from.iter().chain(&u.path).cloned().collect(),
            };
            if let Some(first) = abs.first() {
                let is_module = krate.modules.contains(&abs[..1]);
                if !is_module && root_reexports.contains_key(first) && !source.module.is_empty() {
                    via_root.push((source.file.clone(), u.line, u.path.join("::")));
                }
            }
            let to = file_of(&files, &krate.target(&abs));
            if to == source.module {
                continue;
            }
            count += 1;
            edges
                .entry(source.module.clone())
                .or_default()
                .entry(to)
                .or_insert_with(|| format!("{}:{}", source.file, u.line));
        }
    }
    Graph {
        edges,
        count,
        via_root,
    }
}

/// The file that holds module `m`: `m` itself, or the file whose inline
/// module it is.
fn file_of(files: &BTreeSet<ModPath>, m: &ModPath) -> ModPath {
    (0..=m.len())
        .rev()
        .map(|n| m[..n].to_vec())
        .find(|p| files.contains(p))
        .unwrap_or_default()
}

fn name(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".to_string()
    } else {
        m.join("::")
    }
}

/// One cycle through `start` in `edges`, if there is one (breadth-first, so
/// the shortest).
fn cycle_through(edges: &Edges, start: &ModPath) -> Option<Vec<ModPath>> {
    let mut parent: BTreeMap<ModPath, ModPath> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    while let Some(m) = queue.pop_front() {
        for next in edges.get(&m).into_iter().flat_map(|e| e.keys()) {
            if next == start {
                let mut path = vec![m.clone()];
                let mut at = m.clone();
                while &at != start {
                    at = parent[&at].clone();
                    path.push(at.clone());
                }
                path.reverse();
                path.push(start.clone());
                return Some(path);
            }
            if !parent.contains_key(next) {
                parent.insert(next.clone(), m.clone());
                queue.push_back(next.clone());
            }
        }
    }
    None
}

#[test]
fn the_module_graph_of_cuda_mem_has_no_cycle() {
    let Graph { edges, count, .. } = graph();
    let modules: BTreeSet<&ModPath> = edges.keys().collect();
    assert!(
        modules.len() >= 10 && count >= 50,
        "the parser found only {} modules with uses and {count} uses: it is broken",
        modules.len()
    );
    let mut seen = BTreeSet::new();
    let mut report = String::new();
    for m in modules {
        if seen.contains(m) {
            continue;
        }
        if let Some(cycle) = cycle_through(&edges, m) {
            report += &format!(
                "cycle: {}\n",
                cycle.iter().map(name).collect::<Vec<_>>().join(" -> ")
            );
            for pair in cycle.windows(2) {
                report += &format!(
                    "  {} -> {}   ({})\n",
                    name(&pair[0]),
                    name(&pair[1]),
                    edges[&pair[0]][&pair[1]]
                );
                seen.insert(pair[0].clone());
            }
        }
    }
    assert!(
        report.is_empty(),
        "import cycles among cuda-mem's modules (each edge: where the first use is); move the \
         shared item into the lower module, or have the lower one take it as a parameter:\n{report}"
    );
}

#[test]
fn the_parser_resolves_reexports_and_finds_a_planted_cycle() {
    let code = strip(
        "use crate::{a::{B, c::D as E}, f};\n// crate::x::Y\nfn g() { let s = \"crate::z\"; super::h(); crate::q::R::new(); }\nmod tests { use super::*; }\n#[cfg(test)]\nmod unit { use crate::skipped; }",
    );
    let (found, inlines) = uses(&code);
    assert_eq!(inlines, vec![vec!["tests".to_string()]]);
    let found: Vec<(Vec<String>, bool)> = found
        .into_iter()
        .map(|u| (u.path, u.inline.is_empty()))
        .collect();
    let path = |s: &str| segments(s);
    assert_eq!(
        found,
        vec![
            (path("crate::a::B"), true),
            (path("crate::a::c::D"), true),
            (path("crate::f"), true),
            (path("super::h"), true),
            (path("crate::q::R::new"), true),
            (path("super"), false),
        ]
    );
    let m = |s: &str| segments(s);
    let mut edges = Edges::new();
    edges
        .entry(m("a"))
        .or_default()
        .insert(m("b"), "a.rs:1".into());
    edges
        .entry(m("b"))
        .or_default()
        .insert(m("c"), "b.rs:1".into());
    assert_eq!(cycle_through(&edges, &m("a")), None);
    edges
        .entry(m("c"))
        .or_default()
        .insert(m("a"), "c.rs:1".into());
    assert_eq!(
        cycle_through(&edges, &m("a")),
        Some(vec![m("a"), m("b"), m("c"), m("a")])
    );
    let krate = Crate {
        modules: [m("buffer"), m("device"), m("device::slice")]
            .into_iter()
            .collect(),
        reexports: [(
            Vec::new(),
            [("Buffer".to_string(), m("buffer::Buffer"))].into(),
        )]
        .into(),
    };
    assert_eq!(krate.target(&m("Buffer::new")), m("buffer"));
    assert_eq!(
        krate.target(&m("device::slice::DeviceSlice")),
        m("device::slice")
    );
    assert_eq!(krate.target(&m("cudarc")), Vec::<String>::new());
}

/// The layer of the top-level module of `m`, or `None` for the crate root.
fn layer_of(m: &ModPath) -> Option<Result<u32, String>> {
    let top = m.first()?;
    Some(
        LAYERS
            .iter()
            .find(|(name, _, _)| name == top)
            .map(|(_, layer, _)| *layer)
            .ok_or_else(|| top.clone()),
    )
}

/// Every edge that goes up the layers, and every top-level module that has
/// no layer, as lines of a report (empty when all is well).
fn layering_report(edges: &Edges) -> String {
    let mut report = String::new();
    let mut unlisted = BTreeSet::new();
    for (from, tos) in edges {
        for (to, at) in tos {
            let (Some(f), Some(t)) = (layer_of(from), layer_of(to)) else {
                continue; // the crate root: the facade and the exported macros
            };
            match (f, t) {
                (Ok(f), Ok(t)) if t > f => {
                    report += &format!(
                        "  {} (layer {f}) -> {} (layer {t})   ({at})\n",
                        name(from),
                        name(to)
                    );
                }
                (Ok(_), Ok(_)) => {}
                (f, t) => {
                    unlisted.extend(f.err());
                    unlisted.extend(t.err());
                }
            }
        }
    }
    for top in unlisted {
        report += &format!("  `{top}` has no layer: add it to LAYERS\n");
    }
    report
}

/// A module imports only from its own layer and the layers below, as
/// [`LAYERS`] lists them; every top-level module has a layer, and every
/// entry of the table is a module.
#[test]
fn every_module_imports_only_from_its_layer_and_below() {
    let Graph { edges, count, .. } = graph();
    assert!(count >= 50, "only {count} uses found: the parser is broken");
    let mut report = layering_report(&edges);
    let tops: BTreeSet<String> = sources()
        .into_iter()
        .filter_map(|s| s.module.first().cloned())
        .collect();
    for top in &tops {
        if !LAYERS.iter().any(|(name, _, _)| name == top) {
            report += &format!("  `{top}` has no layer: add it to LAYERS\n");
        }
    }
    for (name, _, _) in LAYERS {
        if !tops.contains(*name) {
            report += &format!("  LAYERS lists `{name}`, which is no module of cuda-mem/src\n");
        }
    }
    assert!(
        report.is_empty(),
        "imports that go up the layers of cuda-mem (each: where the first use is); move the \
         shared item down, or take it as a parameter:\n{report}"
    );
}

/// The checks themselves: a use of an inline module is a use of its file,
/// so the circle `device_copy` -> `private::layout` (an inline module of
/// `private.rs`, as it was) -> `private` -> `device_copy` is found; an edge
/// up the layers is reported, edges down and to the crate root are not, and
/// a top-level module without a layer is named.
#[test]
fn the_checks_find_an_inline_cycle_and_an_upward_edge() {
    let m = |s: &str| segments(s);
    let files: BTreeSet<ModPath> = [m("copy::private"), m("copy::device_copy")].into();
    assert_eq!(
        file_of(&files, &m("copy::private::layout")),
        m("copy::private")
    );
    assert_eq!(file_of(&files, &m("copy")), Vec::<String>::new());
    let mut edges = Edges::new();
    edges.entry(m("copy::device_copy")).or_default().insert(
        file_of(&files, &m("copy::private::layout")),
        "device_copy.rs:1".into(),
    );
    edges
        .entry(m("copy::private"))
        .or_default()
        .insert(m("copy::device_copy"), "private.rs:1".into());
    assert!(cycle_through(&edges, &m("copy::device_copy")).is_some());

    let mut edges = Edges::new();
    edges
        .entry(m("memory::raw"))
        .or_default()
        .insert(m("engine::peer"), "raw.rs:1".into());
    edges
        .entry(m("engine::peer"))
        .or_default()
        .insert(m("memory::raw"), "peer.rs:1".into());
    edges
        .entry(m("launch::host"))
        .or_default()
        .insert(Vec::new(), "host.rs:1".into());
    let report = layering_report(&edges);
    assert!(
        report.contains("memory::raw (layer 3) -> engine::peer (layer 4)"),
        "{report}"
    );
    assert_eq!(report.lines().count(), 1, "{report}");
    let mut edges = Edges::new();
    edges
        .entry(m("attic::old"))
        .or_default()
        .insert(m("error"), "old.rs:1".into());
    assert!(layering_report(&edges).contains("`attic` has no layer"));
}

/// Files whose internal imports still go through `lib.rs`'s re-exports; the
/// sweep after issue 17's branches are merged empties this list. A file
/// listed here that has no such import any more fails the test too, so the
/// list only shrinks.
const NOT_YET_SWEPT: &[&str] = &[];

/// Internal code imports by module path (`crate::buffer::Buffer`), not
/// through `lib.rs`'s public re-exports (`crate::Buffer`), so that the module
/// graph is visible in the imports and the facade can change freely.
#[test]
fn internal_imports_go_by_module_path() {
    let Graph { via_root, .. } = graph();
    let mut report = String::new();
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (file, line, path) in &via_root {
        seen.insert(file);
        if !NOT_YET_SWEPT.contains(&file.as_str()) {
            report += &format!("  {file}:{line}: {path}\n");
        }
    }
    for file in NOT_YET_SWEPT {
        if !seen.contains(file) {
            report +=
                &format!("  {file}: imports by module path now; remove it from NOT_YET_SWEPT\n");
        }
    }
    assert!(
        report.is_empty(),
        "imports through lib.rs's re-exports; use the module path (`crate::buffer::Buffer`, \
         not `crate::Buffer`):\n{report}"
    );
}
