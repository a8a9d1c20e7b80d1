//! Behavioural tests against a fake raw allocator.

use crate::*;
use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// What the fake raw allocator has done, shared with the test through an `Arc`
/// so it stays readable after the caching allocator is dropped.
#[derive(Debug, Default)]
struct FakeState {
    next_addr: usize,
    limit: Option<usize>,
    in_use: usize,
    /// Live segments: address → size.
    live: BTreeMap<usize, usize>,
    alloc_calls: Vec<usize>,
    free_calls: Vec<usize>,
    failed_calls: usize,
    /// Sizes asked for through `alloc_zeroed` (also listed in `alloc_calls`).
    zeroed_calls: Vec<usize>,
}

/// Hands out fake, never-dereferenced addresses, optionally up to a byte limit.
struct FakeAllocator(Arc<Mutex<FakeState>>);

impl FakeAllocator {
    fn new(limit: Option<usize>) -> (FakeAllocator, Arc<Mutex<FakeState>>) {
        let state = FakeState {
            next_addr: 1 << 40,
            limit,
            ..FakeState::default()
        };
        let state = Arc::new(Mutex::new(state));
        (FakeAllocator(state.clone()), state)
    }
}

impl RawAllocator for FakeAllocator {
    fn alloc(&mut self, size: usize) -> Option<NonNull<u8>> {
        let mut s = self.0.lock().unwrap();
        if s.limit.is_some_and(|limit| s.in_use + size > limit) {
            s.failed_calls += 1;
            return None;
        }
        let addr = s.next_addr;
        // Leave a gap so segments are never adjacent: merging across segments
        // would then show up as overlapping or out-of-range blocks.
        s.next_addr += size + 64 * KIB;
        s.in_use += size;
        s.live.insert(addr, size);
        s.alloc_calls.push(size);
        NonNull::new(addr as *mut u8)
    }

    fn alloc_zeroed(&mut self, size: usize) -> Option<NonNull<u8>> {
        // The fake addresses cannot be written: record the request instead.
        let ptr = self.alloc(size)?;
        self.0.lock().unwrap().zeroed_calls.push(size);
        Some(ptr)
    }

    unsafe fn free(&mut self, ptr: NonNull<u8>, size: usize) {
        let mut s = self.0.lock().unwrap();
        let addr = ptr.as_ptr() as usize;
        assert_eq!(
            s.live.remove(&addr),
            Some(size),
            "raw free of an unknown segment"
        );
        s.in_use -= size;
        s.free_calls.push(size);
    }
}

fn fake(limit: Option<usize>) -> (CachingAllocator<FakeAllocator>, Arc<Mutex<FakeState>>) {
    let (raw, state) = FakeAllocator::new(limit);
    (CachingAllocator::new(raw), state)
}

fn addr(b: &Block) -> usize {
    b.ptr.as_ptr() as usize
}

/// Allocates and checks the invariants.
fn alloc(pool: &mut CachingAllocator<FakeAllocator>, size: usize) -> Block {
    let b = pool.allocate(size).expect("allocation failed");
    pool.check_invariants();
    b
}

/// Frees and checks the invariants.
fn free(pool: &mut CachingAllocator<FakeAllocator>, b: Block) {
    pool.free(b);
    pool.check_invariants();
}

#[test]
fn requests_round_up_to_512() {
    let (mut pool, _) = fake(None);
    for (req, want) in [
        (1, 512),
        (511, 512),
        (512, 512),
        (513, 1024),
        (1000, 1024),
        (5000, 5120),
    ] {
        let b = alloc(&mut pool, req);
        assert_eq!(b.size, want, "request {req}");
        assert_eq!(addr(&b) % 512, 0);
    }
    let s = pool.stats();
    assert_eq!(
        s.requested_bytes,
        (1 + 511 + 512 + 513 + 1000 + 5000) as u64
    );
    assert_eq!(s.allocated_bytes, (512 * 3 + 1024 * 2 + 5120) as u64);
}

#[test]
fn zero_size_touches_nothing() {
    let (mut pool, state) = fake(None);
    let b = pool.allocate(0).unwrap();
    assert_eq!(b.size, 0);
    assert_eq!(addr(&b) % HOST_ALIGNMENT, 0);
    assert_eq!(pool.stats(), MemoryStats::default());
    pool.free(b);
    assert_eq!(pool.stats(), MemoryStats::default());
    assert!(state.lock().unwrap().alloc_calls.is_empty());
    pool.check_invariants();
}

