/*
 * fuzz_trialreq: a fuzz target for the trial request's decoder (common/trialreq_load.c,
 * trialreq.c), the one reader of what the helper is sent: any bytes as a request must be
 * refused with a reason and nothing kept, or accepted within the limits of trialreq.h, and
 * a request accepted must encode and decode back to the same text (the codec is one walk:
 * this holds the two directions to each other on inputs no test wrote).
 *
 * Two builds of this file:
 * - with clang and -fsanitize=fuzzer (tests/unit/fuzz_trialreq.sh, run by scripts/test.sh):
 *   libFuzzer drives LLVMFuzzerTestOneInput;
 * - with XMT_FUZZ_MAIN (the CTest trialreq_fuzz_corpus, any compiler): a main that runs the
 *   target over the committed corpus (tests/unit/data/trialreq) and a fixed, seeded set of
 *   mutations of each file, so that CI runs the decoder on hostile input without clang.
 *   The corpus's ok-* files must be accepted: after a change of the request's fields or of
 *   XMT_TP_VERSION, write them again with `fuzz_trialreq_run --write-corpus DIR`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trialreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int empty(const xmt_trialreq *q)
{
    static const xmt_trialreq zero;
    return !memcmp(q, &zero, sizeof zero);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xmt_trialreq q;
    char err[256] = "";
    if (xmt_trialreq_decode((const char *)data, size, &q, err, sizeof err) != 0) {
        if (!err[0] || !empty(&q)) abort(); /* a refusal says why and keeps nothing */
        return 0;
    }
    if (q.nwindows > XMT_TR_MAX_WINDOWS || q.nfaulted > XMT_TR_MAX_FAULTED ||
        q.nglobals > XMT_TR_MAX_GLOBALS || q.image.njit > XMT_TR_MAX_JIT ||
        q.launch.nparams > XMT_TR_MAX_PARAMS || q.only.nargs > XMT_TR_MAX_ARGS || !q.kernel ||
        !q.key)
        abort();
    for (uint32_t i = 0; i < q.launch.nparams; i++)
        if (q.launch.params[i].len > XMT_TR_MAX_PARAM_BYTES) abort();
    size_t n1 = 0, n2 = 0;
    char *t1 = xmt_trialreq_encode(&q, &n1, err, sizeof err);
    if (!t1) abort(); /* what was accepted can be sent */
    xmt_trialreq_free(&q);
    if (!empty(&q)) abort();
    if (xmt_trialreq_decode(t1, n1, &q, err, sizeof err) != 0) abort();
    char *t2 = xmt_trialreq_encode(&q, &n2, err, sizeof err);
    if (!t2 || n1 != n2 || memcmp(t1, t2, n1) != 0) abort();
    free(t1);
    free(t2);
    xmt_trialreq_free(&q);
    return 0;
}

#ifdef XMT_FUZZ_MAIN
#include <dirent.h>

#include "trialreq_sample.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull; /* fixed: the same mutations every run */

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Bytes a JSON decoder is likely to choke on, spliced in at random places. */
static const char *const tokens[] = {"\"",
                                     "{",
                                     "}",
                                     "[",
                                     "]",
                                     ",",
                                     ":",
                                     "0",
                                     "-1",
                                     "null",
                                     "true",
                                     "1e999",
                                     "\"\\u0000\"",
                                     "18446744073709551615",
                                     "-9223372036854775808",
                                     "\"zz\"",
                                     "\"ff\"",
                                     "[]",
                                     "{}",
                                     "1.5",
                                     "\"\\ud800\"",
                                     "\xff",
                                     "\"v\":5,",
                                     "\"windows\":[]"};

/* One mutation of in (n bytes) into out (room for n + 64): a byte changed, a range
 * deleted or repeated, a token spliced in, or the text cut. Returns its length. */
static size_t mutate(const uint8_t *in, size_t n, uint8_t *out)
{
    memcpy(out, in, n);
    size_t at = n ? next() % n : 0, len = n ? next() % (n - at < 32 ? n - at + 1 : 33) : 0;
    switch (next() % 5) {
    case 0:
        if (n) out[at] = (uint8_t)next();
        return n;
    case 1: memmove(out + at, out + at + len, n - at - len); return n - len;
    case 2:
        if (len > 32) len = 32;
        memmove(out + at + len, out + at, n - at);
        return n + len;
    case 3: {
        const char *t = tokens[next() % (sizeof tokens / sizeof tokens[0])];
        size_t tl = strlen(t);
        memmove(out + at + tl, out + at, n - at);
        memcpy(out + at, t, tl);
        return n + tl;
    }
    default: return at;
    }
}

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *b = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n + 4096 > cap) {
            uint8_t *nb = realloc(b, cap = (*n + 4096) * 2);
            if (!nb) break;
            b = nb;
        }
        size_t got = fread(b + *n, 1, cap - *n, f);
        *n += got;
        if (!got) break;
    }
    fclose(f);
    return b;
}

static int write_corpus(const char *dir)
{
    xmt_trialreq s = trialreq_sample();
    xmt_trialreq e = {.kernel = "k", .key = "(no triggers)", .only_index = -1};
    snprintf(e.image.id, sizeof e.image.id, "0x1:2");
    const xmt_trialreq *qs[] = {&s, &e};
    const char *names[] = {"ok-sample.json", "ok-empty.json"};
    for (int i = 0; i < 2; i++) {
        char path[4096], err[256];
        size_t len;
        char *t = xmt_trialreq_encode(qs[i], &len, err, sizeof err);
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = t ? fopen(path, "w") : NULL;
        if (!f || fwrite(t, 1, len, f) != len || fputc('\n', f) == EOF || fclose(f) != 0) {
            fprintf(stderr, "fuzz_trialreq_run: cannot write %s\n", path);
            return 1;
        }
        free(t);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--write-corpus")) return write_corpus(argv[2]);
    if (argc != 2) {
        fprintf(stderr, "usage: fuzz_trialreq_run CORPUS_DIR | --write-corpus DIR\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 2;
    }
    int files = 0, ok = 0, bad = 0;
    long runs = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], e->d_name);
        size_t n;
        uint8_t *b = read_file(path, &n);
        if (!b) continue;
        files++;
        xmt_trialreq q;
        char err[256] = "";
        int accepted = xmt_trialreq_decode((const char *)b, n, &q, err, sizeof err) == 0;
        if (accepted) xmt_trialreq_free(&q);
        if (!strncmp(e->d_name, "ok-", 3) && !accepted) {
            fprintf(stderr,
                    "%s is refused (%s): write the corpus again (fuzz_trialreq_run "
                    "--write-corpus DIR)\n",
                    path, err);
            bad++;
        }
        ok += accepted;
        LLVMFuzzerTestOneInput(b, n);
        runs++;
        /* mutations of mutations, from each file: 3000 */
        uint8_t *cur = malloc(n + 64 * 64), *out = malloc(n + 64 * 65);
        size_t cn = n;
        for (int i = 0; cur && out && i < 3000; i++) {
            if (i % 50 == 0) memcpy(cur, b, cn = n); /* back to the file now and then */
            size_t m = mutate(cur, cn, out);
            LLVMFuzzerTestOneInput(out, m);
            runs++;
            if (m <= n + 64 * 63) {
                memcpy(cur, out, m);
                cn = m;
            }
        }
        free(cur);
        free(out);
        free(b);
    }
    closedir(d);
    printf("fuzz_trialreq_run: %d files (%d accepted), %ld inputs, no crash\n", files, ok, runs);
    return bad || !files ? 1 : 0;
}
#endif
