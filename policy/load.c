/* load.c - reading policy files: YAML (libyaml) into compiled entries. This file is the
 * driver: files and directories, the document, the top level and each kernel entry.
 *
 * libyaml builds the document; the loader walks it with its own checks, because
 * libyaml accepts duplicate keys silently and lets an anchor contain its own alias. A
 * first pass over the whole document rejects alias cycles and bounds alias expansion;
 * then each kernel entry is compiled on its own: the first error in an entry is
 * reported ("file:line:col: what was expected", 1-based) and the entry is dropped, the
 * others are kept. Names are resolved in dependency order: parameters, tensors,
 * tunables, functional triggers, triggers, then everything that may use tunables.
 *
 * The entry's parts are parsed by load_params.c (params:), load_tensors.c (tensors:),
 * load_trigger.c (the lookup key), load_launch.c (space:, configs:, pin:, launch:, args:)
 * and load_buffers.c (reset_to_zero:, restore:, verify:), on load_yaml.c (messages, YAML
 * nodes) and load_names.c (names in expressions); load_internal.h declares what they share.
 */
#include "load_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Rejects alias cycles and bounds expansion: a DFS over the graph that the aliases make. */
static int check_graph(ld *L, int idx, unsigned char *onpath, size_t *visits)
{
    yaml_node_t *n = ld_node(L, idx);
    if (!n) return 0;
    if (++*visits > XMT_MAX_YAML_NODES) {
        ld_report(L, n->start_mark, "aliases expand to more than %d nodes", XMT_MAX_YAML_NODES);
        return -1;
    }
    if (onpath[idx]) {
        ld_report(L, n->start_mark, "an alias refers to a node that contains it (recursive alias)");
        return -1;
    }
    onpath[idx] = 1;
    int rc = 0;
    if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = n->data.sequence.items.start;
             !rc && it < n->data.sequence.items.top; it++)
            rc = check_graph(L, *it, onpath, visits);
    } else if (n->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
             !rc && p < n->data.mapping.pairs.top; p++) {
            rc = check_graph(L, p->key, onpath, visits);
            if (!rc) rc = check_graph(L, p->value, onpath, visits);
        }
    }
    onpath[idx] = 0;
    return rc;
}

enum {
    K_MATCH,
    K_SIGNATURE,
    K_MANGLED,
    K_PARAMS,
    K_TENSORS,
    K_TRIGGERS,
    K_FTRIGGERS,
    K_SPACE,
    K_CONFIGS,
    K_CONDITION,
    K_LAUNCH,
    K_ARGS,
    K_PIN,
    K_RESET,
    K_RESTORE,
    K_VERIFY,
    K_WARMUP,
    K_ITERATIONS,
    K_BUDGET,
    K_STATISTIC,
    K_L2FLUSH,
    K_PROTECT,
    K_WARMUP_MS,
    K_SEARCH,
    K_SEARCH_EVALS,
    K_TOLERANCE,
    K_N
};
static const char *const entry_keys[K_N] = {
    "match",
    "signature",
    "mangled",
    "params",
    "tensors",
    "triggers",
    "functional_triggers",
    "space",
    "configs",
    "condition",
    "launch",
    "args",
    "pin",
    "reset_to_zero",
    "restore",
    "verify",
    "warmup",
    "iterations",
    "budget_ms",
    "statistic",
    "l2_flush",
    "protect",
    "warmup_ms",
    "search",
    "search_evals",
    "tolerance",
};

