/*
 * stub: the policy skeleton that `xmatune discover --stub FILE` writes, one entry per
 * kernel seen. Each entry names the kernel exactly, declares its parameters as the
 * driver laid them out (where the name has no types, a float told from an integer by its
 * values, and a 64-bit size from a pointer by what the driver said of it at each launch:
 * xmt_untyped8_kind), lists its launch shapes as comments, offers the integer scalars as triggers
 * (written out for the one the grid follows; never a pointer: its address would make
 * every launch a new key), and
 * picks one of three launch idioms from what discover saw, saying why, with the other
 * two written out as comments:
 *
 *   - the program's own grid (grid0): one block per row or tile, where the grid counts
 *     rows and must not change with the block. Also what the stub keeps when nothing
 *     it saw tells the idioms apart;
 *   - one thread per element, the grid following the block (cdiv);
 *   - a grid-stride loop, where any grid covers the data (sm_count * BPS).
 *
 * Discover records launch shapes and, for a bounded number of distinct launches, the
 * scalar argument values (docs/log.md, `args`). The evidence, in this order: a tuned
 * dimension whose grid x block covered an integer argument in every launch (grid ==
 * cdiv(n, block)) is one thread per element; a grid dimension equal to an integer
 * argument in every launch counts rows or tiles (kept); a grid that stayed the same while
 * the sizes changed is a grid-stride loop. Failing those (or without values: an older
 * log), how the program's own grid moved when its own block changed: a grid x block that stays
 * within one block of the same thread count is the cdiv idiom, a grid that stays the same is kept.
 * When nothing fits, the program's own grid is kept, and the comment says so. The skeleton loads as
 * it is (`xmatune check`); its buffer lines are comments, since under `protect: auto` nothing needs
 * declaring except a float-atomic output's tolerance.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logevent.h"
#include "stub.h"
#include "xmt_policy.h"

static long long iget(json_t *a, size_t i)
{
    return json_integer_value(json_array_get(a, i));
}

/* The parameter kinds of a demangled signature ("f(int, float const*, Params)") into
 * info[], as the policy library reads them (xmt_sig_read): a pointer or reference; an
 * integer or a float that the policy language has a type for; else a struct, which the
 * entry must declare (bytes(N)), as the matcher would refuse it untyped. Returns how
 * many, or -1 when the name has no parameter list. */
static int signature_params(const char *sig, xmt_pinfo *info, size_t cap)
{
    xmt_sig s;
    xmt_sig_param p[XMT_DERIVE_MAX_PARAMS];
    int n = xmt_sig_read(sig, &s, p, XMT_DERIVE_MAX_PARAMS);
    for (int i = 0; i < n && (size_t)i < cap && i < XMT_DERIVE_MAX_PARAMS; i++) {
        int scalar = (p[i].cls == XMT_SIG_INT || p[i].cls == XMT_SIG_FLOAT) && p[i].dtype >= 0;
        info[i].is_ptr = p[i].cls == XMT_SIG_POINTER;
        info[i].is_int = scalar && p[i].cls == XMT_SIG_INT;
        info[i].is_struct = !info[i].is_ptr && !scalar;
    }
    return n;
}

/* A parameter type from its size alone (extern "C" and Triton names carry no types), and
 * for 8 bytes from what discover saw there (info->u8; an older log saw nothing: ptr). */
static void guess_type(long long size, const xmt_pinfo *info, char *buf, size_t cap)
{
    if (size == 8 && info->u8 == XMT_U8_VALUE)
        snprintf(buf, cap, "%s", info->as_float ? "f64" : "i64");
    else if (size == 8 && info->u8 == XMT_U8_MIXED)
        snprintf(buf, cap, "{bytes: 8}");
    else if (size == 8)
        snprintf(buf, cap, "ptr");
    else if (size == 4)
        snprintf(buf, cap, "i32");
    else if (size == 2)
        snprintf(buf, cap, "i16");
    else if (size == 1)
        snprintf(buf, cap, "i8");
    else
        snprintf(buf, cap, "{bytes: %lld}", size);
}

static void comment(FILE *f, const char *text);

