//! Keeping the resident memory near what is live. glibc's malloc gives each thread that
//! allocates its own arena (up to 8 per core) and keeps what a burst freed in each, and it
//! raises its mmap threshold after a large block is freed, so later large blocks (a long
//! message's final item) stay in the heap for good: after a flood of events, resident memory
//! would stay at its high-water mark. The daemon limits the arenas, keeps large blocks in
//! mmap (returned when freed), and hands freed memory back to the system now and then.
//! (Other C libraries: no-ops.)

/// At most this many malloc arenas (the tokio workers, the store writer and blocking
/// threads share them).
const MAX_ARENAS: i32 = 4;

/// Blocks this large or larger are mmapped, and returned to the system when freed.
const MMAP_THRESHOLD: i32 = 256 << 10;

/// Limits malloc's arenas and fixes its mmap threshold. Call first thing in `main`, before
/// any thread starts.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before other threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MAX_ARENAS);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// Returns the free memory of every arena to the system.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim is thread-safe; it only releases free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}