/* match:, signature: or mangled: (exactly one). */
static void parse_pattern(ld *L, const yaml_node_t *m, yaml_node_t *const *v)
{
    struct xmt_entry *e = L->cur;
    int npat = !!v[K_MATCH] + !!v[K_SIGNATURE] + !!v[K_MANGLED];
    if (npat == 0)
        ld_fail(L, m,
                "kernel entry: needs one of match: (glob on the name), signature: or mangled:");
    if (npat > 1) ld_fail(L, m, "kernel entry: give only one of match:, signature:, mangled:");
    int pk = v[K_MATCH] ? K_MATCH : v[K_SIGNATURE] ? K_SIGNATURE : K_MANGLED;
    const char *pat = ld_scalar(L, v[pk], entry_keys[pk]);
    if (!pat[0]) ld_fail(L, v[pk], "%s: empty pattern", entry_keys[pk]);
    e->patkind = pk == K_MATCH       ? XMT_PAT_MATCH
                 : pk == K_SIGNATURE ? XMT_PAT_SIGNATURE
                                     : XMT_PAT_MANGLED;
    e->pattern = strdup(pat);
    if (!e->pattern) ld_fail(L, m, "out of memory");
    snprintf(e->pattern_text, sizeof e->pattern_text, "%s: %s", entry_keys[pk], pat);
}

/* warmup:, iterations:, budget_ms:, warmup_ms:, statistic:, l2_flush:, protect: (how to
 * benchmark). */
static void parse_measure(ld *L, yaml_node_t *const *v)
{
    struct xmt_entry *e = L->cur;
    e->warmup = v[K_WARMUP] ? (int)ld_get_int(L, v[K_WARMUP], "warmup", 0, 1000000) : -1;
    e->iterations = v[K_ITERATIONS]
                        ? (int)ld_get_int(L, v[K_ITERATIONS], "iterations", 1, XMT_MAX_ITERATIONS)
                        : -1;
    e->budget_ms = v[K_BUDGET] ? ld_get_double(L, v[K_BUDGET], "budget_ms", 1e-3, 1e9) : -1;
    /* the same range as XMATUNE_WARMUP_MS; 0 turns the clock warm-up off for this entry */
    e->warmup_ms = v[K_WARMUP_MS] ? ld_get_double(L, v[K_WARMUP_MS], "warmup_ms", 0, 10000) : -1;
    e->use_mean = -1; /* not set: XMATUNE_STATISTIC decides */
    if (v[K_STATISTIC]) {
        const char *s = ld_scalar(L, v[K_STATISTIC], "statistic");
        if (!strcmp(s, "mean"))
            e->use_mean = 1;
        else if (!strcmp(s, "median"))
            e->use_mean = 0;
        else
            ld_fail(L, v[K_STATISTIC], "statistic: expected median or mean, found '%s'", s);
    }
    e->l2_flush = v[K_L2FLUSH] ? ld_get_bool(L, v[K_L2FLUSH], "l2_flush") : -1;
    e->protect = -1;
    if (v[K_PROTECT]) {
        const char *s = ld_scalar(L, v[K_PROTECT], "protect");
        if (!strcmp(s, "auto"))
            e->protect = XMT_PROTECT_AUTO;
        else if (!strcmp(s, "declared"))
            e->protect = XMT_PROTECT_DECLARED;
        else
            ld_fail(L, v[K_PROTECT], "protect: expected auto or declared, found '%s'", s);
    }
}

/* search: exhaustive | local, search_evals: a count or a share ("5%") of the space (how
 * a large space: is explored, policy/search.h). Both need a space: to search. */