#[test]
fn segment_sizes_per_pool() {
    for (req, segment) in [
        (1, 2 * MIB),
        (MIB, 2 * MIB),
        (MIB + 1, 20 * MIB),
        (4_000_000, 20 * MIB),
        (10 * MIB - 512, 20 * MIB),
        (10 * MIB, 10 * MIB),
        (12 * MIB, 12 * MIB),
        (11 * MIB + 1, 12 * MIB),
        (100 * MIB + 1, 102 * MIB),
    ] {
        let (mut pool, state) = fake(None);
        alloc(&mut pool, req);
        assert_eq!(pool.stats().reserved_bytes, segment as u64, "request {req}");
        assert_eq!(pool.stats().segment_count, 1);
        assert_eq!(state.lock().unwrap().alloc_calls, vec![segment]);
    }
}

#[test]
fn small_and_large_pools_do_not_share_segments() {
    let (mut pool, state) = fake(None);
    let big = alloc(&mut pool, 4 * MIB);
    free(&mut pool, big);
    // 20 MiB of free large-pool memory cannot serve a small request.
    alloc(&mut pool, 1000);
    assert_eq!(state.lock().unwrap().alloc_calls, vec![20 * MIB, 2 * MIB]);
    let (mut pool, state) = fake(None);
    let small = alloc(&mut pool, 1000);
    free(&mut pool, small);
    // Nor can a 2 MiB free small segment serve a 1.5 MiB (large) request.
    alloc(&mut pool, 3 * MIB / 2);
    assert_eq!(state.lock().unwrap().alloc_calls, vec![2 * MIB, 20 * MIB]);
}

#[test]
fn freed_block_is_reused_without_new_segment() {
    let (mut pool, state) = fake(None);
    let a = alloc(&mut pool, 3000);
    free(&mut pool, a);
    let b = alloc(&mut pool, 3000);
    assert_eq!(b, a);
    let big = alloc(&mut pool, 5 * MIB);
    free(&mut pool, big);
    let big2 = alloc(&mut pool, 5 * MIB);
    assert_eq!(big2, big);
    assert_eq!(state.lock().unwrap().alloc_calls.len(), 2);
    assert_eq!(pool.stats().segment_count, 2);
}

#[test]
fn best_fit_picks_smallest_adequate_block() {
    let (mut pool, state) = fake(None);
    let a = alloc(&mut pool, 4096);
    let _s1 = alloc(&mut pool, 512);
    let b = alloc(&mut pool, 1024);
    let _s2 = alloc(&mut pool, 512);
    let c = alloc(&mut pool, 2048);
    let _s3 = alloc(&mut pool, 512);
    let d = alloc(&mut pool, 1024);
    let _s4 = alloc(&mut pool, 512);
    for blk in [a, b, c, d] {
        free(&mut pool, blk);
    }
    // Free: a=4096, b=1024, c=2048, d=1024 and the big tail of the segment.
    let from_c = alloc(&mut pool, 1500);
    assert_eq!((addr(&from_c), from_c.size), (addr(&c), 1536));
    // Two equal 1024-byte candidates: the lower address wins.
    assert_eq!(alloc(&mut pool, 1000), b);
    assert_eq!(alloc(&mut pool, 1024), d);
    let from_a = alloc(&mut pool, 3000);
    assert_eq!(addr(&from_a), addr(&a));
    assert_eq!(
        from_a.size, 3072,
        "the small pool splits off the remaining 1024"
    );
    assert_eq!(state.lock().unwrap().alloc_calls.len(), 1);
}

#[test]
fn small_pool_splits_any_remainder_of_512_or_more() {
    let (mut pool, _) = fake(None);
    let a = alloc(&mut pool, 512);
    assert_eq!(a.size, 512);
    assert_eq!(pool.stats().inactive_split_bytes, (2 * MIB - 512) as u64);
    // Fill the rest exactly: the last block takes the whole remaining tail.
    let b = alloc(&mut pool, MIB);
    let c = alloc(&mut pool, MIB - 512);
    assert_eq!((b.size, c.size), (MIB, MIB - 512));
    assert_eq!(pool.stats().segment_count, 1);
    assert_eq!(pool.stats().inactive_split_bytes, 0);
    // Freeing `b` leaves a 1 MiB hole: a 1 MiB - 512 request splits it and
    // leaves exactly one 512-byte block behind.
    free(&mut pool, b);
    let d = alloc(&mut pool, MIB - 512);
    assert_eq!((addr(&d), d.size), (addr(&b), MIB - 512));
    assert_eq!(pool.stats().inactive_split_bytes, 512);
    let e = alloc(&mut pool, 1);
    assert_eq!(addr(&e), addr(&b) + MIB - 512);
    assert_eq!(pool.stats().segment_count, 1);
}

