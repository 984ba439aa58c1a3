/*
 * trialproto: the one protocol between the shim and its trial helper (xmatune-trial).
 *
 * Candidates are to run in a helper process so that one that faults or hangs cannot harm
 * the program (issue 24). The two talk over a private SOCK_SEQPACKET socketpair: one
 * message per send, never split or merged, descriptors passed with SCM_RIGHTS. Every
 * message is a fixed header (magic, protocol version, type, sequence number, payload
 * length) and a payload whose layout depends on the type, in little-endian order. A
 * message of another version, a short or oversize one, or one whose payload does not
 * match its type is refused with a message saying which; nothing here crashes or trusts
 * a length it did not check. Both sides include this header and nothing else of each
 * other; no CUDA here (the helper speaks of CUresults as plain integers).
 *
 * The conversation: the shim sends HELLO (its pid, the device ordinal to open); the
 * helper opens the driver and that device, then answers READY (its pid, the device's
 * UUID when the driver tells it, its name; or a CUresult and why not). PING/PONG is the
 * shim's liveness check, under a deadline. TUNE asks for one tuning session: its
 * descriptors are a memfd holding the request (common/trialreq.h: one typed value, its
 * codec shared by both sides, carrying this version too), a memfd holding the module
 * image, and the exported staging memory; the helper answers with NOTEs (the messages it
 * would have printed, for the program to print; empty ones are heartbeats, at least one a
 * second while the session runs), a DECIDED for each candidate the session decided cannot
 * win as it decides it (rejected by its verification, or stopped by racing: what a session
 * the program's exit cuts leaves for the next run, docs/tuning.md, "Resuming a session cut
 * at exit"), and then one RESULT. SHUTDOWN ends it.
 *
 * XMT_TP_VERSION is the one version of the whole protocol, the request's included: bump
 * it when a message's layout or the request's fields change (5: the request typed; 6:
 * DECIDED, and the request's decided).
 */
#ifndef XMT_TRIALPROTO_H
#define XMT_TRIALPROTO_H

#include <stddef.h>
#include <stdint.h>

#define XMT_TP_VERSION 6
#define XMT_TP_MAGIC 0x50544d58u /* "XMTP" read as little-endian bytes */
#define XMT_TP_HEADER 16         /* magic u32, version u16, type u16, seq u32, length u32 */
#define XMT_TP_MAX 4096          /* largest message, header included; bulk goes by fd */
#define XMT_TP_NAME 256          /* device name and error text, NUL included */
#define XMT_TP_MAX_FDS 4         /* descriptors one message may carry */
#define XMT_TP_TEXT 2048         /* a NOTE's text, NUL included */
#define XMT_TP_LABEL 160         /* a candidate's label, NUL included (xmt_candidate's) */

/* The environment variable that gives the helper its end of the channel (an fd number). */
#define XMT_TP_FD_ENV "XMATUNE_TRIAL_FD"

typedef enum {
    XMT_TP_HELLO = 1,    /* shim -> helper: version handshake, device to open */
    XMT_TP_READY = 2,    /* helper -> shim: the device it opened, or why it could not */
    XMT_TP_PING = 3,     /* shim -> helper: are you alive (token) */
    XMT_TP_PONG = 4,     /* helper -> shim: the same token */
    XMT_TP_SHUTDOWN = 5, /* shim -> helper: exit now */
    XMT_TP_ERROR = 6,    /* either way: a request refused (code, text) */
    XMT_TP_TUNE = 16,    /* shim -> helper: run one session (fds: request, image, staging) */
    XMT_TP_NOTE = 17,    /* helper -> shim: a message line to say, or a heartbeat (empty) */
    XMT_TP_RESULT = 18,  /* helper -> shim: the session's outcome (fd: its log lines) */
    XMT_TP_DECIDED = 19, /* helper -> shim: a candidate decided not to win (its index) */
} xmt_tp_type;

typedef struct {
    uint32_t version; /* the sender's XMT_TP_VERSION, repeated for the log */
    int32_t pid;      /* the program's pid */
    int32_t device;   /* device ordinal to open */
} xmt_tp_hello;

typedef struct {
    int32_t status;         /* 0, or the CUresult that stopped the helper opening the device */
    int32_t pid;            /* the helper's pid */
    int32_t device;         /* ordinal opened */
    uint8_t has_uuid;       /* 1: uuid is the driver's cuDeviceGetUuid; 0: the driver lacks it */
    uint8_t uuid[16];       /* else zero: the ordinal is the only identity */
    char name[XMT_TP_NAME]; /* device name; or, when status != 0, why not */
} xmt_tp_ready;

