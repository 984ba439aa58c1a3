/*
 * remote: the fleet's tier of the cache (see remote.h).
 */
#include "remote.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "guard.h"
#include "log.h"
#include "options.h"
#include "rstore.h"
#include "uthash.h"

#define KEY_CAP 160
#define POLL_MS 200.0 /* a watched key's poll */
#define BACKOFF_MIN_MS 100.0
#define BACKOFF_MAX_MS 5000.0
#define MAX_OPS 1024       /* decisions queued while the server is away */
#define MAX_RECORDS 200000 /* read at connect: a bound on the memory a store can make us use */

/* What this process knows of one identity in Redis. E_SEEN: another process held its claim
 * when this one last read the claims (at connect, or from their index every 200 ms), and no
 * launch here has asked for the key since: not polled until one does (then E_THEIRS). */
enum { E_NONE, E_RECORD, E_THEIRS, E_MINE, E_SEEN };

typedef struct ent {
    UT_hash_handle hh;
    char rec_key[KEY_CAP]; /* the table's key */
    char claim_key[KEY_CAP];
    int state;
    char *line; /* E_RECORD: the record's value */
    size_t len;
    double next_ms; /* E_THEIRS: the next poll; E_MINE: the next renewal */
} ent;

/* Work for the thread. */
enum { OP_CLAIM, OP_STORE, OP_RELEASE };
typedef struct op {
    struct op *next;
    int kind;
    char rec_key[KEY_CAP], claim_key[KEY_CAP];
    char *line; /* OP_STORE */
    size_t len;
    int done, answer; /* OP_CLAIM: answered (XMT_REMOTE_*), and the asker gone */
    int abandoned;
} op;

/* The module's state: the URL, the connection (the thread's alone), the table and the
 * queue (under lock), and the warn-once flags. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cv;   /* work for the thread, or stopping */
    pthread_cond_t done; /* a claim answered, the queue emptied, the thread ended */
    int on, started, stopping, ended;
    int connected;  /* the thread's connection is up (read under lock) */
    int connecting; /* the thread is connecting: a claim asked now waits for it */
    xmt_rstore_url url;
    char password[512];
    char owner[128];  /* this process's name in a claim: host:pid:random */
    xmt_rstore *conn; /* the thread's */
    ent *table;
    double next_refresh; /* the next read of the claims' index (the thread's) */
    op *head, *tail;
    int nops;
    pthread_t thread;
    atomic_int down_warned, full_warned, garbage_warned, dropped_warned;
} rm = {.lock = PTHREAD_MUTEX_INITIALIZER,
        .cv = PTHREAD_COND_INITIALIZER,
        .done = PTHREAD_COND_INITIALIZER};

/* The key names of an identity; -1 when they cannot be made (out of memory). */
static int names_of(const xmt_cache_id *id, const uint8_t *key, size_t keylen, char *rec_key,
                    char *claim_key)
{
    char *hex = malloc(2 * keylen + 1);
    if (!hex) return -1;
    xmt_cacherec_hex(key, keylen, hex);
    xmt_cacherec r = {.device = id->device,
                      .kernel = id->kernel,
                      .code = id->code,
                      .entry = id->entry,
                      .entry_fp = id->entry_fp,
                      .key_hex = hex,
                      .key_text = ""};
    int rc = xmt_rstore_keys(rm.url.prefix, &r, rec_key, claim_key, KEY_CAP);
    free(hex);
    return rc;
}

/* The entry of rec_key, made when absent (NULL when out of memory). rm.lock held. */
static ent *entry(const char *rec_key, const char *claim_key)
{
    ent *e;
    HASH_FIND_STR(rm.table, rec_key, e);
    if (e) return e;
    if (!(e = calloc(1, sizeof *e))) return NULL;
    snprintf(e->rec_key, sizeof e->rec_key, "%s", rec_key);
    if (claim_key)
        snprintf(e->claim_key, sizeof e->claim_key, "%s", claim_key);
    else /* from a scan: PREFIX:rec:HASH -> PREFIX:claim:HASH */
        snprintf(e->claim_key, sizeof e->claim_key, "%s:claim:%s", rm.url.prefix,
                 rec_key + strlen(rm.url.prefix) + 5);
    HASH_ADD_STR(rm.table, rec_key, e);
    return e;
}

