/* derive.c - launch idioms: how a kernel's grid follows its data (xmt_policy.h).
 *
 * From the launches discover recorded (shapes and scalar argument values) it tells which
 * of three idioms a kernel follows: one block per row or tile (the program's own grid),
 * one thread per element (the grid follows the block), a grid-stride loop (any grid
 * covers the data). The stub (tools/stub.c) writes its entries from it.
 */
#include "xmt_policy.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char DIMC[3] = {'x', 'y', 'z'};

/* What the recorded launches tie each grid dimension to (integer arguments only). */
void xmt_find_evidence(const xmt_shapes *sh, const xmt_pinfo *info, size_t np, xmt_evidence *ev)
{
    for (int d = 0; d < 3; d++)
        ev->cover[d] = ev->equal[d] = ev->cover2[d] = ev->equal2[d] = -1;
    ev->stride = -1;
    if (!sh->nobs) return;
    for (int d = 0; d < 3; d++)
        for (size_t p = 0; p < np; p++) {
            if (!info[p].is_int) continue;
            int cover = 1, equal = 1, big = 0;
            for (size_t i = 0; i < sh->nobs; i++) {
                const xmt_obs *o = &sh->o[i];
                long long v = o->v[p], g = o->grid[d], b = o->block[d];
                if (o->has[p] != XMT_OBS_VALUE || v <= 0 || b <= 0) {
                    cover = equal = 0;
                    break;
                }
                cover &= g == (v + b - 1) / b;
                equal &= g == v;
                big |= g >= 2;
            }
            /* a block of one thread covers what it equals: one thread per element then, in
             * the dimension tuned (x), one block per row in the others */
            if (!big) continue;
            if (cover && (d == 0 || sh->o[0].block[d] > 1)) {
                int *slot = ev->cover[d] < 0 ? &ev->cover[d] : &ev->cover2[d];
                if (*slot < 0) *slot = (int)p;
            } else if (equal) {
                int *slot = ev->equal[d] < 0 ? &ev->equal[d] : &ev->equal2[d];
                if (*slot < 0) *slot = (int)p;
            }
        }
    /* the same grid while an integer argument changed */
    for (size_t p = 0; p < np && ev->stride < 0; p++) {
        if (!info[p].is_int) continue;
        int differs = 0, same = 1;
        for (size_t i = 1; i < sh->nobs; i++) {
            const xmt_obs *a = &sh->o[0], *o = &sh->o[i];
            if (a->has[p] != XMT_OBS_VALUE || o->has[p] != XMT_OBS_VALUE) {
                same = 0;
                break;
            }
            differs |= o->v[p] != a->v[p];
            same &= !memcmp(o->grid, a->grid, sizeof a->grid);
        }
        if (differs && same) ev->stride = (int)p;
    }
}

/* Decided only from what discover saw: memory at every launch recorded is a pointer, a
 * value at every one is a 64-bit scalar (a key part, and evidence for the idioms), and a
 * parameter that was both (a pointer sometimes passed as 0, a scalar that once equalled an
 * address) stays bytes(8), which protect: auto asks the driver about at each tuning. */
xmt_untyped8 xmt_untyped8_kind(const xmt_shapes *sh, size_t p)
{
    int ptr = 0, val = 0;
    for (size_t i = 0; i < sh->nobs && p < XMT_DERIVE_MAX_PARAMS; i++) {
        ptr |= sh->o[i].has[p] == XMT_OBS_POINTER;
        val |= sh->o[i].has[p] == XMT_OBS_VALUE;
    }
    return ptr && val ? XMT_U8_MIXED : ptr ? XMT_U8_POINTER : val ? XMT_U8_VALUE : XMT_U8_UNSEEN;
}

/* The idiom the recorded argument values point to (o: the first launch recorded), with
 * the reason in why; -1 when they point to none. */
static int value_idiom(const xmt_obs *o, const xmt_evidence *ev, const int tuned[3], char *why,
                       size_t cap)
{
    for (int d = 0; d < 3; d++)
        if (tuned[d] && ev->cover[d] >= 0) {
            int p = ev->cover[d];
            char alt[96] = "";
            if (ev->cover2[d] >= 0)
                snprintf(alt, sizeof alt, " (or p%d, of the same value here: name the right one)",
                         ev->cover2[d]);
            snprintf(why, cap,
                     "in every launch seen, grid.%c x block.%c covered p%d%s (%lld x %lld for "
                     "p%d = %lld): one thread per element, the grid following the block",
                     DIMC[d], DIMC[d], p, alt, o->grid[d], o->block[d], p, o->v[p]);
            return XMT_IDIOM_CDIV;
        }
    for (int d = 0; d < 3; d++)
        if (ev->equal[d] >= 0) {
            char alt[96] = "";
            if (ev->equal2[d] >= 0)
                snprintf(alt, sizeof alt, " (or p%d, of the same value here)", ev->equal2[d]);
            snprintf(why, cap,
                     "in every launch seen, grid.%c equalled p%d%s (%lld): one block per row or "
                     "tile, so the program's own grid is kept",
                     DIMC[d], ev->equal[d], alt, o->grid[d]);
            return XMT_IDIOM_GRID0;
        }
    if (ev->stride >= 0) {
        snprintf(why, cap,
                 "the grid stayed (%lld,%lld,%lld) while p%d changed: it does not follow the "
                 "size, so the kernel loops over its data: a grid-stride loop",
                 o->grid[0], o->grid[1], o->grid[2], ev->stride);
        return XMT_IDIOM_STRIDE;
    }
    return -1;
}

