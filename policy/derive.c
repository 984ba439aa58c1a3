/* derive.c - launch idioms: how a kernel's grid follows its data (xmt_policy.h).
 *
 * From the launches discover recorded (shapes and scalar argument values) it tells which
 * of three idioms a kernel follows: one block per row or tile (the program's own grid),
 * one thread per element (the grid follows the block), a grid-stride loop (any grid
 * covers the data). The stub (tools/stub.c) writes its entries from it.
 */
#include "xmt_policy.h"

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
                if (!o->has[p] || v <= 0 || b <= 0) {
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
            if (!a->has[p] || !o->has[p]) {
                same = 0;
                break;
            }
            differs |= o->v[p] != a->v[p];
            same &= !memcmp(o->grid, a->grid, sizeof a->grid);
        }
        if (differs && same) ev->stride = (int)p;
    }
}

/* The launch idiom the launches point to, with the reason in why. */
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