/* A record's value kept for e (taking line). rm.lock held. */
static void keep(ent *e, char *line, size_t len)
{
    free(e->line);
    e->line = line;
    e->len = len;
    e->state = E_RECORD;
}

/* A value read from Redis under key: kept when it is a record of that key's identity, else
 * said once (garbage in the store) and dropped. Takes val. rm.lock held. */
static int keep_value(const char *key, char *val, size_t len)
{
    char *scratch = malloc(XMT_CACHEREC_SCRATCH(len));
    xmt_cacherec r;
    int ok = scratch && xmt_rstore_decode(rm.url.prefix, key, val, len, scratch, &r) == 0;
    free(scratch);
    if (!ok) {
        if (xmt_first_time(&rm.garbage_warned))
            xmt_warn("the remote cache %s:%d/%s holds a value under %.120s that is not a record of "
                     "that key: ignored (and any other such value, silently)",
                     rm.url.host, rm.url.port, rm.url.prefix, key);
        free(val);
        return 0;
    }
    ent *e = entry(key, NULL);
    if (!e) {
        free(val);
        return 0;
    }
    if (e->state == E_MINE) e->state = E_NONE; /* our own claim stays the thread's to drop */
    keep(e, val, len);
    return 1;
}

/* ---- the thread ---- */

/* The connection failed: closed, said once, the next try after a backoff. */
static void lost(const char *error)
{
    char why[300]; /* error may be the connection's own text, freed below */
    snprintf(why, sizeof why, "%s", error);
    xmt_rstore_close(rm.conn);
    rm.conn = NULL;
    pthread_mutex_lock(&rm.lock);
    rm.connected = 0;
    pthread_mutex_unlock(&rm.lock);
    if (xmt_first_time(&rm.down_warned))
        xmt_warn("the remote cache redis://%s:%d/%s cannot be used (%s): the program goes on with "
                 "the local cache alone, and tries again now and then (said once)",
                 rm.url.host, rm.url.port, rm.url.prefix, why);
    else
        xmt_verbose(1, "the remote cache is away again (%s)", why);
}

/* An error of rc from a call: -1 loses the connection (1 returned), -2 (the server refused:
 * full, read-only) is said once and the connection kept (0). */
static int failed(int rc)
{
    if (rc == -1) {
        lost(xmt_rstore_error(rm.conn));
        return 1;
    }
    if (rc == -2 && xmt_first_time(&rm.full_warned))
        xmt_warn("the remote cache redis://%s:%d/%s refused a command (%s): what it refuses is "
                 "kept locally only (said once)",
                 rm.url.host, rm.url.port, rm.url.prefix, xmt_rstore_error(rm.conn));
    return 0;
}

static void scanned(void *ud, const char *key, const char *val, size_t len)
{
    (void)ud;
    char *v = malloc(len + 1);
    if (!v) return;
    memcpy(v, val, len);
    v[len] = 0;
    pthread_mutex_lock(&rm.lock);
    ent *e;
    HASH_FIND_STR(rm.table, key, e);
    if (!e || e->state != E_RECORD) /* what this process stored or read already stays */
        (void)keep_value(key, v, len);
    else
        free(v);
    pthread_mutex_unlock(&rm.lock);
}

/* A claim read at connect: a key another process holds is known as such before this
 * process's first launch of it, which then runs the program's own config without asking
 * (polled as any key another holds). A claim of this process's own (after a reconnection)
 * stays its own. */
static void scanned_claim(void *ud, const char *key, const char *val, size_t len)
{
    (void)ud;
    size_t pl = strlen(rm.url.prefix);
    char rk[KEY_CAP];
    if (strncmp(key, rm.url.prefix, pl) != 0 || strncmp(key + pl, ":claim:", 7) != 0) return;
    if (len == strlen(rm.owner) && !memcmp(val, rm.owner, len)) return;
    snprintf(rk, sizeof rk, "%s:rec:%s", rm.url.prefix, key + pl + 7);
    pthread_mutex_lock(&rm.lock);
    ent *e = entry(rk, key);
    if (e && e->state == E_NONE) e->state = E_SEEN;
    pthread_mutex_unlock(&rm.lock);
}