typedef struct {
    int32_t code;
    char text[XMT_TP_NAME];
} xmt_tp_error;

typedef struct {
    uint64_t request_bytes; /* the request memfd's length */
    uint64_t image_bytes;   /* the image memfd's length */
    uint64_t staging_bytes; /* the staging memory's size (0: nothing staged, no fd) */
} xmt_tp_tune;

typedef struct {
    char text[XMT_TP_TEXT]; /* "" is a heartbeat */
} xmt_tp_note;

/* The culprit of a RESULT when no candidate is to blame. */
#define XMT_TP_NO_CULPRIT (-1000)

typedef struct {
    int32_t status;        /* 0: the session ran; else the CUresult that stopped its setup */
    int64_t choice;        /* the chosen candidate's index (XMT_OWN_CONFIG: the program's) */
    double time_ms;        /* its statistic */
    double spent_ms;       /* the session's wall time in the helper */
    uint8_t storable;      /* the outcome may go to the cache (no error, not untuned, and
                            * its data told) */
    uint8_t uninformative; /* the data proved nothing: nothing decided, the key waits */
    char data[17];         /* the digest of the data it was verified on (hex), or "" */
    uint8_t exiting;       /* the helper's context may be broken: it exits after this */
    uint8_t reference;     /* the staged memory holds the helper's reference now */
    int64_t culprit;       /* the candidate that faulted or hung, else XMT_TP_NO_CULPRIT */
    int32_t culprit_error; /* its CUresult (CUDA_ERROR_TIMEOUT: it ran past the watchdog) */
    /* the culprit faulted from outputs poisoned before the in-place check: retried with the
     * check first, not counted as faulted */
    uint8_t culprit_unsorted;
    char label[XMT_TP_LABEL];
    char why[XMT_TP_NAME]; /* status != 0, or the culprit: what happened; or why untuned */
    char outcome[24];      /* an untuned key's outcome word (XMT_OUTCOME_*, cacherec.h), or "" */
    uint64_t events_bytes; /* the log lines' memfd length (0: none, no fd) */
} xmt_tp_result;

typedef struct {
    uint16_t type; /* xmt_tp_type */
    uint32_t seq;  /* a reply carries its request's seq */
    union {
        xmt_tp_hello hello;
        xmt_tp_ready ready;
        uint64_t token; /* PING, PONG */
        xmt_tp_error error;
        xmt_tp_tune tune;
        xmt_tp_note note;
        xmt_tp_result result;
        int64_t decided; /* DECIDED: the candidate's index */
    } u;
} xmt_tp_msg;

/* Encodes m into buf (cap bytes). Returns the length, or -1 if cap is too small or the
 * type unknown. */
int xmt_tp_encode(const xmt_tp_msg *m, uint8_t *buf, size_t cap);

/* Decodes len bytes into m. Returns 0, or -1 with why (a sentence, no prefix) in err:
 * short, oversize, bad magic, other version, length not matching, unknown type. */
int xmt_tp_decode(const uint8_t *buf, size_t len, xmt_tp_msg *m, char *err, size_t errcap);

/* Sends one message (MSG_NOSIGNAL: a dead peer is EPIPE, never SIGPIPE), with nfds
 * descriptors. Returns 0, or -1 with errno set (EPIPE/ECONNRESET: the peer is gone). */
int xmt_tp_send(int fd, const xmt_tp_msg *m, const int *fds, int nfds);

/* Results of xmt_tp_recv besides 0. */
enum { XMT_TP_GONE = -1, XMT_TP_TIMEOUT = -2, XMT_TP_BAD = -3 };

/* Receives one message, waiting at most timeout_ms (-1: no limit). Descriptors that came
 * with it are stored in fds (close-on-exec; up to XMT_TP_MAX_FDS, *nfds set; fds may be
 * NULL: then they are closed). Returns 0; XMT_TP_GONE when the peer closed its end or
 * the socket failed; XMT_TP_TIMEOUT; XMT_TP_BAD for a message that does not decode (or
 * was too big: truncated). err says why for every error. */
int xmt_tp_recv(int fd, xmt_tp_msg *m, int *fds, int *nfds, int timeout_ms, char *err,
                size_t errcap);

/* "HELLO", "READY", ..., "type 42". For messages. */
const char *xmt_tp_type_name(unsigned type, char *buf, size_t cap);

/* 32 hex digits of a UUID, NUL-terminated (out: 33 bytes). */
void xmt_tp_uuid_hex(const uint8_t uuid[16], char *out);

#endif
