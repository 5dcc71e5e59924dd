//! [`Exporter`]: which process exported an IPC handle, and whether it still
//! runs (from `/proc`).

use crate::error::{Error, Result};

/// Which process exported a handle: its pid, its start time (clock ticks
/// since boot, field 22 of `/proc/PID/stat`, so a reused pid is told apart)
/// and its pid namespace (`/proc/self/ns/pid`), since pids are only
/// comparable inside one namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Exporter {
    pub(crate) pid: u32,
    pub(crate) start: u64,
    pub(crate) pid_ns: u64,
}

/// Whether a process is running, as far as `/proc` can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Liveness {
    Running,
    Exited,
    /// Another pid namespace (a container without `--pid=host`): only the
    /// driver can tell.
    Unknown,
}

/// The start time of `pid` (field 22 of its `/proc/PID/stat`), or `None`
/// when it has exited: no such process, or a zombie (`Z`) or dead (`X`) one.
pub(crate) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything,
    // so the fields are counted after its last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?; // field 3
    if state == "Z" || state == "X" {
        return None;
    }
    // Fields 4..=21 come before the start time.
    fields.nth(18)?.parse().ok()
}

/// The inode of this process's pid namespace, or 0 if unreadable.
fn pid_namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/pid").map_or(0, |m| m.ino())
}

impl Exporter {
    pub(crate) fn this_process() -> Self {
        let pid = std::process::id();
        Self {
            pid,
            start: start_time(pid).unwrap_or(0),
            pid_ns: pid_namespace(),
        }
    }

    pub(crate) fn is_this_process(&self) -> bool {
        *self == Self::this_process()
    }

    pub(crate) fn liveness(&self) -> Liveness {
        if self.pid_ns == 0 || self.pid_ns != pid_namespace() {
            return Liveness::Unknown;
        }
        match start_time(self.pid) {
            Some(start) if start == self.start => Liveness::Running,
            _ => Liveness::Exited,
        }
    }

    /// `Err` when the exporter has exited.
    pub(crate) fn check(&self, what: &str) -> Result<()> {
        if self.liveness() == Liveness::Exited {
            return Err(Error::Ipc {
                problem: format!(
                    "the process that exported this {what} (pid {}) has exited, so its memory \
                     and events are gone",
                    self.pid
                ),
                remedy: "keep the exporting process alive until every importer has dropped its \
                         imports (have the importer tell it when it is done)",
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liveness_of_this_process_and_of_an_exited_one() {
        let me = Exporter::this_process();
        assert_ne!(me.start, 0);
        assert_eq!(me.liveness(), Liveness::Running);
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let start = loop {
            // Read the start time while it runs or is a zombie.
            if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
                let rest = &stat[stat.rfind(')').unwrap() + 1..];
                break rest
                    .split_ascii_whitespace()
                    .nth(19)
                    .unwrap()
                    .parse()
                    .unwrap();
            }
        };
        let gone = Exporter {
            pid,
            start,
            pid_ns: me.pid_ns,
        };
        // A zombie counts as exited, before and after it is reaped.
        while start_time(pid).is_some() {
            std::thread::yield_now();
        }
        assert_eq!(gone.liveness(), Liveness::Exited);
        child.wait().unwrap();
        assert_eq!(gone.liveness(), Liveness::Exited);
        let e = gone.check("buffer").unwrap_err().to_string();
        assert!(
            e.contains("has exited") && e.contains(&pid.to_string()),
            "{e}"
        );
        // Another pid namespace: unknown, so not refused.
        let foreign = Exporter { pid_ns: 1, ..gone };
        assert_eq!(foreign.liveness(), Liveness::Unknown);
        assert!(foreign.check("buffer").is_ok());
    }
}