#[test]
fn large_pool_splits_only_remainders_over_1_mib() {
    let (mut pool, _) = fake(None);
    // 6 MiB from a 20 MiB segment: 14 MiB left, split.
    let a = alloc(&mut pool, 6 * MIB);
    assert_eq!(a.size, 6 * MIB);
    assert_eq!(pool.stats().inactive_split_bytes, (14 * MIB) as u64);
    free(&mut pool, a);
    assert_eq!(pool.stats().inactive_split_bytes, 0);
    // 19 MiB from the cached 20 MiB block: 1 MiB left is not > 1 MiB, so the
    // whole block is handed out and counted as allocated.
    let b = alloc(&mut pool, 19 * MIB);
    assert_eq!(b.size, 20 * MIB);
    assert_eq!(pool.stats().allocated_bytes, (20 * MIB) as u64);
    assert_eq!(pool.stats().requested_bytes, (19 * MIB) as u64);
    free(&mut pool, b);
    // 1 MiB + 512 left over is enough to split.
    let c = alloc(&mut pool, 19 * MIB - 512);
    assert_eq!(c.size, 19 * MIB - 512);
    assert_eq!(pool.stats().inactive_split_bytes, (MIB + 512) as u64);
    // That remainder is large-pool memory: a 1 MiB + 512 request fits exactly.
    let d = alloc(&mut pool, MIB + 1);
    assert_eq!(addr(&d), addr(&c) + c.size);
    assert_eq!(pool.stats().segment_count, 1);
}

#[test]
fn freeing_merges_neighbours_so_empty_cache_releases_segment() {
    let (mut pool, state) = fake(None);
    let a = alloc(&mut pool, 6 * MIB);
    let b = alloc(&mut pool, 6 * MIB);
    let c = alloc(&mut pool, 6 * MIB);
    // 2 MiB tail left free after c.
    assert_eq!(pool.stats().segment_count, 1);
    free(&mut pool, a);
    free(&mut pool, c); // merges with the tail
    assert_eq!(pool.stats().inactive_split_bytes, (14 * MIB) as u64);
    pool.empty_cache();
    assert_eq!(
        pool.stats().reserved_bytes,
        (20 * MIB) as u64,
        "segment still has b"
    );
    free(&mut pool, b); // merges with both sides
    assert_eq!(pool.stats().inactive_split_bytes, 0);
    // The merged block serves a request bigger than any former piece.
    let whole = alloc(&mut pool, 19 * MIB);
    assert_eq!((whole.ptr, whole.size), (a.ptr, 20 * MIB));
    free(&mut pool, whole);
    pool.empty_cache();
    pool.check_invariants();
    let s = pool.stats();
    assert_eq!((s.reserved_bytes, s.segment_count), (0, 0));
    let st = state.lock().unwrap();
    assert_eq!(st.free_calls, vec![20 * MIB]);
    assert!(st.live.is_empty());
}

#[test]
fn empty_cache_keeps_segments_with_live_blocks() {
    let (mut pool, state) = fake(None);
    let keep = alloc(&mut pool, 100);
    let also_small = alloc(&mut pool, MIB); // same small segment as `keep`
    let big = alloc(&mut pool, 12 * MIB);
    let big_kept = alloc(&mut pool, 4 * MIB);
    free(&mut pool, also_small);
    free(&mut pool, big);
    pool.empty_cache();
    pool.check_invariants();
    let s = pool.stats();
    // Left: the small segment (holds `keep`) and the 20 MiB one (holds `big_kept`).
    assert_eq!(s.segment_count, 2);
    assert_eq!(s.reserved_bytes, (22 * MIB) as u64);
    assert_eq!(state.lock().unwrap().free_calls, vec![12 * MIB]);
    free(&mut pool, keep);
    free(&mut pool, big_kept);
    pool.empty_cache();
    assert_eq!(pool.stats().reserved_bytes, 0);
    assert!(state.lock().unwrap().live.is_empty());
}

