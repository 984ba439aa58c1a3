/*
 * cache_cmd: `xmatune cache list|show|prune|clear|export|import` — the on-disk cache seen
 * and changed from the command line, with the shim's own reader (common/cacherec) and its
 * lock and atomic rewrite (common/cachefile), so a command never loses a record that a
 * running process appends meanwhile.
 *
 * Records are kept as the shim keeps them: the last line of each identity, in the order
 * identities were first seen. --kernel globs (fnmatch) the mangled name or the demangled
 * one without its parameters; --device globs the device model string.
 */
#include "cache_cmd.h"
#include "report.h"

#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cachefile.h"
#include "cacherec.h"
#include "logread.h"
#include "rstore.h"
#include "xmt_policy.h"

typedef struct {
    char *id, *line; /* identity; the line, with its '\n' */
    char *device, *kernel, *entry, *entry_fp, *key_text;
    char *rkey; /* --remote: its key in Redis */
    xmt_choice choice;
    int dropped;
} rec_t;

typedef struct {
    rec_t *v;
    size_t n, cap;
    json_t *byid; /* identity -> index in v */
} recs_t;

/* Frees what a record owns (the struct itself is the array's). */
static void rec_clear(rec_t *x)
{
    free(x->id);
    free(x->line);
    free(x->device);
    free(x->kernel);
    free(x->entry);
    free(x->entry_fp);
    free(x->key_text);
    free(x->rkey);
}

static void add(void *ud, const xmt_cacherec *r)
{
    recs_t *s = ud;
    char *id = xmt_cacherec_identity(r);
    char *line = malloc(r->raw_len + 2);
    if (!id || !line) {
        free(id);
        free(line);
        return;
    }
    memcpy(line, r->raw, r->raw_len);
    line[r->raw_len] = '\n';
    line[r->raw_len + 1] = 0;
    json_t *at = json_object_get(s->byid, id);
    rec_t *x;
    if (at) {
        x = &s->v[json_integer_value(at)];
        rec_clear(x);
    } else {
        if (s->n == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 64;
            rec_t *v = realloc(s->v, cap * sizeof *v);
            if (!v) {
                free(id);
                free(line);
                return;
            }
            s->v = v;
            s->cap = cap;
        }
        json_object_set_new(s->byid, id, json_integer((json_int_t)s->n));
        x = &s->v[s->n++];
    }
    memset(x, 0, sizeof *x);
    x->id = id;
    x->line = line;
    x->device = strdup(r->device);
    x->kernel = strdup(r->kernel);
    x->entry = strdup(r->entry);
    x->entry_fp = strdup(r->entry_fp);
    x->key_text = strdup(r->key_text);
    x->choice = r->choice;
}

static void free_recs(recs_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        rec_clear(&s->v[i]);
    }
    free(s->v);
    json_decref(s->byid);
}

/* A record of another cache, imported: marked as such (origin "import"), so that the shim
 * takes it as a hint, never as its own user's verified record (docs/cache.md, Trust). */
static void add_imported(void *ud, const xmt_cacherec *r)
{
    xmt_cacherec c = *r;
    snprintf(c.choice.origin, sizeof c.choice.origin, "import");
    char *line = xmt_cacherec_format(&c);
    if (!line) return;
    c.raw = line;
    c.raw_len = strlen(line) - 1;
    add(ud, &c);
    free(line);
}

/* Reads path into s (a missing file is an empty cache). -1 when it cannot be read.
 * imported: its records are marked as imported. */