/* A live claim from the claims' index (xmt_rstore_live_claims): its key becomes E_SEEN, unless
 * this process knows more of it (its record, its own claim, a poll). */
static void live_claim(void *ud, const char *hash)
{
    (void)ud;
    char rk[KEY_CAP], ck[KEY_CAP];
    snprintf(rk, sizeof rk, "%s:rec:%s", rm.url.prefix, hash);
    snprintf(ck, sizeof ck, "%s:claim:%s", rm.url.prefix, hash);
    pthread_mutex_lock(&rm.lock);
    ent *e = entry(rk, ck);
    if (e && e->state == E_NONE) e->state = E_SEEN;
    pthread_mutex_unlock(&rm.lock);
}

/* Connects, and reads every record and every claim under the prefix. 0 when connected. */
static int connect_now(void)
{
    char why[512];
    rm.conn =
        xmt_rstore_connect(&rm.url, rm.password, xmt_opt.cache_remote_timeout_ms, why, sizeof why);
    if (!rm.conn) {
        if (xmt_first_time(&rm.down_warned))
            xmt_warn("the remote cache redis://%s:%d/%s cannot be used (%s): the program goes on "
                     "with the local cache alone, and tries again now and then (said once)",
                     rm.url.host, rm.url.port, rm.url.prefix, why);
        return -1;
    }
    long n = xmt_rstore_scan(rm.conn, rm.url.prefix, MAX_RECORDS, scanned, NULL);
    if (n < 0 && failed((int)n)) return -1;
    long nc = xmt_rstore_scan_claims(rm.conn, rm.url.prefix, MAX_RECORDS, scanned_claim, NULL);
    if (nc < 0 && failed((int)nc)) return -1;
    xmt_verbose(1, "the remote cache redis://%s:%d/%s: connected, %ld records and %ld claims read",
                rm.url.host, rm.url.port, rm.url.prefix, n, nc);
    pthread_mutex_lock(&rm.lock);
    rm.connected = 1;
    pthread_mutex_unlock(&rm.lock);
    return 0;
}

/* A claim: the record when there is one, else SET NX; after a claim won, the record again
 * (one stored between the two: the claim is given back). Answers XMT_REMOTE_*. */
static int do_claim(op *o, char **line, size_t *len)
{
    int rc = xmt_rstore_get(rm.conn, o->rec_key, line, len);
    if (rc == 1) return XMT_REMOTE_FOUND;
    if (rc < 0) return failed(rc), XMT_REMOTE_OFF;
    rc = xmt_rstore_claim(rm.conn, o->claim_key, rm.owner, xmt_opt.cache_remote_claim_ms);
    if (rc < 0) return failed(rc), XMT_REMOTE_OFF;
    int mine = rc == 1;
    rc = xmt_rstore_get(rm.conn, o->rec_key, line, len);
    if (rc < 0) return failed(rc), XMT_REMOTE_OFF;
    if (rc == 1) {
        if (mine) (void)xmt_rstore_release(rm.conn, o->claim_key, rm.owner);
        return XMT_REMOTE_FOUND;
    }
    return mine ? XMT_REMOTE_MINE : XMT_REMOTE_THEIRS;
}

/* A claim answered: a waiting asker takes o, an abandoned one is freed (and a claim it
 * won given back, returned 1). rm.lock held. */
static int answer(op *o, int a)
{
    o->answer = a;
    o->done = 1;
    pthread_cond_broadcast(&rm.done);
    if (!o->abandoned) return 0;
    free(o);
    return a == XMT_REMOTE_MINE;
}

/* Runs a claim, taken off the queue (rm.lock not held). A key whose state this process
 * learned while the claim waited in the queue (at connect: a claim of another's, a record)
 * is answered from memory, without asking the server. */