static void parse_search(ld *L, yaml_node_t *const *v)
{
    struct xmt_entry *e = L->cur;
    e->search = XMT_SEARCH_UNSET;
    e->search_evals = -1;
    e->search_share = -1;
    if (v[K_SEARCH]) {
        const char *s = ld_scalar(L, v[K_SEARCH], "search");
        if (!strcmp(s, "exhaustive"))
            e->search = XMT_SEARCH_EXHAUSTIVE;
        else if (!strcmp(s, "local"))
            e->search = XMT_SEARCH_LOCAL;
        else
            ld_fail(L, v[K_SEARCH], "search: expected exhaustive or local, found '%s'", s);
    }
    if (v[K_SEARCH_EVALS]) {
        const char *s = ld_scalar(L, v[K_SEARCH_EVALS], "search_evals");
        size_t n = strlen(s);
        if (n > 1 && s[n - 1] == '%') {
            char *end;
            double p = strtod(s, &end);
            if (end != s + n - 1 || !(p > 0 && p <= 100))
                ld_fail(L, v[K_SEARCH_EVALS],
                        "search_evals: expected a count or a share of the space (0%% < share "
                        "<= 100%%), found '%s'",
                        s);
            e->search_share = p / 100;
        } else
            e->search_evals =
                (int)ld_get_int(L, v[K_SEARCH_EVALS], "search_evals", 1, XMT_MAX_SPACE);
    }
    const yaml_node_t *k = v[K_SEARCH] ? v[K_SEARCH] : v[K_SEARCH_EVALS];
    if (k && !e->nspace)
        ld_fail(L, k, "%s: only a space: is searched (this entry has none)",
                v[K_SEARCH] ? "search" : "search_evals");
}

/* One kernel entry, its keys in dependency order (see the top of this file). */
static void parse_entry_body(ld *L, const yaml_node_t *m)
{
    struct xmt_entry *e = L->cur;
    yaml_node_t *v[K_N];
    ld_map_keys(L, m, "kernel entry", entry_keys, K_N, v);
    parse_pattern(L, m, v);
    if (v[K_PARAMS])
        ld_parse_params(L, v[K_PARAMS]);
    else {
        e->ptypes = ld_xcalloc(L, m, 1, 1);
        e->psizes = ld_xcalloc(L, m, 1, sizeof *e->psizes);
    }
    /* tunable names before tensors, so that a shape naming one says why it may not */
    if (v[K_SPACE] || v[K_CONFIGS]) ld_collect_tunables(L, v[K_SPACE], v[K_CONFIGS]);
    if (v[K_TENSORS]) ld_parse_tensors(L, v[K_TENSORS]);
    ld_mark_all_args(L, v[K_ARGS], v[K_CONFIGS], v[K_PIN]);
    ld_parse_key(L, m, v[K_FTRIGGERS], v[K_TRIGGERS]);

    const unsigned all = SC_PARAMS | SC_TENSORS | SC_TUNABLES | SC_FTRIG;
    if (v[K_CONDITION]) {
        e->has_cond = 1;
        ld_compile(L, v[K_CONDITION], all, "the entry's condition", &e->cond);
    }
    if (v[K_LAUNCH]) ld_parse_launch(L, v[K_LAUNCH], &e->launch);
    if (v[K_ARGS]) ld_parse_args(L, v[K_ARGS], &e->args);
    if (v[K_SPACE]) ld_parse_space(L, v[K_SPACE]);
    if (v[K_CONFIGS]) ld_parse_configs(L, v[K_CONFIGS]);
    if (v[K_PIN]) {
        ld_parse_config(L, v[K_PIN], &e->pin, "pin");
        e->has_pin = 1;
    }
    if (!e->nconfigs && !e->nspace && !e->has_pin)
        ld_fail(L, m, "kernel entry: nothing to tune: give configs:, space: or pin:");
    ld_parse_buffers(L, m, v[K_RESET], v[K_RESTORE], v[K_VERIFY]);
    parse_measure(L, v);
    ld_parse_tolerance(L, v[K_TOLERANCE]);
    parse_search(L, v);
}