static int read_recs_as(const char *path, recs_t *s, int quiet, int imported)
{
    xmt_cacherec_other old = {0, 0};
    int bad = xmt_cacherec_read(path, imported ? add_imported : add, s, &old);
    if (bad < 0 && errno == ENOENT) return 0;
    if (bad < 0) {
        fprintf(stderr, "xmatune: cannot read %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!quiet && bad)
        fprintf(stderr, "xmatune: %d line(s) of %s are not cache records\n", bad, path);
    if (!quiet && old.older)
        fprintf(stderr,
                "xmatune: %d record(s) of %s are of an older format (the shim drops them)\n",
                old.older, path);
    if (!quiet && old.newer)
        fprintf(stderr, "xmatune: %d record(s) of %s are of a newer format (a later xmatune's)\n",
                old.newer, path);
    return bad;
}

static int read_recs(const char *path, recs_t *s, int quiet)
{
    return read_recs_as(path, s, quiet, 0);
}

typedef struct {
    const char *kernel, *device, *outcome;
} filter_t;

static int selected(const filter_t *f, const rec_t *x)
{
    if (f->device && fnmatch(f->device, x->device, 0) != 0) return 0;
    /* --outcome WORD: the records of that outcome; any: every record with one */
    if (f->outcome && !(x->choice.outcome[0] &&
                        (!strcmp(f->outcome, "any") || !strcmp(f->outcome, x->choice.outcome))))
        return 0;
    if (f->kernel && fnmatch(f->kernel, x->kernel, 0) != 0) {
        char dm[1024];
        xmt_demangle(x->kernel, dm, sizeof dm, NULL, 0);
        if (fnmatch(f->kernel, dm, 0) != 0) return 0;
    }
    return 1;
}

static size_t rewrite_at;
static recs_t *rewrite_of;
static const char *next_kept(void *ud, size_t *len)
{
    (void)ud;
    while (rewrite_at < rewrite_of->n && rewrite_of->v[rewrite_at].dropped)
        rewrite_at++;
    if (rewrite_at >= rewrite_of->n) return NULL;
    rec_t *x = &rewrite_of->v[rewrite_at++];
    *len = strlen(x->line);
    return x->line;
}

/* Writes s's records but the dropped ones over path, atomically. 0 or -1 (said). */
static int write_recs(const char *path, recs_t *s)
{
    rewrite_at = 0;
    rewrite_of = s;
    xmt_cachefile_clean_temps(path);
    if (xmt_cachefile_rewrite(path, next_kept, NULL) != 0) {
        fprintf(stderr, "xmatune: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* The exclusive lock for a change; -1 (said) when there is none: a rewrite under a
 * process appending without the lock would lose its record. */
static int lock_for_change(const char *path)
{
    int fd = xmt_cachefile_lock(path, 1);
    if (fd >= 0) return fd;
    if (xmt_cachefile_no_flock(errno))
        fprintf(stderr,
                "xmatune: flock does not work where %s is (%s): it is not changed (a process "
                "appending meanwhile would lose its record)\n",
                path, strerror(errno));
    else
        fprintf(stderr, "xmatune: cannot lock %s (%s.lock): %s\n", path, path, strerror(errno));
    return -1;
}

static void print_time(double ms)
{
    if (!(ms > 0)) /* not timed: a pin, a single config, the program's own when alone */
        printf(" — |");
    else if (ms >= 1)
        printf(" %.3f ms |", ms);
    else
        printf(" %.2f us |", ms * 1000);
}

static void list(const recs_t *s, const filter_t *f)
{
    printf("| device | kernel | key | winner | time | policy entry | outcome |\n"
           "| --- | --- | --- | --- | ---: | --- | --- |\n");
    for (size_t i = 0; i < s->n; i++) {
        const rec_t *x = &s->v[i];
        if (!selected(f, x)) continue;
        char dm[1024];
        xmt_demangle(x->kernel, dm, sizeof dm, NULL, 0);
        if (strlen(dm) > 95) dm[95] = 0;
        char c[5][1024];
        printf("| %s | %s | %s | %s |", xmt_md_cell(x->device, c[0], sizeof c[0]),
               xmt_md_cell(dm, c[1], sizeof c[1]), xmt_md_cell(x->key_text, c[2], sizeof c[2]),
               xmt_md_cell(x->choice.index == XMT_OWN_CONFIG ? "program's own" : x->choice.label,
                           c[3], sizeof c[3]));
        print_time(x->choice.time_ms);
        char o[600], oc[1300];
        snprintf(o, sizeof o, "%s%s%s%s", x->choice.outcome, x->choice.why[0] ? ": " : "",
                 x->choice.why, x->choice.origin[0] ? " (imported)" : "");
        printf(" %s | %s |\n", xmt_md_cell(x->entry, c[4], sizeof c[4]),
               xmt_md_cell(o, oc, sizeof oc));
    }
}

/* Whether a record's entry is one the policies have: the same pattern and content
 * fingerprint (either protection variant: shim/decide/tuner.c's cache_id). */
static int entry_known(const xmt_policy_set *set, const rec_t *x)
{
    for (size_t i = 0; i < xmt_policy_count(set); i++) {
        const xmt_entry *e = xmt_policy_entry(set, i);
        if (strcmp(xmt_entry_pattern(e), x->entry) != 0) continue;
        uint64_t fp = xmt_entry_fingerprint(e);
        char a[17], b[17];
        snprintf(a, sizeof a, "%016llx", (unsigned long long)fp);
        snprintf(b, sizeof b, "%016llx", (unsigned long long)(fp ^ 0x9e3779b9ull));
        if (!strcmp(x->entry_fp, a) || !strcmp(x->entry_fp, b)) return 1;
    }
    return 0;
}

static void diag(void *ud, const char *msg)
{
    (void)ud;
    fprintf(stderr, "xmatune: %s\n", msg);
}

/* Writes the selected records to other ("-": stdout). 0, or 1 (said). */
static int export_recs(const recs_t *s, const filter_t *f, const char *other)
{
    int to_stdout = !strcmp(other, "-");
    FILE *out = to_stdout ? stdout : fopen(other, "w");
    if (!out) {
        fprintf(stderr, "xmatune: cannot write %s: %s\n", other, strerror(errno));
        return 1;
    }
    size_t n = 0;
    for (size_t j = 0; j < s->n; j++)
        if (selected(f, &s->v[j]) && fputs(s->v[j].line, out) >= 0) n++;
    int failed = to_stdout ? fflush(out) != 0 : fclose(out) != 0;
    if (failed) {
        fprintf(stderr, "xmatune: cannot write %s: %s\n", other, strerror(errno));
        return 1;
    }
    if (!to_stdout) fprintf(stderr, "xmatune: %zu record(s) exported to %s\n", n, other);
    return 0;
}

/* Merges the records of other into s and writes s to path (the lock held). 0 or 1. */
static int import_recs(recs_t *s, const char *path, const char *other)
{
    size_t before = s->n;
    if (read_recs_as(other, s, 0, 1) < 0) return 1;
    if (write_recs(path, s) != 0) return 1;
    fprintf(stderr, "xmatune: %s: %zu new identit%s imported, %zu record(s) now\n", path,
            s->n - before, s->n - before == 1 ? "y" : "ies", s->n);
    return 0;
}

/* The cache to work on: --cache, else XMATUNE_CACHE, else the default, as an absolute
 * path. 0, or the exit status (said). */
static int resolve(const char *cache, char *path, size_t cap)
{
    char why[4200];
    if (!cache) cache = getenv("XMATUNE_CACHE");
    if (cache && !strcmp(cache, "off")) {
        fprintf(stderr, "xmatune: XMATUNE_CACHE=off: no cache to work on (give --cache FILE)\n");
        return 2;
    }
    if (cache && cache[0]) {
        char cwd[2048];
        if (cache[0] == '/') {
            snprintf(path, cap, "%s", cache);
        } else if (getcwd(cwd, sizeof cwd)) {
            snprintf(path, cap, "%s/%s", cwd, cache);
        } else {
            fprintf(stderr, "xmatune: cannot tell the current folder: %s\n", strerror(errno));
            return 1;
        }
    } else if (xmt_cachefile_default(path, cap, why, sizeof why) != 0) {
        fprintf(stderr, "xmatune: no default cache: %s\n", why);
        return 1;
    }
    return 0;
}

static int usage_to(FILE *f)
{
    fprintf(f, "usage: xmatune cache [list|show|prune|clear|export OUT|import IN] [--cache FILE]\n"
               "                     [--kernel GLOB] [--device GLOB] [--outcome WORD|any]\n"
               "                     [--policy P] [--remote URL [--password-file F]]\n"
               "       xmatune cache FILE            (list FILE)\n"
               "The cache: --cache, else XMATUNE_CACHE, else the default "
               "($XDG_CACHE_HOME/xmatune/" XMT_CACHE_FILE_NAME ").\n"
               "  list    a table of the winners (the last record of each identity)\n"
               "  show    the records themselves, one JSON line each\n"
               "  prune   drops records of policy entries that no current policy has (the entry\n"
               "          edited or gone); policies from --policy, else XMATUNE_POLICY\n"
               "  clear   drops the records selected (all, without --kernel/--device/--outcome)\n"
               "          (--outcome untold, declined, faulted, nondeterministic, untuned,\n"
               "          failed, or any: the records that keep the program's own config for\n"
               "          that reason; partial: a tuning the exit cut, docs/cache.md)\n"
               "  export  writes the records selected to OUT (- for stdout)\n"
               "  import  merges the records of IN into the cache (IN's win), marked imported:\n"
               "          the shim takes them as hints, verified before they are used\n"
               "--remote redis://HOST:PORT/PREFIX: the same verbs on the fleet's tier\n"
               "  (XMATUNE_CACHE_REMOTE; its password from --password-file, else\n"
               "  XMATUNE_CACHE_REMOTE_PASSWORD_FILE), one key per record.\n"
               "Changes are made under the cache's lock, by an atomic rewrite. A cache (or IN)\n"
               "that does not exist is an error; only import and the --cache of a first tuning\n"
               "create one.\n");
    return 2;
}

static int usage(void)
{
    return usage_to(stderr);
}

/* A missing cache is a typo more often than not: said (1), and no file nor its lock made;
 * only import creates one, from an IN that must exist. 0 when the paths are there. */
static int path_missing(const char *verb, const char *path, const char *other)
{
    int import = !strcmp(verb, "import");
    if (access(import ? other : path, import ? R_OK : F_OK) == 0) return 0;
    fprintf(stderr, "xmatune cache%s: %s: %s\n", import ? " import" : "", import ? other : path,
            strerror(errno));
    return 1;
}

/* A cache the shim would refuse (a symbolic link, say) is refused here too: reading
 * through a link and then replacing it with a plain file is how the link got lost. 1
 * after saying why, else 0. */
static int path_refused(const char *path)
{
    const char *refused = xmt_cachefile_unusable(path);
    if (!refused) return 0;
    fprintf(stderr, "xmatune: the cache %s is not used: %s\n", path, refused);
    return 1;
}

static void count_record(void *ud, const xmt_cacherec *r)
{
    (void)r;
    ++*(size_t *)ud;
}

static int count_event(json_t *e, void *ud)
{
    *(size_t *)ud += json_object_get(e, XMT_F_EVENT) != NULL;
    return 0;
}

/* import's IN must hold cache records: a log (or another file) none of whose lines is one
 * would be imported as nothing, the cache and its lock made all the same. 0 when it has
 * records (or no lines: an empty cache), else 1 after saying what it is, before any file
 * is made. */
static int import_not_a_cache(const char *other)
{
    size_t n = 0, events = 0;
    xmt_cacherec_other old = {0, 0};
    int bad = xmt_cacherec_read(other, count_record, &n, &old);
    if (bad < 0 || n || (!bad && !old.older && !old.newer)) return 0; /* unreadable: said later */
    if (xmt_log_read(other, count_event, &events) >= 0 && events)
        fprintf(stderr,
                "xmatune cache import: %s is a log (XMATUNE_LOG), not a cache: nothing "
                "imported (`xmatune report %s` reads it)\n",
                other, other);
    else
        fprintf(stderr,
                "xmatune cache import: %s is not a cache: none of its lines is a cache record%s: "
                "nothing imported\n",
                other, old.older || old.newer ? " of this version of the format" : "");
    return 1;
}

/* ---- --remote URL: the fleet's tier (docs/cache.md, "The fleet's tier") ---- */

typedef struct {
    recs_t *s;
    const char *prefix;
    size_t garbage;
} scan_t;

static void remote_value(void *ud, const char *key, const char *val, size_t len)
{
    scan_t *sc = ud;
    char *scratch = malloc(XMT_CACHEREC_SCRATCH(len));
    xmt_cacherec r;
    if (!scratch || xmt_rstore_decode(sc->prefix, key, val, len, scratch, &r) != 0) {
        sc->garbage++;
        free(scratch);
        return;
    }
    r.raw = val;
    r.raw_len = len;
    add(sc->s, &r);
    char *id = xmt_cacherec_identity(&r);
    json_t *at = id ? json_object_get(sc->s->byid, id) : NULL;
    if (at) {
        rec_t *x = &sc->s->v[json_integer_value(at)];
        free(x->rkey);
        x->rkey = strdup(key);
    }
    free(id);
    free(scratch);
}

/* A connection to the tier at url, with the password of XMATUNE_CACHE_REMOTE_PASSWORD_FILE
 * (or --password-file); NULL after saying why. */
static xmt_rstore *remote_open(const char *url, const char *pwfile, xmt_rstore_url *u)
{
    char why[1024], pw[512] = "";
    if (xmt_rstore_url_parse(url, u, why, sizeof why) != 0) {
        fprintf(stderr, "xmatune cache: --remote %s\n", why);
        return NULL;
    }
    if (!pwfile) pwfile = getenv("XMATUNE_CACHE_REMOTE_PASSWORD_FILE");
    if (pwfile && pwfile[0] && xmt_rstore_password(pwfile, pw, sizeof pw, why, sizeof why) != 0) {
        fprintf(stderr, "xmatune cache: the password file: %s\n", why);
        return NULL;
    }
    xmt_rstore *c = xmt_rstore_connect(u, pw, 5000, why, sizeof why);
    if (!c) fprintf(stderr, "xmatune cache: %s: %s\n", url, why);
    return c;
}

/* A failed command: said, 1. */
static int remote_failed(xmt_rstore *c, const char *url)
{
    fprintf(stderr, "xmatune cache: %s: %s\n", url, xmt_rstore_error(c));
    return 1;
}

/* The verbs on the fleet's tier: as on a file, each record one key of Redis. */
static int remote_cmd(const char *verb, const char *url, const char *pwfile, const filter_t *f,
                      const char *other, const xmt_policy_set *set)
{
    xmt_rstore_url u;
    xmt_rstore *c = remote_open(url, pwfile, &u);
    if (!c) return 1;
    recs_t s = {NULL, 0, 0, json_object()};
    scan_t sc = {&s, u.prefix, 0};
    int rc = 0;
    if (xmt_rstore_scan(c, u.prefix, 100000000L, remote_value, &sc) < 0) {
        rc = remote_failed(c, url);
    } else {
        if (sc.garbage)
            fprintf(stderr, "xmatune: %zu value(s) under %s:rec: are not records of their key\n",
                    sc.garbage, u.prefix);
        size_t touched = 0;
        if (!strcmp(verb, "list")) {
            list(&s, f);
        } else if (!strcmp(verb, "show")) {
            for (size_t j = 0; j < s.n; j++)
                if (selected(f, &s.v[j])) fputs(s.v[j].line, stdout);
        } else if (!strcmp(verb, "export")) {
            rc = export_recs(&s, f, other);
        } else if (!strcmp(verb, "prune") || !strcmp(verb, "clear")) {
            for (size_t j = 0; j < s.n && !rc; j++)
                if (selected(f, &s.v[j]) && (!set || !entry_known(set, &s.v[j]))) {
                    if (xmt_rstore_del(c, s.v[j].rkey) != 0) rc = remote_failed(c, url);
                    touched++;
                }
            if (!rc)
                fprintf(stderr, "xmatune: %s: %zu of %zu record(s) dropped\n", url, touched, s.n);
        } else if (!strcmp(verb, "import")) {
            recs_t in = {NULL, 0, 0, json_object()};
            if (read_recs(other, &in, 0) < 0) rc = 1;
            for (size_t j = 0; j < in.n && !rc; j++) {
                xmt_cacherec r;
                char *scratch = malloc(XMT_CACHEREC_SCRATCH(strlen(in.v[j].line)));
                char key[256];
                size_t len = strlen(in.v[j].line) - 1; /* without its '\n' */
                if (!scratch || xmt_cacherec_parse(in.v[j].line, len, scratch, &r) != 0 ||
                    xmt_rstore_keys(u.prefix, &r, key, NULL, sizeof key) != 0) {
                    free(scratch);
                    continue;
                }
                if (xmt_rstore_set(c, key, in.v[j].line, len) != 0) rc = remote_failed(c, url);
                touched += !rc;
                free(scratch);
            }
            if (!rc)
                fprintf(stderr,
                        "xmatune: %s: %zu record(s) imported (each process verifies them before "
                        "use)\n",
                        url, touched);
            free_recs(&in);
        }
    }
    free_recs(&s);
    xmt_rstore_close(c);
    return rc;
}

/* prune's policies: --policy, else XMATUNE_POLICY, into *set. 0, or the exit status (said). */
static int prune_policies(const char *policy, xmt_policy_set **set)
{
    if (!policy) policy = getenv("XMATUNE_POLICY");
    if (!policy || !policy[0]) {
        fprintf(stderr, "xmatune cache prune: which policies? (--policy P or XMATUNE_POLICY)\n");
        return 2;
    }
    if (xmt_policy_load(policy, set, diag, NULL) != 0) {
        fprintf(stderr, "xmatune cache prune: %s has errors: nothing pruned\n", policy);
        xmt_policy_free(*set);
        *set = NULL;
        return 1;
    }
    return 0;
}

/* The cache a verb works on, and its IN, checked before anything is made: path (the file;
 * unused with remote), 0, or the exit status (said). */
static int check_paths(const char *verb, const char *cache, const char *remote, const char *other,
                       char *path, size_t cap)
{
    int import = !strcmp(verb, "import");
    if (remote && cache) {
        fprintf(stderr, "xmatune cache: --remote and --cache name two caches: give one\n");
        return 2;
    }
    if (remote) return import && (path_missing(verb, "", other) || import_not_a_cache(other));
    int prc = resolve(cache, path, cap);
    if (prc) return prc;
    if (path_missing(verb, path, other) || path_refused(path)) return 1;
    return import && import_not_a_cache(other);
}

int cmd_cache(int argc, char **argv)
{
    const char *verb = "list", *cache = NULL, *policy = NULL, *other = NULL, *remote = NULL,
               *pwfile = NULL;
    filter_t f = {NULL, NULL, NULL};
    int i = 1;
    for (int h = 1; h < argc; h++)
        if (!strcmp(argv[h], "--help") || !strcmp(argv[h], "-h")) {
            usage_to(stdout);
            return 0;
        }
    static const char *const verbs[] = {"list", "show", "prune", "clear", "export", "import", NULL};
    if (i < argc && argv[i][0] != '-') {
        int known = 0;
        for (int v = 0; verbs[v]; v++)
            if (!strcmp(argv[i], verbs[v])) known = 1;
        if (known) {
            verb = argv[i++];
        } else if (access(argv[i], F_OK) == 0) {
            cache = argv[i++]; /* `xmatune cache FILE`: list it */
        } else {
            fprintf(stderr,
                    "xmatune cache: %s is neither list, show, prune, clear, export, "
                    "import nor a cache file\n",
                    argv[i]);
            return usage();
        }
    }
    int needs_other = !strcmp(verb, "export") || !strcmp(verb, "import");
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char **to = !strcmp(a, "--cache")           ? &cache
                          : !strcmp(a, "--kernel")        ? &f.kernel
                          : !strcmp(a, "--device")        ? &f.device
                          : !strcmp(a, "--outcome")       ? &f.outcome
                          : !strcmp(a, "--policy")        ? &policy
                          : !strcmp(a, "--remote")        ? &remote
                          : !strcmp(a, "--password-file") ? &pwfile
                                                          : NULL;
        if (to && i + 1 < argc) {
            *to = argv[++i];
        } else if (needs_other && !other && (a[0] != '-' || !strcmp(a, "-"))) {
            other = a;
        } else {
            fprintf(stderr, "xmatune cache: unexpected argument %s\n", a);
            return usage();
        }
    }
    if (needs_other && !other) return usage();
    char path[4096];
    int prc = check_paths(verb, cache, remote, other, path, sizeof path);
    if (prc) return prc;
    int change = !strcmp(verb, "prune") || !strcmp(verb, "clear") || !strcmp(verb, "import");
    xmt_policy_set *set = NULL;
    if (!strcmp(verb, "prune") && (prc = prune_policies(policy, &set)) != 0) return prc;
    if (remote) {
        int r = remote_cmd(verb, remote, pwfile, &f, other, set);
        xmt_policy_free(set);
        return r;
    }
    int lk = change ? lock_for_change(path) : xmt_cachefile_lock(path, 0);
    if (change && lk < 0) {
        xmt_policy_free(set);
        return 1;
    }
    recs_t s = {NULL, 0, 0, json_object()};
    int bad = read_recs(path, &s, change);
    int rc = bad < 0 ? 1 : 0;
    size_t touched = 0, total = s.n;
    if (rc == 0 && !strcmp(verb, "list")) {
        list(&s, &f);
        rc = bad ? 1 : 0;
    } else if (rc == 0 && !strcmp(verb, "show")) {
        for (size_t j = 0; j < s.n; j++)
            if (selected(&f, &s.v[j])) fputs(s.v[j].line, stdout);
    } else if (rc == 0 && !strcmp(verb, "export")) {
        rc = export_recs(&s, &f, other);
    } else if (rc == 0 && (!strcmp(verb, "prune") || !strcmp(verb, "clear"))) {
        for (size_t j = 0; j < s.n; j++)
            if (selected(&f, &s.v[j]) && (!set || !entry_known(set, &s.v[j]))) {
                s.v[j].dropped = 1;
                touched++;
            }
        rc = write_recs(path, &s) ? 1 : 0;
        if (!rc)
            fprintf(stderr, "xmatune: %s: %zu of %zu record(s) dropped%s\n", path, touched, total,
                    bad ? " (and the lines that were not records)" : "");
    } else if (rc == 0 && !strcmp(verb, "import")) {
        rc = import_recs(&s, path, other);
    }
    if (lk >= 0) close(lk);
    free_recs(&s);
    xmt_policy_free(set);
    return rc;
}