static void run_claim(op *o)
{
    char *line = NULL, rk[KEY_CAP], ck[KEY_CAP];
    size_t len = 0;
    pthread_mutex_lock(&rm.lock);
    ent *known;
    HASH_FIND_STR(rm.table, o->rec_key, known);
    int a = !known                                               ? -1
            : known->state == E_RECORD                           ? XMT_REMOTE_FOUND
            : known->state == E_THEIRS || known->state == E_SEEN ? XMT_REMOTE_THEIRS
            : known->state == E_MINE                             ? XMT_REMOTE_MINE
                                                                 : -1;
    if (a >= 0) {
        if (known->state == E_SEEN) { /* asked for now: watched from here on */
            known->state = E_THEIRS;
            known->next_ms = xmt_now_ms();
        }
        (void)answer(o, a); /* (an abandoned asker's o is freed there; nothing was claimed) */
        pthread_mutex_unlock(&rm.lock);
        return;
    }
    pthread_mutex_unlock(&rm.lock);
    a = do_claim(o, &line, &len);
    memcpy(rk, o->rec_key, KEY_CAP);
    memcpy(ck, o->claim_key, KEY_CAP);
    pthread_mutex_lock(&rm.lock);
    ent *e = entry(rk, ck);
    if (a == XMT_REMOTE_FOUND) {
        if (!e) free(line);                                       /* out of memory */
        if (!e || !keep_value(rk, line, len)) a = XMT_REMOTE_OFF; /* garbage: tuned here */
        line = NULL;                                              /* kept, or freed */
    } else if (e && a == XMT_REMOTE_THEIRS) {
        e->state = E_THEIRS;
        e->next_ms = xmt_now_ms() + POLL_MS;
    } else if (e && a == XMT_REMOTE_MINE) {
        e->state = E_MINE;
        e->next_ms = xmt_now_ms() + xmt_opt.cache_remote_claim_ms / 3.0;
    }
    int give_back = answer(o, a);
    if (give_back && e) e->state = E_NONE;
    pthread_mutex_unlock(&rm.lock);
    free(line);
    if (give_back && rm.conn) (void)xmt_rstore_release(rm.conn, ck, rm.owner);
}

/* Runs a store or a release (rm.lock not held). 0 done, -1 the connection was lost (it
 * stays queued). */
static int run_write(op *o)
{
    int rc;
    if (o->kind == OP_STORE) {
        rc = xmt_rstore_set(rm.conn, o->rec_key, o->line, o->len);
        if (rc == 0) rc = xmt_rstore_release(rm.conn, o->claim_key, rm.owner);
    } else {
        rc = xmt_rstore_release(rm.conn, o->claim_key, rm.owner);
    }
    if (rc < 0 && failed(rc)) return -1;
    return 0;
}

/* Unlinks o, the queue's head. rm.lock held. */
static void pop(void)
{
    rm.head = rm.head->next;
    if (!rm.head) rm.tail = NULL;
    rm.nops--;
}

/* No server: every queued claim is answered OFF at once (writes wait). rm.lock held. */
static void claims_off(void)
{
    for (op **pp = &rm.head; *pp;) {
        op *o = *pp;
        if (o->kind != OP_CLAIM) {
            pp = &o->next;
            continue;
        }
        *pp = o->next;
        rm.nops--;
        (void)answer(o, XMT_REMOTE_OFF);
    }
    rm.tail = NULL;
    for (op *o = rm.head; o; o = o->next)
        rm.tail = o;
}