#[test]
fn stats_peaks_and_resets() {
    let (mut pool, _) = fake(None);
    let a = alloc(&mut pool, 1000);
    let b = alloc(&mut pool, 4 * MIB);
    let s = pool.stats();
    assert_eq!(s.allocated_bytes, (1024 + 4 * MIB) as u64);
    assert_eq!(s.active_bytes, s.allocated_bytes);
    assert_eq!(s.requested_bytes, (1000 + 4 * MIB) as u64);
    assert_eq!(s.reserved_bytes, (22 * MIB) as u64);
    assert_eq!(s.allocation_count, 2);
    assert_eq!(s.segment_count, 2);
    free(&mut pool, b);
    let s = pool.stats();
    assert_eq!(s.allocated_bytes, 1024);
    assert_eq!(s.peak_allocated_bytes, (1024 + 4 * MIB) as u64);
    assert_eq!(s.peak_active_bytes, (1024 + 4 * MIB) as u64);
    assert_eq!(s.peak_requested_bytes, (1000 + 4 * MIB) as u64);
    assert_eq!(s.peak_reserved_bytes, (22 * MIB) as u64);
    assert_eq!(s.free_count, 1);
    pool.empty_cache();
    assert_eq!(pool.stats().reserved_bytes, (2 * MIB) as u64);
    assert_eq!(pool.stats().peak_reserved_bytes, (22 * MIB) as u64);

    pool.reset_peak_stats();
    let s = pool.stats();
    assert_eq!(s.peak_allocated_bytes, 1024);
    assert_eq!(s.peak_active_bytes, 1024);
    assert_eq!(s.peak_requested_bytes, 1000);
    assert_eq!(s.peak_reserved_bytes, (2 * MIB) as u64);
    assert_eq!(
        (s.allocation_count, s.free_count),
        (2, 1),
        "peak reset keeps counters"
    );

    pool.reset_accumulated_stats();
    let s = pool.stats();
    assert_eq!(
        (
            s.allocation_count,
            s.free_count,
            s.num_alloc_retries,
            s.num_ooms
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(
        s.allocated_bytes, 1024,
        "counter reset keeps current values"
    );
    free(&mut pool, a);
    assert_eq!(pool.stats().allocated_bytes, 0);
    assert_eq!(pool.stats().free_count, 1);
}

#[test]
fn oom_retry_releases_cached_segments_then_succeeds() {
    let (mut pool, state) = fake(Some(21 * MIB));
    let big = alloc(&mut pool, 4_000_000);
    free(&mut pool, big); // 20 MiB cached, nothing live
    let small = alloc(&mut pool, 1); // 20 + 2 > 21: must release the cache first
    assert_eq!(small.size, 512);
    let s = pool.stats();
    assert_eq!((s.num_alloc_retries, s.num_ooms), (1, 0));
    assert_eq!(s.reserved_bytes, (2 * MIB) as u64);
    assert_eq!(s.peak_reserved_bytes, (20 * MIB) as u64);
    let st = state.lock().unwrap();
    assert_eq!(st.alloc_calls, vec![20 * MIB, 2 * MIB]);
    assert_eq!(st.free_calls, vec![20 * MIB]);
    assert_eq!(st.failed_calls, 1);
}

#[test]
fn oom_when_truly_out_reports_numbers() {
    let (mut pool, state) = fake(Some(20 * MIB));
    let live = alloc(&mut pool, 4_000_000);
    let err = pool.allocate(1).unwrap_err();
    pool.check_invariants();
    assert_eq!(
        err,
        OutOfMemory {
            requested: 1,
            allocated: 4_000_256,
            reserved: (20 * MIB) as u64
        }
    );
    let s = pool.stats();
    assert_eq!((s.num_alloc_retries, s.num_ooms), (1, 1));
    assert_eq!(
        s.reserved_bytes,
        (20 * MIB) as u64,
        "the live segment survives the retry"
    );
    assert!(state.lock().unwrap().free_calls.is_empty());
    let msg = err.to_string();
    assert!(
        msg.starts_with("out of memory: tried to allocate 1 bytes"),
        "{msg}"
    );
    assert!(
        msg.contains("4000256 bytes (3.81 MiB) already allocated"),
        "{msg}"
    );
    assert!(msg.contains("20971520 bytes (20.00 MiB) reserved in total by the caching allocator"));
    // The pool still works once memory is back.
    free(&mut pool, live);
    let again = alloc(&mut pool, 1);
    assert_eq!(again.size, 512);
    assert_eq!(pool.stats().num_ooms, 1);
    let _: &dyn std::error::Error = &err;
}

#[test]
fn absurd_sizes_are_oom_not_panics() {
    // Overflowing sizes fail before reaching the raw allocator; a size that
    // rounds fine but exceeds the limit fails there.
    let (mut pool, _) = fake(Some(1 << 30));
    for size in [usize::MAX, usize::MAX - 600, usize::MAX / 2 + 1] {
        let err = pool.allocate(size).unwrap_err();
        assert_eq!(err.requested, size);
    }
    assert_eq!(pool.stats().num_ooms, 3);
    pool.check_invariants();
}

#[test]
fn fragmentation_keeps_accounting_exact() {
    let (mut pool, _) = fake(None);
    let mut live: Vec<Block> = Vec::new();
    for round in 0..6 {
        // Fill with mixed sizes, then free every other block, leaving holes
        // that the next round's (larger) requests mostly cannot use.
        for i in 0..60 {
            let size = (i % 7 + 1) * 37 * KIB + round * 100 * KIB + (i % 3) * 3 * MIB;
            live.push(alloc(&mut pool, size));
        }
        let mut keep = Vec::new();
        for (i, b) in live.drain(..).enumerate() {
            if i % 2 == round % 2 {
                free(&mut pool, b);
            } else {
                keep.push(b);
            }
        }
        live = keep;
        let s = pool.stats();
        assert!(
            s.inactive_split_bytes > 0,
            "holes expected in round {round}"
        );
        pool.empty_cache();
        pool.check_invariants();
    }
    for b in live.drain(..) {
        free(&mut pool, b);
    }
    assert_eq!(
        pool.stats().inactive_split_bytes,
        0,
        "everything merged back"
    );
    pool.empty_cache();
    assert_eq!(pool.stats().reserved_bytes, 0);
}

/// A tiny deterministic PRNG (SplitMix64), so the test needs no crates and
/// every failure reproduces.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn randomized_alloc_free_never_overlaps() {
    for seed in [1u64, 42, 0xDEAD_BEEF] {
        let (mut pool, state) = fake(Some(160 * MIB));
        let mut rng = SplitMix(seed);
        // Live blocks by address, to check they never overlap.
        let mut live: BTreeMap<usize, Block> = BTreeMap::new();
        let mut ooms = 0u64;
        for step in 0..4000 {
            let op = rng.below(100);
            if op < 55 || live.is_empty() {
                let size = match rng.below(10) {
                    0..=5 => rng.below(8 * KIB as u64) as usize,
                    6..=7 => rng.below(MIB as u64 + 4096) as usize,
                    8 => rng.below(12 * MIB as u64) as usize,
                    _ => rng.below(40 * MIB as u64) as usize,
                };
                match pool.allocate(size) {
                    Ok(b) if size == 0 => assert_eq!(b.size, 0),
                    Ok(b) => {
                        assert!(b.size >= size && b.size % 512 == 0);
                        let a = addr(&b);
                        if let Some((&pa, pb)) = live.range(..a).next_back() {
                            assert!(pa + pb.size <= a, "step {step}: overlaps previous block");
                        }
                        if let Some((&na, _)) = live.range(a..).next() {
                            assert!(a + b.size <= na, "step {step}: overlaps next block");
                        }
                        live.insert(a, b);
                    }
                    Err(e) => {
                        ooms += 1;
                        assert_eq!(e.requested, size);
                    }
                }
            } else if op < 98 {
                let nth = rng.below(live.len() as u64) as usize;
                let key = *live.keys().nth(nth).unwrap();
                let b = live.remove(&key).unwrap();
                pool.free(b);
            } else {
                pool.empty_cache();
            }
            pool.check_invariants();
            let s = pool.stats();
            assert_eq!(
                s.allocated_bytes,
                live.values().map(|b| b.size as u64).sum::<u64>()
            );
            assert_eq!(s.num_ooms, ooms);
            assert_eq!(s.reserved_bytes, state.lock().unwrap().in_use as u64);
        }
        assert!(pool.stats().allocation_count > 1000);
        for (_, b) in std::mem::take(&mut live) {
            pool.free(b);
        }
        pool.check_invariants();
        // Parked small blocks keep their segments split until a request
        // misses the front cache, which merges them all back.
        let miss = pool.allocate(FRONT_MAX + 1).unwrap();
        pool.free(miss);
        pool.check_invariants();
        assert_eq!(pool.stats().inactive_split_bytes, 0);
        drop(pool); // Drop releases the now wholly free segments.
        let st = state.lock().unwrap();
        assert!(st.live.is_empty(), "seed {seed}: segments leaked");
        assert_eq!(st.alloc_calls.len(), st.free_calls.len());
    }
}

#[test]
fn drop_leaks_only_segments_with_live_blocks() {
    let (mut pool, state) = fake(None);
    let _live = alloc(&mut pool, 10);
    let freed = alloc(&mut pool, 4 * MIB);
    free(&mut pool, freed);
    drop(pool);
    let st = state.lock().unwrap();
    assert_eq!(st.free_calls, vec![20 * MIB]);
    assert_eq!(st.live.values().copied().collect::<Vec<_>>(), vec![2 * MIB]);
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "not handed out")]
fn freeing_a_foreign_block_panics_in_debug() {
    let (mut pool, _) = fake(None);
    let _a = alloc(&mut pool, 10);
    pool.free(Block {
        ptr: NonNull::new(0x1000 as *mut u8).unwrap(),
        size: 512,
    });
}

