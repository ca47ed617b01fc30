#pragma once
// glibc returns every large freed block to the OS, so each training step page-faults its big
// temporaries afresh (2-3x slower on them). Long-running entry points keep freed memory.

namespace comera {

// Serves all allocations from the heap and never trims it (glibc; a no-op elsewhere). Peak
// memory stays mapped for the life of the process.
void retain_freed_memory();

// Hands the freed memory the heap keeps back to the OS (glibc; a no-op elsewhere), so RSS
// counts live memory again: a measurement after an earlier one in the process starts clean.
void release_freed_memory();

}  // namespace comera
