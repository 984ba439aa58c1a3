/*
 * bench_loadparts: the two parts of loading the on-disk cache that bench_cache.sh cannot
 * tell apart from its cache_load figure, measured alone on this machine:
 *   parse  the record reader over a cache file (common/cacherec.c), nothing kept: the
 *          first read of the process, and the best of 5 more;
 *   touch  the first write of fresh memory, per MiB: mapped with MAP_POPULATE as the
 *          shim's record table is, then one byte written every 64 (each cache line once).
 * On a virtual machine whose hypervisor backs guest memory lazily, the second is what a
 * loaded record costs beyond its parsing (the shim's memory per record times this).
 *
 *   bench_loadparts CACHE_FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "cacherec.h"
#include "clock.h"

static int records;

static void count(void *ud, const xmt_cacherec *r)
{
    (void)ud;
    (void)r;
    records++;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_loadparts CACHE_FILE\n");
        return 2;
    }
    double first = 0, best = 1e30;
    for (int i = 0; i < 6; i++) {
        records = 0;
        double t0 = xmt_now_ms();
        if (xmt_cacherec_read(argv[1], count, NULL, NULL) < 0) {
            perror(argv[1]);
            return 1;
        }
        double ms = xmt_now_ms() - t0;
        if (i == 0)
            first = ms;
        else if (ms < best)
            best = ms;
    }
    enum { MIB = 1 << 20, BLOCKS = 8 };
    double t0 = xmt_now_ms();
    for (int b = 0; b < BLOCKS; b++) {
        char *p = mmap(NULL, MIB, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        for (size_t j = 0; j < MIB; j += 64)
            p[j] = 1;
    }
    double touch = (xmt_now_ms() - t0) / BLOCKS;
    printf("parse %d records: %.2f ms first, %.2f ms best of 5 more; "
           "first write of fresh memory: %.2f ms per MiB\n",
           records, first, best, touch);
    return 0;
}
