//! The one way kernels split work across threads.
//!
//! Rayon's own entry points (`par_iter`, `join`, `scope`) called from a thread
//! outside its pool (the Python thread, a service's request thread) hand the
//! whole job to the pool and put the caller to sleep until it is done: every
//! parallel region pays a worker's wake-up and then the caller's, tens of
//! microseconds on a busy VM, which is more than the work of many ops a
//! training step runs (a 32 x 256 x 1024 GEMM takes ~90 µs on one core).
//! PyTorch's OpenMP regions instead run the first chunk on the calling thread
//! while the others start.
//!
//! [`parallel_for`] does the same over a rayon pool of `threads - 1` helper
//! threads: tasks are claimed from a shared counter by the caller and by up
//! to `threads - 1` helper jobs; the caller
//! never waits for a helper that has not claimed anything, so a late worker
//! costs nothing and the region is never much slower than a serial loop.

use std::any::Any;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The thread count asked for by [`set_threads`]; 0 until then.
static REQUESTED: AtomicUsize = AtomicUsize::new(0);

/// Threads the process was started with: `RAYON_NUM_THREADS`, else
/// `OMP_NUM_THREADS` (what PyTorch reads), else the number of cores.
fn configured() -> usize {
    ["RAYON_NUM_THREADS", "OMP_NUM_THREADS"]
        .iter()
        .filter_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
        .find(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The helper threads: one fewer than the thread count, because the calling
/// thread works too (a full-size pool would leave one more thread spinning
/// for work than there are cores). `None` when running single-threaded or
/// when the threads could not be started.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let helpers = configured().saturating_sub(1);
        if helpers == 0 {
            return None;
        }
        rayon::ThreadPoolBuilder::new().num_threads(helpers).thread_name(|i| format!("ferrotorch-{i}")).build().ok()
    })
    .as_ref()
}

/// Number of threads kernels split their work over: the configured count
/// (`RAYON_NUM_THREADS`, else `OMP_NUM_THREADS`, else the core count), or
/// fewer after [`set_threads`].
pub fn threads() -> usize {
    let all = pool().map_or(1, |p| p.current_num_threads() + 1);
    let cap = match LOCAL_CAP.with(|c| c.get()) {
        0 => REQUESTED.load(Ordering::Relaxed),
        n => n,
    };
    match cap {
        0 => all,
        n => n.min(all),
    }
}

