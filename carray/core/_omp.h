/* OpenMP thread count, or 1 when the extension was built without OpenMP.
 *
 * Contention back-off: on a machine where other processes keep the cores busy, a worker thread of
 * a parallel region may wait a whole scheduler time slice (milliseconds) before it runs, and the
 * region's closing barrier waits for it: a 50 us op then takes 5 ms. So each parallel region
 * reports how late its workers started (carray_region_enter / carray_thread_seen /
 * carray_region_exit); when one was more than CARRAY_LATE seconds late, carray_max_threads()
 * answers 1 for a while (doubling while it keeps happening, up to a second), then tries again.
 * The state is per extension module and only steers the thread count: it never affects results.
 *
 * Callers on several threads: two Python threads that each run a carray op (the GIL is released
 * in the loops) would each start a full team, 2N threads on N cores. carray__busy counts the
 * threads that carray's parallel regions hold right now, process-wide (every region of every
 * carray module goes through carray.core._strided's copy of this state); a region that starts
 * while others run takes only the cores left over, and at least its own thread
 * (carray_region_threads), so carray never runs more than N threads plus one per extra caller.
 *
 * fork(): the OpenMP worker threads of a process do not exist in a child it forks, and libgomp's
 * pool still counts them, so the child's first parallel region would wait for them forever. An
 * at-fork handler (installed by carray_omp_init, which carray.core._strided calls at import) marks
 * the child, and carray_max_threads() answers 1 there from then on: a forked child (multiprocessing
 * with the fork start method, DataLoader workers) runs carray's loops on its one thread.
 */
#ifndef CARRAY_OMP_H
#define CARRAY_OMP_H
#include <time.h>

#define CARRAY_LATE 0.001          /* a worker starting 1 ms after the region did is late */
#define CARRAY_MAX_SEEN 256

static double carray__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double carray__serial_until = 0.0;    /* run on one thread until then */
static int carray__forked = 0;               /* set in a forked child: one thread for good */
static double carray__backoff = 0.01;        /* next serial period (s) */
static double carray__seen[CARRAY_MAX_SEEN]; /* when each thread began the current region */
static int carray__busy = 0;                 /* threads in carray's parallel regions now */

#ifdef _OPENMP
#include <omp.h>
/* set_num_threads' count, for every calling thread (0: OpenMP's default). OpenMP keeps the count
   omp_set_num_threads sets per thread: a count set from one Python thread left every other
   thread on all the cores. */
static int carray__nthreads = 0;
static int carray_max_threads(void) {
    int n = carray__nthreads > 0 ? carray__nthreads : omp_get_max_threads();
    if (carray__forked)
        return 1;
    if (n > 1 && carray__serial_until > 0.0 && carray__now() < carray__serial_until)
        return 1;
    return n;
}
static void carray_set_threads(int n) {
    carray__nthreads = n;
    omp_set_num_threads(n);
    carray__serial_until = 0.0;
}
#else
static int carray_max_threads(void) { return 1; }
static void carray_set_threads(int n) { (void)n; }
#endif

#ifndef _WIN32
#include <pthread.h>
static void carray__child_after_fork(void) {
    carray__forked = 1;
#ifdef _OPENMP
    omp_set_num_threads(1);      /* also for regions that ask OpenMP directly (the GEMM's) */
#endif
}
/* Install the at-fork handler (once per process; returns 0, or an errno from pthread_atfork). */
static int carray_omp_init(void) {
    static int done = 0;
    if (done) return 0;
    done = 1;
    return pthread_atfork(NULL, NULL, carray__child_after_fork);
}
#else
static int carray_omp_init(void) { return 0; }
#endif

/* 1 in a child of fork() (see above). */
static int carray_forked(void) { return carray__forked; }

static int carray__regions = 0;              /* carray's parallel regions running now */

/* Threads for a parallel region starting now: carray_max_threads(), less the threads that other
   regions hold at this moment, and no more than a fair share (N over the regions running, this
   one included); at least 1: the caller's own. The share lets a second caller, which started on
   the one thread the first left it, get half the cores from the first caller's next region on
   (without it the first caller took all but one core again each time: two callers of a sum
   took 3x one caller doing both callers' work, on 16 cores). */
