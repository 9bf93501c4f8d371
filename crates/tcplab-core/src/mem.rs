//! Memory for the large state a run reads at random: the packets in flight
//! (link FIFO blocks), the links and the flows.
//!
//! With thousands of flows that state is hundreds of MB, read at addresses
//! no prefetcher can guess, so with 4 KiB pages nearly every such read also
//! misses the TLB, and in a virtual machine a TLB miss walks two page
//! tables. Transparent huge pages (2 MiB) cover it with a few hundred TLB
//! entries. Linux gives them to memory that asks for them
//! (`madvise(MADV_HUGEPAGE)`) under its default policy
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `madvise`), which
//! leaves the rest of the process alone. The advice is a hint: where the
//! kernel has none to give, or off Linux, nothing changes but speed.

/// Size and alignment of a huge page (x86-64 and most aarch64 kernels).
pub const HUGE_PAGE: usize = 2 << 20;

/// Asks for huge pages under the 2 MiB-aligned part of `[p, p + bytes)`.
/// Must come before the memory is first written: pages already there stay
/// small until the kernel's background collapse gets to them.
pub fn advise_huge(p: *mut u8, bytes: usize) {
    let start = (p as usize).next_multiple_of(HUGE_PAGE);
    let end = (p as usize + bytes) & !(HUGE_PAGE - 1);
    if end <= start {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: the range lies inside memory this process owns; madvise with
    // MADV_HUGEPAGE changes how it is backed, never its contents.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

/// An empty vector with room for `n` elements, its buffer advised to be
/// backed by huge pages where it spans whole ones.
pub fn huge_vec<T>(n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    advise_huge(v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
    v
}

/// A chunk of `bytes` (a power of two) aligned to its size, uninitialised;
/// from `HUGE_PAGE` up, advised to be backed by huge pages. Free with
/// [`free_chunk`] and the same size.
pub fn alloc_chunk(bytes: usize) -> *mut u8 {
    let layout = chunk_layout(bytes);
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    if bytes >= HUGE_PAGE {
        advise_huge(p, bytes);
    }
    p
}

/// # Safety
/// `p` came from [`alloc_chunk`]`(bytes)` and nothing uses it any more.
pub unsafe fn free_chunk(p: *mut u8, bytes: usize) {
    std::alloc::dealloc(p, chunk_layout(bytes));
}

fn chunk_layout(bytes: usize) -> std::alloc::Layout {
    assert!(bytes.is_power_of_two(), "chunk sizes are powers of two");
    std::alloc::Layout::from_size_align(bytes, bytes).expect("a valid layout")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_aligned_and_writable() {
        for bytes in [64 << 10, HUGE_PAGE, 2 * HUGE_PAGE] {
            let p = alloc_chunk(bytes);
            assert_eq!(p as usize % bytes, 0);
            // SAFETY: a fresh chunk of `bytes` bytes.
            unsafe {
                std::ptr::write_bytes(p, 7, bytes);
                assert_eq!(*p.add(bytes - 1), 7);
                free_chunk(p, bytes);
            }
        }
    }

    #[test]
    fn huge_vec_has_its_capacity_and_works() {
        let mut v: Vec<u64> = huge_vec(1 << 20);
        assert!(v.capacity() >= 1 << 20);
        v.extend(0..1u64 << 20);
        assert_eq!(v.iter().sum::<u64>(), (1u64 << 20) * ((1 << 20) - 1) / 2);
        // Small ones are left alone and still work.
        let mut w: Vec<u8> = huge_vec(3);
        w.push(1);
        assert_eq!(w, [1]);
    }
}
