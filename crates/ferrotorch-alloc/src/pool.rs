//! The caching allocator: segments, blocks, pools and the best-fit algorithm.
//!
//! Bookkeeping lives in two slabs (segments and blocks) addressed by index, so
//! the algorithm never chases raw pointers: a block record knows its segment,
//! its offset in it and its neighbours, and the pointer handed to callers is
//! derived from the segment's base pointer only when a block is given out.

use crate::raw::{dangling_aligned, RawAllocator};
use crate::stats::{MemoryStats, OutOfMemory};
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr::NonNull;

/// Requests are rounded up to a multiple of this (PyTorch's `kMinBlockSize`).
///
/// It is also the smallest remainder worth splitting off in the small pool.
pub const MIN_BLOCK_SIZE: usize = 512;
/// Largest rounded request served by the small pool (PyTorch's `kSmallSize`).
///
/// Also the threshold a large-pool remainder must exceed to be split off:
/// smaller leftovers would only ever be reused by small requests, which never
/// look in the large pool.
pub const SMALL_SIZE: usize = 1 << 20;
/// Size of every small-pool segment (PyTorch's `kSmallBuffer`).
pub const SMALL_BUFFER: usize = 2 << 20;
/// Size of the segment made for a large request under [`MIN_LARGE_ALLOC`]
/// (PyTorch's `kLargeBuffer`), so several such requests share one segment.
pub const LARGE_BUFFER: usize = 20 << 20;
/// Large requests of at least this size get a segment of their own
/// (PyTorch's `kMinLargeAlloc`).
pub const MIN_LARGE_ALLOC: usize = 10 << 20;
/// Segments for big requests are rounded up to a multiple of this
/// (PyTorch's `kRoundLarge`).
pub const ROUND_LARGE: usize = 2 << 20;

/// Rounded sizes up to this many bytes ([`FRONT_CLASSES`] size classes of
/// [`MIN_BLOCK_SIZE`] each) are served by the front cache when it has a
/// block of exactly that size.
pub const FRONT_MAX: usize = FRONT_CLASSES * MIN_BLOCK_SIZE;
/// Number of size classes of the front cache (512 B, 1 KiB, ..., [`FRONT_MAX`]).
pub const FRONT_CLASSES: usize = 8;
/// Most blocks one size class of one stream's front cache holds; further
/// frees of that size take the ordinary merging path.
pub const FRONT_DEPTH: usize = 32;

/// A piece of memory handed out by a [`CachingAllocator`].
///
/// Give it back with [`CachingAllocator::free`] on the same allocator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block {
    /// Address of the first byte. For host memory it is aligned to
    /// [`HOST_ALIGNMENT`](crate::HOST_ALIGNMENT) bytes.
    pub ptr: NonNull<u8>,
    /// Size actually handed out: the request rounded up to [`MIN_BLOCK_SIZE`],
    /// or a whole unsplit cached block. The caller may use all of it.
    pub size: usize,
}

// SAFETY: a `Block` is a handle to memory owned by the allocator (which is
// itself `Send`); it carries no thread-local state and is only an address plus
// a length. Whoever dereferences `ptr` is responsible for synchronising access,
// exactly as with a `usize` address.
unsafe impl Send for Block {}
// SAFETY: see `Send`; `&Block` only gives read access to the address and size.
unsafe impl Sync for Block {}

/// Which pool a segment (and every block in it) belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PoolKind {
    Small,
    Large,
}

impl PoolKind {
    /// The pool serving a request of `rounded` bytes.
    fn for_size(rounded: usize) -> PoolKind {
        if rounded <= SMALL_SIZE {
            PoolKind::Small
        } else {
            PoolKind::Large
        }
    }

    /// Whether a free block leaving `remaining` bytes after a request should
    /// be split. Small pool: anything that can hold a minimal block. Large
    /// pool: only remainders a large request could use, so the large pool is
    /// not littered with slivers nobody can take.
    fn should_split(self, remaining: usize) -> bool {
        match self {
            PoolKind::Small => remaining >= MIN_BLOCK_SIZE,
            PoolKind::Large => remaining > SMALL_SIZE,
        }
    }
}

/// `size` rounded up to a multiple of [`MIN_BLOCK_SIZE`], or `None` on overflow.
fn round_size(size: usize) -> Option<usize> {
    Some(size.checked_add(MIN_BLOCK_SIZE - 1)? & !(MIN_BLOCK_SIZE - 1))
}

