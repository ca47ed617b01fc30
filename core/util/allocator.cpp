#include "core/util/allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace comera {

void retain_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  // -1 disables trimming (mallopt(3)); a finite threshold still gave back every step's
  // temporaries once they passed it (batch 32: 2 GB page-faulted afresh each step).
  mallopt(M_TRIM_THRESHOLD, -1);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

void release_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace comera
