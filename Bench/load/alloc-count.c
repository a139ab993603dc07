/* Counts a process's heap allocations, for Bench/load/instructions.sh: LD_PRELOAD it, and the count of
 * malloc/calloc/realloc/memalign calls so far is rewritten every 100 ms into the file named by
 * $ZONERTC_ALLOC_COUNT_FILE. A count does not vary with the machine's load, as CPU time does. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong allocations;

void *malloc(size_t n) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); return __libc_malloc(n); }
void *calloc(size_t n, size_t s) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_calloc(n, s);
}
void *realloc(void *p, size_t n) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_realloc(p, n);
}
void *memalign(size_t a, size_t n) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_memalign(a, n);
}
void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    void *p = memalign(a, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

static void *report(void *path) {
    /* open/write and a stack buffer: the reporter itself allocates nothing. */
    for (;;) {
        char line[32];
        int n = snprintf(line, sizeof line, "%lu\n", atomic_load(&allocations));
        int fd = open((const char *)path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { (void)!write(fd, line, (size_t)n); close(fd); }
        usleep(100000);
    }
    return NULL;
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("ZONERTC_ALLOC_COUNT_FILE");
    pthread_t t;
    if (path && *path) pthread_create(&t, NULL, report, (void *)path);
}
