//! The device-memory and pool-pointer imports open in this process, so that
//! an exported allocation is imported once: the driver would hand out the
//! same mapping again (in one context), or map it once more (in a context of
//! another device), and two buffers over one allocation would each have a
//! stream order of their own, so neither would order against the other.
//!
//! An import is known by its handle (the driver's bytes: the same in every
//! context, so a second open anywhere in the process is refused before the
//! driver is asked) and, once mapped, by its context and address (which also
//! catches two handles whose bytes differ but name the same allocation, in
//! one context; two such handles opened in contexts of two devices are not
//! caught). A handle stays claimed from the moment an open begins until its
//! import is closed, so an open racing the close of an earlier import is
//! refused rather than left half-done; an import whose close failed (it may
//! still be mapped) keeps its claim.

use std::sync::{Mutex, MutexGuard};

/// What names an exported allocation: the handle's kind and its 64 driver
/// bytes. Not the exporter written beside them: those bytes are not
/// authenticated (a copy with another exporter would be another key for
/// the same allocation) and the driver ignores them.
pub(crate) type HandleKey = (u8, [u8; 64]);

struct Open {
    handle: HandleKey,
    /// `(context, address)` once the driver has mapped it.
    mapping: Option<(usize, u64)>,
}

static OPEN: Mutex<Vec<Open>> = Mutex::new(Vec::new());

fn open() -> MutexGuard<'static, Vec<Open>> {
    OPEN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Releases the claim of `handle` for an import not mapped (yet).
fn release(open: &mut Vec<Open>, handle: &HandleKey) {
    open.retain(|o| !(o.handle == *handle && o.mapping.is_none()));
}

/// A handle claimed for an import under way; dropped without
/// [`Claim::mapped`], it is released.
pub(crate) struct Claim {
    handle: HandleKey,
    done: bool,
}

/// Claims `handle` for an import; `None` when it is open (or being opened
/// or closed) in this process already.
pub(crate) fn claim(handle: HandleKey) -> Option<Claim> {
    let mut open = open();
    if open.iter().any(|o| o.handle == handle) {
        return None;
    }
    open.push(Open {
        handle,
        mapping: None,
    });
    Some(Claim {
        handle,
        done: false,
    })
}

impl Claim {
    /// Records the import's mapping at `addr` in the context `ctx`; `false`
    /// (and the claim released) when that mapping is open already, under
    /// another handle's bytes.
    pub(crate) fn mapped(mut self, ctx: usize, addr: u64) -> bool {
        let mut open = open();
        self.done = true;
        if open.iter().any(|o| o.mapping == Some((ctx, addr))) {
            release(&mut open, &self.handle);
            return false;
        }
        if let Some(entry) = open
            .iter_mut()
            .find(|o| o.handle == self.handle && o.mapping.is_none())
        {
            entry.mapping = Some((ctx, addr));
        }
        true
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        if !self.done {
            release(&mut open(), &self.handle);
        }
    }
}

/// Forgets the import at `addr` in `ctx` (it has been closed), and so its
/// handle.
pub(crate) fn closed(ctx: usize, addr: u64) {
    open().retain(|o| o.mapping != Some((ctx, addr)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key no real handle has (a kind byte over 200), distinct per test.
    fn key(tag: u8) -> HandleKey {
        (tag, [tag; 64])
    }

    #[test]
    fn a_handle_is_open_once_in_the_process_until_closed() {
        let (ctx, addr) = (usize::MAX - 7, u64::MAX - 4096);
        let claim = claim(key(201)).expect("a fresh handle");
        assert!(
            super::claim(key(201)).is_none(),
            "claimed while being opened"
        );
        assert!(claim.mapped(ctx, addr));
        assert!(
            super::claim(key(201)).is_none(),
            "the same handle in another context (another device) is a second import"
        );
        closed(ctx, addr);
        let again = super::claim(key(201)).expect("closed, so it opens again");
        assert!(again.mapped(ctx - 1, addr));
        closed(ctx - 1, addr);
    }

    #[test]
    fn a_failed_open_releases_its_claim() {
        drop(claim(key(202)).expect("a fresh handle"));
        assert!(
            claim(key(202)).is_some(),
            "the failed open's claim was kept"
        );
    }

    #[test]
    fn another_handle_of_an_open_mapping_is_refused_and_released() {
        let (ctx, addr) = (usize::MAX - 9, u64::MAX - 8192);
        assert!(claim(key(203)).unwrap().mapped(ctx, addr));
        // Other bytes, the same allocation: the driver gave the same address.
        assert!(!claim(key(204)).unwrap().mapped(ctx, addr));
        assert!(
            claim(key(204)).is_some(),
            "the refused handle stayed claimed"
        );
        // ... and the first import is still the open one.
        assert!(claim(key(203)).is_none());
        closed(ctx, addr);
        assert!(claim(key(203)).is_some());
    }
}
