/*
 * rstore: the remote tier's Redis store (see rstore.h).
 */
#include "rstore.h"

#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

struct xmt_rstore {
    redisContext *c;
    char err[256];
};

static int prefix_ok(const char *p)
{
    if (!*p) return 0;
    for (; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              strchr("._:-", *p)))
            return 0;
    return 1;
}

int xmt_rstore_url_parse(const char *s, xmt_rstore_url *u, char *why, size_t cap)
{
    memset(u, 0, sizeof *u);
    u->port = 6379;
    snprintf(u->prefix, sizeof u->prefix, "xmatune");
    const char *p;
    if (!strncmp(s, "redis://", 8)) {
        p = s + 8;
    } else if (!strncmp(s, "rediss://", 9)) {
        u->tls = 1;
        snprintf(why, cap,
                 "%.200s: rediss:// (TLS) needs hiredis 1.0 or later, and this xmatune is built "
                 "with hiredis %d.%d.%d, which has no TLS",
                 s, HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
        return -1;
    } else {
        snprintf(why, cap, "%.200s is not a redis://HOST:PORT/PREFIX URL", s);
        return -1;
    }
    const char *end = p + strcspn(p, "/");
    if (memchr(p, '@', (size_t)(end - p))) {
        snprintf(why, cap,
                 "%.200s: a user or password in the URL is refused (it would be seen in the "
                 "process's environment): put it in XMATUNE_CACHE_REMOTE_PASSWORD_FILE",
                 s);
        return -1;
    }
    const char *host = p, *hend, *port = NULL;
    if (*p == '[') {
        host = p + 1;
        hend = memchr(host, ']', (size_t)(end - host));
        if (!hend) {
            snprintf(why, cap, "%.200s: an IPv6 host without its closing ]", s);
            return -1;
        }
        if (hend + 1 < end) {
            if (hend[1] != ':') {
                snprintf(why, cap, "%.200s: text after the IPv6 host", s);
                return -1;
            }
            port = hend + 2;
        }
    } else {
        hend = memchr(p, ':', (size_t)(end - p));
        if (hend)
            port = hend + 1;
        else
            hend = end;
    }
    size_t hl = (size_t)(hend - host);
    if (hl == 0 || hl >= sizeof u->host) {
        snprintf(why, cap, "%.200s: no host, or a host too long", s);
        return -1;
    }
    memcpy(u->host, host, hl);
    if (port) {
        long v = 0;
        const char *q = port;
        for (; q < end && *q >= '0' && *q <= '9' && v <= 65535; q++)
            v = v * 10 + (*q - '0');
        if (q == port || q != end || v < 1 || v > 65535) {
            snprintf(why, cap, "%.200s: the port is not a number from 1 to 65535", s);
            return -1;
        }
        u->port = (int)v;
    }
    if (*end == '/' && end[1]) {
        if (strlen(end + 1) >= sizeof u->prefix || !prefix_ok(end + 1)) {
            snprintf(why, cap,
                     "%.200s: the prefix may hold letters, digits and . _ : - only (at most "
                     "%zu of them)",
                     s, sizeof u->prefix - 1);
            return -1;
        }
        snprintf(u->prefix, sizeof u->prefix, "%s", end + 1);
    }
    return 0;
}

int xmt_rstore_password(const char *path, char *out, size_t cap, char *why, size_t wcap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0) {
        snprintf(why, wcap, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(why, wcap, "%s is not a regular file", path);
        return -1;
    }
    if (st.st_mode & (S_IRGRP | S_IROTH | S_IWGRP | S_IWOTH)) {
        close(fd);
        snprintf(why, wcap,
                 "%s may be read or written by group or others (mode %04o): chmod 600 it", path,
                 (unsigned)(st.st_mode & 07777));
        return -1;
    }
    ssize_t n = read(fd, out, cap - 1);
    close(fd);
    if (n < 0) {
        snprintf(why, wcap, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    out[n] = 0;
    out[strcspn(out, "\r\n")] = 0;
    if (!out[0] || (size_t)n == cap - 1) {
        snprintf(why, wcap, "%s holds no password on its first line, or one too long", path);
        return -1;
    }
    return 0;
}

/* 64-bit FNV-1a of s from offset basis h. */
static uint64_t fnv(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

int xmt_rstore_keys(const char *prefix, const xmt_cacherec *r, char *rec_key, char *claim_key,
                    size_t cap)
{
    char *id = xmt_cacherec_identity(r);
    if (!id) return -1;
    /* two hashes of different bases: 128 bits, so that two identities never share a key in
     * practice (and a value is read back only when its identity is the key's) */
    uint64_t a = fnv(1469598103934665603ull, id), b = fnv(0x6c62272e07bb0142ull, id);
    free(id);
    if (rec_key)
        snprintf(rec_key, cap, "%s:rec:%016llx%016llx", prefix, (unsigned long long)a,
                 (unsigned long long)b);
    if (claim_key)
        snprintf(claim_key, cap, "%s:claim:%016llx%016llx", prefix, (unsigned long long)a,
                 (unsigned long long)b);
    return 0;
}

char *xmt_rstore_encode(const xmt_cacherec *r)
{
    char *line = xmt_cacherec_format(r);
    if (line) line[strcspn(line, "\n")] = 0;
    return line;
}

int xmt_rstore_decode(const char *prefix, const char *key, const char *val, size_t len,
                      char *scratch, xmt_cacherec *r)
{
    if (len == 0 || len > XMT_CACHEREC_MAX_LINE || memchr(val, '\n', len) ||
        xmt_cacherec_parse(val, len, scratch, r) != 0)
        return -1;
    if (key) {
        char want[256];
        if (xmt_rstore_keys(prefix, r, want, NULL, sizeof want) != 0 || strcmp(want, key) != 0)
            return -1;
    }
    return 0;
}

static struct timeval tv_of(int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    return tv;
}

/* Text from the network (an error answer, hiredis's description of a bad answer) made
 * printable: a server answering garbage must not put it on the program's stderr. */
static void printable(char *t)
{
    for (; *t; t++)
        if ((unsigned char)*t < 0x20 || (unsigned char)*t > 0x7e) *t = '?';
}

/* A reply of a command: NULL with s->err when the connection failed (dead). */
static redisReply *cmd(xmt_rstore *s, int argc, const char **argv, const size_t *lens)
{
    redisReply *r = redisCommandArgv(s->c, argc, argv, lens);
    if (!r) snprintf(s->err, sizeof s->err, "%s", s->c->err ? s->c->errstr : "no answer");
    printable(s->err);
    return r;
}

/* -2 and s->err for an error answer (the server refused), -1 for any answer of an
 * unexpected type (a server that is not Redis: the connection is not trusted further). */
static int bad_reply(xmt_rstore *s, redisReply *r)
{
    int rc = -1;
    if (r->type == REDIS_REPLY_ERROR) {
        snprintf(s->err, sizeof s->err, "the server answered: %.200s", r->str ? r->str : "?");
        printable(s->err);
        rc = -2;
    } else {
        snprintf(s->err, sizeof s->err, "an answer that is not what Redis answers (type %d)",
                 r->type);
    }
    freeReplyObject(r);
    return rc;
}

xmt_rstore *xmt_rstore_connect(const xmt_rstore_url *u, const char *password, int timeout_ms,
                               char *why, size_t cap)
{
    xmt_rstore *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, cap, "%s", strerror(ENOMEM));
        return NULL;
    }
    s->c = redisConnectWithTimeout(u->host, u->port, tv_of(timeout_ms));
    if (!s->c || s->c->err) {
        snprintf(why, cap, "cannot connect to %s:%d: %s", u->host, u->port,
                 s->c ? s->c->errstr : "out of memory");
        printable(why);
        xmt_rstore_close(s);
        return NULL;
    }
    if (redisSetTimeout(s->c, tv_of(timeout_ms)) != REDIS_OK) {
        snprintf(why, cap, "cannot set the timeout: %s", s->c->errstr);
        xmt_rstore_close(s);
        return NULL;
    }
    if (password && *password) {
        const char *argv[3] = {"AUTH", password, NULL};
        size_t lens[3] = {4, strlen(password), 0};
        const char *sp = strchr(password, ' ');
        int argc = 2;
        if (sp) { /* "USER PASSWORD": an ACL user */
            argv[1] = password;
            lens[1] = (size_t)(sp - password);
            argv[2] = sp + 1;
            lens[2] = strlen(sp + 1);
            argc = 3;
        }
        redisReply *r = cmd(s, argc, argv, lens);
        if (!r || r->type != REDIS_REPLY_STATUS) {
            if (r) (void)bad_reply(s, r);
            snprintf(why, cap, "AUTH failed: %s", s->err);
            xmt_rstore_close(s);
            return NULL;
        }
        freeReplyObject(r);
    }
    /* a first command: a server that does not speak Redis's protocol fails here */
    const char *ping[1] = {"PING"};
    size_t pl[1] = {4};
    redisReply *r = cmd(s, 1, ping, pl);
    if (!r || r->type != REDIS_REPLY_STATUS) {
        if (r) (void)bad_reply(s, r);
        snprintf(why, cap, "%s:%d does not answer as Redis does: %s", u->host, u->port, s->err);
        xmt_rstore_close(s);
        return NULL;
    }
    freeReplyObject(r);
    return s;
}

void xmt_rstore_close(xmt_rstore *s)
{
    if (!s) return;
    if (s->c) redisFree(s->c);
    free(s);
}

const char *xmt_rstore_error(const xmt_rstore *s)
{
    return s ? s->err : "";
}

int xmt_rstore_get(xmt_rstore *s, const char *key, char **val, size_t *len)
{
    const char *argv[2] = {"GET", key};
    size_t lens[2] = {3, strlen(key)};
    redisReply *r = cmd(s, 2, argv, lens);
    if (!r) return -1;
    if (r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        return 0;
    }
    if (r->type != REDIS_REPLY_STRING) return bad_reply(s, r);
    *val = malloc(r->len + 1);
    if (!*val) {
        freeReplyObject(r);
        snprintf(s->err, sizeof s->err, "%s", strerror(ENOMEM));
        return -2;
    }
    memcpy(*val, r->str, r->len);
    (*val)[r->len] = 0;
    *len = r->len;
    freeReplyObject(r);
    return 1;
}

/* A command whose answer is a status ("OK") or an integer: 0, -1 or -2. */
static int simple(xmt_rstore *s, int argc, const char **argv, const size_t *lens)
{
    redisReply *r = cmd(s, argc, argv, lens);
    if (!r) return -1;
    if (r->type != REDIS_REPLY_STATUS && r->type != REDIS_REPLY_INTEGER) return bad_reply(s, r);
    freeReplyObject(r);
    return 0;
}

int xmt_rstore_set(xmt_rstore *s, const char *key, const char *val, size_t len)
{
    const char *argv[3] = {"SET", key, val};
    size_t lens[3] = {3, strlen(key), len};
    return simple(s, 3, argv, lens);
}

int xmt_rstore_del(xmt_rstore *s, const char *key)
{
    const char *argv[2] = {"DEL", key};
    size_t lens[2] = {3, strlen(key)};
    return simple(s, 2, argv, lens);
}

/* Claims are compare-and-set on the server: a script takes a claim (SET NX PX), and renews
 * or deletes it only when its value is still its owner's, so that no other command runs
 * between the comparison and the change (a GET then a DEL would delete a claim that expired
 * and was taken by another process in between). Each script also keeps the claims' index,
 * PREFIX:claims, a sorted set of the claims' HASHes scored by their expiry in the server's
 * clock, which the fleet reads in one command (xmt_rstore_live_claims). KEYS[1] is the claim,
 * KEYS[2] the index, ARGV[1] the owner, ARGV[2] the time to live, ARGV[3] the HASH. */
#define NOW_MS "local t=redis.call('time') local now=t[1]*1000+math.floor(t[2]/1000) "
static const char claim_lua[] =
    "redis.replicate_commands() "
    "if redis.call('set',KEYS[1],ARGV[1],'NX','PX',ARGV[2]) then " NOW_MS
    "redis.call('zadd',KEYS[2],now+tonumber(ARGV[2]),ARGV[3]) return 1 end return 0";
static const char renew_lua[] =
    "redis.replicate_commands() "
    "if redis.call('get',KEYS[1])==ARGV[1] then " NOW_MS "redis.call('pexpire',KEYS[1],ARGV[2]) "
    "redis.call('zadd',KEYS[2],now+tonumber(ARGV[2]),ARGV[3]) "
    "return 1 end return 0";
static const char release_lua[] = "if redis.call('get',KEYS[1])==ARGV[1] then "
                                  "redis.call('del',KEYS[1]) redis.call('zrem',KEYS[2],ARGV[3]) "
                                  "return 1 end return 0";
/* The live claims' HASHes: the expired ones dropped from the index first. */
static const char live_lua[] =
    "redis.replicate_commands() " NOW_MS "redis.call('zremrangebyscore',KEYS[1],'-inf',now) "
    "return redis.call('zrangebyscore',KEYS[1],now,'+inf')";

/* A claim key PREFIX:claim:HASH's index name (PREFIX:claims) and HASH; -1 when key is not
 * of that form. */
static int index_of(const char *key, char *index, size_t cap, const char **hash)
{
    size_t n = strlen(key);
    if (n < 7 + 32 + 1 || memcmp(key + n - 32 - 7, ":claim:", 7) != 0 || n - 32 + 1 > cap)
        return -1;
    snprintf(index, cap, "%.*s:claims", (int)(n - 32 - 7), key);
    *hash = key + n - 32;
    return 0;
}

/* EVAL of a claim's script with ttl (NULL: none): 1 when it took or changed the claim, 0 not,
 * -1 or -2. */
static int eval_claim(xmt_rstore *s, const char *script, const char *key, const char *owner,
                      const char *ttl)
{
    char index[200];
    const char *hash;
    if (index_of(key, index, sizeof index, &hash) != 0) {
        snprintf(s->err, sizeof s->err, "%.100s is not the name of a claim", key);
        return -2;
    }
    const char *argv[8] = {"EVAL", script, "2", key, index, owner, ttl ? ttl : "0", hash};
    size_t lens[8] = {
        4, strlen(script), 1, strlen(key), strlen(index), strlen(owner), ttl ? strlen(ttl) : 1, 32};
    redisReply *r = cmd(s, 8, argv, lens);
    if (!r) return -1;
    if (r->type != REDIS_REPLY_INTEGER) return bad_reply(s, r);
    int rc = r->integer == 1;
    freeReplyObject(r);
    return rc;
}

int xmt_rstore_claim(xmt_rstore *s, const char *key, const char *owner, int ttl_ms)
{
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    return eval_claim(s, claim_lua, key, owner, ttl);
}

int xmt_rstore_renew(xmt_rstore *s, const char *key, const char *owner, int ttl_ms)
{
    char ttl[24];
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    return eval_claim(s, renew_lua, key, owner, ttl);
}

int xmt_rstore_release(xmt_rstore *s, const char *key, const char *owner)
{
    return eval_claim(s, release_lua, key, owner, NULL);
}

long xmt_rstore_live_claims(xmt_rstore *s, const char *prefix, long max,
                            void (*fn)(void *ud, const char *hash), void *ud)
{
    char index[160];
    snprintf(index, sizeof index, "%s:claims", prefix);
    const char *argv[4] = {"EVAL", live_lua, "1", index};
    size_t lens[4] = {4, strlen(live_lua), 1, strlen(index)};
    redisReply *r = cmd(s, 4, argv, lens);
    if (!r) return -1;
    if (r->type != REDIS_REPLY_ARRAY) return bad_reply(s, r);
    long n = 0;
    for (size_t i = 0; i < r->elements && n < max; i++) {
        redisReply *m = r->element[i];
        if (m->type != REDIS_REPLY_STRING || m->len != 32 ||
            strspn(m->str, "0123456789abcdef") != 32)
            continue; /* not a HASH of ours: never a key name made of it */
        fn(ud, m->str);
        n++;
    }
    freeReplyObject(r);
    return n;
}

/* MGET of n keys: fn for each string value. The count of values, or -1/-2. */
static long mget(xmt_rstore *s, redisReply **keys, size_t n,
                 void (*fn)(void *ud, const char *key, const char *val, size_t len), void *ud)
{
    const char **argv = malloc((n + 1) * sizeof *argv);
    size_t *lens = malloc((n + 1) * sizeof *lens);
    long got = 0;
    if (!argv || !lens) {
        free(argv);
        free(lens);
        snprintf(s->err, sizeof s->err, "%s", strerror(ENOMEM));
        return -2;
    }
    argv[0] = "MGET";
    lens[0] = 4;
    for (size_t i = 0; i < n; i++) {
        argv[i + 1] = keys[i]->str;
        lens[i + 1] = keys[i]->len;
    }
    redisReply *r = cmd(s, (int)n + 1, argv, lens);
    free(argv);
    free(lens);
    if (!r) return -1;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != n) return bad_reply(s, r);
    for (size_t i = 0; i < n; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING) {
            fn(ud, keys[i]->str, r->element[i]->str, r->element[i]->len);
            got++;
        }
    freeReplyObject(r);
    return got;
}

/* SCAN MATCH PREFIX:kind:* then MGET, as xmt_rstore_scan. */
static long scan_kind(xmt_rstore *s, const char *prefix, const char *kind, long max,
                      void (*fn)(void *ud, const char *key, const char *val, size_t len), void *ud)
{
    char match[160], cursor[32] = "0";
    snprintf(match, sizeof match, "%s:%s:*", prefix, kind);
    long total = 0;
    do {
        const char *argv[6] = {"SCAN", cursor, "MATCH", match, "COUNT", "500"};
        size_t lens[6] = {4, strlen(cursor), 5, strlen(match), 5, 3};
        redisReply *r = cmd(s, 6, argv, lens);
        if (!r) return -1;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING || r->element[0]->len >= sizeof cursor ||
            r->element[1]->type != REDIS_REPLY_ARRAY)
            return bad_reply(s, r);
        snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
        redisReply *ks = r->element[1];
        for (size_t i = 0; i < ks->elements; i++)
            if (ks->element[i]->type != REDIS_REPLY_STRING) return bad_reply(s, r);
        long got = ks->elements ? mget(s, ks->element, ks->elements, fn, ud) : 0;
        freeReplyObject(r);
        if (got < 0) return got;
        total += got;
    } while (strcmp(cursor, "0") != 0 && total < max);
    return total;
}

long xmt_rstore_scan(xmt_rstore *s, const char *prefix, long max,
                     void (*fn)(void *ud, const char *key, const char *val, size_t len), void *ud)
{
    return scan_kind(s, prefix, "rec", max, fn, ud);
}

long xmt_rstore_scan_claims(xmt_rstore *s, const char *prefix, long max,
                            void (*fn)(void *ud, const char *key, const char *val, size_t len),
                            void *ud)
{
    return scan_kind(s, prefix, "claim", max, fn, ud);
}