thread_local! {
    /// This thread's cap from [`with_threads`]; 0 when none is set.
    static LOCAL_CAP: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Runs `f` with the kernels it calls on this thread capped at `n` threads
/// (at least 1), whatever [`set_threads`] says: a service's request threads
/// each take their own share without touching the process-wide setting.
/// The previous cap comes back when `f` returns or panics.
pub fn with_threads<R>(n: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            LOCAL_CAP.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(LOCAL_CAP.with(|c| c.replace(n.max(1))));
    f()
}

/// The thread count last given to [`set_threads`], else the configured one
/// (what `torch.get_num_threads()` reports).
pub fn requested_threads() -> usize {
    match REQUESTED.load(Ordering::Relaxed) {
        0 => threads(),
        n => n,
    }
}

/// Caps the threads kernels use at `n` (at least 1). The helper threads are
/// started once, so asking for more than were configured uses all of them.
pub fn set_threads(n: usize) {
    REQUESTED.store(n.max(1), Ordering::Relaxed);
}

/// The task function, its lifetime erased so helper jobs (which must be
/// `'static`) can hold it.
struct TaskFn(*const (dyn Fn(usize) + Sync));

// SAFETY: the pointee is `Sync` and is only called while the `parallel_for`
// that owns it is still running (see `Region::work`).
unsafe impl Send for TaskFn {}
unsafe impl Sync for TaskFn {}

/// State shared by the caller and the helper jobs of one region.
struct Region {
    f: TaskFn,
    tasks: usize,
    /// Next task index to hand out.
    next: AtomicUsize,
    /// Tasks finished (panicked ones included).
    done: AtomicUsize,
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

impl Region {
    /// Claims and runs tasks until none is left.
    fn work(&self) {
        loop {
            let t = self.next.fetch_add(1, Ordering::AcqRel);
            if t >= self.tasks {
                return;
            }
            // SAFETY: a task index below `tasks` was claimed, so `done` stays
            // below `tasks` until this call returns, and the caller of
            // `parallel_for` (which owns the closure) does not return before
            // `done == tasks`. A helper that starts after the region ended
            // claims an index >= `tasks` and never reaches this line.
            let f = unsafe { &*self.f.0 };
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(t))) {
                // A panic in one task must not abort the process (rayon
                // aborts on a panicking spawned job) nor leave the region
                // waiting: record it, finish the count, re-raise on the caller.
                if let Ok(mut slot) = self.panic.lock() {
                    slot.get_or_insert(p);
                }
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// Runs `f(0) .. f(tasks - 1)`, spread over up to [`threads`] threads with
/// the calling thread taking part; returns when every call has returned.
///
/// Tasks are handed out dynamically, so uneven tasks balance and a worker
/// that wakes late simply finds less to do. A panic in any task is re-raised
/// on the calling thread after all tasks have finished.
pub fn parallel_for<F: Fn(usize) + Sync>(tasks: usize, f: F) {
    let threads = threads();
    let Some(pool) = pool().filter(|_| tasks > 1 && threads > 1) else {
        return (0..tasks).for_each(f);
    };
    if pool.current_thread_index().is_some() {
        // Already on a helper thread: rayon's work stealing keeps this thread
        // busy while it waits, which is what we want for nested regions.
        use rayon::prelude::*;
        let f = &f;
        return (0..tasks).into_par_iter().for_each(|t| f(t));
    }
    let local: &(dyn Fn(usize) + Sync) = &f;
    // SAFETY: only the lifetime is erased; `Region::work` explains why the
    // closure is never called after this function returns.
    let erased: &'static (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(local) };
    let region = Arc::new(Region {
        f: TaskFn(erased),
        tasks,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        panic: Mutex::new(None),
    });
    for _ in 1..threads.min(tasks) {
        let r = Arc::clone(&region);
        pool.spawn(move || r.work());
    }
    region.work();
    // Every task is claimed; wait for the ones still running on helpers.
    let mut spins = 0u32;
    while region.done.load(Ordering::Acquire) < tasks {
        if spins < 1 << 14 {
            std::hint::spin_loop();
            spins += 1;
        } else {
            std::thread::yield_now();
        }
    }
    let panic = region.panic.lock().map(|mut p| p.take()).unwrap_or(None);
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// [`parallel_for`] collecting one result per task, in task order.
pub fn parallel_map<R: Send, F: Fn(usize) -> R + Sync>(tasks: usize, f: F) -> Vec<R> {
    let mut out: Vec<Option<R>> = (0..tasks).map(|_| None).collect();
    let slots = SendPtr(out.as_mut_ptr());
    parallel_for(tasks, |t| {
        let r = f(t);
        // SAFETY: `t < tasks` indexes `out`, and each task writes only its
        // own slot, so the writes are disjoint; `out` outlives the region.
        unsafe { *slots.get().add(t) = Some(r) };
    });
    out.into_iter().flatten().collect()
}

/// Calls `f(i, chunk_i)` for the consecutive `chunk`-sized pieces of `data`
/// (the last may be shorter), in parallel.
pub fn for_each_chunk_mut<T: Send, F: Fn(usize, &mut [T]) + Sync>(data: &mut [T], chunk: usize, f: F) {
    if chunk == 0 || data.is_empty() {
        return;
    }
    let len = data.len();
    let base = SendPtr(data.as_mut_ptr());
    parallel_for(len.div_ceil(chunk), |i| {
        let lo = i * chunk;
        let n = chunk.min(len - lo);
        // SAFETY: pieces `[lo, lo + n)` of distinct tasks are disjoint and
        // inside `data`, which is exclusively borrowed for the whole region.
        f(i, unsafe { std::slice::from_raw_parts_mut(base.get().add(lo), n) })
    });
}

/// A raw pointer that tasks may share; each task must touch only its own part.
pub(crate) struct SendPtr<T>(pub(crate) *mut T);

impl<T> Clone for SendPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendPtr<T> {}

// SAFETY: users index disjoint parts per task (see each use).
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    /// The pointer (a method, so closures capture the `Sync` wrapper rather
    /// than its raw field).
    #[inline(always)]
    pub(crate) fn get(self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_runs_once() {
        for tasks in [0, 1, 2, 3, 17, 1000] {
            let hits: Vec<AtomicUsize> = (0..tasks).map(|_| AtomicUsize::new(0)).collect();
            parallel_for(tasks, |t| {
                hits[t].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1), "tasks={tasks}");
        }
    }

    #[test]
    fn map_keeps_task_order() {
        let v = parallel_map(100, |t| t * t);
        assert_eq!(v, (0..100).map(|t| t * t).collect::<Vec<_>>());
    }

    #[test]
    fn chunks_cover_the_slice() {
        let mut v = vec![0usize; 1003];
        for_each_chunk_mut(&mut v, 10, |i, c| c.iter_mut().enumerate().for_each(|(j, x)| *x = i * 10 + j));
        assert_eq!(v, (0..1003).collect::<Vec<_>>());
    }

    #[test]
    fn a_panicking_task_reaches_the_caller_after_the_others_finish() {
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            parallel_for(64, |t| {
                ran.fetch_add(1, Ordering::Relaxed);
                if t == 5 {
                    panic!("task 5");
                }
            })
        }));
        assert!(r.is_err());
        assert_eq!(ran.load(Ordering::Relaxed), 64);
    }

    #[test]
    fn nested_regions_complete() {
        let total = AtomicUsize::new(0);
        parallel_for(8, |_| {
            parallel_for(8, |_| {
                total.fetch_add(1, Ordering::Relaxed);
            })
        });
        assert_eq!(total.load(Ordering::Relaxed), 64);
    }
}