/// Size of the segment to request from the raw allocator for a `rounded`
/// request (PyTorch's `get_allocation_size`), or `None` on overflow.
fn segment_size(rounded: usize) -> Option<usize> {
    if rounded <= SMALL_SIZE {
        Some(SMALL_BUFFER)
    } else if rounded < MIN_LARGE_ALLOC {
        Some(LARGE_BUFFER)
    } else {
        Some(rounded.checked_add(ROUND_LARGE - 1)? / ROUND_LARGE * ROUND_LARGE)
    }
}

/// One allocation from the raw allocator, carved into blocks.
#[derive(Debug)]
struct Segment {
    base: NonNull<u8>,
    size: usize,
    pool: PoolKind,
    /// The stream whose pool the segment's free blocks return to.
    stream: StreamId,
    /// Index of the block at offset 0. Merges always keep the lower block's
    /// record and splits keep the front part in the original record, so the
    /// head never changes during the segment's life.
    head: usize,
}

/// One block: a contiguous range of a segment, either handed out or cached.
#[derive(Debug, Clone, Copy)]
struct BlockRec {
    seg: usize,
    offset: usize,
    size: usize,
    /// Bytes the caller asked for (for `requested_bytes`); 0 while free.
    requested: usize,
    prev: Option<usize>,
    next: Option<usize>,
    allocated: bool,
    /// Free and parked in the front cache (so in neither free set, and not
    /// merged with its neighbours until the front cache is flushed).
    parked: bool,
}

/// A free-set entry: ordered by stream, then size, then address. Within one
/// stream that is exactly PyTorch's best-fit order, and a stream's blocks
/// form one contiguous range of the set, so per-stream pools need no set of
/// their own. The block index rides along so a hit needs no second lookup;
/// (size, address) is already unique.
type FreeKey = (StreamId, usize, usize, usize);

/// The stream a segment (and every block carved from it) belongs to, as in
/// PyTorch's per-stream pools: a block freed by work queued on one stream is
/// only handed out again to requests for the same stream, so a later kernel
/// on another stream cannot overwrite memory an earlier one still reads.
/// Host memory has a single stream, [`DEFAULT_STREAM`].
pub type StreamId = u64;

/// The stream of host memory and of [`CachingAllocator::allocate`].
pub const DEFAULT_STREAM: StreamId = 0;

/// One stream's front cache: per size class, the indices of parked free
/// blocks of exactly that size, most recently freed last.
#[derive(Debug)]
struct FrontCache {
    stream: StreamId,
    classes: [Vec<usize>; FRONT_CLASSES],
}

/// The front-cache size class of a rounded size, if it has one.
fn front_class(rounded: usize) -> Option<usize> {
    (rounded <= FRONT_MAX).then(|| rounded / MIN_BLOCK_SIZE - 1)
}

/// A vector of slots with reuse of vacated ones, so indices stay stable and no
/// allocation happens once the high-water mark is reached.
#[derive(Debug)]
struct Slab<T> {
    items: Vec<Option<T>>,
    vacant: Vec<usize>,
}

impl<T> Slab<T> {
    fn new() -> Self {
        Slab {
            items: Vec::new(),
            vacant: Vec::new(),
        }
    }

    fn insert(&mut self, value: T) -> usize {
        match self.vacant.pop() {
            Some(i) => {
                self.items[i] = Some(value);
                i
            }
            None => {
                self.items.push(Some(value));
                self.items.len() - 1
            }
        }
    }

    fn remove(&mut self, i: usize) -> T {
        let value = self.items[i].take().expect("slab slot already vacant");
        self.vacant.push(i);
        value
    }

    #[cfg(test)]
    fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| v.as_ref().map(|v| (i, v)))
    }
}

impl<T> std::ops::Index<usize> for Slab<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        self.items[i].as_ref().expect("slab slot vacant")
    }
}

impl<T> std::ops::IndexMut<usize> for Slab<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        self.items[i].as_mut().expect("slab slot vacant")
    }
}

/// Hasher for the address → block map. Keys are addresses that are multiples
/// of 512, which SipHash handles fine but slowly; a folded 128-bit multiply
/// spreads the significant middle bits into both the low bits (bucket index)
/// and the high bits (control tag) that `HashMap` uses.
#[derive(Default, Clone, Copy)]
struct AddrHasher(u64);