#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "not handed out")]
fn double_free_panics_in_debug() {
    let (mut pool, _) = fake(None);
    let a = alloc(&mut pool, 10);
    pool.free(a);
    pool.free(a);
}

#[test]
fn host_allocator_direct() {
    let mut raw = HostAllocator;
    let zero = raw.alloc(0).unwrap();
    assert_eq!(zero.as_ptr() as usize % HOST_ALIGNMENT, 0);
    // SAFETY: `zero` came from `alloc(0)` just above.
    unsafe { raw.free(zero, 0) };
    assert!(
        raw.alloc(usize::MAX - 8).is_none(),
        "invalid layout must be None"
    );
    let p = raw.alloc(4096).unwrap();
    assert_eq!(p.as_ptr() as usize % HOST_ALIGNMENT, 0);
    // SAFETY: `p` is a fresh 4096-byte allocation, written and read in bounds,
    // then freed once with the same size.
    unsafe {
        std::ptr::write_bytes(p.as_ptr(), 0xAB, 4096);
        assert_eq!(*p.as_ptr().add(4095), 0xAB);
        raw.free(p, 4096);
    }
}

#[test]
fn host_pool_allocates_real_writable_memory() {
    // Other tests may use the global pool concurrently; only compare this
    // test's own effects.
    let sizes = [1usize, 100, 4096, 70_000, 3 * MIB + 5];
    let blocks: Vec<Block> = sizes
        .iter()
        .map(|&n| with_host_pool(|p| p.allocate(n)).unwrap())
        .collect();
    for (i, (b, &n)) in blocks.iter().zip(&sizes).enumerate() {
        assert!(b.size >= n);
        assert_eq!(b.ptr.as_ptr() as usize % HOST_ALIGNMENT, 0);
        // SAFETY: the pool handed out `b.size >= n` bytes of host memory that
        // nobody else uses until we free the block.
        unsafe { std::ptr::write_bytes(b.ptr.as_ptr(), i as u8 + 1, b.size) };
    }
    for (i, b) in blocks.iter().enumerate() {
        // SAFETY: as above; the bytes were initialised by the write.
        let bytes = unsafe { std::slice::from_raw_parts(b.ptr.as_ptr(), b.size) };
        assert!(
            bytes.iter().all(|&x| x == i as u8 + 1),
            "block {i} was overwritten"
        );
    }
    let before = with_host_pool(|p| p.stats());
    assert!(before.allocated_bytes >= blocks.iter().map(|b| b.size as u64).sum::<u64>());
    for b in blocks {
        with_host_pool(|p| p.free(b));
    }
    let after = with_host_pool(|p| p.stats());
    assert!(after.free_count >= before.free_count + 5);
    // Freed memory is reused: the same request comes back from the cache.
    let again = with_host_pool(|p| p.allocate(3 * MIB + 5)).unwrap();
    with_host_pool(|p| p.free(again));
    with_host_pool(|p| p.check_invariants());
}