static int carray_region_threads(void) {
    int n = carray_max_threads();
    int busy = __atomic_load_n(&carray__busy, __ATOMIC_RELAXED);
    if (busy > 0 && n > 1) {
        int share = n / (__atomic_load_n(&carray__regions, __ATOMIC_RELAXED) + 1);
        n -= busy;
        if (n > share) n = share;
        if (n < 1) n = 1;
    }
    return n;
}

/* Threads that carray's parallel regions hold right now (all callers). */
static int carray_busy_threads(void) { return __atomic_load_n(&carray__busy, __ATOMIC_RELAXED); }

/* Lateness is judged only for a region that runs alone: two callers' regions would reset each
   other's carray__seen, and a region that starts while another runs (with the cores that one left
   over) delays that one's workers, which is not contention from outside. carray__overlaps counts
   the regions that started while another ran; the region that started alone (the tracked one: at
   most one at a time) notes the count first and judges its workers at exit only if it did not
   change. Without this, two callers switched each other to one thread (3x slower than one caller
   doing both callers' work, on 16 cores). */
static int carray__overlaps = 0;
static int carray__tracked_overlaps = 0;
/* Regions judged so far, and those of them with a worker that never reported (for tests: a region
   whose loop does not call carray_thread_seen is judged late whenever it lasts over CARRAY_LATE) */
static long carray__judged = 0;
static long carray__unreported = 0;

/* Call before a parallel region: returns its start time (-1 when another region is running, so
   that its lateness is not judged). */
static double carray_region_enter(int nthreads) {
    int t, before = __atomic_load_n(&carray__overlaps, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&carray__regions, 1, __ATOMIC_SEQ_CST);
    if (__atomic_add_fetch(&carray__busy, nthreads, __ATOMIC_SEQ_CST) != nthreads) {
        __atomic_add_fetch(&carray__overlaps, 1, __ATOMIC_SEQ_CST);
        return -1.0;
    }
    carray__tracked_overlaps = before;
    for (t = 0; t < nthreads && t < CARRAY_MAX_SEEN; t++) carray__seen[t] = 0.0;
    return carray__now();
}

/* Call from each iteration of the region (cheap after the first per thread). */
static void carray_thread_seen(int tid) {
    if (tid > 0 && tid < CARRAY_MAX_SEEN && carray__seen[tid] == 0.0)
        carray__seen[tid] = carray__now();
}

/* Call after the region: a worker that started late (or never, in a region that lasted longer
   than CARRAY_LATE) switches the module to one thread for a while. The region's threads are
   released last, so that no other region becomes the tracked one before this one is judged. */
static void carray_region_exit(double start, int nthreads) {
    double end = carray__now(), late = 0.0, lag;
    int t, missing = 0;
    if (start >= 0.0 &&
            __atomic_load_n(&carray__overlaps, __ATOMIC_SEQ_CST) == carray__tracked_overlaps) {
        for (t = 1; t < nthreads && t < CARRAY_MAX_SEEN; t++) {
            if (carray__seen[t] == 0.0) { missing = 1; continue; }
            lag = carray__seen[t] - start;
            if (lag > late) late = lag;
        }
        carray__judged++;
        carray__unreported += missing;
        if (late > CARRAY_LATE || (missing && end - start > CARRAY_LATE)) {
            carray__serial_until = end + carray__backoff;
            if (carray__backoff < 1.0) carray__backoff *= 2;
        } else if (carray__serial_until > 0.0 && end >= carray__serial_until) {
            carray__backoff = 0.01;            /* a parallel region went fine again */
            carray__serial_until = 0.0;
        }
    }
    __atomic_sub_fetch(&carray__regions, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&carray__busy, nthreads, __ATOMIC_SEQ_CST);
}

/* carray__judged and carray__unreported (see above). */
static void carray_region_reports(long* judged, long* unreported) {
    *judged = carray__judged;
    *unreported = carray__unreported;
}

#endif
