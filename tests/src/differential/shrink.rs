//! The shrinker: replays prefixes on fresh backends to find the shortest one
//! after which the contents diverge, then drops the operations the failure
//! does not need.

use std::fmt::Write as _;
use std::time::Instant;

use super::ops::Op;
use super::run::{run_with, Backend, Checks, Divergence};

/// The result of [`shrink`].
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The length of a failing prefix of the original sequence (replayed
    /// with a final check of every buffer after it) whose last operation is
    /// the first one after which the contents differ, for a deterministic
    /// failure (see [`shrink`]).
    pub prefix_len: usize,
    /// A subsequence of that prefix that still fails: operations the failure
    /// does not need are dropped.
    pub ops: Vec<Op>,
    /// How the shortest sequence fails.
    pub divergence: Option<Divergence>,
    /// Replays used.
    pub replays: usize,
    /// The original failure did not reproduce (timing-dependent).
    pub flaky: bool,
}

/// Shrinks a failing sequence: `failed_at` is the index at which `run(ops)`
/// diverged; `fresh` makes a new backend (fresh buffers) for every replay.
///
/// 1. Binary search over prefixes, each replayed with a final check of every
///    buffer: finds a failing prefix one op longer than a passing one.
/// 2. A corruption seen only by a final check may be overwritten by later
///    ops, so failing prefixes need not be contiguous: one more replay of
///    that prefix reads back what every op wrote right after it, and if an
///    earlier op already diverges (and the prefix ending there fails on its
///    own), the prefix is cut there. For a deterministic failure its last op
///    is then the first one after which the contents differ.
/// 3. Removes chunks of operations (halving the chunk size down to single
///    operations) while the sequence still fails.
///
/// Stops after `max_replays` replays or at `deadline`.
pub fn shrink(
    ops: &[Op],
    failed_at: usize,
    fresh: &mut dyn FnMut() -> Box<dyn Backend>,
    max_replays: usize,
    deadline: Option<Instant>,
) -> Shrunk {
    let mut replays = 0;
    let mut attempt = |list: &[Op], replays: &mut usize, checks: Checks| -> Option<Divergence> {
        *replays += 1;
        let mut backend = fresh();
        run_with(list, backend.as_mut(), checks).err()
    };
    let normal = Checks {
        at_end: true,
        after_every_write: false,
    };
    let hi_start = (failed_at + 1).min(ops.len());
    let Some(mut last) = attempt(&ops[..hi_start], &mut replays, normal) else {
        return Shrunk {
            prefix_len: hi_start,
            ops: ops[..hi_start].to_vec(),
            divergence: None,
            replays,
            flaky: true,
        };
    };
    // ops[..lo] passes (the empty sequence trivially), ops[..hi] fails.
    let (mut lo, mut hi) = (0, hi_start);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match attempt(&ops[..mid], &mut replays, normal) {
            Some(d) => {
                hi = mid;
                last = d;
            }
            None => lo = mid,
        }
    }
    let mut prefix_len = hi;
    let paranoid = Checks {
        at_end: true,
        after_every_write: true,
    };
    if let Some(d) = attempt(&ops[..hi], &mut replays, paranoid) {
        if d.index + 1 < hi {
            if let Some(d2) = attempt(&ops[..d.index + 1], &mut replays, normal) {
                prefix_len = d.index + 1;
                last = d2;
            }
        }
    }
    let mut cur = ops[..prefix_len].to_vec();
    let out_of_budget =
        |replays: usize| replays >= max_replays || deadline.is_some_and(|d| Instant::now() >= d);
    let mut chunk = (cur.len() / 2).max(1);
    'outer: loop {
        let mut i = 0;
        while i < cur.len() {
            if out_of_budget(replays) {
                break 'outer;
            }
            let end = (i + chunk).min(cur.len());
            let candidate: Vec<Op> = cur[..i].iter().chain(&cur[end..]).copied().collect();
            match attempt(&candidate, &mut replays, normal) {
                Some(d) => {
                    cur = candidate;
                    last = d;
                }
                None => i = end,
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    Shrunk {
        prefix_len,
        ops: cur,
        divergence: Some(last),
        replays,
        flaky: false,
    }
}

/// One operation per line, numbered, at most `max` lines.
pub fn describe(ops: &[Op], max: usize) -> String {
    let mut out = String::new();
    for (i, op) in ops.iter().enumerate().take(max) {
        let _ = writeln!(out, "  {i:5}: {op:?}");
    }
    if ops.len() > max {
        let _ = writeln!(out, "  ... {} more", ops.len() - max);
    }
    out
}