/* FNV-1a over the entry's document tree: node kinds, scalars, keys and values in order,
 * never comments, quoting or layout; so the fingerprint changes exactly when what the
 * entry says changes. Depth is bounded like the document itself. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
static uint64_t node_hash(yaml_document_t *doc, yaml_node_t *n, uint64_t h, int depth)
{
    if (!n || depth > XMT_MAX_YAML_DEPTH + 2) return fnv(h, "?", 1);
    unsigned char kind = (unsigned char)n->type;
    h = fnv(h, &kind, 1);
    if (n->type == YAML_SCALAR_NODE) {
        h = fnv(h, n->data.scalar.value, n->data.scalar.length);
        return fnv(h, "", 1);
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top;
             i++)
            h = node_hash(doc, yaml_document_get_node(doc, *i), h, depth + 1);
    } else if (n->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *q = n->data.mapping.pairs.start; q < n->data.mapping.pairs.top;
             q++) {
            h = node_hash(doc, yaml_document_get_node(doc, q->key), h, depth + 1);
            h = node_hash(doc, yaml_document_get_node(doc, q->value), h, depth + 1);
        }
    }
    return fnv(h, "]", 1);
}

static struct xmt_entry *parse_entry(ld *L, const yaml_node_t *m)
{
    struct xmt_entry *volatile e = calloc(1, sizeof *e); /* survives the longjmp */
    if (!e) {
        ld_report(L, m->start_mark, "out of memory");
        return NULL;
    }
    e->owner = 1;
    e->order = L->order++;
    snprintf(e->origin, sizeof e->origin, "%s:%zu", L->file, m->start_mark.line + 1);
    L->cur = e;
    if (setjmp(L->jb)) {
        xmt_entry_destroy(L->cur);
        L->cur = NULL;
        return NULL;
    }
    parse_entry_body(L, m);
    e->fingerprint = node_hash(L->doc, (yaml_node_t *)m, 0xcbf29ce484222325ull, 0);
    L->cur = NULL;
    return e;
}

/* ---- files ------------------------------------------------------------------------------- */

int xmt_set_add(struct xmt_policy_set *s, struct xmt_entry *e)
{
    if (s->n >= XMT_MAX_ENTRIES) return -1;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        struct xmt_entry **nv = realloc(s->v, nc * sizeof *nv);
        if (!nv) return -1;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = e;
    return 0;
}

/* Nesting, checked on the event stream before the document is built: libyaml has no
 * depth limit and its scanner costs grow with depth for every token (`[[[...` a megabyte
 * deep takes minutes), so the walk stops at the first level too deep. A syntax error is
 * left for the loader to report. Returns 0 when the nesting is within the cap. */
static int check_depth(ld *L, const char *text, size_t len)
{
    yaml_parser_t p;
    yaml_event_t ev;
    int depth = 0, rc = 0;
    if (!yaml_parser_initialize(&p)) return 0;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (yaml_parser_parse(&p, &ev)) {
        yaml_event_type_t t = ev.type;
        if ((t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) &&
            ++depth > XMT_MAX_YAML_DEPTH) {
            ld_report(L, ev.start_mark, "lists and maps nested deeper than %d levels",
                      XMT_MAX_YAML_DEPTH);
            rc = -1;
        }
        if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) depth--;
        yaml_event_delete(&ev);
        if (rc || t == YAML_STREAM_END_EVENT) break;
    }
    yaml_parser_delete(&p);
    return rc;
}

/* libyaml's errors for a tab in the indentation ("found a tab character that violates
 * indentation", "found character that cannot start any token") do not say what to do: a
 * hint, when the line of the error begins with blanks that hold a tab. */
static const char *tab_hint(const char *text, size_t len, yaml_mark_t mk)
{
    size_t at = mk.index < len ? mk.index : len;
    while (at > 0 && text[at - 1] != '\n')
        at--;
    for (; at < len && (text[at] == ' ' || text[at] == '\t'); at++)
        if (text[at] == '\t') return "; tabs are not allowed in YAML indentation: use spaces";
    return "";
}