#[test]
fn with_host_pool_survives_poisoning() {
    let t = std::thread::spawn(|| with_host_pool(|_| panic!("poisoning the host pool on purpose")));
    assert!(t.join().is_err());
    let b = with_host_pool(|p| p.allocate(64)).unwrap();
    with_host_pool(|p| p.free(b));
}

#[test]
fn blocks_and_allocator_move_across_threads() {
    let (mut pool, _) = fake(None);
    let b = alloc(&mut pool, 100);
    let pool = std::thread::spawn(move || {
        let mut pool = pool;
        pool.free(b);
        pool
    })
    .join()
    .unwrap();
    pool.check_invariants();
    assert_eq!(pool.stats().free_count, 1);
    assert!(format!("{pool:?}").contains("CachingAllocator"));
}

#[test]
fn allocate_zeroed_takes_fresh_segments_zeroed_and_cached_blocks_not() {
    let (raw, state) = FakeAllocator::new(None);
    let mut pool = CachingAllocator::new(raw);
    let (block, zeroed) = pool.allocate_zeroed(30 * MIB).unwrap();
    assert!(zeroed, "a new segment comes from alloc_zeroed");
    assert_eq!(state.lock().unwrap().zeroed_calls, vec![30 * MIB]);
    pool.free(block);
    let (again, zeroed) = pool.allocate_zeroed(30 * MIB).unwrap();
    assert_eq!(again.ptr, block.ptr);
    assert!(!zeroed, "a cached block may hold old data");
    assert_eq!(state.lock().unwrap().alloc_calls.len(), 1);
    // Plain `allocate` never asks for zeroed memory.
    let other = pool.allocate(3 * MIB).unwrap();
    assert_eq!(state.lock().unwrap().zeroed_calls.len(), 1);
    pool.free(other);
    pool.free(again);
    assert_eq!(pool.allocate_zeroed(0).unwrap(), (Block { ptr: raw::dangling_aligned(), size: 0 }, true));
}

#[test]
fn host_allocate_zeroed_reads_zero_even_after_reuse_of_the_address_space() {
    // A small-pool segment (std::alloc_zeroed) and a mapped one (HOST_MAP_MIN+).
    let mut pool = CachingAllocator::new(HostAllocator);
    for size in [100 * KIB, 24 * MIB, 100 * KIB, 24 * MIB] {
        let (block, zeroed) = pool.allocate_zeroed(size).unwrap();
        assert!(zeroed);
        // SAFETY: the block is live and `block.size` bytes long.
        let bytes = unsafe { std::slice::from_raw_parts_mut(block.ptr.as_ptr(), block.size) };
        assert!(bytes.iter().all(|&b| b == 0));
        bytes.fill(0xAB);
        pool.free(block);
        // The next round gets a fresh segment, not the dirty cached one.
        pool.empty_cache();
    }
}

