//! The device-memory and pool-pointer imports open in this process, by
//! context and address, so that a handle is not opened twice: the driver would hand out the same
//! mapping again, and two buffers over one allocation would each have a
//! stream order of their own, so neither would order against the other.

use std::sync::Mutex;

static OPEN: Mutex<Vec<(usize, u64)>> = Mutex::new(Vec::new());

fn open() -> std::sync::MutexGuard<'static, Vec<(usize, u64)>> {
    OPEN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Records the import at `addr` in the context `ctx`; `false` when it is
/// open already.
pub(crate) fn opened(ctx: usize, addr: u64) -> bool {
    let mut open = open();
    if open.contains(&(ctx, addr)) {
        return false;
    }
    open.push((ctx, addr));
    true
}

/// Forgets the import at `addr` in `ctx` (it is being closed).
pub(crate) fn closed(ctx: usize, addr: u64) {
    open().retain(|&e| e != (ctx, addr));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_is_open_once_until_closed() {
        // Addresses no driver hands out, so that other tests cannot collide.
        let (ctx, addr) = (usize::MAX - 7, u64::MAX - 4096);
        assert!(opened(ctx, addr));
        assert!(!opened(ctx, addr));
        assert!(opened(ctx - 1, addr), "another context is another import");
        closed(ctx, addr);
        assert!(opened(ctx, addr));
        closed(ctx, addr);
        closed(ctx - 1, addr);
    }
}
