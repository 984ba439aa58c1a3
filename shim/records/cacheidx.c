/*
 * cacheidx: the on-disk cache's records in memory and the table over them (see cacheidx.h).
 */
#include "cacheidx.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* 64-bit multiply-and-fold hash over n bytes, 8 a step, chained from h. A file anyone may
 * write is refused, and every hit is read back and compared, so a hash without a secret
 * seed is enough. */
static uint64_t hash_bytes(uint64_t h, const void *key, size_t n)
{
    const unsigned char *p = key;
    uint64_t w;
    h ^= n * 0x9e3779b97f4a7c15ull;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return h ^ h >> 29;
}

/* The identity's hash: device, kernel, code, entry, entry_fp and key, each with its
 * length (none holds a NUL, so the sequence is unambiguous). */
uint64_t xmt_cacheidx_hash(const xmt_cacherec *r)
{
    const char *f[6] = {r->device, r->kernel, r->code, r->entry, r->entry_fp, r->key_hex};
    uint64_t h = 0x243f6a8885a308d3ull;
    for (int i = 0; i < 6; i++)
        h = hash_bytes(h, f[i], strlen(f[i]));
    h ^= h >> 33; /* murmur's finalizer: the table uses the low bits */
    h *= 0xff51afd7ed558ccdull;
    return h ^ h >> 33;
}

/* The choice's hash: its index and label (what a verification checked; not the time). */
uint32_t xmt_cacheidx_choice_hash(const xmt_choice *c)
{
    int64_t index = c->index;
    uint64_t h = hash_bytes(hash_bytes(0, &index, sizeof index), c->label, strlen(c->label));
    return (uint32_t)(h ^ h >> 32);
}

#define PREFAULT_STEP (64u << 10)

/* A line kept in memory (XMT_CACHEIDX_MEM), on ix->memlines. */
struct xmt_cacheidx_line {
    struct xmt_cacheidx_line *prev, *next;
    char text[]; /* the line, '\n' and a NUL */
};

/* A copy of text[0..len) with '\n' and a NUL, listed; NULL when out of memory. */
char *xmt_cacheidx_line_new(xmt_cacheidx *ix, const char *text, size_t len)
{
    xmt_cacheidx_line *m = malloc(sizeof *m + len + 2);
    if (!m) return NULL;
    memcpy(m->text, text, len);
    m->text[len] = '\n';
    m->text[len + 1] = 0;
    m->prev = NULL;
    m->next = ix->memlines;
    if (ix->memlines) ix->memlines->prev = m;
    ix->memlines = m;
    return m->text;
}

void xmt_cacheidx_line_free(xmt_cacheidx *ix, char *text)
{
    xmt_cacheidx_line *m = (xmt_cacheidx_line *)(void *)(text - offsetof(xmt_cacheidx_line, text));
    if (m->prev)
        m->prev->next = m->next;
    else
        ix->memlines = m->next;
    if (m->next) m->next->prev = m->prev;
    free(m);
}

