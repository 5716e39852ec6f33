/* Ask the kernel to back a large block with transparent huge pages (fewer page faults and TLB
 * misses on big arrays). Linux only; elsewhere it does nothing. */
#ifndef CARRAY_HUGEPAGE_H
#define CARRAY_HUGEPAGE_H
#include <stddef.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
static void carray_advise_hugepages(void* addr, size_t length) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(addr, length, MADV_HUGEPAGE);
#else
  (void)addr;
  (void)length;
#endif
}
#endif