/* Polls the keys this process waits on and renews its claims, as their times come. */
static void tend(void)
{
    double now = xmt_now_ms();
    if (now >= rm.next_refresh && rm.conn) { /* the claims other processes took meanwhile */
        rm.next_refresh = now + POLL_MS;
        long n = xmt_rstore_live_claims(rm.conn, rm.url.prefix, MAX_RECORDS, live_claim, NULL);
        if (n < 0 && failed((int)n)) return;
    }
    char keys[16][2][KEY_CAP];
    int kinds[16], n = 0;
    pthread_mutex_lock(&rm.lock);
    for (ent *e = rm.table; e && n < 16; e = e->hh.next)
        if ((e->state == E_THEIRS || e->state == E_MINE) && e->next_ms <= now) {
            memcpy(keys[n][0], e->rec_key, KEY_CAP);
            memcpy(keys[n][1], e->claim_key, KEY_CAP);
            kinds[n++] = e->state;
            e->next_ms =
                now + (e->state == E_THEIRS ? POLL_MS : xmt_opt.cache_remote_claim_ms / 3.0);
        }
    pthread_mutex_unlock(&rm.lock);
    for (int i = 0; i < n && rm.conn; i++) {
        if (kinds[i] == E_MINE) {
            int rc = xmt_rstore_renew(rm.conn, keys[i][1], rm.owner, xmt_opt.cache_remote_claim_ms);
            if (rc < 0) failed(rc);
            if (rc == 0) { /* it expired (and may be another's now): ours no more, left alone */
                pthread_mutex_lock(&rm.lock);
                ent *e;
                HASH_FIND_STR(rm.table, keys[i][0], e);
                if (e && e->state == E_MINE) e->state = E_NONE;
                pthread_mutex_unlock(&rm.lock);
                xmt_verbose(1, "a claim of this process in the remote cache expired before it "
                               "was renewed: the key may be tuned twice in the fleet");
            }
            continue;
        }
        char *line = NULL, *c = NULL;
        size_t len = 0, cl = 0;
        int rc = xmt_rstore_get(rm.conn, keys[i][0], &line, &len);
        if (rc < 0) {
            failed(rc);
            continue;
        }
        int claimed = 1;
        if (rc == 0) {
            int g = xmt_rstore_get(rm.conn, keys[i][1], &c, &cl);
            if (g < 0) {
                failed(g);
                continue;
            }
            free(c);
            claimed = g == 1;
        }
        pthread_mutex_lock(&rm.lock);
        ent *e;
        HASH_FIND_STR(rm.table, keys[i][0], e);
        if (e && e->state == E_THEIRS) {
            if (rc == 1)
                (void)keep_value(keys[i][0], line, len), line = NULL;
            else if (!claimed)
                e->state = E_NONE; /* its claimer gave up or died: the next look claims */
        }
        pthread_mutex_unlock(&rm.lock);
        free(line);
    }
}

/* The soonest time tend() has work (a far one when none). rm.lock held. */
static double next_due(void)
{
    double t = rm.next_refresh;
    for (ent *e = rm.table; e; e = e->hh.next)
        if ((e->state == E_THEIRS || e->state == E_MINE) && e->next_ms < t) t = e->next_ms;
    return t;
}

static void wait_until(double ms)
{
    double d = ms - xmt_now_ms();
    if (d <= 0) return;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    long ns = t.tv_nsec + (long)(d * 1e6);
    t.tv_sec += ns / 1000000000L;
    t.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(&rm.cv, &rm.lock, &t);
}