#[test]
fn streams_reuse_only_their_own_blocks() {
    let (mut pool, state) = fake(None);
    let a = pool.allocate_on(1, 1000).unwrap();
    pool.free(a);
    // Stream 2 may not take stream 1's cached block: a kernel queued on
    // stream 1 may still be reading it.
    let b = pool.allocate_on(2, 1000).unwrap();
    assert_ne!(addr(&b), addr(&a));
    assert_eq!(state.lock().unwrap().alloc_calls, vec![2 * MIB, 2 * MIB]);
    // Stream 1 gets its own block back without a new segment.
    let c = pool.allocate_on(1, 1000).unwrap();
    assert_eq!(addr(&c), addr(&a));
    assert_eq!(state.lock().unwrap().alloc_calls.len(), 2);
    pool.check_invariants();
    // The default stream is a pool of its own too.
    let d = pool.allocate(1000).unwrap();
    assert!(addr(&d) != addr(&b) && addr(&d) != addr(&c));
    for blk in [b, c, d] {
        pool.free(blk);
    }
    pool.check_invariants();
    pool.empty_cache();
    assert_eq!(pool.stats().reserved_bytes, 0);
    assert_eq!(state.lock().unwrap().free_calls.len(), 3);
}

#[test]
fn stream_blocks_split_and_merge_within_their_segment() {
    let (mut pool, _) = fake(None);
    let x = pool.allocate_on(7, 512).unwrap();
    let y = pool.allocate_on(7, 512).unwrap();
    assert_eq!(addr(&y), addr(&x) + 512, "carved from stream 7's segment");
    let z = pool.allocate_on(8, 512).unwrap();
    assert_eq!(pool.stats().segment_count, 2);
    pool.free(x);
    pool.free(y);
    pool.check_invariants();
    // x and y (parked until a request misses the front cache) merge back
    // into one whole free segment of stream 7: a request as large as the
    // segment now fits there.
    let whole = pool.allocate_on(7, SMALL_SIZE).unwrap();
    assert_eq!(addr(&whole), addr(&x));
    assert_eq!(pool.stats().segment_count, 2);
    pool.free(whole);
    pool.free(z);
    pool.check_invariants();
}

#[test]
fn oom_retry_frees_other_streams_cached_segments() {
    let (mut pool, state) = fake(Some(21 * MIB));
    let big = pool.allocate_on(3, 4_000_000).unwrap();
    pool.free(big); // 20 MiB cached in stream 3's pool
    // Stream 4 cannot reuse it, so it needs a new segment: the retry frees
    // stream 3's cache first, as PyTorch frees every stream's cached blocks.
    let small = pool.allocate_on(4, 1).unwrap();
    assert_eq!(small.size, 512);
    let s = pool.stats();
    assert_eq!((s.num_alloc_retries, s.num_ooms, s.reserved_bytes), (1, 0, (2 * MIB) as u64));
    assert_eq!(state.lock().unwrap().free_calls, vec![20 * MIB]);
    // Truly out: the error states what is allocated and reserved.
    let err = pool.allocate_on(3, 20 * MIB).unwrap_err();
    assert_eq!((err.allocated, err.reserved), (512, (2 * MIB) as u64));
    pool.free(small);
    pool.check_invariants();
}

#[test]
fn zeroed_requests_respect_streams() {
    let (mut pool, state) = fake(None);
    let (a, fresh) = pool.allocate_zeroed_on(5, 100).unwrap();
    assert!(fresh);
    pool.free(a);
    let (b, fresh_b) = pool.allocate_zeroed_on(6, 100).unwrap();
    assert!(fresh_b, "another stream's cached block is not reused");
    let (c, fresh_c) = pool.allocate_zeroed_on(5, 100).unwrap();
    assert!(!fresh_c);
    assert_eq!(addr(&c), addr(&a));
    assert_eq!(state.lock().unwrap().zeroed_calls, vec![2 * MIB, 2 * MIB]);
    pool.free(b);
    pool.free(c);
}

#[test]
fn format_size_matches_pytorch_thresholds() {
    assert_eq!(format_size(512), "512 bytes");
    assert_eq!(format_size(1024), "1024 bytes");
    assert_eq!(format_size(1536), "1.50 KiB");
    assert_eq!(format_size(20 << 20), "20.00 MiB");
    assert_eq!(format_size(3 << 30), "3.00 GiB");
}

#[test]
fn front_cache_hands_back_the_last_freed_block_of_each_size_class() {
    let (mut pool, state) = fake(None);
    let blocks: Vec<Block> = (1..=FRONT_CLASSES).map(|k| alloc(&mut pool, k * MIN_BLOCK_SIZE - 7)).collect();
    let guard = alloc(&mut pool, 512);
    for &b in &blocks {
        free(&mut pool, b);
    }
    // Every class gets its own block back, whatever the order of requests.
    for &b in blocks.iter().rev() {
        let again = alloc(&mut pool, b.size);
        assert_eq!(again, b, "size class {}", b.size);
    }
    // Freed a second time in another order: still one block per class.
    for &b in blocks.iter().rev() {
        free(&mut pool, b);
    }
    assert_eq!(alloc(&mut pool, 3 * MIN_BLOCK_SIZE), blocks[2]);
    assert_eq!(state.lock().unwrap().alloc_calls.len(), 1);
    free(&mut pool, guard);
}

