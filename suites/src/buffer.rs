//! Page-aligned message buffers, as OSU allocates them (alignment changes copy and DMA costs,
//! so benchmarks must not depend on the allocator's mood).

use std::alloc::{alloc_zeroed, dealloc, Layout};

use crate::SuiteError;

const PAGE: usize = 4096;

pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// `len` bytes (at least one page) aligned to a page, filled with `fill`; an error, not a
    /// panic, when the memory is not there (a size the user chose past the process's limit).
    pub fn new(len: usize, fill: u8) -> Result<AlignedBuf, SuiteError> {
        let out_of_memory = || SuiteError::OutOfMemory { bytes: len };
        let layout = Layout::from_size_align(len.max(PAGE), PAGE).map_err(|_| out_of_memory())?;
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            return Err(out_of_memory());
        }
        let mut b = AlignedBuf { ptr, len };
        b.as_mut_slice().fill(fill);
        Ok(b)
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
            let b = AlignedBuf::new(len, b'a').unwrap();
            assert_eq!(b.as_slice().as_ptr() as usize % PAGE, 0);
            assert_eq!(b.as_slice().len(), len);
            assert!(b.as_slice().iter().all(|&x| x == b'a'));
        }
    }

    #[test]
    fn a_buffer_past_any_memory_is_an_error_that_names_its_size() {
        // black_box: a buffer nobody reads may be optimised away, allocation and all.
        let e = std::hint::black_box(AlignedBuf::new(1 << 62, 0))
            .err()
            .expect("no machine has 4 EiB");
        assert!(
            e.to_string()
                .starts_with("cannot allocate a 4611686018427387904-byte message buffer"),
            "{e}"
        );
    }
}
