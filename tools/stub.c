/*
 * stub: the policy skeleton that `xmatune discover --stub FILE` writes, one entry per
 * kernel seen. Each entry names the kernel exactly, declares its parameters as the
 * driver laid them out, lists its launch shapes as comments, offers the scalar parameters
 * as triggers (never a pointer: its address would make every launch a new key), and
 * picks one of three launch idioms from what discover saw, saying why, with the other
 * two written out as comments:
 *
 *   - the program's own grid (grid0): one block per row or tile, where the grid counts
 *     rows and must not change with the block. Also what the stub keeps when nothing
 *     it saw tells the idioms apart;
 *   - one thread per element, the grid following the block (cdiv);
 *   - a grid-stride loop, where any grid covers the data (sm_count * BPS).
 *
 * Discover records launch shapes (grid, block, shared memory), not argument values, so
 * the only evidence is how the program's own grid moved when its own block changed: a
 * grid × block that stays within one block of the same thread count is the cdiv idiom,
 * a grid that stays the same is not tied to the block (kept). The skeleton loads as it
 * is (`xmatune check`); its buffer lines are comments, since which buffers a kernel
 * writes is for the person who knows it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stub.h"
#include "xmt_policy.h"

#define STUB_MAX_PARAMS 128

typedef enum { IDIOM_GRID0, IDIOM_CDIV, IDIOM_STRIDE } idiom;

typedef struct {
    long long grid[3], block[3], shared, count;
} shape;

typedef struct {
    size_t n;
    shape s[64 * 4]; /* at most 64 per device in the log; a few devices */
} shapes;

/* What the stub knows of one parameter. */
typedef struct {
    long long size;
    int is_ptr, is_int, is_struct; /* is_struct: a by-value struct (bytes(N)) */
} pinfo;

static long long iget(json_t *a, size_t i)
{
    return json_integer_value(json_array_get(a, i));
}

/* The scalar type names the policy language knows (docs/policy.md §Parameters), as
 * libiberty writes them. Returns 1 integer, 2 floating point, 0 not a scalar. */
static int scalar_kind(const char *t)
{
    static const char *const ints[] = {
        "char",           "signed char", "unsigned char",     "bool",     "short",
        "unsigned short", "int",         "unsigned int",      "unsigned", "long",
        "unsigned long",  "long long",   "unsigned long long"};
    static const char *const floats[] = {"float",         "double",    "half",         "__half",
                                         "__nv_bfloat16", "c10::Half", "c10::BFloat16"};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (!strcmp(t, ints[i])) return 1;
    for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++)
        if (!strcmp(t, floats[i])) return 2;
    return 0;
}

/* The parameter types of a demangled signature ("f(int, float const*, Params)") into
 * info[]: pointer, integer, or a struct. Returns how many, or -1 when it cannot tell. */
static int signature_params(const char *sig, pinfo *info, size_t cap)
{
    int depth = 0;
    const char *p = sig;
    for (; *p && !(*p == '(' && depth == 0); p++)
        depth += (*p == '<') - (*p == '>');
    if (*p != '(') return -1;
    p++;
    size_t n = 0;
    while (*p && *p != ')' && n < cap) {
        char t[256];
        size_t len = 0;
        depth = 0;
        while (*p && !(depth == 0 && (*p == ',' || *p == ')'))) {
            depth += (*p == '<' || *p == '(') - (*p == '>' || *p == ')');
            if (len + 1 < sizeof t) t[len++] = *p;
            p++;
        }
        t[len] = 0;
        if (*p == ',') p++;
        while (*p == ' ')
            p++;
        const char *c = t;
        if (!strncmp(c, "const ", 6)) c += 6;
        char base[256];
        snprintf(base, sizeof base, "%s", c);
        char *q = strstr(base, " const");
        if (q && !q[6]) *q = 0;
        info[n].is_ptr = strchr(t, '*') || strchr(t, '&');
        int k = info[n].is_ptr ? 0 : scalar_kind(base);
        info[n].is_int = k == 1;
        info[n].is_struct = !info[n].is_ptr && k == 0;
        n++;
    }
    return (int)n;
}

