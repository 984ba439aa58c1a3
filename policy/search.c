/* search.c - local search with restarts over a config space (see search.h).
 *
 * Every point's state (new, handed out, reported) and time live in two arrays of the
 * space's size, allocated once: a space is at most XMT_MAX_SPACE points in a policy, so
 * that is at most a few hundred KiB for one key's tuning, freed with it. Decisions are
 * taken only when nothing is outstanding, which is what makes the batches independent of
 * the order the times of one batch come back in.
 */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIMS 16
#define MAX_POINTS ((size_t)1 << 26)
/* How many kicks may land on evaluated points before a restart falls back to a random
 * point: enough that a kick in a mostly unexplored space always succeeds. */
#define KICK_TRIES 32

enum { P_NEW = 0, P_OUT = 1, P_DONE = 2 };
enum { NEED_CENTRE, EXPLORE, LINE };

struct xmt_search {
    unsigned ndims, dims[MAX_DIMS];
    size_t n, max_evals, start;
    uint64_t rng;
    xmt_strategy strategy;
    uint8_t *state;
    double *t;
    size_t nout, ndone;
    size_t best;
    double best_t;
    size_t centre;
    int phase, started;
    /* LINE: the points along the directions that improved last (a pattern move) */
    unsigned nline;
    size_t line[2];
    int ldir[2][MAX_DIMS];
    unsigned restarts;
    size_t prop; /* XMT_STRATEGY_ANNEAL: the point proposed, SIZE_MAX none */
};

