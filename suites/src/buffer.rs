//! Page-aligned message buffers, as OSU allocates them (alignment changes copy and DMA costs,
//! so benchmarks must not depend on the allocator's mood).

use std::alloc::{alloc_zeroed, dealloc, Layout};

const PAGE: usize = 4096;

pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// `len` bytes (at least one page) aligned to a page, filled with `fill`.
    pub fn new(len: usize, fill: u8) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(PAGE), PAGE).expect("valid layout");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory allocating {len} bytes");
        let mut b = AlignedBuf { ptr, len };
        b.as_mut_slice().fill(fill);
        b
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes for the life of self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len.max(PAGE), PAGE).expect("valid layout");
        // SAFETY: allocated with this layout in `new`.
        unsafe { dealloc(self.ptr, layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_page_aligned_and_filled() {
        for len in [0, 1, 4095, 4096, 100_000] {
            let b = AlignedBuf::new(len, b'a');
            assert_eq!(b.as_slice().as_ptr() as usize % PAGE, 0);
            assert_eq!(b.as_slice().len(), len);
            assert!(b.as_slice().iter().all(|&x| x == b'a'));
        }
    }
}
