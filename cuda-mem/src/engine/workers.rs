//! A process-wide pool of persistent worker threads that run the lanes of
//! one job alongside the calling thread ([`run_lanes`]), so that staged
//! copies (`staging`) pay a wake-up per lane rather than a thread spawn.
//!
//! The calling thread claims lanes too, and runs every lane no worker has
//! claimed yet: a job finishes even if no worker thread can be had (or all
//! are busy with another job), only with less parallelism.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// The most worker threads the pool starts.
const MAX_WORKERS: usize = 64;

/// The lane function of a job, its lifetime erased (see [`Job::work`]).
type LaneFn = dyn Fn(usize) + Sync;

/// One call of [`run_lanes`].
struct Job {
    lane: *const LaneFn,
    lanes: usize,
    /// The next lane to claim.
    next: AtomicUsize,
    /// Lanes finished.
    done: Mutex<usize>,
    all_done: Condvar,
    /// The first panic of a lane, resumed on the calling thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `lane` points to a `Sync` closure; it is only called for a claimed
// lane, while `run_lanes` (which owns the closure) waits for that lane to
// finish. The other fields are thread-safe.
unsafe impl Send for Job {}
// SAFETY: as above.
unsafe impl Sync for Job {}

impl Job {
    /// Runs lanes until none is left to claim.
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::AcqRel);
            if i >= self.lanes {
                return;
            }
            // SAFETY: lane `i < lanes` was claimed by this thread alone, and
            // `run_lanes` returns (ending the closure's borrow) only after
            // all `lanes` lanes have counted themselves done below, so the
            // closure is alive for this call.
            let lane = unsafe { &*self.lane };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| lane(i))) {
                let mut panic = self.panic.lock().unwrap_or_else(|p| p.into_inner());
                panic.get_or_insert(p);
            }
            let mut done = self.done.lock().unwrap_or_else(|p| p.into_inner());
            *done += 1;
            if *done == self.lanes {
                self.all_done.notify_all();
            }
        }
    }
}

/// The pool: jobs waiting for workers, and how many workers run.
struct Pool {
    queue: Mutex<(VecDeque<Arc<Job>>, usize)>,
    wake: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        queue: Mutex::new((VecDeque::new(), 0)),
        wake: Condvar::new(),
    })
}

fn worker(pool: &'static Pool) {
    loop {
        let job = {
            let mut queue = pool.queue.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if let Some(job) = queue.0.pop_front() {
                    break job;
                }
                queue = pool.wake.wait(queue).unwrap_or_else(|p| p.into_inner());
            }
        };
        job.work();
    }
}

/// Runs `lane(i)` for every `i` in `0..lanes`, in parallel on the calling
/// thread and up to `lanes - 1` pool workers (started on first need, kept
/// for later jobs); returns when every lane has finished. A panicking lane
/// does not stop the others; its panic is resumed here afterwards.
pub(crate) fn run_lanes(lanes: usize, lane: &(dyn Fn(usize) + Sync)) {
    if lanes <= 1 {
        (0..lanes).for_each(lane);
        return;
    }
    let erased: *const (dyn Fn(usize) + Sync + '_) = lane;
    // SAFETY: only the lifetime changes; `Job::work` calls the closure only
    // while this function waits for it (see there).
    let erased: *const LaneFn = unsafe { std::mem::transmute(erased) };
    let job = Arc::new(Job {
        lane: erased,
        lanes,
        next: AtomicUsize::new(0),
        done: Mutex::new(0),
        all_done: Condvar::new(),
        panic: Mutex::new(None),
    });
    let pool = pool();
    {
        let mut queue = pool.queue.lock().unwrap_or_else(|p| p.into_inner());
        let helpers = (lanes - 1).min(MAX_WORKERS);
        while queue.1 < helpers {
            let started = std::thread::Builder::new()
                .name("cuda-mem staging".into())
                .spawn(move || worker(pool));
            if started.is_err() {
                break;
            }
            queue.1 += 1;
        }
        for _ in 0..helpers.min(queue.1) {
            queue.0.push_back(job.clone());
        }
    }
    pool.wake.notify_all();
    job.work();
    let mut done = job.done.lock().unwrap_or_else(|p| p.into_inner());
    while *done < lanes {
        done = job.all_done.wait(done).unwrap_or_else(|p| p.into_inner());
    }
    drop(done);
    let panic = job.panic.lock().unwrap_or_else(|p| p.into_inner()).take();
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lane_runs_once_and_borrows_stay_valid() {
        for lanes in [0, 1, 2, 7, 33] {
            let hits: Vec<AtomicUsize> = (0..lanes).map(|_| AtomicUsize::new(0)).collect();
            run_lanes(lanes, &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn concurrent_jobs_all_finish() {
        std::thread::scope(|s| {
            for t in 0..4 {
                s.spawn(move || {
                    for round in 0..50 {
                        let sum = AtomicUsize::new(0);
                        run_lanes(5 + t, &|i| {
                            sum.fetch_add(i + round, Ordering::Relaxed);
                        });
                        let n = 5 + t;
                        assert_eq!(sum.into_inner(), n * (n - 1) / 2 + n * round);
                    }
                });
            }
        });
    }

    #[test]
    fn a_panicking_lane_is_resumed_after_the_others_finish() {
        let finished = AtomicUsize::new(0);
        let caught = catch_unwind(AssertUnwindSafe(|| {
            run_lanes(6, &|i| {
                if i == 3 {
                    panic!("lane 3");
                }
                finished.fetch_add(1, Ordering::Relaxed);
            })
        }));
        assert!(caught.is_err());
        assert_eq!(finished.load(Ordering::Relaxed), 5);
    }
}