static void load_text(ld *L, const char *text, size_t len, struct xmt_policy_set *set)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_mark_t m0 = {0, 0, 0};
    if (len > XMT_MAX_FILE_BYTES) {
        ld_report(L, m0, "file larger than %d bytes", XMT_MAX_FILE_BYTES);
        return;
    }
    if (check_depth(L, text, len) != 0) return;
    if (!yaml_parser_initialize(&parser)) {
        ld_report(L, m0, "out of memory");
        return;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        yaml_mark_t mk = parser.problem_mark;
        const char *tab = tab_hint(text, len, mk);
        if (parser.context)
            ld_report(L, mk, "YAML: %s %s (line %zu)%s", parser.problem ? parser.problem : "error",
                      parser.context, parser.context_mark.line + 1, tab);
        else
            ld_report(L, mk, "YAML: %s%s", parser.problem ? parser.problem : "error", tab);
        yaml_parser_delete(&parser);
        return;
    }
    /* cleared at out: below, before doc goes out of scope */
    // cppcheck-suppress autoVariables
    L->doc = &doc;
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root) goto out; /* empty file: no entries */
    /* a second document would be silently ignored: refuse it */
    yaml_document_t doc2;
    if (yaml_parser_load(&parser, &doc2)) {
        yaml_node_t *r2 = yaml_document_get_root_node(&doc2);
        if (r2) ld_report(L, r2->start_mark, "one YAML document per file (found a second one)");
        yaml_document_delete(&doc2);
        if (r2) goto out;
    } else {
        ld_report(L, parser.problem_mark, "YAML: %s", parser.problem ? parser.problem : "error");
        goto out;
    }
    size_t nn = (size_t)(doc.nodes.top - doc.nodes.start);
    unsigned char *onpath = calloc(nn + 2, 1);
    size_t visits = 0;
    if (!onpath) {
        ld_report(L, m0, "out of memory");
        goto out;
    }
    int rc = check_graph(L, 1, onpath, &visits);
    free(onpath);
    if (rc) goto out;
    if (setjmp(L->jb)) goto out; /* an error in the top level */
    static const char *const top[] = {"kernels", "version"};
    yaml_node_t *tv[2];
    ld_map_keys(L, root, "policy file (top level)", top, 2, tv);
    if (tv[1]) ld_get_int(L, tv[1], "version", 1, 1);
    if (!tv[0]) {
        ld_report(L, root->start_mark,
                  "policy file: expected 'kernels:' with a list of kernel entries");
        goto out;
    }
    if (tv[0]->type != YAML_SEQUENCE_NODE) {
        if (ld_is_null(tv[0])) goto out; /* kernels: with nothing */
        ld_report(L, tv[0]->start_mark,
                  "kernels: expected a list of kernel entries (each starting with '- match:')");
        goto out;
    }
    for (yaml_node_item_t *it = tv[0]->data.sequence.items.start;
         it < tv[0]->data.sequence.items.top; it++) {
        struct xmt_entry *e = parse_entry(L, ld_node(L, *it));
        if (!e) continue;
        if (xmt_set_add(set, e)) {
            ld_report(L, ld_node(L, *it)->start_mark, "more than %d entries", XMT_MAX_ENTRIES);
            xmt_entry_destroy(e);
            break;
        }
    }
out:
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    L->doc = NULL;
}

/* Reads at most cap bytes of fd. Returns the count, or -1 (errno set). */
static ssize_t read_all(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        if (r == 0) break;
        n += (size_t)r;
    }
    return (ssize_t)n;
}