/* At exit (rm.stopping, connected): this process's claims given up. */
static void release_all(void)
{
    for (;;) {
        char key[KEY_CAP] = "";
        pthread_mutex_lock(&rm.lock);
        for (ent *e = rm.table; e; e = e->hh.next)
            if (e->state == E_MINE) {
                memcpy(key, e->claim_key, KEY_CAP);
                e->state = E_NONE;
                break;
            }
        pthread_mutex_unlock(&rm.lock);
        if (!key[0] || !rm.conn) return;
        int rc = xmt_rstore_release(rm.conn, key, rm.owner);
        if (rc < 0 && failed(rc)) return;
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    xmt_in_shim = 1; /* the shim's own thread (it makes no driver call) */
    double backoff = BACKOFF_MIN_MS, next_try = 0;
    int tried_at_exit = 0;
    pthread_mutex_lock(&rm.lock);
    for (;;) {
        if (!rm.conn) {
            /* at exit, decisions not sent yet get one more try (bounded by the timeout);
             * else nothing waits on a server that is away */
            if (rm.stopping && (!rm.head || tried_at_exit)) break;
            if (rm.stopping) {
                tried_at_exit = 1;
                next_try = 0;
            }
            if (xmt_now_ms() < next_try) {
                wait_until(next_try);
                continue;
            }
            rm.connecting = 1;
            pthread_mutex_unlock(&rm.lock);
            int ok = connect_now() == 0;
            pthread_mutex_lock(&rm.lock);
            rm.connecting = 0;
            if (!ok) {
                next_try = xmt_now_ms() + backoff;
                backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
                claims_off();
                continue;
            }
            backoff = BACKOFF_MIN_MS;
        }
        op *o = rm.head;
        if (o && o->kind == OP_CLAIM) {
            pop();
            pthread_mutex_unlock(&rm.lock);
            run_claim(o);
            pthread_mutex_lock(&rm.lock);
            continue;
        }
        if (o) {
            pthread_mutex_unlock(&rm.lock);
            int rc = run_write(o);
            pthread_mutex_lock(&rm.lock);
            if (rc == 0) {
                pop();
                free(o->line);
                free(o);
                pthread_cond_broadcast(&rm.done);
            } else {
                next_try = xmt_now_ms() + backoff;
                claims_off();
            }
            continue;
        }
        if (rm.stopping) break;
        pthread_mutex_unlock(&rm.lock);
        tend();
        pthread_mutex_lock(&rm.lock);
        if (!rm.head && !rm.stopping && rm.conn) wait_until(next_due());
    }
    pthread_mutex_unlock(&rm.lock);
    if (rm.conn) release_all();
    pthread_mutex_lock(&rm.lock);
    rm.ended = 1;
    pthread_cond_broadcast(&rm.done);
    pthread_mutex_unlock(&rm.lock);
    return NULL;
}

/* ---- the shim's side ---- */

void xmt_remote_start(void)
{
    if (!xmt_opt.cache_remote[0] || rm.on) return;
    char why[512];
    if (xmt_rstore_url_parse(xmt_opt.cache_remote, &rm.url, why, sizeof why) != 0) {
        xmt_warn("XMATUNE_CACHE_REMOTE: %s; no remote tier: the local cache alone", why);
        return;
    }
    if (xmt_opt.cache_remote_password_file[0] &&
        xmt_rstore_password(xmt_opt.cache_remote_password_file, rm.password, sizeof rm.password,
                            why, sizeof why) != 0) {
        xmt_warn("XMATUNE_CACHE_REMOTE_PASSWORD_FILE: %s; no remote tier: the local cache alone",
                 why);
        return;
    }
    char host[64] = "";
    (void)gethostname(host, sizeof host - 1);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    snprintf(rm.owner, sizeof rm.owner, "%s:%ld:%lx", host, (long)getpid(),
             (unsigned long)(t.tv_nsec ^ (t.tv_sec << 20)));
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int ok = pthread_create(&rm.thread, NULL, thread_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok) {
        xmt_warn("the remote cache's thread cannot start: the local cache alone");
        return;
    }
    pthread_detach(rm.thread);
    pthread_mutex_lock(&rm.lock);
    rm.on = rm.started = 1;
    /* the first claims wait for the first connection (rm.conn is the thread's own: what this
     * thread may read is rm.connected, under the lock) */
    if (!rm.connected) rm.connecting = 1;
    pthread_mutex_unlock(&rm.lock);
}

/* The choice of a kept record, origin "remote". 0 when it does not parse (cannot happen: it
 * was checked when kept). rm.lock held. */
static int choice_of(const ent *e, xmt_choice *out)
{
    char *scratch = malloc(XMT_CACHEREC_SCRATCH(e->len));
    xmt_cacherec r;
    int ok = scratch && xmt_cacherec_parse(e->line, e->len, scratch, &r) == 0;
    if (ok) {
        *out = r.choice;
        snprintf(out->origin, sizeof out->origin, "remote");
    }
    free(scratch);
    return ok;
}

int xmt_remote_find(const xmt_cache_id *id, const uint8_t *key, size_t keylen, xmt_choice *out)
{
    if (!rm.on) return 0;
    char rk[KEY_CAP], ck[KEY_CAP];
    if (names_of(id, key, keylen, rk, ck) != 0) return 0;
    pthread_mutex_lock(&rm.lock);
    ent *e;
    HASH_FIND_STR(rm.table, rk, e);
    int found = e && e->state == E_RECORD && choice_of(e, out);
    pthread_mutex_unlock(&rm.lock);
    return found;
}

/* Queues o (rm.lock held); 0, or -1 when the queue is full (o is not queued). */
static int enqueue(op *o)
{
    if (rm.nops >= MAX_OPS || rm.stopping) return -1;
    if (rm.tail)
        rm.tail->next = o;
    else
        rm.head = o;
    rm.tail = o;
    rm.nops++;
    pthread_cond_signal(&rm.cv);
    return 0;
}

/* What the table says of e's key, as xmt_remote_claim answers it (a key claimed elsewhere
 * is watched from here on); -1 when it says nothing: the fleet must be asked. rm.lock held. */
static int known_answer(ent *e, xmt_choice *out)
{
    if (!e) return -1;
    if (e->state == E_RECORD && choice_of(e, out)) return XMT_REMOTE_FOUND;
    if (e->state == E_SEEN) {
        e->state = E_THEIRS;
        e->next_ms = xmt_now_ms();
        return XMT_REMOTE_THEIRS;
    }
    if (e->state == E_THEIRS) return XMT_REMOTE_THEIRS;
    if (e->state == E_MINE) return XMT_REMOTE_MINE;
    return -1;
}

int xmt_remote_known(const xmt_cache_id *id, const uint8_t *key, size_t keylen, xmt_choice *out)
{
    if (!rm.on) return XMT_REMOTE_OFF;
    char rk[KEY_CAP], ck[KEY_CAP];
    if (names_of(id, key, keylen, rk, ck) != 0) return XMT_REMOTE_OFF;
    pthread_mutex_lock(&rm.lock);
    ent *e;
    HASH_FIND_STR(rm.table, rk, e);
    int a = known_answer(e, out);
    pthread_mutex_unlock(&rm.lock);
    return a < 0 ? XMT_REMOTE_OFF : a;
}

int xmt_remote_claim(const xmt_cache_id *id, const uint8_t *key, size_t keylen, xmt_choice *out)
{
    if (!rm.on) return XMT_REMOTE_OFF;
    char rk[KEY_CAP], ck[KEY_CAP];
    if (names_of(id, key, keylen, rk, ck) != 0) return XMT_REMOTE_OFF;
    pthread_mutex_lock(&rm.lock);
    int a = XMT_REMOTE_OFF;
    ent *e;
    HASH_FIND_STR(rm.table, rk, e);
    int known = known_answer(e, out);
    if (known >= 0) {
        a = known;
    } else if (rm.connected || rm.connecting) {
        op *o = calloc(1, sizeof *o);
        if (o) {
            o->kind = OP_CLAIM;
            snprintf(o->rec_key, sizeof o->rec_key, "%s", rk);
            snprintf(o->claim_key, sizeof o->claim_key, "%s", ck);
        }
        if (o && enqueue(o) == 0) {
            /* the asker that is about to tune (a launch under XMATUNE_TUNING=sync, or the
             * background worker) waits for the fleet's answer, boundedly */
            double end = xmt_now_ms() + 2.0 * xmt_opt.cache_remote_timeout_ms + 50.0;
            while (!o->done && xmt_now_ms() < end) {
                struct timespec t;
                clock_gettime(CLOCK_REALTIME, &t);
                long ns = t.tv_nsec + 20L * 1000000L;
                t.tv_sec += ns / 1000000000L;
                t.tv_nsec = ns % 1000000000L;
                pthread_cond_timedwait(&rm.done, &rm.lock, &t);
            }
            if (o->done) {
                a = o->answer;
                if (a == XMT_REMOTE_FOUND) {
                    HASH_FIND_STR(rm.table, rk, e);
                    if (!e || e->state != E_RECORD || !choice_of(e, out)) a = XMT_REMOTE_OFF;
                }
                free(o);
            } else {
                o->abandoned = 1; /* the thread frees it, and gives back a claim it wins */
                xmt_verbose(1, "the remote cache did not answer a claim in time: tuned here");
            }
        } else {
            free(o);
        }
    }
    pthread_mutex_unlock(&rm.lock);
    return a;
}

void xmt_remote_store(const xmt_cache_id *id, const uint8_t *key, size_t keylen,
                      const char *key_text, const xmt_choice *c)
{
    if (!rm.on || c->origin[0] || !strcmp(c->outcome, XMT_OUTCOME_FAILED)) {
        if (rm.on) xmt_remote_unclaim(id, key, keylen);
        return;
    }
    char *hex = malloc(2 * keylen + 1);
    if (!hex) return;
    xmt_cacherec_hex(key, keylen, hex);
    xmt_cacherec r = {.device = id->device,
                      .kernel = id->kernel,
                      .code = id->code,
                      .entry = id->entry,
                      .entry_fp = id->entry_fp,
                      .key_hex = hex,
                      .key_text = key_text ? key_text : "",
                      .choice = *c};
    char *line = xmt_rstore_encode(&r);
    char rk[KEY_CAP], ck[KEY_CAP];
    int named = xmt_rstore_keys(rm.url.prefix, &r, rk, ck, KEY_CAP) == 0;
    free(hex);
    op *o = line && named ? calloc(1, sizeof *o) : NULL;
    if (!o) {
        free(line);
        return;
    }
    o->kind = OP_STORE;
    snprintf(o->rec_key, sizeof o->rec_key, "%s", rk);
    snprintf(o->claim_key, sizeof o->claim_key, "%s", ck);
    o->len = strlen(line);
    o->line = line;
    pthread_mutex_lock(&rm.lock);
    ent *e = entry(rk, ck);
    char *mine = e ? malloc(o->len + 1) : NULL;
    if (mine) {
        memcpy(mine, line, o->len + 1);
        keep(e, mine, o->len);
    }
    int queued = enqueue(o) == 0;
    pthread_mutex_unlock(&rm.lock);
    if (!queued) {
        if (xmt_first_time(&rm.dropped_warned))
            xmt_warn("the remote cache's queue is full (%d decisions not sent yet): this one stays "
                     "local (said once)",
                     MAX_OPS);
        free(o->line);
        free(o);
    }
}

void xmt_remote_unclaim(const xmt_cache_id *id, const uint8_t *key, size_t keylen)
{
    if (!rm.on) return;
    char rk[KEY_CAP], ck[KEY_CAP];
    if (names_of(id, key, keylen, rk, ck) != 0) return;
    pthread_mutex_lock(&rm.lock);
    ent *e;
    HASH_FIND_STR(rm.table, rk, e);
    if (e && e->state == E_MINE) {
        e->state = E_NONE;
        op *o = calloc(1, sizeof *o);
        if (o) {
            o->kind = OP_RELEASE;
            snprintf(o->rec_key, sizeof o->rec_key, "%s", rk);
            snprintf(o->claim_key, sizeof o->claim_key, "%s", ck);
            if (enqueue(o) != 0) free(o); /* the claim expires by itself */
        }
    }
    pthread_mutex_unlock(&rm.lock);
}

void xmt_remote_stop(void)
{
    if (!rm.started) return;
    pthread_mutex_lock(&rm.lock);
    rm.stopping = 1;
    pthread_cond_broadcast(&rm.cv);
    double end = xmt_now_ms() + 4.0 * xmt_opt.cache_remote_timeout_ms;
    while (!rm.ended && xmt_now_ms() < end) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        long ns = t.tv_nsec + 10L * 1000000L;
        t.tv_sec += ns / 1000000000L;
        t.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&rm.done, &rm.lock, &t);
    }
    pthread_mutex_unlock(&rm.lock);
}

void xmt_remote_atfork(int phase)
{
    if (phase == XMT_FORK_PREPARE) {
        pthread_mutex_lock(&rm.lock);
        return;
    }
    if (phase == XMT_FORK_CHILD) {
        /* the thread and its connection are the parent's: the child has no tier */
        rm.on = rm.started = 0;
        rm.conn = NULL;
        rm.connected = 0;
    }
    pthread_mutex_unlock(&rm.lock);
}