impl AddrHasher {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;

    fn mix(&mut self, n: u64) {
        let m = u128::from(self.0 ^ n) * u128::from(Self::K);
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }
}

impl Hasher for AddrHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only `usize` keys are hashed; this generic path just has to be correct.
        for &b in bytes {
            self.mix(u64::from(b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type AddrMap = HashMap<usize, usize, BuildHasherDefault<AddrHasher>>;

/// A caching allocator following PyTorch's `CUDACachingAllocator` rules,
/// generic over the source of raw segments.
///
/// In front of the best-fit sets sits a small *front cache*: a freed block of
/// at most [`FRONT_MAX`] bytes is parked, unmerged, in a LIFO list for its
/// stream and exact size (at most [`FRONT_DEPTH`] per list), and a request
/// of that rounded size takes it back without touching the ordered sets.
/// Tiny tensors are made and dropped at a high rate, and this turns their
/// split-and-merge of a larger free block into a push and a pop. Parked
/// blocks count as free in every statistic (and, being parts of their
/// segment, as `inactive_split_bytes`). They are merged back into the
/// best-fit sets before a new segment is taken and by `empty_cache`, so
/// the front cache never makes the allocator reserve more memory.
///
/// Memory taken from the raw allocator is only given back by
/// [`empty_cache`](Self::empty_cache), by the out-of-memory retry, or when the
/// allocator is dropped (wholly free segments only). Every operation is
/// `O(log n)` in the number of blocks, except `empty_cache`, which scans the
/// cached blocks.
pub struct CachingAllocator<R: RawAllocator> {
    raw: R,
    segments: Slab<Segment>,
    blocks: Slab<BlockRec>,
    /// Free blocks of small-pool segments.
    small_free: BTreeSet<FreeKey>,
    /// Free blocks of large-pool segments.
    large_free: BTreeSet<FreeKey>,
    /// Handed-out blocks by address, to find the record on `free`.
    live: AddrMap,
    /// Parked small free blocks, one entry per stream that freed any.
    front: Vec<FrontCache>,
    /// Number of parked blocks (over every list of `front`).
    parked: usize,
    stats: MemoryStats,
}

// SAFETY: the only non-`Send` fields are the segments' `NonNull` base
// pointers. They are addresses of memory this allocator owns exclusively (it
// got them from `raw` and never shares ownership), and the allocator never
// dereferences them, so moving the whole allocator to another thread moves that
// ownership with it. `R` is `Send` by the trait bound.
unsafe impl<R: RawAllocator> Send for CachingAllocator<R> {}

impl<R: RawAllocator> CachingAllocator<R> {
    /// An empty allocator drawing segments from `raw`. Allocates nothing yet.
    pub fn new(raw: R) -> Self {
        CachingAllocator {
            raw,
            segments: Slab::new(),
            blocks: Slab::new(),
            small_free: BTreeSet::new(),
            large_free: BTreeSet::new(),
            live: AddrMap::default(),
            front: Vec::new(),
            parked: 0,
            stats: MemoryStats::default(),
        }
    }

    /// The raw allocator segments come from.
    pub fn raw(&self) -> &R {
        &self.raw
    }

    /// Hands out at least `size` bytes.
    ///
    /// The returned [`Block::size`] is the size actually reserved for the
    /// caller (rounded up, possibly a whole cached block). `size == 0` returns
    /// a dangling, 64-byte-aligned pointer with size 0 and touches neither the
    /// pools nor the statistics; freeing it is a no-op.
    ///
    /// # Errors
    /// [`OutOfMemory`] when the raw allocator fails even after every wholly
    /// free cached segment has been released.
    pub fn allocate(&mut self, size: usize) -> Result<Block, OutOfMemory> {
        self.allocate_on(DEFAULT_STREAM, size)
    }

    /// [`allocate`](Self::allocate) from the pool of `stream`: only blocks
    /// freed on that stream are reused, and a new segment joins its pool.
    ///
    /// # Errors
    /// As [`allocate`](Self::allocate); the out-of-memory retry releases the
    /// wholly free segments of every stream.
    pub fn allocate_on(&mut self, stream: StreamId, size: usize) -> Result<Block, OutOfMemory> {
        if size == 0 {
            return Ok(Block {
                ptr: dangling_aligned(),
                size: 0,
            });
        }
        let Some(rounded) = round_size(size) else {
            return Err(self.oom(size));
        };
        let idx = match self.take_cached(stream, rounded) {
            Some(idx) => idx,
            None => match self.new_segment(stream, PoolKind::for_size(rounded), rounded, false) {
                Some(idx) => idx,
                None => return Err(self.oom(size)),
            },
        };
        Ok(self.hand_out(idx, rounded, size))
    }

    /// [`allocate`](Self::allocate) for a block that must read as zero.
    ///
    /// Returns the block and whether it is already zero: a cached block is
    /// handed out as it is (`false`: the caller zeroes it, with all its
    /// threads), a new segment comes from [`RawAllocator::alloc_zeroed`]
    /// (`true`), which for big host requests means untouched pages.
    ///
    /// # Errors
    /// As [`allocate`](Self::allocate).
    pub fn allocate_zeroed(&mut self, size: usize) -> Result<(Block, bool), OutOfMemory> {
        self.allocate_zeroed_on(DEFAULT_STREAM, size)
    }

    /// [`allocate_zeroed`](Self::allocate_zeroed) from the pool of `stream`
    /// (see [`allocate_on`](Self::allocate_on)).
    ///
    /// # Errors
    /// As [`allocate`](Self::allocate).
    pub fn allocate_zeroed_on(&mut self, stream: StreamId, size: usize) -> Result<(Block, bool), OutOfMemory> {
        if size == 0 {
            return Ok((self.allocate(0)?, true));
        }
        let Some(rounded) = round_size(size) else {
            return Err(self.oom(size));
        };
        let (idx, zeroed) = match self.take_cached(stream, rounded) {
            Some(idx) => (idx, false),
            None => match self.new_segment(stream, PoolKind::for_size(rounded), rounded, true) {
                Some(idx) => (idx, true),
                None => return Err(self.oom(size)),
            },
        };
        Ok((self.hand_out(idx, rounded, size), zeroed))
    }

    /// Gives a block back to its pool, merging it with free neighbours.
    ///
    /// Zero-sized blocks are ignored. A block this allocator never handed out
    /// (or one freed twice) is an internal bug: it panics in debug builds and
    /// is ignored in release builds, since corrupting the pools would be worse.
    pub fn free(&mut self, block: Block) {
        if block.size == 0 {
            return;
        }
        let addr = block.ptr.as_ptr() as usize;
        // Validate before mutating anything, so a debug panic (which may poison
        // the host pool's lock) leaves the bookkeeping consistent.
        let Some(&idx) = self.live.get(&addr) else {
            debug_assert!(
                false,
                "free of a block not handed out by this allocator: {block:?}"
            );
            return;
        };
        debug_assert_eq!(
            self.blocks[idx].size, block.size,
            "free with a wrong block size"
        );
        self.live.remove(&addr);

        let rec = &mut self.blocks[idx];
        rec.allocated = false;
        let (size, requested) = (rec.size as u64, rec.requested as u64);
        rec.requested = 0;
        self.stats.allocated_bytes -= size;
        self.stats.active_bytes -= size;
        self.stats.requested_bytes -= requested;
        self.stats.free_count += 1;
        if !self.park(idx) {
            self.merge_free(idx);
        }
    }

    /// Puts free block `idx` (in no free set) into its pool's free set,
    /// merged with its free neighbours, so that a segment whose blocks are
    /// all freed becomes a single free block again, which `empty_cache` can
    /// release and which can serve requests bigger than any of its former
    /// pieces. Parked neighbours stay parked (they merge when flushed).
    fn merge_free(&mut self, idx: usize) {
        let mut idx = idx;
        let pooled = |b: &BlockRec| !b.allocated && !b.parked;
        if let Some(p) = self.blocks[idx].prev {
            if pooled(&self.blocks[p]) {
                self.remove_free(p);
                self.absorb_next(p);
                idx = p;
            }
        }
        if let Some(n) = self.blocks[idx].next {
            if pooled(&self.blocks[n]) {
                self.remove_free(n);
                self.absorb_next(idx);
            }
        }
        self.insert_free(idx);
    }

    /// Parks free block `idx` in its stream's front cache when it is small
    /// enough and the list has room; `false` when it must be merged instead.
    fn park(&mut self, idx: usize) -> bool {
        let rec = self.blocks[idx];
        let Some(class) = front_class(rec.size) else { return false };
        let seg = &self.segments[rec.seg];
        let (stream, seg_size) = (seg.stream, seg.size);
        let pos = match self.front.iter().position(|f| f.stream == stream) {
            Some(pos) => pos,
            None => {
                self.front.push(FrontCache { stream, classes: Default::default() });
                self.front.len() - 1
            }
        };
        let list = &mut self.front[pos].classes[class];
        if list.len() >= FRONT_DEPTH {
            return false;
        }
        list.push(idx);
        self.parked += 1;
        self.blocks[idx].parked = true;
        if rec.size < seg_size {
            self.stats.inactive_split_bytes += rec.size as u64;
        }
        true
    }

    /// A free block for a `rounded`-byte request of `stream`: a parked block
    /// of exactly that size (the smallest adequate size, so still a best
    /// fit; among equal sizes the most recently freed rather than the lowest
    /// address), else the best fit of the ordered sets once every parked
    /// block has been merged back into them, so a miss sees exactly the free
    /// space it would have seen without the front cache.
    fn take_cached(&mut self, stream: StreamId, rounded: usize) -> Option<usize> {
        if let Some(class) = front_class(rounded) {
            let popped = self
                .front
                .iter_mut()
                .find(|f| f.stream == stream)
                .and_then(|f| f.classes[class].pop());
            if let Some(idx) = popped {
                self.unpark(idx);
                return Some(idx);
            }
        }
        if self.parked > 0 {
            self.flush_front();
        }
        self.take_best_fit(stream, PoolKind::for_size(rounded), rounded)
    }

    /// Marks block `idx`, just taken off a front-cache list, as no longer parked.
    fn unpark(&mut self, idx: usize) {
        self.parked -= 1;
        let rec = &mut self.blocks[idx];
        rec.parked = false;
        let size = rec.size;
        if size < self.segments[rec.seg].size {
            self.stats.inactive_split_bytes -= size as u64;
        }
    }

    /// Merges every parked block back into the best-fit sets.
    fn flush_front(&mut self) {
        let mut parked = Vec::new();
        for f in &mut self.front {
            for list in &mut f.classes {
                parked.append(list);
            }
        }
        for idx in parked {
            self.unpark(idx);
            self.merge_free(idx);
        }
    }

    /// Releases every cached segment that is entirely free back to the raw
    /// allocator (`torch.cuda.empty_cache()`). Segments holding any live block
    /// stay, including their free parts.
    pub fn empty_cache(&mut self) {
        self.flush_front();
        // A block spanning its whole segment is exactly a free segment: live
        // blocks never sit in the free sets, and a segment with a live block
        // has more than one block.
        let whole: Vec<usize> = self
            .small_free
            .iter()
            .chain(self.large_free.iter())
            .filter(|&&(_, size, _, idx)| size == self.segments[self.blocks[idx].seg].size)
            .map(|&(_, _, _, idx)| idx)
            .collect();
        for idx in whole {
            self.remove_free(idx);
            let rec = self.blocks.remove(idx);
            let seg = self.segments.remove(rec.seg);
            self.stats.reserved_bytes -= seg.size as u64;
            self.stats.segment_count -= 1;
            // SAFETY: `seg.base`/`seg.size` are exactly what `self.raw.alloc`
            // returned/was given in `new_segment`, and the segment has just
            // been removed from the bookkeeping, so it is freed only once and
            // no block of it is handed out (it was a single free block).
            unsafe { self.raw.free(seg.base, seg.size) };
        }
    }

    /// A snapshot of the statistics.
    pub fn stats(&self) -> MemoryStats {
        self.stats.clone()
    }

    /// Sets every `peak_*` value to the matching current value
    /// (`torch.cuda.reset_peak_memory_stats()`).
    pub fn reset_peak_stats(&mut self) {
        let s = &mut self.stats;
        s.peak_allocated_bytes = s.allocated_bytes;
        s.peak_reserved_bytes = s.reserved_bytes;
        s.peak_active_bytes = s.active_bytes;
        s.peak_requested_bytes = s.requested_bytes;
    }

    /// Zeroes the accumulated counters: `allocation_count`, `free_count`,
    /// `num_alloc_retries` and `num_ooms`
    /// (`torch.cuda.reset_accumulated_memory_stats()`).
    pub fn reset_accumulated_stats(&mut self) {
        let s = &mut self.stats;
        s.allocation_count = 0;
        s.free_count = 0;
        s.num_alloc_retries = 0;
        s.num_ooms = 0;
    }

    // ---- internals -------------------------------------------------------

    fn free_set(&mut self, pool: PoolKind) -> &mut BTreeSet<FreeKey> {
        match pool {
            PoolKind::Small => &mut self.small_free,
            PoolKind::Large => &mut self.large_free,
        }
    }

    /// Address of block `idx`, the key used in the free sets and `live`.
    fn addr(&self, idx: usize) -> usize {
        let rec = &self.blocks[idx];
        (self.segments[rec.seg].base.as_ptr() as usize).wrapping_add(rec.offset)
    }

    /// Puts free block `idx` into its pool's free set.
    fn insert_free(&mut self, idx: usize) {
        let rec = self.blocks[idx];
        let seg = &self.segments[rec.seg];
        let (pool, seg_size, stream) = (seg.pool, seg.size, seg.stream);
        let key = (stream, rec.size, self.addr(idx), idx);
        let inserted = self.free_set(pool).insert(key);
        debug_assert!(inserted, "block already in its free set");
        if rec.size < seg_size {
            self.stats.inactive_split_bytes += rec.size as u64;
        }
    }

    /// Takes free block `idx` out of its pool's free set.
    fn remove_free(&mut self, idx: usize) {
        let rec = self.blocks[idx];
        let seg = &self.segments[rec.seg];
        let (pool, seg_size, stream) = (seg.pool, seg.size, seg.stream);
        let key = (stream, rec.size, self.addr(idx), idx);
        let removed = self.free_set(pool).remove(&key);
        debug_assert!(removed, "free block missing from its free set");
        if rec.size < seg_size {
            self.stats.inactive_split_bytes -= rec.size as u64;
        }
    }

    /// Removes and returns the smallest free block of `stream`'s part of
    /// `pool` holding at least `rounded` bytes (lowest address among equals).
    fn take_best_fit(&mut self, stream: StreamId, pool: PoolKind, rounded: usize) -> Option<usize> {
        let range = (stream, rounded, 0, 0)..=(stream, usize::MAX, usize::MAX, usize::MAX);
        let &(_, _, _, idx) = self.free_set(pool).range(range).next()?;
        self.remove_free(idx);
        Some(idx)
    }

    /// Gets a new segment big enough for `rounded` bytes and returns the
    /// (not yet pooled) free block covering it, or `None` when out of memory.
    /// With `zeroed`, the segment comes from [`RawAllocator::alloc_zeroed`].
    fn new_segment(&mut self, stream: StreamId, pool: PoolKind, rounded: usize, zeroed: bool) -> Option<usize> {
        let size = segment_size(rounded)?;
        let raw_alloc = |raw: &mut R| if zeroed { raw.alloc_zeroed(size) } else { raw.alloc(size) };
        let base = match raw_alloc(&mut self.raw) {
            Some(base) => base,
            None => {
                // Cached but unused segments may be what exhausts the system:
                // give them back and try once more, as PyTorch does.
                self.stats.num_alloc_retries += 1;
                self.empty_cache();
                raw_alloc(&mut self.raw)?
            }
        };
        let seg = self.segments.insert(Segment {
            base,
            size,
            pool,
            stream,
            head: usize::MAX,
        });
        let idx = self.blocks.insert(BlockRec {
            seg,
            offset: 0,
            size,
            requested: 0,
            prev: None,
            next: None,
            allocated: false,
            parked: false,
        });
        self.segments[seg].head = idx;
        let s = &mut self.stats;
        s.segment_count += 1;
        s.reserved_bytes += size as u64;
        s.peak_reserved_bytes = s.peak_reserved_bytes.max(s.reserved_bytes);
        Some(idx)
    }

    /// Marks free block `idx` (already out of the free sets) as handed out for
    /// a request of `requested` bytes rounded to `rounded`, splitting off the
    /// tail when the pool's rule says it is worth keeping separately.
    fn hand_out(&mut self, idx: usize, rounded: usize, requested: usize) -> Block {
        let rec = self.blocks[idx];
        let pool = self.segments[rec.seg].pool;
        let remaining = rec.size - rounded;
        if pool.should_split(remaining) {
            // The caller gets the front, so the segment's head stays put.
            let rest = self.blocks.insert(BlockRec {
                seg: rec.seg,
                offset: rec.offset + rounded,
                size: remaining,
                requested: 0,
                prev: Some(idx),
                next: rec.next,
                allocated: false,
                parked: false,
            });
            if let Some(n) = rec.next {
                self.blocks[n].prev = Some(rest);
            }
            let front = &mut self.blocks[idx];
            front.next = Some(rest);
            front.size = rounded;
            self.insert_free(rest);
        }

        let rec = &mut self.blocks[idx];
        rec.allocated = true;
        rec.requested = requested;
        let (size, seg, offset) = (rec.size, rec.seg, rec.offset);
        // Derive the pointer from the segment's base so it keeps the raw
        // allocation's provenance; `offset < segment size`, so it stays in
        // bounds and cannot wrap to null for a real allocation.
        let ptr = NonNull::new(self.segments[seg].base.as_ptr().wrapping_add(offset))
            .expect("segment wraps around the address space");
        self.live.insert(ptr.as_ptr() as usize, idx);

        let s = &mut self.stats;
        s.allocated_bytes += size as u64;
        s.peak_allocated_bytes = s.peak_allocated_bytes.max(s.allocated_bytes);
        s.active_bytes += size as u64;
        s.peak_active_bytes = s.peak_active_bytes.max(s.active_bytes);
        s.requested_bytes += requested as u64;
        s.peak_requested_bytes = s.peak_requested_bytes.max(s.requested_bytes);
        s.allocation_count += 1;
        Block { ptr, size }
    }

    /// Merges the block after `idx` into `idx` (both free and out of the free
    /// sets) and drops the absorbed record.
    fn absorb_next(&mut self, idx: usize) {
        let next = self.blocks[idx]
            .next
            .expect("absorb_next without a next block");
        let absorbed = self.blocks.remove(next);
        debug_assert!(!absorbed.allocated);
        if let Some(nn) = absorbed.next {
            self.blocks[nn].prev = Some(idx);
        }
        let rec = &mut self.blocks[idx];
        rec.size += absorbed.size;
        rec.next = absorbed.next;
    }

    /// Counts a failed request and builds its error.
    fn oom(&mut self, requested: usize) -> OutOfMemory {
        self.stats.num_ooms += 1;
        OutOfMemory {
            requested,
            allocated: self.stats.allocated_bytes,
            reserved: self.stats.reserved_bytes,
        }
    }

    /// Checks every structural invariant against a full walk of the segments,
    /// panicking with a description on the first violation.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        let (mut allocated, mut free, mut reserved, mut requested) = (0u64, 0u64, 0u64, 0u64);
        let (mut inactive, mut live_blocks, mut free_blocks, mut segments) = (0u64, 0, 0, 0u64);
        let mut parked_blocks = 0;
        for (si, seg) in self.segments.iter() {
            segments += 1;
            reserved += seg.size as u64;
            let (mut cur, mut prev, mut offset) = (Some(seg.head), None, 0usize);
            while let Some(i) = cur {
                let b = &self.blocks[i];
                assert_eq!(b.seg, si, "block {i} in the wrong segment");
                assert_eq!(b.offset, offset, "block {i} not contiguous");
                assert_eq!(b.prev, prev, "block {i} has a bad prev link");
                assert!(
                    b.size > 0 && b.size % MIN_BLOCK_SIZE == 0,
                    "block {i} bad size"
                );
                let addr = self.addr(i);
                if b.allocated {
                    allocated += b.size as u64;
                    requested += b.requested as u64;
                    live_blocks += 1;
                    assert!(b.requested > 0 && b.requested <= b.size);
                    assert_eq!(self.live.get(&addr), Some(&i), "live block {i} not in map");
                } else {
                    free += b.size as u64;
                    assert_eq!(b.requested, 0);
                    let set = match seg.pool {
                        PoolKind::Small => &self.small_free,
                        PoolKind::Large => &self.large_free,
                    };
                    if b.parked {
                        parked_blocks += 1;
                        let class = front_class(b.size).expect("parked block too big for the front cache");
                        let lists = self.front.iter().filter(|f| f.stream == seg.stream);
                        assert_eq!(
                            lists.flat_map(|f| f.classes[class].iter()).filter(|&&j| j == i).count(),
                            1,
                            "parked block {i} not exactly once in its stream's size class"
                        );
                        assert!(!set.contains(&(seg.stream, b.size, addr, i)), "parked block {i} also pooled");
                    } else {
                        free_blocks += 1;
                        assert!(
                            set.contains(&(seg.stream, b.size, addr, i)),
                            "free block {i} not pooled"
                        );
                        if let Some(p) = prev {
                            let q = &self.blocks[p];
                            assert!(q.allocated || q.parked, "adjacent free blocks {p}, {i}");
                        }
                    }
                    if b.size < seg.size {
                        inactive += b.size as u64;
                    }
                }
                offset += b.size;
                prev = Some(i);
                cur = b.next;
            }
            assert_eq!(offset, seg.size, "segment {si} blocks do not cover it");
        }
        let s = &self.stats;
        assert_eq!(allocated + free, reserved, "allocated + free != reserved");
        assert_eq!(s.allocated_bytes, allocated);
        assert_eq!(s.active_bytes, allocated);
        assert_eq!(s.reserved_bytes, reserved);
        assert_eq!(s.requested_bytes, requested);
        assert_eq!(s.inactive_split_bytes, inactive);
        assert_eq!(s.segment_count, segments);
        assert!(s.peak_allocated_bytes >= s.allocated_bytes);
        assert!(s.peak_reserved_bytes >= s.reserved_bytes);
        assert!(s.peak_active_bytes >= s.active_bytes);
        assert!(s.peak_requested_bytes >= s.requested_bytes);
        assert_eq!(
            self.live.len(),
            live_blocks,
            "stale entries in the live map"
        );
        assert_eq!(self.small_free.len() + self.large_free.len(), free_blocks);
        let listed: usize = self.front.iter().flat_map(|f| f.classes.iter()).map(Vec::len).sum();
        assert_eq!(listed, parked_blocks, "front-cache lists hold stale entries");
        assert_eq!(self.parked, parked_blocks, "parked count out of step");
        assert!(self.front.iter().flat_map(|f| f.classes.iter()).all(|l| l.len() <= FRONT_DEPTH));
        assert_eq!(
            self.blocks.iter().count(),
            live_blocks + free_blocks + parked_blocks,
            "leaked block records"
        );
    }
}

impl<R: RawAllocator> Drop for CachingAllocator<R> {
    /// Returns wholly free segments. Segments with live blocks are leaked on
    /// purpose: someone may still be using that memory.
    fn drop(&mut self) {
        self.empty_cache();
    }
}

impl<R: RawAllocator> fmt::Debug for CachingAllocator<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachingAllocator")
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn rounding_and_segment_sizes() {
        assert_eq!(round_size(1), Some(512));
        assert_eq!(round_size(512), Some(512));
        assert_eq!(round_size(513), Some(1024));
        assert_eq!(round_size(usize::MAX), None);
        assert_eq!(segment_size(512), Some(SMALL_BUFFER));
        assert_eq!(segment_size(SMALL_SIZE), Some(SMALL_BUFFER));
        assert_eq!(segment_size(SMALL_SIZE + 512), Some(LARGE_BUFFER));
        assert_eq!(segment_size(MIN_LARGE_ALLOC - 512), Some(LARGE_BUFFER));
        assert_eq!(segment_size(MIN_LARGE_ALLOC), Some(MIN_LARGE_ALLOC));
        assert_eq!(segment_size(MIN_LARGE_ALLOC + 512), Some(12 << 20));
        assert_eq!(segment_size(usize::MAX - 511), None);
    }

    #[test]
    fn addr_hasher_spreads_aligned_keys() {
        use std::hash::BuildHasher;
        let build = BuildHasherDefault::<AddrHasher>::default();
        let mut low_bits = std::collections::HashSet::new();
        for i in 0..256usize {
            low_bits.insert(build.hash_one(0x7f00_0000_0000 + i * 512) & 0xff);
        }
        // Aligned addresses must not collapse onto a few buckets.
        assert!(
            low_bits.len() > 128,
            "only {} distinct buckets",
            low_bits.len()
        );
    }
}