/* The launch idiom the launches point to: by their values, else by how the program's own
 * grid moved with its block; the reason in why. */
xmt_idiom xmt_pick_idiom(const xmt_shapes *sh, const xmt_evidence *ev, const int tuned[3],
                         char *why, size_t cap)
{
    int by_value = sh->nobs ? value_idiom(&sh->o[0], ev, tuned, why, cap) : -1;
    if (by_value >= 0) return (xmt_idiom)by_value;
    for (size_t i = 0; i < sh->n; i++)
        for (size_t j = i + 1; j < sh->n; j++) {
            const xmt_shape *a = &sh->s[i], *b = &sh->s[j];
            if (a->block[0] == b->block[0] || a->block[1] != b->block[1] ||
                a->block[2] != b->block[2] || a->grid[1] != b->grid[1] || a->grid[2] != b->grid[2])
                continue;
            long long ta = a->grid[0] * a->block[0], tb = b->grid[0] * b->block[0];
            long long bmax = a->block[0] > b->block[0] ? a->block[0] : b->block[0];
            if (a->grid[0] == b->grid[0]) {
                snprintf(why, cap,
                         "the program's grid.x stayed %lld when its block.x went %lld -> %lld: "
                         "the grid does not follow the block (one block per row or tile, or a "
                         "grid-stride loop), so it is kept",
                         a->grid[0], a->block[0], b->block[0]);
                return XMT_IDIOM_GRID0;
            }
            if ((ta > tb ? ta - tb : tb - ta) < bmax) {
                snprintf(why, cap,
                         "the program's grid followed its block: grid.x x block.x stayed "
                         "about %lld threads (%lld x %lld, %lld x %lld): one thread per element",
                         ta, a->grid[0], a->block[0], b->grid[0], b->block[0]);
                return XMT_IDIOM_CDIV;
            }
        }
    snprintf(why, cap,
             "nothing discover saw ties the grid to an integer argument or to the block "
             "(%s), so the program's own grid is kept: right for one block per row of a "
             "tensor and for a grid-stride loop, wasteful for one thread per element; choose "
             "below",
             sh->nobs ? "one size, one block" : "no argument values recorded");
    return XMT_IDIOM_GRID0;
}

/* ---- spaces derived from one launch (auto, --write-policy) ---------------------------- */

static const char *const idiom_names[] = {"grid0", "cdiv", "stride", "tile"};

const char *xmt_idiom_name(int id)
{
    return id >= 0 && id < 4 ? idiom_names[id] : "?";
}

/* Appends to buf at *len (truncation marks *len past cap, which the caller checks). */
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*len < cap ? buf + *len : NULL, *len < cap ? cap - *len : 0, fmt, ap);
    va_end(ap);
    if (n > 0) *len += (size_t)n;
}

/* An integer scalar of 4 bytes that no signature typed (extern "C", Triton, the driver API):
 * a float there reads as an integer too, and a float that changes from call to call (a
 * scale, a step's learning rate) would make every call a new key, until
 * XMATUNE_AUTO_MAX_KEYS leaves the kernel untuned. Its key part is intlike(pN) instead,
 * which reads every float as one value (XMT_INTLIKE_FLOAT). Decided from the types alone,
 * never from a launch's values (xmt_derive_params says why). 1- and 2-byte ones cannot
 * hold an f32. */
static int untyped4(const xmt_pinfo *info, size_t p, int typed)
{
    return !typed && info[p].size == 4;
}

/* The params: line and the triggers: the integer scalars (at most
 * XMT_DERIVE_MAX_INT_TRIGGERS; an untyped 4-byte one as intlike_pN: "intlike(pN)",
 * a functional trigger, untyped4), the program's own launch shape, and the rules' version
 * (`rules`), a constant that puts it into the entry's fingerprint and so into every cache
 * record of its keys: a change of the rules invalidates them, as editing an entry does. */
