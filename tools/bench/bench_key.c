/* bench_key.c - cost of deriving a lookup key, the policy work the shim does on every
 * launch of a tuned kernel: ns per key for a three-trigger entry (x.shape, y.dtype and a
 * functional trigger), and proof that it allocates nothing (malloc and friends are
 * interposed here and counted while the loop runs). Prints one table; exits 1 when the
 * key costs more than the budget given as argv[1] (default 50 ns) or allocates.
 */
#include "xmt_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static volatile int counting;
static volatile long allocs;

void *malloc(size_t n)
{
    if (counting) allocs++;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    if (counting) allocs++;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    if (counting) allocs++;
    return __libc_realloc(p, n);
}
void free(void *p)
{
    __libc_free(p);
}

static const char *policy = "kernels:\n"
                            "  - match: \"saxpy*\"\n"
                            "    params: [n: i32, a: f32, x: ptr, y: ptr]\n"
                            "    tensors:\n"
                            "      x: {dtype: f32, shape: [n]}\n"
                            "      y: {dtype: f32, shape: [n]}\n"
                            "    triggers: [x.shape, y.dtype]\n"
                            "    functional_triggers: {big: \"next_pow2(n) >= 1048576\"}\n"
                            "    space: {BLOCK: [128, 256]}\n"
                            "    launch: {block: [BLOCK], grid: [\"cdiv(n, BLOCK)\"]}\n";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void diag(void *ud, const char *m)
{
    (void)ud;
    fprintf(stderr, "%s\n", m);
}

int main(int argc, char **argv)
{
    double budget = argc > 1 ? strtod(argv[1], NULL) : 50.0;
    xmt_policy_set *set;
    if (xmt_policy_load_string("bench.yaml", policy, strlen(policy), &set, diag, NULL)) return 2;
    const xmt_entry *e = xmt_policy_match(set, "_Z5saxpyifPKfPf", diag, NULL);
    if (!e) return 2;
    int32_t n = 1 << 20;
    float a = 2;
    uint64_t x = 0x10000, y = 0x20000;
    void *params[4] = {&n, &a, &x, &y};
    xmt_attrs at;
    xmt_attrs_default(&at);
    xmt_launch_view v = {params, 4, {{4096, 1, 1}, {256, 1, 1}, 0}, &at};
    uint8_t key[XMT_KEY_MAX];
    const long iters = 5000000;
    size_t len = 0;
    unsigned sum = 0;
    for (long i = 0; i < 100000; i++)
        len = xmt_entry_key(e, &v, key, sizeof key); /* warm */
    double best = 1e30;
    counting = 1;
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
        for (long i = 0; i < iters; i++) {
            // cppcheck-suppress unreadVariable ; read through params
            n = (int32_t)(1000 + (i & 1023)); /* the argument changes, as launches do */
            len = xmt_entry_key(e, &v, key, sizeof key);
            sum += key[len - 1];
        }
        double ns = (now() - t0) / (double)iters;
        if (ns < best) best = ns;
    }
    counting = 0;
    char buf[256];
    xmt_entry_key_render(e, key, len, buf, sizeof buf);
    printf("| benchmark | triggers | key bytes | ns/key (best of 5) | allocations | budget |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    printf("| xmt_entry_key | x.shape, y.dtype, big | %zu | %.1f | %ld | %.0f ns |\n", len, best,
           allocs, budget);
    printf("last key: %s (checksum %u)\n", buf, sum);
    xmt_policy_free(set);
    return (best > budget || allocs) ? 1 : 0;
}