/* The params: line; fills info[] (sizes from the driver, kinds from the signature, else
 * guessed from sizes). Returns the number of parameters. */
static size_t write_params(FILE *f, json_t *k, const char *sig, xmt_pinfo *info)
{
    json_t *params = json_object_get(k, XMT_F_PARAMS);
    size_t np = json_array_size(params);
    if (np > XMT_DERIVE_MAX_PARAMS) np = XMT_DERIVE_MAX_PARAMS;
    int ns = sig ? signature_params(sig, info, XMT_DERIVE_MAX_PARAMS) : -1;
    int typed = ns >= 0 && (size_t)ns == np;
    fprintf(f, "  - mangled: \"%s\"\n    params: [",
            json_string_value(json_object_get(k, XMT_F_KERNEL)));
    for (size_t p = 0; p < np; p++) {
        long long size = json_integer_value(json_object_get(json_array_get(params, p), XMT_F_SIZE));
        char type[64];
        guess_type(size, &info[p], type, sizeof type);
        if (!typed) {
            int u8 = size == 8 ? info[p].u8 : -1;
            info[p].is_ptr = u8 == XMT_U8_UNSEEN || u8 == XMT_U8_POINTER;
            info[p].is_int =
                ((size == 4 || u8 == XMT_U8_VALUE) && !info[p].as_float) || size == 2 || size == 1;
            info[p].is_struct = !info[p].is_ptr && !info[p].is_int && !info[p].as_float;
            if (info[p].as_float && size == 4) snprintf(type, sizeof type, "f32");
        }
        info[p].size = size;
        /* With a demangled signature the types come from it: names alone suffice, but a
         * struct must say its size (an untyped struct makes the entry not apply). */
        if (typed && !info[p].is_struct)
            fprintf(f, "%sp%zu", p ? ", " : "", p);
        else if (typed)
            fprintf(f, "%sp%zu: {bytes: %lld}", p ? ", " : "", p, size);
        else
            fprintf(f, "%sp%zu: %s", p ? ", " : "", p, type);
    }
    fprintf(f, "]%s\n",
            typed ? "   # types from the signature"
                  : "   # types guessed from sizes (8 bytes: ptr, or i64 (f64) where the driver "
                    "knew no memory at any launch seen; 4: i32, or f32 when every value seen "
                    "reads as a float): check them");
    for (size_t p = 0; p < np && !typed; p++)
        if (info[p].size == 8 && info[p].u8 == XMT_U8_MIXED) {
            char text[256];
            snprintf(text, sizeof text,
                     "p%zu: {bytes: 8}: the driver knew memory there at some launches seen and "
                     "not at others (a pointer sometimes passed as 0?); protect: auto asks it at "
                     "each tuning. Declare it ptr or i64 if you know which.",
                     p);
            comment(f, text);
        }
    return np;
}

/* The triggers line: the integer scalars that the grid follows, when discover saw one
 * (written out), else every integer scalar (a comment to choose from); never a pointer
 * (docs/policy.md §Triggers). */