/* A parameter type from its size alone (extern "C" and Triton names carry no types). */
static void guess_type(long long size, char *buf, size_t cap)
{
    if (size == 8)
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

/* The params: line; fills info[] (sizes from the driver, kinds from the signature, else
 * guessed from sizes). Returns the number of parameters. */
static size_t write_params(FILE *f, json_t *k, const char *sig, pinfo *info)
{
    json_t *params = json_object_get(k, "params");
    size_t np = json_array_size(params);
    if (np > STUB_MAX_PARAMS) np = STUB_MAX_PARAMS;
    int ns = sig ? signature_params(sig, info, STUB_MAX_PARAMS) : -1;
    int typed = ns >= 0 && (size_t)ns == np;
    fprintf(f, "  - mangled: \"%s\"\n    params: [",
            json_string_value(json_object_get(k, "kernel")));
    for (size_t p = 0; p < np; p++) {
        long long size = json_integer_value(json_object_get(json_array_get(params, p), "size"));
        char type[64];
        guess_type(size, type, sizeof type);
        if (!typed) {
            info[p].is_ptr = size == 8;
            info[p].is_int = size == 4 || size == 2 || size == 1;
            info[p].is_struct = !info[p].is_ptr && !info[p].is_int;
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
                  : "   # types guessed from sizes (8 bytes: ptr, 4: i32): check them");
    return np;
}

/* The triggers line: the integer scalars, never a pointer (docs/policy.md §Triggers). */
static void write_triggers(FILE *f, const pinfo *info, size_t np)
{
    char list[1024];
    size_t len = 0;
    list[0] = 0;
    for (size_t p = 0; p < np; p++)
        if (info[p].is_int && len + 16 < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%sp%zu", len ? ", " : "", p);
    if (len)
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

/* The launch idiom the shapes point to, with the reason in why. */
static idiom pick_idiom(const shapes *sh, char *why, size_t cap)
{
    for (size_t i = 0; i < sh->n; i++)
        for (size_t j = i + 1; j < sh->n; j++) {
            const shape *a = &sh->s[i], *b = &sh->s[j];
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
                return IDIOM_GRID0;
            }
            if ((ta > tb ? ta - tb : tb - ta) < bmax) {
                snprintf(why, cap,
                         "the program's grid followed its block: grid.x x block.x stayed "
                         "about %lld threads (%lld x %lld, %lld x %lld): one thread per element",
                         ta, a->grid[0], a->block[0], b->grid[0], b->block[0]);
                return IDIOM_CDIV;
            }
        }
    snprintf(why, cap,
             "nothing discover saw tells how this kernel covers its data (it records launch "
             "shapes, not argument values, and the program never changed this kernel's "
             "block), so the program's own grid is kept: choose below");
    return IDIOM_GRID0;
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

/* The block size space: powers of two that fit 1024 threads with the program's own
 * block.y and block.z. */
static void space_list(const shape *s, char *buf, size_t cap)
{
    long long yz = s->block[1] * s->block[2], lo = yz > 1 ? 8 : 64;
    size_t len = 0;
    buf[0] = 0;
    for (long long b = lo; b * yz <= 1024 && len + 8 < cap; b *= 2)
        len += (size_t)snprintf(buf + len, cap - len, "%s%lld", len ? ", " : "", b);
    if (!len) snprintf(buf, cap, "%lld", s->block[0]);
}

/* The launch lines: the chosen idiom as YAML, the other two as comments. */
static void write_launch(FILE *f, const shapes *sh, const pinfo *info, size_t np)
{
    char why[512], list[128];
    idiom pick = pick_idiom(sh, why, sizeof why);
    const shape *top = &sh->s[0];
    for (size_t i = 1; i < sh->n; i++)
        if (sh->s[i].count > top->count) top = &sh->s[i];
    space_list(top, list, sizeof list);
    const char *block =
        top->block[1] * top->block[2] > 1 ? "[BLOCK, block0.y, block0.z]" : "[BLOCK]";
    char n[32] = "N";
    for (size_t p = 0; p < np; p++)
        if (info[p].is_int) {
            snprintf(n, sizeof n, "p%zu", p);
            break;
        }
    char text[768];
    snprintf(text, sizeof text,
             "Launch idiom: %s. A block size the kernel relies on (a shared array, an unrolled "
             "loop) must stay out of BLOCK.",
             why);
    comment(f, text);
    const char *grid0 = "    %slaunch: {block: %s, grid: [grid0.x, grid0.y, grid0.z]}\n";
    const char *cdiv = "    %slaunch: {block: %s, grid: [\"cdiv(grid0.x * block0.x, BLOCK)\", "
                       "grid0.y, grid0.z]}\n";
    if (pick == IDIOM_GRID0) {
        fprintf(f, "    space: {BLOCK: [%s]}\n", list);
        fprintf(f, grid0, "", block);
        if (n[0] != 'N') {
            fprintf(f,
                    "    # or, one thread per element (the kernel checks its index against a "
                    "count, say %s):\n",
                    n);
            fprintf(f, "    #   launch: {block: %s, grid: [\"cdiv(%s, BLOCK)\"]}\n", block, n);
        } else {
            fprintf(f, "    # or, one thread per element (the kernel checks its index against a "
                       "count; the same threads as the program's grid):\n");
            fprintf(f, cdiv, "#   ", block);
        }
    } else {
        fprintf(f, "    space: {BLOCK: [%s]}\n", list);
        fprintf(f, cdiv, "", block);
        if (n[0] != 'N')
            fprintf(f,
                    "    #   (the same threads as the program's grid; or \"cdiv(%s, BLOCK)\" "
                    "when %s is the element count)\n",
                    n, n);
        fprintf(f, "    # or, one block per row or tile (the grid counts rows: the program's "
                   "own grid):\n");
        fprintf(f, grid0, "#   ", block);
    }
    fprintf(f,
            "    # or, a grid-stride loop (the kernel loops over its data, so any grid "
            "covers it):\n"
            "    #   space: {BLOCK: [%s], BPS: [1, 2, 4, 8]}\n"
            "    #   launch: {block: %s, grid: [\"sm_count * BPS\"]}\n",
            list, block);
}

/* The buffer lines, commented, naming the pointer parameters. */
static void write_buffers(FILE *f, const pinfo *info, size_t np)
{
    char list[1024];
    size_t len = 0;
    list[0] = 0;
    for (size_t p = 0; p < np; p++)
        if (info[p].is_ptr && len + 16 < sizeof list)
            len += (size_t)snprintf(list + len, sizeof list - len, "%sp%zu", len ? ", " : "", p);
    if (!len) return;
    fprintf(f,
            "    # Buffers: a kernel that writes memory it also reads (in place, accumulating)\n"
            "    # needs them declared before it is tuned; `protect: auto` (landing soon) will\n"
            "    # make these lines unneeded. Pointers here: %s. docs/policy.md#buffers\n"
            "    # tensors: {pN: {dtype: f32, shape: [pM]}}   # each buffer's size\n"
            "    # restore: [pN]   reset_to_zero: [pN]   verify: [pN]\n",
            list);
}

/* The shapes a kernel was launched with, on every device, as comments, into sh. */
static void write_shapes(FILE *f, const char *mangled, json_t *summaries, shapes *sh)
{
    size_t j;
    json_t *s;
    sh->n = 0;
    json_array_foreach(summaries, j, s)
    {
        const char *m2 = json_string_value(json_object_get(s, "kernel"));
        if (!m2 || strcmp(m2, mangled)) continue;
        fprintf(f, "  # device %lld: %lld launches%s\n",
                json_integer_value(json_object_get(s, "device")),
                json_integer_value(json_object_get(s, "launches")),
                json_is_false(json_object_get(s, "rewritable"))
                    ? " (some through a path the tuner leaves alone: cooperative or "
                      "cluster launches)"
                    : "");
        size_t n;
        json_t *v;
        json_array_foreach(json_object_get(s, "shapes"), n, v)
        {
            json_t *g = json_object_get(v, "grid"), *b = json_object_get(v, "block");
            shape x = {{iget(g, 0), iget(g, 1), iget(g, 2)},
                       {iget(b, 0), iget(b, 1), iget(b, 2)},
                       json_integer_value(json_object_get(v, "shared")),
                       json_integer_value(json_object_get(v, "count"))};
            if (sh->n < sizeof sh->s / sizeof sh->s[0]) sh->s[sh->n++] = x;
            if (n < 8)
                fprintf(f, "  #   grid (%lld,%lld,%lld) block (%lld,%lld,%lld) shared %lld: %lld\n",
                        x.grid[0], x.grid[1], x.grid[2], x.block[0], x.block[1], x.block[2],
                        x.shared, x.count);
            else if (n == 8)
                fprintf(f, "  #   ...\n");
        }
    }
    if (!sh->n) sh->s[sh->n++] = (shape){{1, 1, 1}, {256, 1, 1}, 0, 0};
}

void write_policy_stub(FILE *f, json_t *kernels, json_t *summaries)
{
    fprintf(f, "# A policy skeleton written by `xmatune discover`: one entry per kernel seen.\n"
               "# Delete the kernels not worth tuning, name the parameters, choose triggers (what\n"
               "# decides the best config) and a launch idiom (each entry offers three), and,\n"
               "# before tuning anything that writes memory it also reads, declare restore /\n"
               "# reset_to_zero / verify buffers: docs/policy.md.\n"
               "# Check it with: xmatune check THIS_FILE\n"
               "kernels:\n");
    static shapes sh;
    static pinfo info[STUB_MAX_PARAMS];
    size_t i;
    json_t *k;
    json_array_foreach(kernels, i, k)
    {
        const char *mangled = json_string_value(json_object_get(k, "kernel"));
        const char *name = json_string_value(json_object_get(k, "name"));
        if (!mangled || !name) continue;
        /* Only once per kernel, whatever the devices. */
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++) {
            const char *m2 =
                json_string_value(json_object_get(json_array_get(kernels, j), "kernel"));
            dup = m2 && !strcmp(m2, mangled);
        }
        if (dup) continue;
        char dm[2048];
        int demangled = xmt_demangle(mangled, NULL, 0, dm, sizeof dm) == 1;
        fprintf(f, "\n  # %s\n", name);
        write_shapes(f, mangled, summaries, &sh);
        memset(info, 0, sizeof info);
        size_t np = write_params(f, k, demangled ? dm : NULL, info);
        write_triggers(f, info, np);
        write_launch(f, &sh, info, np);
        write_buffers(f, info, np);
    }
}
