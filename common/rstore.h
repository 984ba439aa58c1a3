/*
 * rstore: the remote tier's store, a Redis server (docs/cache.md, "The fleet's tier"), as
 * the shim (shim/remote.c) and `xmatune cache --remote` both see it: the URL, the password
 * file, the names of its keys, a record's encoding, and the few commands the tier needs,
 * over hiredis (linked statically, like jansson and libyaml).
 *
 * A record in Redis is the on-disk cache's own line (common/cacherec, without its '\n'),
 * under one key per identity: PREFIX:rec:HASH, where HASH is 32 hex digits of a 128-bit
 * hash of the record's identity (xmt_cacherec_identity). A value that does not parse as a
 * record, or whose identity does not hash to its key's name, is garbage: never a record.
 * A key being tuned somewhere is claimed under PREFIX:claim:HASH (SET NX PX, its value the
 * claimer's name), which expires unless its claimer renews it; renewing and releasing it are
 * compare-and-set on the server (a script), so that only its holder changes it. Every live
 * claim's HASH is also in PREFIX:claims, a sorted set scored by the claim's expiry, which the
 * same scripts keep.
 *
 * Every call here is synchronous with the connection's timeout (connect and each command);
 * no call is made on a launch's path (shim/remote.c runs them on a thread of its own). A
 * connection that failed (a timeout, a closed socket, an answer that is not Redis's
 * protocol) is dead: close it and connect again. Not thread-safe: one connection, one
 * thread.
 */
#ifndef XMT_RSTORE_H
#define XMT_RSTORE_H

#include <stddef.h>

#include "cacherec.h"

/* A parsed XMATUNE_CACHE_REMOTE. */
typedef struct {
    char host[256];
    int port;
    char prefix[101]; /* letters, digits and ._:- only: no glob character reaches SCAN */
    int tls;          /* rediss:// */
} xmt_rstore_url;

/* Parses redis://HOST[:PORT][/PREFIX] (HOST may be [IPv6]; PORT 6379 and PREFIX "xmatune"
 * when absent). 0, or -1 with why (a sentence for a message): not a redis:// URL, a
 * password or user in it (refused: XMATUNE_CACHE_REMOTE_PASSWORD_FILE), a bad port or
 * prefix, or rediss:// (TLS), which this build's hiredis (0.14) cannot speak. */
int xmt_rstore_url_parse(const char *s, xmt_rstore_url *u, char *why, size_t cap);

/* The password in file path: its first line, without the line end ("USER PASSWORD" for an
 * ACL user: AUTH USER PASSWORD). 0, or -1 with why: cannot be read, not a regular file,
 * readable by group or others, empty, longer than cap - 1. */
int xmt_rstore_password(const char *path, char *out, size_t cap, char *why, size_t wcap);

/* The key names of record r's identity: PREFIX:rec:HASH and PREFIX:claim:HASH (cap: 160
 * bytes is enough). -1 when out of memory. */
int xmt_rstore_keys(const char *prefix, const xmt_cacherec *r, char *rec_key, char *claim_key,
                    size_t cap);

/* The record as its value in Redis: its cache line without '\n', malloc'd (NULL when out of
 * memory). */
char *xmt_rstore_encode(const xmt_cacherec *r);

/* A value read under key name `key` (NULL: not checked) as a record: 0 and *r (its strings in
 * scratch, XMT_CACHEREC_SCRATCH(len) bytes), or -1 when it is garbage: too long, not a
 * record of this format version, or a record of another identity than the key names. */
int xmt_rstore_decode(const char *prefix, const char *key, const char *val, size_t len,
                      char *scratch, xmt_cacherec *r);

typedef struct xmt_rstore xmt_rstore;

/* Connects (and AUTHs with password when not NULL or ""), each step within timeout_ms.
 * NULL with why when it cannot. */
xmt_rstore *xmt_rstore_connect(const xmt_rstore_url *u, const char *password, int timeout_ms,
                               char *why, size_t cap);
void xmt_rstore_close(xmt_rstore *s);

/* What the last failed call said ("" when none). */
const char *xmt_rstore_error(const xmt_rstore *s);

/* The value of key: 1 with *val (malloc'd, NUL-terminated) and *len, 0 when there is none,
 * -1 on an error (the connection is dead: an error answer, such as a full server's, is -2
 * and leaves it alive). */
int xmt_rstore_get(xmt_rstore *s, const char *key, char **val, size_t *len);

/* SET key val. 0, -1 (dead) or -2 (the server refused: full, read-only). */
int xmt_rstore_set(xmt_rstore *s, const char *key, const char *val, size_t len);

/* DEL key. 0, -1 or -2. */
int xmt_rstore_del(xmt_rstore *s, const char *key);

/* Claims key (PREFIX:claim:HASH) for owner for ttl_ms (SET key owner NX PX ttl_ms, and the
 * claim's HASH put in the index PREFIX:claims, in one script): 1 claimed, 0 another holds it,
 * -1 or -2. */
int xmt_rstore_claim(xmt_rstore *s, const char *key, const char *owner, int ttl_ms);

/* The claim on key, when owner holds it: renewed for ttl_ms (renew) or deleted. 1 done, 0
 * not owner's (gone, or another's: left as it is), -1 or -2 (a server that refuses scripts). Atomic
 * on the server (one EVAL compares the claim's value with owner and changes it only when equal): a
 * claim that expired and was taken by another process is never renewed or deleted by its former
 * holder. */
int xmt_rstore_renew(xmt_rstore *s, const char *key, const char *owner, int ttl_ms);
int xmt_rstore_release(xmt_rstore *s, const char *key, const char *owner);

/* Every record under prefix (SCAN MATCH PREFIX:rec:*, then MGET), at most max of them:
 * fn(ud, key, val, len) for each value (garbage too: fn decodes it). The number of values,
 * or -1/-2. */
long xmt_rstore_scan(xmt_rstore *s, const char *prefix, long max,
                     void (*fn)(void *ud, const char *key, const char *val, size_t len), void *ud);

/* The HASHes of the claims that live now under prefix, from their index (one script: the
 * expired ones are dropped from it first), at most max: fn(ud, hash) for each (32 hex
 * digits). The count, or -1/-2. One command whatever the number of records: what a process
 * reads every 200 ms to learn the claims other processes took since it connected. */
long xmt_rstore_live_claims(xmt_rstore *s, const char *prefix, long max,
                            void (*fn)(void *ud, const char *hash), void *ud);

/* Every claim under prefix (PREFIX:claim:*), as xmt_rstore_scan: fn(ud, key, owner, len). */
long xmt_rstore_scan_claims(xmt_rstore *s, const char *prefix, long max,
                            void (*fn)(void *ud, const char *key, const char *val, size_t len),
                            void *ud);

#endif