static void write_triggers(FILE *f, const xmt_pinfo *info, size_t np, const xmt_evidence *ev)
{
    char list[1024], tied[256];
    size_t len = 0, lt = 0;
    list[0] = tied[0] = 0;
    for (size_t p = 0; p < np; p++) {
        if (!info[p].is_int) continue;
        if (len + 16 < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%sp%zu", len ? ", " : "", p);
        int used = ev->stride == (int)p;
        for (int d = 0; d < 3; d++)
            used |= ev->cover[d] == (int)p || ev->equal[d] == (int)p;
        if (used && lt + 16 < sizeof tied)
            lt += (size_t)snprintf(tied + lt, sizeof tied - lt, "%sp%zu", lt ? ", " : "", p);
    }
    if (lt && strcmp(tied, list))
        fprintf(f,
                "    triggers: [%s]   # the size the grid follows; others to choose from: [%s]\n",
                tied, list);
    else if (lt)
        fprintf(f, "    triggers: [%s]   # the size the grid follows\n", tied);
    else if (len)
        fprintf(f,
                "    # triggers: [%s]   # keep the scalars that decide the best config (a "
                "size, say)\n",
                list);
    else
        fprintf(f, "    # triggers: no integer scalar parameter; declare tensors: with shapes "
                   "and use x.shape\n");
    fprintf(f, "    # (a pointer is never a trigger: its address would make every launch a new "
               "key)\n");
}

/* Writes text as comment lines of at most 92 columns, each starting with "    # ". */
static void comment(FILE *f, const char *text)
{
    const char *p = text;
    while (*p) {
        size_t n = strlen(p);
        if (n > 86) {
            n = 86;
            while (n > 0 && p[n] != ' ')
                n--;
            if (!n) n = strcspn(p, " ");
        }
        fprintf(f, "    # %.*s\n", (int)n, p);
        p += n;
        while (*p == ' ')
            p++;
    }
}

/* The block sizes of one tuned dimension: powers of two from lo up to hi. */
static void pow2_list(long long lo, long long hi, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = 0;
    for (long long b = lo; b <= hi && len + 8 < cap; b *= 2)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", len ? ", " : "", b);
}

/* The space: BLOCK 64..1024; or per tuned dimension 1..64 (x), 1..32 (y), 1..8 (z) with a
 * condition on their product (cond empty when none). */
static void space_lines(const int tuned[3], const char *const *nm, int multi, char *space,
                        size_t scap, char *cond, size_t ccap)
{
    char list[128];
    cond[0] = 0;
    if (!multi) {
        pow2_list(64, 1024, list, sizeof list);
        snprintf(space, scap, "{BLOCK: [%s]", list);
        return;
    }
    size_t len = (size_t)snprintf(space, scap, "{");
    char prod[64] = "";
    size_t lp = 0;
    static const long long hi[3] = {64, 32, 8};
    for (int d = 0; d < 3; d++) {
        if (!tuned[d]) continue;
        pow2_list(1, hi[d], list, sizeof list);
        len += (size_t)snprintf(space + len, scap - len, "%s%s: [%s]", len > 1 ? ", " : "", nm[d],
                                list);
        lp += (size_t)snprintf(prod + lp, sizeof prod - lp, "%s%s", lp ? " * " : "", nm[d]);
    }
    snprintf(cond, ccap, "\"%s >= 32 && %s <= 1024\"", prod, prod);
}

/* The launch's shared: field (", shared: ...", or empty): dynamic shared memory scaled with
 * the block's threads and never below the program's own, unless the program passed the
 * same bytes for different blocks (a fixed tile: kept). Returns 1 for a fixed tile. */
static int shared_expr(const xmt_shapes *sh, const xmt_shape *top, const int tuned[3],
                       const char *const *nm, char *shared, size_t cap)
{
    static const char *const b0[3] = {"block0.x", "block0.y", "block0.z"};
    shared[0] = 0;
    long long sh_other = -1;
    for (size_t i = 0; i < sh->n; i++)
        if (sh->s[i].block[0] * sh->s[i].block[1] * sh->s[i].block[2] !=
            top->block[0] * top->block[1] * top->block[2])
            sh_other = sh->s[i].shared;
    int fixed_tile = top->shared > 0 && sh_other == top->shared;
    if (top->shared > 0 && !fixed_tile) {
        char thr[64] = "", thr0[64] = "";
        size_t lt = 0, l0 = 0;
        for (int d = 0; d < 3; d++)
            if (tuned[d]) {
                lt += (size_t)snprintf(thr + lt, sizeof thr - lt, "%s%s", lt ? " * " : "", nm[d]);
                l0 += (size_t)snprintf(thr0 + l0, sizeof thr0 - l0, "%s%s", l0 ? " * " : "", b0[d]);
            }
        snprintf(shared, cap, ", shared: \"max(shared0, cdiv(shared0 * %s, %s))\"", thr, thr0);
    }
    return fixed_tile;
}

/* The launch lines: the chosen idiom as YAML, the other two as comments. Tuned: x, and
 * every dimension in which the program's block has more than one thread (then BX, BY, BZ
 * and a condition on their product, else BLOCK). */
static void write_launch(FILE *f, const xmt_shapes *sh, const xmt_evidence *ev)
{
    const xmt_shape *top = &sh->s[0];
    for (size_t i = 1; i < sh->n; i++)
        if (sh->s[i].count > top->count) top = &sh->s[i];
    int tuned[3] = {1, top->block[1] > 1, top->block[2] > 1};
    int multi = tuned[1] || tuned[2];
    char why[512];
    xmt_idiom pick = xmt_pick_idiom(sh, ev, tuned, why, sizeof why);
    const char *nm1[3] = {"BLOCK", "", ""}, *nmn[3] = {"BX", "BY", "BZ"};
    const char *const *nm = multi ? nmn : nm1;
    static const char *const g0[3] = {"grid0.x", "grid0.y", "grid0.z"};
    static const char *const b0[3] = {"block0.x", "block0.y", "block0.z"};
    int shape_cdiv = sh->nobs == 0 && pick == XMT_IDIOM_CDIV; /* old log: by thread count */

    char space[256], cond[128];
    space_lines(tuned, nm, multi, space, sizeof space, cond, sizeof cond);
    /* the grid of each idiom, per dimension */
    char gc[3][96], gs[3][96];
    for (int d = 0; d < 3; d++) {
        snprintf(gc[d], sizeof gc[d], "%s", g0[d]);
        snprintf(gs[d], sizeof gs[d], "%s", g0[d]);
        if (!tuned[d]) continue;
        if (ev->cover[d] >= 0)
            snprintf(gc[d], sizeof gc[d], "\"cdiv(p%d, %s)\"", ev->cover[d], nm[d]);
        else
            snprintf(gc[d], sizeof gc[d], "\"cdiv(%s * %s, %s)\"", g0[d], b0[d], nm[d]);
    }
    snprintf(gs[0], sizeof gs[0], "\"sm_count * BPS\"");
    char block[64];
    snprintf(block, sizeof block, "[%s, %s, %s]", tuned[0] ? nm[0] : b0[0],
             tuned[1] ? nm[1] : b0[1], tuned[2] ? nm[2] : b0[2]);
    if (!multi) snprintf(block, sizeof block, "[BLOCK]");
    char shared[160];
    int fixed_tile = shared_expr(sh, top, tuned, nm, shared, sizeof shared);
    char text[1024];
    snprintf(text, sizeof text,
             "Launch idiom: %s. A block size the kernel relies on (a shared array, an unrolled "
             "loop) must stay out of the space.",
             why);
    comment(f, text);
    if (top->shared > 0) {
        snprintf(text, sizeof text,
                 fixed_tile
                     ? "Dynamic shared memory: %lld bytes whatever the block, so it is kept "
                       "(shared0)."
                     : "Dynamic shared memory: the program passes %lld bytes for its %lld "
                       "threads; scaled here with the block's threads and never below that, "
                       "which fits a kernel staging so much per thread (write the exact size "
                       "if you know it; a fixed tile: shared: shared0).",
                 top->shared, top->block[0] * top->block[1] * top->block[2]);
        comment(f, text);
    }
    static const char *const title[3] = {
        "one block per row or tile (the grid counts rows: the program's own grid)",
        "one thread per element (the kernel checks its index; the grid follows the block)",
        "a grid-stride loop (the kernel loops over its data, so any grid covers it)"};
    int order[3] = {pick, pick == XMT_IDIOM_GRID0 ? XMT_IDIOM_CDIV : XMT_IDIOM_GRID0,
                    pick == XMT_IDIOM_STRIDE ? XMT_IDIOM_CDIV : XMT_IDIOM_STRIDE};
    for (int k = 0; k < 3; k++) {
        int id = order[k];
        const char *c = k ? "#   " : "";
        if (k) fprintf(f, "    # or, %s:\n", title[id]);
        if (id == XMT_IDIOM_STRIDE)
            fprintf(f, "    %sspace: %s, BPS: [1, 2, 4, 8]}\n", c, space);
        else
            fprintf(f, "    %sspace: %s}\n", c, space);
        if (*cond) fprintf(f, "    %scondition: %s\n", c, cond);
        const char(*g)[96] = id == XMT_IDIOM_STRIDE ? gs : id == XMT_IDIOM_CDIV ? gc : NULL;
        fprintf(f, "    %slaunch: {block: %s, grid: [%s, %s, %s]%s}\n", c, block, g ? g[0] : g0[0],
                g ? g[1] : g0[1], g ? g[2] : g0[2], shared);
        if (id == XMT_IDIOM_CDIV && k == 0 && shape_cdiv)
            fprintf(f, "    #   (the same threads as the program's grid; or \"cdiv(N, BLOCK)\" "
                       "with N the element count)\n");
    }
}

/* The buffer lines, commented, naming the pointer parameters. */
static void write_buffers(FILE *f, const xmt_pinfo *info, size_t np)
{
    char list[1024];
    size_t len = 0;
    list[0] = 0;
    for (size_t p = 0; p < np; p++)
        if (info[p].is_ptr && len + 16 < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%sp%zu", len ? ", " : "", p);
    if (!len) return;
    /* the one-line tolerance: first (protect: auto: no buffer's type or size to declare);
     * the per-buffer form after it */
    fprintf(f,
            "    # Buffers: nothing needs declaring (protect: auto finds what the kernel writes\n"
            "    # and puts it back; pointers here: %s). Float outputs that differ by rounding\n"
            "    # alone, as float atomics or a sum in another block size do, are rejected\n"
            "    # unless a tolerance allows them: one line does it for every float output\n"
            "    # (docs/policy.md, tolerance:):\n"
            "    # tolerance: {rtol: 1.0e-4, atol: 1.0e-3}\n"
            "    # For one buffer only, its type and size, and a tolerance of its own\n"
            "    # (docs/policy.md#buffers-reset_to_zero-restore-verify):\n"
            "    # tensors: {pN: {dtype: f32, shape: [pM]}}   # the buffer's element type and "
            "shape\n"
            "    # verify: {pN: {rtol: 1.0e-4, atol: 1.0e-3}}   # compared within a tolerance\n",
            list);
}

/* Reads 4 bytes of a recorded value as a float: one a program would pass (not an integer
 * that happens to have a float's bits: those read as tiny or huge). The same test as the
 * expression function intlike() (xmt_f32_like), by which auto keys such a parameter when
 * it has no launch's values to go by: the stub and auto agree on what looks like a float. */
static int reads_as_float(long long v)
{
    return xmt_f32_like((uint32_t)v);
}

/* The shapes a kernel was launched with, on every device, as comments, into sh; and the
 * launches recorded with their argument values. */
static void write_shapes(FILE *f, const char *mangled, json_t *summaries, xmt_shapes *sh)
{
    size_t j;
    json_t *s;
    sh->n = sh->nobs = 0;
    json_array_foreach(summaries, j, s)
    {
        const char *m2 = json_string_value(json_object_get(s, XMT_F_KERNEL));
        if (!m2 || strcmp(m2, mangled)) continue;
        fprintf(f, "  # device %lld: %lld launches%s\n",
                json_integer_value(json_object_get(s, XMT_F_DEVICE)),
                json_integer_value(json_object_get(s, XMT_F_LAUNCHES)),
                json_is_false(json_object_get(s, XMT_F_REWRITABLE))
                    ? " (some through a path the tuner leaves alone: cooperative or "
                      "cluster launches)"
                    : "");
        size_t n;
        json_t *v;
        json_array_foreach(json_object_get(s, XMT_F_SHAPES), n, v)
        {
            json_t *g = json_object_get(v, XMT_F_GRID), *b = json_object_get(v, XMT_F_BLOCK);
            xmt_shape x = {{iget(g, 0), iget(g, 1), iget(g, 2)},
                           {iget(b, 0), iget(b, 1), iget(b, 2)},
                           json_integer_value(json_object_get(v, XMT_F_SHARED)),
                           json_integer_value(json_object_get(v, XMT_F_COUNT))};
            if (sh->n < sizeof sh->s / sizeof sh->s[0]) sh->s[sh->n++] = x;
            if (n < 8)
                fprintf(f, "  #   grid (%lld,%lld,%lld) block (%lld,%lld,%lld) shared %lld: %lld\n",
                        x.grid[0], x.grid[1], x.grid[2], x.block[0], x.block[1], x.block[2],
                        x.shared, x.count);
            else if (n == 8)
                fprintf(f, "  #   ...\n");
        }
        json_array_foreach(json_object_get(s, XMT_F_ARGS), n, v)
        {
            if (sh->nobs >= sizeof sh->o / sizeof sh->o[0]) break;
            xmt_obs *o = &sh->o[sh->nobs++];
            json_t *g = json_object_get(v, XMT_F_GRID), *b = json_object_get(v, XMT_F_BLOCK);
            json_t *vals = json_object_get(v, XMT_F_VALUES);
            memset(o, 0, sizeof *o);
            for (int d = 0; d < 3; d++) {
                o->grid[d] = iget(g, (size_t)d);
                o->block[d] = iget(b, (size_t)d);
            }
            o->shared = json_integer_value(json_object_get(v, XMT_F_SHARED));
            for (size_t p = 0; p < json_array_size(vals) && p < XMT_DERIVE_MAX_PARAMS; p++) {
                json_t *x = json_array_get(vals, p);
                const char *str = json_string_value(x);
                o->has[p] = json_is_integer(x)                   ? XMT_OBS_VALUE
                            : str && !strcmp(str, XMT_V_POINTER) ? XMT_OBS_POINTER
                                                                 : XMT_OBS_NONE;
                o->v[p] = json_integer_value(x);
            }
        }
    }
    if (!sh->n) sh->s[sh->n++] = (xmt_shape){{1, 1, 1}, {256, 1, 1}, 0, 0};
}

/* Reads 8 bytes of a recorded value as a double, likewise: no 64-bit size is that large
 * (beyond 2^53), and a double a program passes is of a plausible magnitude. */
static int reads_as_double(long long v)
{
    double x;
    memcpy(&x, &v, 8);
    double a = x < 0 ? -x : x;
    return (v > (1LL << 53) || v < -(1LL << 53)) && a >= 1e-12 && a <= 1e15;
}

/* What the recorded values of an untyped kernel say of each parameter: a 4-byte one a
 * float, or not; an 8-byte one a pointer, a value (a double, or not) or both
 * (xmt_untyped8_kind). */
static void guess_untyped(const xmt_shapes *sh, json_t *k, xmt_pinfo *info)
{
    json_t *params = json_object_get(k, XMT_F_PARAMS);
    for (size_t p = 0; p < json_array_size(params) && p < XMT_DERIVE_MAX_PARAMS; p++) {
        long long size = json_integer_value(json_object_get(json_array_get(params, p), XMT_F_SIZE));
        if (size != 4 && size != 8) continue;
        if (size == 8) info[p].u8 = (int)xmt_untyped8_kind(sh, p);
        if (size == 8 && info[p].u8 != XMT_U8_VALUE) continue;
        int all = sh->nobs > 0;
        for (size_t i = 0; i < sh->nobs && all; i++)
            all = sh->o[i].has[p] == XMT_OBS_VALUE &&
                  (size == 4 ? reads_as_float(sh->o[i].v[p]) : reads_as_double(sh->o[i].v[p]));
        info[p].as_float = all;
    }
}

/* Whether one of the first i kernels of the log's list is the same kernel: a policy
 * names a kernel once, whatever the devices it ran on. */
static int listed_before(json_t *kernels, size_t i, const char *mangled)
{
    for (size_t j = 0; j < i; j++) {
        const char *m =
            json_string_value(json_object_get(json_array_get(kernels, j), XMT_F_KERNEL));
        if (m && !strcmp(m, mangled)) return 1;
    }
    return 0;
}

void write_policy_stub(FILE *f, json_t *kernels, json_t *summaries)
{
    fprintf(f, "# A policy skeleton written by `xmatune discover`: one entry per kernel seen.\n"
               "# Delete the kernels not worth tuning, name the parameters, choose triggers (what\n"
               "# decides the best config) and a launch idiom (each entry offers three), and\n"
               "# allow float outputs a tolerance (tolerance:) where rounding may differ:\n"
               "# docs/policy.md.\n"
               "# Check it with: xmatune check THIS_FILE\n"
               "kernels:\n");
    static xmt_shapes sh;
    static xmt_pinfo info[XMT_DERIVE_MAX_PARAMS];
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k)
    {
        const char *mangled = json_string_value(json_object_get(k, XMT_F_KERNEL));
        const char *name = json_string_value(json_object_get(k, XMT_F_NAME));
        if (!mangled || !name || listed_before(kernels, i, mangled)) continue;
        char dm[2048];
        int demangled = xmt_demangle(mangled, NULL, 0, dm, sizeof dm) == 1;
        fprintf(f, "\n  # %s\n", name);
        write_shapes(f, mangled, summaries, &sh);
        memset(info, 0, sizeof info);
        guess_untyped(&sh, k, info);
        size_t np = write_params(f, k, demangled ? dm : NULL, info);
        xmt_evidence ev;
        xmt_find_evidence(&sh, info, np, &ev);
        write_triggers(f, info, np, &ev);
        write_launch(f, &sh, &ev);
        write_buffers(f, info, np);
    }
}

/* The derived dims of a tune event's own config ("own": grid, block, shared). */
static xmt_dims own_dims(json_t *t)
{
    json_t *own = json_object_get(t, XMT_F_OWN);
    json_t *g = json_object_get(own, XMT_F_GRID), *b = json_object_get(own, XMT_F_BLOCK);
    return (xmt_dims){{(uint32_t)iget(g, 0), (uint32_t)iget(g, 1), (uint32_t)iget(g, 2)},
                      {(uint32_t)iget(b, 0), (uint32_t)iget(b, 1), (uint32_t)iget(b, 2)},
                      (uint32_t)json_integer_value(json_object_get(own, XMT_F_SHARED))};
}

/* What auto did for one kernel, over its tune events. */
typedef struct {
    unsigned mask;      /* the idioms that won */
    xmt_dims orig;      /* the own config of the first key an idiom won */
    int tol;            /* a tolerance was allowed (rtol, atol) */
    double rtol, atol;  /* (the last key's) */
    long long rejected; /* configs rejected for float rounding alone (rounding.h) */
    double max_rel;     /* the largest difference among them (of its output's scale) */
} auto_seen;

/* A tune event's `rounding` (float outputs that differed by rounding alone) into *a. */
static void auto_rounding(json_t *t, auto_seen *a)
{
    json_t *r = json_object_get(t, XMT_F_ROUNDING);
    json_t *tol = json_object_get(r, XMT_F_TOLERANCE);
    if (tol) {
        a->tol = 1;
        a->rtol = json_number_value(json_object_get(tol, XMT_F_RTOL));
        a->atol = json_number_value(json_object_get(tol, XMT_F_ATOL));
    }
    json_int_t rej = json_integer_value(json_object_get(r, XMT_F_REJECTED));
    double rel = json_number_value(json_object_get(r, XMT_F_MAX_REL));
    if (rej > 0) {
        a->rejected += rej;
        if (rel > a->max_rel) a->max_rel = rel;
    }
}

/* The comment lines of one kernel's tune events (what auto did for each key), and what
 * they tell into *a. */
static void auto_comments(FILE *f, const char *mangled, json_t *tunes, auto_seen *a)
{
    size_t j;
    json_t *t;
    unsigned *mask = &a->mask;
    xmt_dims *orig = &a->orig;
    memset(a, 0, sizeof *a);
    json_array_foreach(tunes, j, t)
    {
        const char *m = json_string_value(json_object_get(t, XMT_F_KERNEL));
        if (!m || strcmp(m, mangled)) continue;
        auto_rounding(t, a);
        json_t *w = json_object_get(t, XMT_F_WINNER);
        const char *idiom =
            json_string_value(json_object_get(json_object_get(w, XMT_F_AUTO), XMT_F_IDIOM));
        json_t *g = json_object_get(w, XMT_F_GRID), *b = json_object_get(w, XMT_F_BLOCK);
        char text[1024];
        int id = -1;
        for (int i = 0; i < 4 && idiom; i++)
            if (!strcmp(idiom, xmt_idiom_name(i))) id = i;
        if (id >= 0) {
            if (!*mask) *orig = own_dims(t);
            *mask |= 1u << id;
            snprintf(
                text, sizeof text,
                "auto, key %s: idiom %s won (%s: grid (%lld,%lld,%lld) block "
                "(%lld,%lld,%lld)) over the program's own %s",
                json_string_value(json_object_get(t, XMT_F_KEY)), idiom,
                json_string_value(json_object_get(w, XMT_F_CONFIG)), iget(g, 0), iget(g, 1),
                iget(g, 2), iget(b, 0), iget(b, 1), iget(b, 2),
                json_string_value(json_object_get(json_object_get(t, XMT_F_OWN), XMT_F_CONFIG)));
        } else
            snprintf(text, sizeof text, "auto, key %s: the program's own config %s stayed",
                     json_string_value(json_object_get(t, XMT_F_KEY)),
                     json_string_value(json_object_get(w, XMT_F_CONFIG)));
        comment(f, text);
    }
}

size_t write_auto_policy(FILE *f, json_t *kernels, json_t *tunes)
{
    fprintf(f, "# A policy written by `xmatune autotune --write-policy`: for each kernel auto\n"
               "# tuned, the entry that reproduces what it did (the idiom that won, its space,\n"
               "# its key: the integer scalars and the program's own launch shape). Narrow the\n"
               "# space, choose coarser triggers, or give an output a tolerance: docs/policy.md.\n"
               "# Check it with: xmatune check THIS_FILE\n"
               "kernels:\n");
    size_t i, n = 0;
    json_t *k;
    static xmt_pinfo info[XMT_DERIVE_MAX_PARAMS];
    static char text[32768];
    json_array_foreach(kernels, i, k)
    {
        const char *mangled = json_string_value(json_object_get(k, XMT_F_KERNEL));
        const char *name = json_string_value(json_object_get(k, XMT_F_NAME));
        if (!mangled || !name || listed_before(kernels, i, mangled)) continue;
        fprintf(f, "\n  # %s\n", name);
        auto_seen a;
        auto_comments(f, mangled, tunes, &a);
        if (a.rejected && !a.tol)
            fprintf(f,
                    "  # %lld config%s from the program's own by float rounding alone (at "
                    "most\n  # %.2g times the largest magnitude of an output) and %s rejected: "
                    "verification\n  # is bitwise unless a tolerance is allowed: "
                    "XMATUNE_AUTO_TOLERANCE=RTOL,ATOL for\n  # autotune, or "
                    "tolerance: {rtol: R, atol: A} in an entry written by hand\n",
                    a.rejected, a.rejected == 1 ? " differed" : "s differed", a.max_rel,
                    a.rejected == 1 ? "was" : "were");
        if (!a.mask) {
            fprintf(f, "  # not written: no idiom won for it (or auto did not tune it)\n");
            continue;
        }
        json_t *params = json_object_get(k, XMT_F_PARAMS);
        size_t np = json_array_size(params);
        uint32_t sizes[XMT_DERIVE_MAX_PARAMS];
        for (size_t p = 0; p < np && p < XMT_DERIVE_MAX_PARAMS; p++)
            sizes[p] = (uint32_t)json_integer_value(
                json_object_get(json_array_get(params, p), XMT_F_SIZE));
        char dm[2048];
        int demangled = xmt_demangle(mangled, NULL, 0, dm, sizeof dm) == 1;
        int typed = xmt_derive_params(demangled ? dm : mangled, np, sizes, info);
        if (np > XMT_DERIVE_MAX_PARAMS ||
            xmt_derive_entry(mangled, info, np, typed, &a.orig, a.mask, text, sizeof text) < 0) {
            fprintf(f, "  # not written: too many parameters\n");
            continue;
        }
        fputs(text, f);
        /* the tolerance auto was allowed: without it the winners would not verify */
        if (a.tol) fprintf(f, "    tolerance: {rtol: %.9g, atol: %.9g}\n", a.rtol, a.atol);
        n++;
    }
    return n;
}