#[test]
fn front_cache_keeps_statistics_exact() {
    let (mut pool, _) = fake(None);
    let keep = alloc(&mut pool, 100);
    let tiny = alloc(&mut pool, 300);
    let s = pool.stats();
    assert_eq!((s.allocated_bytes, s.requested_bytes), (1024, 400));
    free(&mut pool, tiny);
    let s = pool.stats();
    assert_eq!((s.allocated_bytes, s.active_bytes, s.requested_bytes), (512, 512, 100));
    assert_eq!((s.allocation_count, s.free_count), (2, 1));
    // The parked block and the tail after it are both free parts of the segment.
    assert_eq!(s.inactive_split_bytes, (SMALL_BUFFER - 512) as u64);
    let again = alloc(&mut pool, 20);
    assert_eq!(again, tiny);
    let s = pool.stats();
    assert_eq!((s.allocated_bytes, s.requested_bytes, s.allocation_count), (1024, 120, 3));
    assert_eq!(s.inactive_split_bytes, (SMALL_BUFFER - 1024) as u64);
    assert_eq!(s.peak_allocated_bytes, 1024);
    free(&mut pool, again);
    free(&mut pool, keep);
    pool.empty_cache();
    let s = pool.stats();
    assert_eq!((s.allocated_bytes, s.reserved_bytes, s.inactive_split_bytes, s.segment_count), (0, 0, 0, 0));
}

#[test]
fn front_cache_miss_merges_parked_blocks_before_any_new_segment() {
    let (mut pool, state) = fake(None);
    // Fill one small segment: two tiny blocks and two halves of the rest.
    let x = alloc(&mut pool, 512);
    let y = alloc(&mut pool, 512);
    let half = (SMALL_BUFFER - 1024) / 2;
    let f1 = alloc(&mut pool, half);
    let f2 = alloc(&mut pool, half);
    assert_eq!(pool.stats().segment_count, 1);
    free(&mut pool, x);
    free(&mut pool, y);
    // No 1 KiB block is parked and the segment has no free space left but
    // the two parked 512-byte neighbours: they merge and serve the request.
    let xy = alloc(&mut pool, 1024);
    assert_eq!((addr(&xy), xy.size), (addr(&x), 1024));
    assert_eq!(state.lock().unwrap().alloc_calls.len(), 1);
    for b in [xy, f1, f2] {
        free(&mut pool, b);
    }
    pool.empty_cache();
    assert_eq!(pool.stats().reserved_bytes, 0);
}

#[test]
fn front_cache_lists_are_bounded_and_the_rest_merges() {
    let (mut pool, _) = fake(None);
    let n = FRONT_DEPTH + 5;
    let blocks: Vec<Block> = (0..n).map(|_| alloc(&mut pool, 512)).collect();
    let guard = alloc(&mut pool, 512);
    for &b in &blocks {
        free(&mut pool, b);
    }
    // The first FRONT_DEPTH frees were parked and come back last-in first-out.
    let again: Vec<Block> = (0..FRONT_DEPTH).map(|_| alloc(&mut pool, 512)).collect();
    let expected: Vec<Block> = blocks[..FRONT_DEPTH].iter().rev().copied().collect();
    assert_eq!(again, expected);
    // The last 5 found the list full and merged into one free run, the best
    // fit of the next request (smaller than the segment's tail).
    let from_run = alloc(&mut pool, 512);
    assert_eq!(from_run, blocks[FRONT_DEPTH]);
    for b in again.into_iter().chain([from_run, guard]) {
        free(&mut pool, b);
    }
    pool.empty_cache();
    assert_eq!(pool.stats().reserved_bytes, 0);
}

#[test]
fn front_cache_is_per_stream() {
    let (mut pool, _) = fake(None);
    let a = pool.allocate_on(3, 512).unwrap();
    let b = pool.allocate_on(4, 512).unwrap();
    pool.free(a);
    pool.free(b);
    pool.check_invariants();
    assert_eq!(pool.allocate_on(4, 512).unwrap(), b);
    assert_eq!(pool.allocate_on(3, 512).unwrap(), a);
    pool.free(a);
    pool.free(b);
    pool.empty_cache();
    pool.check_invariants();
    assert_eq!(pool.stats().segment_count, 0);
}

#[test]
fn zeroed_requests_never_take_a_parked_block_as_zeroed() {
    let (mut pool, _) = fake(None);
    let a = alloc(&mut pool, 512);
    free(&mut pool, a);
    let (b, zeroed) = pool.allocate_zeroed(512).unwrap();
    assert_eq!((b, zeroed), (a, false), "a reused block must be zeroed by the caller");
    pool.free(b);
    pool.check_invariants();
}