static size_t page_up(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

/* A mapping of at least n bytes in place of old (of *mapped bytes; NULL: none yet), its
 * contents kept, prefaulted when populate; NULL when out of memory (old is left as it
 * was). */
static void *remap(void *old, size_t *mapped, size_t n, int populate)
{
    n = page_up(n);
    void *p =
        old ? mremap(old, *mapped, n, MREMAP_MAYMOVE)
            : mmap(NULL, n, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (populate ? MAP_POPULATE : 0), -1,
                   0);
    if (p == MAP_FAILED) return NULL;
    *mapped = n;
    return p;
}

/* The record of hash hv, NULL when none (the cache's lock held). */
xmt_cacheidx_rec *xmt_cacheidx_find(const xmt_cacheidx *ix, uint64_t hv)
{
    for (size_t i = hv & (ix->nslots - 1); ix->nslots && ix->slots[i];
         i = (i + 1) & (ix->nslots - 1))
        if (ix->recs[ix->slots[i] - 1].hv == hv) return &ix->recs[ix->slots[i] - 1];
    return NULL;
}

/* Room for one more record: the mapping reserved or grown, the next step prefaulted
 * (one system call where page faults would take one each: on a virtual machine a fault
 * costs more than parsing the records on its page; a kernel without MADV_POPULATE_WRITE
 * takes the faults). -1 when out of memory. */
static int room_for_one(xmt_cacheidx *ix)
{
    if (ix->nrecs == UINT32_MAX - 1) return -1;
    if (ix->nrecs == ix->recs_cap) {
        /* a record's line is at least ~130 bytes: the file cannot hold more */
        size_t cap = ix->recs_cap ? 2 * ix->recs_cap : ix->file_size / 128 + 64;
        xmt_cacheidx_rec *r = remap(ix->recs, &ix->recs_mapped, cap * sizeof *r, 0);
        if (!r) return -1;
        ix->recs = r;
        ix->recs_cap = ix->recs_mapped / sizeof *r;
    }
    if ((ix->nrecs + 1) * sizeof(xmt_cacheidx_rec) > ix->recs_ready) {
        size_t n = ix->recs_mapped - ix->recs_ready < PREFAULT_STEP
                       ? ix->recs_mapped - ix->recs_ready
                       : PREFAULT_STEP;
        (void)madvise((char *)ix->recs + ix->recs_ready, n, MADV_POPULATE_WRITE);
        ix->recs_ready += n;
    }
    if (2 * (ix->nrecs + 1) > ix->nslots) {
        /* a line is 200-400 bytes: twice that many slots, made once for most files */
        size_t n = ix->nslots ? 2 * ix->nslots : 64, mapped = 0;
        while (n < 2 * (ix->file_size / 256 + 32))
            n *= 2;
        uint32_t *t = remap(NULL, &mapped, n * sizeof *t, 1); /* zeroed */
        if (!t) return -1;
        for (size_t r = 0; r < ix->nrecs; r++) {
            size_t j = ix->recs[r].hv & (n - 1);
            while (t[j])
                j = (j + 1) & (n - 1);
            t[j] = (uint32_t)(r + 1);
        }
        if (ix->slots) munmap(ix->slots, ix->slots_mapped);
        ix->slots = t;
        ix->nslots = n;
        ix->slots_mapped = mapped;
    }
    return 0;
}

/* A new record of hash hv (zeroed but for hv, not yet anywhere: the caller says where);
 * NULL when out of memory. */
static xmt_cacheidx_rec *add(xmt_cacheidx *ix, uint64_t hv)
{
    if (room_for_one(ix) != 0) return NULL;
    size_t i = hv & (ix->nslots - 1);
    while (ix->slots[i])
        i = (i + 1) & (ix->nslots - 1);
    xmt_cacheidx_rec *r = &ix->recs[ix->nrecs];
    memset(r, 0, sizeof *r);
    r->hv = hv;
    r->where = XMT_CACHEIDX_DEAD;
    ix->slots[i] = (uint32_t)++ix->nrecs;
    return r;
}

/* ---- invariants (shim/invariant.h: debug builds and the unit tests) ----
 * The index and the records agree: every slot in use points at a record, every record is
 * found from its hash's slot (so no two records share a hash), as many slots are in use
 * as there are records; a record in the file is of the file as now read and within what
 * was read of it; a record in memory has its line, and the lines listed are those of
 * such records; a record's `mine` (this process tuned it) is a flag. */
#if XMT_INVARIANTS
static void check_records(const xmt_cacheidx *ix, uint8_t epoch, int file_open, int in_seen,
                          uint64_t seen_pos)
{
    size_t mem = 0;
    for (size_t i = 0; i < ix->nrecs; i++) {
        const xmt_cacheidx_rec *r = &ix->recs[i];
        XMT_INVARIANT(xmt_cacheidx_find(ix, r->hv) == r,
                      "cache: record %zu is not found from its hash's slot", i);
        XMT_INVARIANT(r->len <= XMT_CACHEREC_MAX_LINE, "cache: record %zu is %u bytes long", i,
                      (unsigned)r->len);
        XMT_INVARIANT(r->mine <= 1, "cache: record %zu's mine flag is %u", i, (unsigned)r->mine);
        if (r->where == XMT_CACHEIDX_FILE) {
            XMT_INVARIANT(r->epoch == epoch && file_open,
                          "cache: record %zu points into a file no longer read (epoch %u of %u)", i,
                          (unsigned)r->epoch, (unsigned)epoch);
            XMT_INVARIANT(!in_seen || r->at.off + r->len <= seen_pos,
                          "cache: record %zu's line (at %llu, %u bytes) is past the %llu bytes "
                          "read of the file",
                          i, (unsigned long long)r->at.off, (unsigned)r->len,
                          (unsigned long long)seen_pos);
        } else if (r->where == XMT_CACHEIDX_MEM) {
            XMT_INVARIANT(r->at.line && r->at.line[r->len] == '\n' && !r->at.line[r->len + 1],
                          "cache: record %zu's line in memory is not %u bytes and a newline", i,
                          (unsigned)r->len);
            mem++;
        } else {
            XMT_INVARIANT(r->where == XMT_CACHEIDX_DEAD, "cache: record %zu is nowhere (%u)", i,
                          (unsigned)r->where);
        }
    }
    size_t lines = 0;
    for (const xmt_cacheidx_line *m = ix->memlines; m && lines <= mem; m = m->next, lines++)
        XMT_INVARIANT(!m->next || m->next->prev == m, "cache: the lines in memory are mislinked");
    XMT_INVARIANT(lines == mem, "cache: %zu lines listed in memory for %zu records kept there",
                  lines, mem);
}

void xmt_cacheidx_check(const xmt_cacheidx *ix, uint8_t epoch, int file_open, int in_seen,
                        uint64_t seen_pos)
{
    size_t n = ix->nrecs, used = 0;
    XMT_INVARIANT(n <= ix->recs_cap && ix->recs_cap * sizeof(xmt_cacheidx_rec) <= ix->recs_mapped &&
                      ix->recs_ready <= ix->recs_mapped,
                  "cache: %zu records in room for %zu", n, ix->recs_cap);
    XMT_INVARIANT(ix->nslots ? !(ix->nslots & (ix->nslots - 1)) && 2 * n <= ix->nslots : !n,
                  "cache: %zu slots for %zu records", ix->nslots, n);
    for (size_t i = 0; i < ix->nslots; i++) {
        XMT_INVARIANT(ix->slots[i] <= n, "cache: slot %zu points at record %u of %zu", i,
                      (unsigned)ix->slots[i] - 1, n);
        used += ix->slots[i] != 0;
    }
    XMT_INVARIANT(used == n, "cache: %zu slots in use for %zu records", used, n);
    check_records(ix, epoch, file_open, in_seen, seen_pos);
}
#endif

/* Points the record of hv (added when new) at its latest line: in the file at off (text
 * NULL; epoch: the file's), or in memory (a copy of text, len bytes without its '\n'). The record
 * (valid until the next add), or NULL when out of memory. */
xmt_cacheidx_rec *xmt_cacheidx_put(xmt_cacheidx *ix, uint64_t hv, uint32_t choice, const char *text,
                                   uint64_t off, size_t len, uint8_t epoch)
{
    char *line = NULL;
    if (text && !(line = xmt_cacheidx_line_new(ix, text, len))) return NULL;
    xmt_cacheidx_rec *r = xmt_cacheidx_find(ix, hv);
    if (!r && !(r = add(ix, hv))) {
        if (line) xmt_cacheidx_line_free(ix, line);
        return NULL;
    }
    if (r->choice != choice || r->where == XMT_CACHEIDX_DEAD) r->checked = 0;
    if (r->choice != choice) r->mine = 0; /* another process's choice now */
    if (r->where == XMT_CACHEIDX_MEM) xmt_cacheidx_line_free(ix, r->at.line);
    r->choice = choice;
    r->len = (uint16_t)len;
    if (line) {
        r->where = XMT_CACHEIDX_MEM;
        r->at.line = line;
    } else {
        r->where = XMT_CACHEIDX_FILE;
        r->epoch = epoch;
        r->at.off = off;
    }
    return r;
}

/* The bytes the records take: what was prefaulted of their array, and the table. */
size_t xmt_cacheidx_mem(const xmt_cacheidx *ix)
{
    return ix->recs_ready + ix->slots_mapped;
}

/* The records a compaction would write (the cache's lock held): those in the file, and those
 * in memory that this process tuned (not those its file lost: cache.c's next_line). */
size_t xmt_cacheidx_live(const xmt_cacheidx *ix)
{
    size_t n = 0;
    for (size_t i = 0; i < ix->nrecs; i++) {
        const xmt_cacheidx_rec *r = &ix->recs[i];
        n += r->where == XMT_CACHEIDX_FILE || (r->where == XMT_CACHEIDX_MEM && r->mine);
    }
    return n;
}

void xmt_cacheidx_reset(xmt_cacheidx *ix)
{
    while (ix->memlines)
        xmt_cacheidx_line_free(ix, ix->memlines->text);
    if (ix->recs) munmap(ix->recs, ix->recs_mapped);
    if (ix->slots) munmap(ix->slots, ix->slots_mapped);
    ix->recs = NULL;
    ix->slots = NULL;
    ix->nrecs = ix->recs_cap = ix->recs_mapped = ix->recs_ready = 0;
    ix->nslots = ix->slots_mapped = ix->file_size = 0;
}
