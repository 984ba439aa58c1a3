/*
 * launch_walk_trace: the recorder behind tools/dev/launch_walk.sh, which walks a launch
 * through the shim's source files ("rooms"). It defines the two hooks that GCC's
 * -finstrument-functions calls at every function's entry and exit (inlined ones included:
 * GCC keeps an addressable copy of each and reports it, so a header's inline function counts
 * in the header's room), and records each as (function, thread, enter or exit) in memory.
 * At exit, when XMT_WALK_OUT is set, it writes what it recorded to XMT_WALK_OUT.<pid>.<n>:
 * a line per distinct function (its address, the object it lies in and its offset there,
 * from dladdr, which launch_walk.py gives to gdb), then the events, binary.
 *
 * Not part of any product target: launch_walk.sh compiles it with -fvisibility=hidden and
 * links it into every object of its instrumented build (CMAKE_*_LINKER_FLAGS), so that each
 * object has a recorder of its own (the shim's, the helper's) and none sees another's. It
 * must call nothing instrumented: it is compiled without -finstrument-functions and calls
 * libc only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOTRACE __attribute__((no_instrument_function))

typedef struct {
    uint64_t fn;
    uint32_t tid;
    uint32_t kind; /* 1 enter, 2 exit */
} walk_ev;

#define WALK_CAP ((size_t)1 << 25) /* events kept; past it the run is said to be cut */

static walk_ev *evs;
static atomic_size_t nev;
static atomic_int mapping; /* 0 none, 1 being made, 2 made, 3 failed */

/* The events' memory, mapped at the first event; NULL when it could not be. */
NOTRACE static walk_ev *events(void)
{
    int m = atomic_load(&mapping);
    if (m == 2) return evs;
    int want = 0;
    if (m == 0 && atomic_compare_exchange_strong(&mapping, &want, 1)) {
        void *p = mmap(NULL, WALK_CAP * sizeof *evs, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        evs = p == MAP_FAILED ? NULL : p;
        atomic_store(&mapping, evs ? 2 : 3);
    }
    while (atomic_load(&mapping) == 1)
        ;
    return atomic_load(&mapping) == 2 ? evs : NULL;
}

NOTRACE static void record(void *fn, uint32_t kind)
{
    walk_ev *e = events();
    if (!e) return;
    /* the kernel's thread id, asked each time: the trial helper's spawn (trialproc.c) is a
     * vfork-like clone that runs in the program's memory and thread-local storage until
     * it execs, and its calls must not count as the launching thread's */
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    size_t i = atomic_fetch_add(&nev, 1);
    if (i < WALK_CAP) e[i] = (walk_ev){(uint64_t)(uintptr_t)fn, tid, kind};
}

NOTRACE void __cyg_profile_func_enter(void *fn, void *site)
{
    (void)site;
    record(fn, 1);
}

NOTRACE void __cyg_profile_func_exit(void *fn, void *site)
{
    (void)site;
    record(fn, 2);
}

NOTRACE static int by_addr(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A line per distinct function: its address, its object and its offset in it. */
NOTRACE static int write_functions(FILE *f, size_t n)
{
    uint64_t *a = malloc(n * sizeof *a);
    if (!a) return -1;
    for (size_t i = 0; i < n; i++)
        a[i] = evs[i].fn;
    qsort(a, n, sizeof *a, by_addr);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && a[i] == a[i - 1]) continue;
        Dl_info d;
        if (dladdr((void *)(uintptr_t)a[i], &d) && d.dli_fname)
            fprintf(f, "fn %llx %s %llx\n", (unsigned long long)a[i], d.dli_fname,
                    (unsigned long long)(a[i] - (uint64_t)(uintptr_t)d.dli_fbase));
    }
    free(a);
    return 0;
}

__attribute__((destructor)) NOTRACE static void walk_dump(void)
{
    static char tag; /* its address names this object's recorder: each object has its own */
    const char *out = getenv("XMT_WALK_OUT");
    size_t n = atomic_load(&nev);
    if (!out || !n || atomic_load(&mapping) != 2) return;
    int cut = n > WALK_CAP;
    if (cut) n = WALK_CAP;
    char path[4096];
    snprintf(path, sizeof path, "%s.%d.%p", out, (int)getpid(), (void *)&tag);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "pid %d\ncut %d\n", (int)getpid(), cut);
    int ok = write_functions(f, n) == 0;
    if (ok) {
        fprintf(f, "events %zu\n", n);
        ok = fwrite(evs, sizeof *evs, n, f) == n;
    }
    if (fclose(f) != 0 || !ok) fprintf(stderr, "launch_walk_trace: %s not written whole\n", path);
}