static void derive_params(char *buf, size_t cap, size_t *len, const xmt_pinfo *info, size_t np,
                          int typed)
{
    put(buf, cap, len, "    params: [");
    for (size_t p = 0; p < np; p++) {
        const char *sep = p ? ", " : "";
        if (typed && !info[p].is_struct)
            put(buf, cap, len, "%sp%zu", sep, p);
        else if (info[p].is_struct || (!info[p].is_ptr && !info[p].is_int && !info[p].as_float))
            put(buf, cap, len, "%sp%zu: {bytes: %lld}", sep, p, info[p].size);
        else if (info[p].is_ptr)
            put(buf, cap, len, "%sp%zu: ptr", sep, p);
        else if (info[p].as_float)
            put(buf, cap, len, "%sp%zu: %s", sep, p, info[p].size == 8 ? "f64" : "f32");
        else
            put(buf, cap, len, "%sp%zu: %s", sep, p,
                info[p].size == 8   ? "i64"
                : info[p].size == 2 ? "i16"
                : info[p].size == 1 ? "i8"
                                    : "i32");
    }
    put(buf, cap, len, "]\n    triggers: [");
    int nt = 0, nf = 0;
    for (size_t p = 0; p < np && nt + nf < XMT_DERIVE_MAX_INT_TRIGGERS; p++)
        if (info[p].is_int && !untyped4(info, p, typed))
            put(buf, cap, len, "%sp%zu", nt++ ? ", " : "", p);
        else if (info[p].is_int)
            nf++;
    put(buf, cap, len, "]\n    functional_triggers: {");
    for (size_t p = 0; p < np && nf > 0; p++)
        if (info[p].is_int && untyped4(info, p, typed)) {
            put(buf, cap, len, "intlike_p%zu: \"intlike(p%zu)\", ", p, p);
            nf--;
        }
    put(buf, cap, len,
        "rules: %d, gx: grid0.x, gy: grid0.y, gz: grid0.z, bx: block0.x, by: block0.y, bz: "
        "block0.z, sh: shared0}\n",
        XMT_DERIVE_RULES);
}

/* One config: the idiom's tag and numbers, its block, grid and shared expressions;
 * scaled: dynamic shared memory scaled with the block's threads (over threads0, the
 * program's), never below its own. */
static void derive_config(char *buf, size_t cap, size_t *len, const char *cond, unsigned mask,
                          int id, int bx, int by, int bps, int scaled, const char *block,
                          const char *const grid[3], const char *threads0)
{
    if (mask && !(mask & (1u << id))) return;
    char shared[96] = "shared0", when[160] = "";
    if (cond && scaled)
        snprintf(when, sizeof when, ", condition: \"(%s) && shared0 > 0\"", cond);
    else if (cond)
        snprintf(when, sizeof when, ", condition: \"%s\"", cond);
    if (scaled)
        snprintf(shared, sizeof shared, "\"max(shared0, cdiv(shared0 * %d, %s))\"", bx * by,
                 threads0);
    put(buf, cap, len,
        "      - {IDIOM: %d, BX: %d, BY: %d, BPS: %d, SCALED: %d, launch: {block: [%s], "
        "grid: [%s, %s, %s], shared: %s}%s}\n",
        id, bx, by, bps, scaled, block, grid[0], grid[1], grid[2], shared, when);
}

/* The configs of a launch whose block is one-dimensional: the block's x varies, and the
 * grid is kept, covers the program's threads, or strides (sm_count x BPS). */
static void derive_1d(char *buf, size_t cap, size_t *len, const char *cond, unsigned mask,
                      int has_shared)
{
    static const int blocks[] = {64, 128, 256, 512, 1024};
    static const int bps[] = {1, 2, 4, 8};
    char block[64], cover[96], stride[64];
    for (int s = 0; s <= has_shared; s++)
        for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
            int b = blocks[i];
            snprintf(block, sizeof block, "%d, block0.y, block0.z", b);
            snprintf(cover, sizeof cover, "\"cdiv(grid0.x * block0.x, %d)\"", b);
            const char *keep[3] = {"grid0.x", "grid0.y", "grid0.z"};
            const char *cdiv[3] = {cover, "grid0.y", "grid0.z"};
            derive_config(buf, cap, len, cond, mask, XMT_IDIOM_GRID0, b, 1, 0, s, block, keep,
                          "block0.x");
            derive_config(buf, cap, len, cond, mask, XMT_IDIOM_CDIV, b, 1, 0, s, block, cdiv,
                          "block0.x");
        }
    for (size_t i = 1; i < sizeof blocks / sizeof blocks[0]; i++)
        for (size_t j = 0; j < sizeof bps / sizeof bps[0]; j++) {
            snprintf(block, sizeof block, "%d, block0.y, block0.z", blocks[i]);
            snprintf(stride, sizeof stride, "\"sm_count * %d\"", bps[j]);
            const char *g[3] = {stride, "grid0.y", "grid0.z"};
            derive_config(buf, cap, len, cond, mask, XMT_IDIOM_STRIDE, blocks[i], 1, bps[j], 0,
                          block, g, "block0.x");
        }
}