static void load_file(ld *L, const char *path, struct xmt_policy_set *set)
{
    yaml_mark_t m0 = {0, 0, 0};
    L->file = path;
    /* Non-blocking, then checked: a FIFO (or a device) named *.yaml must not hang the
     * program at its first CUDA call. Only a regular file is a policy file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        ld_report(L, m0, "cannot open: %s", strerror(errno));
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        ld_report(L, m0, "not a regular file");
        return;
    }
    char *buf = malloc(XMT_MAX_FILE_BYTES + 1);
    if (!buf) {
        close(fd);
        ld_report(L, m0, "out of memory");
        return;
    }
    ssize_t n = read_all(fd, buf, XMT_MAX_FILE_BYTES + 1);
    if (n < 0)
        ld_report(L, m0, "cannot read: %s", strerror(errno));
    else
        load_text(L, buf, (size_t)n, set);
    close(fd);
    free(buf);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int yaml_name(const char *n)
{
    size_t l = strlen(n);
    return n[0] != '.' &&
           ((l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml")));
}

static struct xmt_policy_set *new_set(void)
{
    struct xmt_policy_set *s = calloc(1, sizeof *s);
    if (s) pthread_mutex_init(&s->mu, NULL);
    return s;
}

int xmt_policy_load(const char *path, xmt_policy_set **out, xmt_diag_fn diag, void *ud)
{
    ld L;
    memset(&L, 0, sizeof L);
    L.diag = diag;
    L.ud = ud;
    L.file = path;
    struct xmt_policy_set *set = new_set();
    yaml_mark_t m0 = {0, 0, 0};
    if (out) *out = NULL;
    if (!set) {
        ld_report(&L, m0, "out of memory");
        return L.nerr;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        ld_report(&L, m0, "cannot open: %s", strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (!d) {
            ld_report(&L, m0, "cannot open directory: %s", strerror(errno));
        } else {
            char **names = NULL;
            size_t n = 0, cap = 0;
            struct dirent *de;
            while ((de = readdir(d))) {
                if (!yaml_name(de->d_name)) continue;
                if (n == cap) {
                    cap = cap ? cap * 2 : 16;
                    char **nn = realloc(names, cap * sizeof *nn);
                    if (!nn) break;
                    names = nn;
                }
                size_t pl = strlen(path) + strlen(de->d_name) + 2;
                names[n] = malloc(pl);
                if (!names[n]) break;
                snprintf(names[n], pl, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/",
                         de->d_name);
                n++;
            }
            closedir(d);
            /* a warning, not an error: nothing in it is wrong, but nothing will be tuned by
             * it, which a typo in the path would explain */
            if (!n && diag) {
                char msg[4200];
                snprintf(msg, sizeof msg,
                         "%s: no policy file (*.yaml or *.yml) in this folder: no kernel has a "
                         "policy",
                         path);
                diag(ud, msg);
            }
            if (n) qsort(names, n, sizeof *names, cmp_str);
            for (size_t i = 0; i < n; i++) {
                load_file(&L, names[i], set);
                free(names[i]);
            }
            free(names);
        }
    } else {
        load_file(&L, path, set);
    }
    if (out)
        *out = set;
    else
        xmt_policy_free(set);
    return L.nerr;
}

int xmt_policy_load_string(const char *name, const char *text, size_t len, xmt_policy_set **out,
                           xmt_diag_fn diag, void *ud)
{
    ld L;
    memset(&L, 0, sizeof L);
    L.diag = diag;
    L.ud = ud;
    L.file = name;
    struct xmt_policy_set *set = new_set();
    if (out) *out = NULL;
    if (!set) {
        yaml_mark_t m0 = {0, 0, 0};
        ld_report(&L, m0, "out of memory");
        return L.nerr;
    }
    load_text(&L, text, len, set);
    if (out)
        *out = set;
    else
        xmt_policy_free(set);
    return L.nerr;
}

void xmt_policy_free(xmt_policy_set *set)
{
    if (!set) return;
    for (size_t i = 0; i < set->n; i++)
        xmt_entry_destroy(set->v[i]);
    struct xmt_spec *s = set->specs;
    while (s) {
        struct xmt_spec *nx = s->next;
        if (s->e) xmt_entry_destroy(s->e);
        free(s->sig);
        free(s);
        s = nx;
    }
    free(set->v);
    pthread_mutex_destroy(&set->mu);
    free(set);
}

size_t xmt_policy_count(const xmt_policy_set *set)
{
    return set ? set->n : 0;
}

const xmt_entry *xmt_policy_entry(const xmt_policy_set *set, size_t i)
{
    return (set && i < set->n) ? set->v[i] : NULL;
}