static uint64_t next_rand(xmt_search *s)
{
    /* splitmix64: small, fast, and the same sequence on every platform */
    uint64_t z = (s->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

size_t xmt_search_index(const unsigned *dims, unsigned ndims, const unsigned *coord)
{
    size_t i = 0;
    for (unsigned d = 0; d < ndims; d++)
        i = i * dims[d] + (coord[d] < dims[d] ? coord[d] : dims[d] - 1);
    return i;
}

void xmt_search_coord(const unsigned *dims, unsigned ndims, size_t index, unsigned *coord)
{
    for (unsigned d = ndims; d-- > 0;) {
        coord[d] = (unsigned)(index % dims[d]);
        index /= dims[d];
    }
}

size_t xmt_search_default_evals(size_t n)
{
    size_t e = (size_t)floor((double)n * XMT_SEARCH_DEFAULT_SHARE);
    if (e < XMT_SEARCH_MIN_EVALS) e = XMT_SEARCH_MIN_EVALS;
    return e < n ? e : n;
}

xmt_search *xmt_search_new_with(const unsigned *dims, unsigned ndims, uint64_t seed, size_t start,
                                size_t max_evals, xmt_strategy strategy)
{
    if (!dims || ndims == 0 || ndims > MAX_DIMS) return NULL;
    size_t n = 1;
    for (unsigned d = 0; d < ndims; d++) {
        if (dims[d] == 0 || n > MAX_POINTS / dims[d]) return NULL;
        n *= dims[d];
    }
    xmt_search *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->state = calloc(n, 1);
    s->t = malloc(n * sizeof *s->t);
    if (!s->state || !s->t) {
        xmt_search_free(s);
        return NULL;
    }
    s->ndims = ndims;
    memcpy(s->dims, dims, ndims * sizeof *dims);
    s->n = n;
    s->max_evals = max_evals == 0 || max_evals > n ? n : max_evals;
    s->start = start < n ? start : n - 1;
    s->rng = seed ^ 0x6a09e667f3bcc909ull;
    s->strategy = strategy;
    s->best = SIZE_MAX;
    s->best_t = INFINITY;
    s->phase = NEED_CENTRE;
    s->prop = SIZE_MAX;
    return s;
}

xmt_search *xmt_search_new(const unsigned *dims, unsigned ndims, uint64_t seed, size_t start,
                           size_t max_evals)
{
    return xmt_search_new_with(dims, ndims, seed, start, max_evals, XMT_STRATEGY_LOCAL);
}

void xmt_search_free(xmt_search *s)
{
    if (!s) return;
    free(s->state);
    free(s->t);
    free(s);
}

static size_t budget_left(const xmt_search *s)
{
    size_t used = s->ndone + s->nout;
    return used < s->max_evals ? s->max_evals - used : 0;
}

/* A random point not handed out yet (probing forward from a random index), SIZE_MAX when
 * there is none. */
static size_t random_new(xmt_search *s)
{
    size_t p = (size_t)(next_rand(s) % s->n);
    for (size_t k = 0; k < s->n; k++, p = p + 1 == s->n ? 0 : p + 1)
        if (s->state[p] == P_NEW) return p;
    return SIZE_MAX;
}

/* The best point with one to three names moved by one or two steps each (clamped to
 * their lists); SIZE_MAX when KICK_TRIES such points were all handed out before. */
static size_t kick(xmt_search *s)
{
    unsigned c[MAX_DIMS], base[MAX_DIMS];
    xmt_search_coord(s->dims, s->ndims, s->best != SIZE_MAX ? s->best : s->start, base);
    for (int tr = 0; tr < KICK_TRIES; tr++) {
        memcpy(c, base, sizeof c);
        unsigned moves = 1 + (unsigned)(next_rand(s) % 3);
        for (unsigned m = 0; m < moves; m++) {
            unsigned d = (unsigned)(next_rand(s) % s->ndims);
            uint64_t r = next_rand(s);
            int step = (int)(r % 2) + 1;
            int v = (int)c[d] + ((r >> 1) & 1 ? step : -step);
            c[d] = v < 0 ? 0 : (unsigned)v >= s->dims[d] ? s->dims[d] - 1 : (unsigned)v;
        }
        size_t p = xmt_search_index(s->dims, s->ndims, c);
        if (s->state[p] == P_NEW) return p;
    }
    return SIZE_MAX;
}

static size_t pick_restart(xmt_search *s)
{
    s->restarts++;
    int use_kick = s->strategy == XMT_STRATEGY_LOCAL_KICK ||
                   (s->strategy == XMT_STRATEGY_LOCAL && (s->restarts & 1));
    size_t p = use_kick ? kick(s) : SIZE_MAX;
    return p != SIZE_MAX ? p : random_new(s);
}

/* Neighbour k of the centre: name k/2 one step down (k even) or up; SIZE_MAX off the
 * edge of its list. */
static size_t neighbour(const xmt_search *s, unsigned k)
{
    unsigned c[MAX_DIMS];
    xmt_search_coord(s->dims, s->ndims, s->centre, c);
    unsigned d = k / 2;
    if (k & 1) {
        if (c[d] + 1 >= s->dims[d]) return SIZE_MAX;
        c[d]++;
    } else {
        if (c[d] == 0) return SIZE_MAX;
        c[d]--;
    }
    return xmt_search_index(s->dims, s->ndims, c);
}

static void hand_out(xmt_search *s, size_t p, size_t *out, size_t *k)
{
    s->state[p] = P_OUT;
    s->nout++;
    out[(*k)++] = p;
}

/* p moved by dir, SIZE_MAX off the edge of a list. */
static size_t moved(const xmt_search *s, size_t p, const int *dir)
{
    unsigned c[MAX_DIMS];
    xmt_search_coord(s->dims, s->ndims, p, c);
    for (unsigned d = 0; d < s->ndims; d++) {
        long v = (long)c[d] + dir[d];
        if (v < 0 || v >= (long)s->dims[d]) return SIZE_MAX;
        c[d] = (unsigned)v;
    }
    return xmt_search_index(s->dims, s->ndims, c);
}

static void add_line(xmt_search *s, size_t from, const int *dir)
{
    size_t p = moved(s, from, dir);
    if (p == SIZE_MAX) return;
    s->line[s->nline] = p;
    memcpy(s->ldir[s->nline], dir, sizeof s->ldir[0]);
    s->nline++;
}

/* Everything around the centre is reported: move to its best neighbour when that is
 * faster (ties: the lower index, so the order of reports never matters) and try next the
 * points further along that move and along all improving moves at once; else restart. */
static void decide(xmt_search *s)
{
    size_t to = SIZE_MAX;
    double tt = s->t[s->centre];
    int step[MAX_DIMS] = {0}, combo[MAX_DIMS] = {0};
    double dbest[MAX_DIMS];
    unsigned ncombo = 0;
    for (unsigned d = 0; d < s->ndims; d++)
        dbest[d] = s->t[s->centre];
    for (unsigned k = 0; k < 2 * s->ndims; k++) {
        size_t q = neighbour(s, k);
        if (q == SIZE_MAX || s->state[q] != P_DONE) continue;
        if (s->t[q] < dbest[k / 2]) {
            ncombo += combo[k / 2] == 0;
            combo[k / 2] = k & 1 ? 1 : -1;
            dbest[k / 2] = s->t[q];
        }
        if (s->t[q] < tt || (to != SIZE_MAX && s->t[q] == tt && q < to)) {
            memset(step, 0, sizeof step);
            step[k / 2] = k & 1 ? 1 : -1;
            to = q;
            tt = s->t[q];
        }
    }
    if (to == SIZE_MAX) {
        s->phase = NEED_CENTRE;
        return;
    }
    size_t from = s->centre;
    s->centre = to;
    s->nline = 0;
    add_line(s, to, step);
    if (ncombo > 1) add_line(s, from, combo);
    s->phase = s->nline ? LINE : EXPLORE;
}

/* The points along the line are reported: the best of them becomes the centre when it is
 * faster, and the line goes on in its direction; else the centre's neighbours are next. */
static void decide_line(xmt_search *s)
{
    unsigned w = 2;
    double tt = s->t[s->centre];
    for (unsigned i = 0; i < s->nline; i++)
        if (s->state[s->line[i]] == P_DONE && s->t[s->line[i]] < tt) {
            w = i;
            tt = s->t[s->line[i]];
        }
    if (w == 2) {
        s->phase = EXPLORE;
        return;
    }
    int dir[MAX_DIMS];
    memcpy(dir, s->ldir[w], sizeof dir);
    s->centre = s->line[w];
    s->nline = 0;
    add_line(s, s->centre, dir);
    s->phase = s->nline ? LINE : EXPLORE;
}

/* Hands out the line's points not evaluated yet; 1 when there is something to wait for. */
static int line_batch(xmt_search *s, size_t *out, size_t *k, size_t max_batch)
{
    for (unsigned i = 0; i < s->nline && *k < max_batch && budget_left(s) > 0; i++)
        if (s->state[s->line[i]] == P_NEW) hand_out(s, s->line[i], out, k);
    if (s->nout) return 1;
    decide_line(s);
    return 0;
}

/* ---- XMT_STRATEGY_ANNEAL, for comparison (docs/benchmarks.md) ---- */

static int anneal_accept(xmt_search *s, size_t q)
{
    double tc = s->t[s->centre], tq = s->t[q];
    if (tq < tc) return 1;
    if (!isfinite(tq)) return 0;
    double temp = 0.2 * pow(0.01, (double)s->ndone / (double)s->max_evals);
    double u = (double)(next_rand(s) >> 11) / 9007199254740992.0;
    return u < exp(-(tq - tc) / tc / temp);
}

/* One random neighbour of the current point at a time (one name, one step, or two in a
 * quarter of the moves); neighbours evaluated before are moved to for free; a random
 * point when KICK_TRIES of them were all evaluated. */
static size_t anneal_next(xmt_search *s, size_t *out, size_t max_batch)
{
    size_t k = 0;
    if (s->nout || !max_batch || !budget_left(s)) return 0;
    if (!s->started) {
        s->started = 1;
        s->centre = s->start;
        hand_out(s, s->start, out, &k);
        return k;
    }
    if (s->prop != SIZE_MAX && anneal_accept(s, s->prop)) s->centre = s->prop;
    s->prop = SIZE_MAX;
    for (int tr = 0; tr < KICK_TRIES; tr++) {
        unsigned c[MAX_DIMS];
        xmt_search_coord(s->dims, s->ndims, s->centre, c);
        unsigned d = (unsigned)(next_rand(s) % s->ndims);
        uint64_t r = next_rand(s);
        int v = (int)c[d] + (int)(r % 4 == 0 ? 2 : 1) * ((r >> 2) & 1 ? 1 : -1);
        if (v < 0 || v >= (int)s->dims[d]) continue;
        c[d] = (unsigned)v;
        size_t q = xmt_search_index(s->dims, s->ndims, c);
        if (s->state[q] == P_NEW) {
            s->prop = q;
            hand_out(s, q, out, &k);
            return k;
        }
        if (anneal_accept(s, q)) s->centre = q;
    }
    size_t q = random_new(s);
    if (q == SIZE_MAX) return 0;
    s->restarts++;
    s->prop = q;
    hand_out(s, q, out, &k);
    return k;
}

size_t xmt_search_next(xmt_search *s, size_t *out, size_t max_batch)
{
    size_t k = 0;
    if (!s || !out) return 0;
    if (s->strategy == XMT_STRATEGY_ANNEAL) return anneal_next(s, out, max_batch);
    while (k < max_batch && budget_left(s) > 0) {
        if (s->phase == NEED_CENTRE) {
            if (s->nout) break; /* a restart chooses from what is known: wait */
            size_t c = s->started ? pick_restart(s) : s->start;
            s->started = 1;
            if (c == SIZE_MAX) break;
            s->centre = c;
            s->phase = EXPLORE;
            if (s->state[c] == P_NEW) hand_out(s, c, out, &k);
            continue;
        }
        if (s->phase == LINE) {
            if (line_batch(s, out, &k, max_batch)) break;
            continue;
        }
        int handed = 0;
        for (unsigned j = 0; j < 2 * s->ndims && k < max_batch && budget_left(s) > 0; j++) {
            size_t q = neighbour(s, j);
            if (q != SIZE_MAX && s->state[q] == P_NEW) {
                hand_out(s, q, out, &k);
                handed = 1;
            }
        }
        if (handed || s->nout) break;
        decide(s);
    }
    return k;
}

int xmt_search_report(xmt_search *s, size_t index, double time_ms)
{
    if (!s || index >= s->n || s->state[index] != P_OUT) return -1;
    if (isnan(time_ms) || time_ms < 0) time_ms = INFINITY;
    s->state[index] = P_DONE;
    s->t[index] = time_ms;
    s->nout--;
    s->ndone++;
    if (time_ms < s->best_t || (time_ms == s->best_t && isfinite(time_ms) && index < s->best)) {
        s->best = index;
        s->best_t = time_ms;
    }
    return 0;
}

int xmt_search_done(const xmt_search *s)
{
    return !s || (s->nout == 0 && (s->ndone >= s->max_evals || s->ndone >= s->n));
}

size_t xmt_search_evaluated(const xmt_search *s)
{
    return s ? s->ndone : 0;
}

size_t xmt_search_size(const xmt_search *s)
{
    return s ? s->n : 0;
}

size_t xmt_search_best(const xmt_search *s, double *time_ms)
{
    if (time_ms) *time_ms = s ? s->best_t : INFINITY;
    return s ? s->best : SIZE_MAX;
}

unsigned xmt_search_restarts(const xmt_search *s)
{
    return s ? s->restarts : 0;
}