/* The configs of a launch whose block is two- or three-dimensional: tiles (x, y; z kept),
 * the grid kept or covering the program's threads in x and y. */
static void derive_tiles(char *buf, size_t cap, size_t *len, const char *cond, unsigned mask,
                         int has_shared)
{
    /* wide tiles, and their transposes: a kernel that walks y fastest (a transpose's
     * naive read, launched 1 x 32) wants a narrow x (8 x 32 was 1.9 times 16 x 16 on the
     * H200) */
    static const int tiles[][2] = {{16, 16}, {32, 4}, {32, 8},  {32, 16}, {32, 32},
                                   {64, 4},  {64, 8}, {128, 2}, {4, 32},  {8, 32},
                                   {16, 32}, {4, 64}, {8, 64},  {2, 128}};
    char block[64], cx[96], cy[96];
    for (int s = 0; s <= has_shared; s++)
        for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
            int bx = tiles[i][0], by = tiles[i][1];
            snprintf(block, sizeof block, "%d, %d, block0.z", bx, by);
            snprintf(cx, sizeof cx, "\"cdiv(grid0.x * block0.x, %d)\"", bx);
            snprintf(cy, sizeof cy, "\"cdiv(grid0.y * block0.y, %d)\"", by);
            const char *keep[3] = {"grid0.x", "grid0.y", "grid0.z"};
            const char *cover[3] = {cx, cy, "grid0.z"};
            derive_config(buf, cap, len, cond, mask, XMT_IDIOM_GRID0, bx, by, 0, s, block, keep,
                          "block0.x * block0.y");
            derive_config(buf, cap, len, cond, mask, XMT_IDIOM_TILE, bx, by, 0, s, block, cover,
                          "block0.x * block0.y");
        }
}

/* What the entry says of each parameter: from the demangled signature when it reads
 * (then the entry names them only), else from the sizes: 4, 2, 1 bytes an integer (a key
 * part), anything else bytes(N) -- an 8-byte value of an untyped kernel too, since it may
 * be a pointer (protect: auto asks the driver about it) or a 64-bit size; a 4-byte one is
 * keyed by intlike() (derive_params: it may be a float). Not decided by
 * asking the driver, as the stub's entries are (xmt_untyped8_kind): auto derives its entry
 * at a kernel's first launch, from that launch alone, so the entry (and the fingerprint
 * its cache records carry) would depend on one launch's data, and a pointer passed as 0
 * there would become a key part that makes every later address a new key. Returns 1 when
 * typed by the signature. */
int xmt_derive_params(const char *demangled, size_t np, const uint32_t *sizes, xmt_pinfo *info)
{
    xmt_sig s;
    xmt_sig_param p[XMT_DERIVE_MAX_PARAMS];
    int n = xmt_sig_read(demangled, &s, p, XMT_DERIVE_MAX_PARAMS);
    int typed = n >= 0 && (size_t)n == np;
    for (size_t i = 0; i < np && i < XMT_DERIVE_MAX_PARAMS; i++) {
        memset(&info[i], 0, sizeof info[i]);
        info[i].size = sizes[i];
        if (typed) {
            int scalar = (p[i].cls == XMT_SIG_INT || p[i].cls == XMT_SIG_FLOAT) && p[i].dtype >= 0;
            info[i].is_ptr = p[i].cls == XMT_SIG_POINTER;
            info[i].is_int = scalar && p[i].cls == XMT_SIG_INT;
            info[i].is_struct = !info[i].is_ptr && !scalar;
        } else {
            info[i].is_int = sizes[i] == 4 || sizes[i] == 2 || sizes[i] == 1;
            info[i].is_struct = !info[i].is_int;
        }
    }
    return typed;
}

int xmt_derive_entry(const char *mangled, const xmt_pinfo *info, size_t np, int typed,
                     const xmt_dims *orig, unsigned idioms, char *buf, size_t cap)
{
    size_t len = 0;
    put(buf, cap, &len, "  - mangled: \"%s\"\n", mangled);
    derive_params(buf, cap, &len, info, np, typed);
    put(buf, cap, &len, "    protect: auto\n    configs:\n");
    if (!orig) { /* every shape: each idiom under a condition on the launch's */
        derive_1d(buf, cap, &len, "block0.y == 1 && block0.z == 1", idioms, 1);
        derive_tiles(buf, cap, &len, "block0.y > 1 || block0.z > 1", idioms, 1);
    } else if (orig->block.y > 1 || orig->block.z > 1)
        derive_tiles(buf, cap, &len, NULL, idioms, orig->shared > 0);
    else
        derive_1d(buf, cap, &len, NULL, idioms, orig->shared > 0);
    return len < cap ? (int)len : -1;
}
