/*
 * trialproto: framing and encoding of the shim-helper channel (see trialproto.h).
 */
#include "trialproto.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"

/* A cursor over a buffer: writes and reads past its end set bad instead of touching it. */
typedef struct {
    uint8_t *p;
    const uint8_t *r;
    size_t len, at;
    int bad;
} cur;

static void put(cur *c, uint64_t v, int bytes)
{
    if (c->at + (size_t)bytes > c->len) {
        c->bad = 1;
        return;
    }
    for (int i = 0; i < bytes; i++)
        c->p[c->at++] = (uint8_t)(v >> (8 * i));
}

static uint64_t get(cur *c, int bytes)
{
    uint64_t v = 0;
    if (c->at + (size_t)bytes > c->len) {
        c->bad = 1;
        return 0;
    }
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)c->r[c->at++] << (8 * i);
    return v;
}

/* A string: u16 length, then its bytes (no NUL); cut to what cap holds. */
static void put_strn(cur *c, const char *s, size_t cap)
{
    size_t n = strnlen(s, cap - 1);
    put(c, n, 2);
    if (c->bad || c->at + n > c->len) {
        c->bad = 1;
        return;
    }
    memcpy(c->p + c->at, s, n);
    c->at += n;
}

static void get_strn(cur *c, char *out, size_t cap)
{
    size_t n = (size_t)get(c, 2);
    out[0] = 0;
    if (c->bad || n >= cap || c->at + n > c->len) {
        c->bad = 1;
        return;
    }
    memcpy(out, c->r + c->at, n);
    out[n] = 0;
    c->at += n;
}

static void put_str(cur *c, const char *s)
{
    put_strn(c, s, XMT_TP_NAME);
}

static void get_str(cur *c, char *out)
{
    get_strn(c, out, XMT_TP_NAME);
}

static void put_double(cur *c, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put(c, v, 8);
}

static double get_double(cur *c)
{
    uint64_t v = get(c, 8);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

static void put_result(cur *c, const xmt_tp_result *r)
{
    put(c, (uint32_t)r->status, 4);
    put(c, (uint64_t)r->choice, 8);
    put_double(c, r->time_ms);
    put_double(c, r->spent_ms);
    put(c, r->storable ? 1 : 0, 1);
    put(c, r->exiting ? 1 : 0, 1);
    put(c, r->uninformative ? 1 : 0, 1);
    put_strn(c, r->data, sizeof r->data);
    put(c, r->reference ? 1 : 0, 1);
    put(c, (uint64_t)r->culprit, 8);
    put(c, (uint32_t)r->culprit_error, 4);
    put(c, r->culprit_unsorted ? 1 : 0, 1);
    put_strn(c, r->label, XMT_TP_LABEL);
    put_str(c, r->why);
    put_strn(c, r->outcome, sizeof r->outcome);
    put(c, r->events_bytes, 8);
}

static void get_result(cur *c, xmt_tp_result *r)
{
    r->status = (int32_t)get(c, 4);
    r->choice = (int64_t)get(c, 8);
    r->time_ms = get_double(c);
    r->spent_ms = get_double(c);
    r->storable = get(c, 1) != 0;
    r->exiting = get(c, 1) != 0;
    r->uninformative = get(c, 1) != 0;
    get_strn(c, r->data, sizeof r->data);
    r->reference = get(c, 1) != 0;
    r->culprit = (int64_t)get(c, 8);
    r->culprit_error = (int32_t)get(c, 4);
    r->culprit_unsorted = get(c, 1) != 0;
    get_strn(c, r->label, XMT_TP_LABEL);
    get_str(c, r->why);
    get_strn(c, r->outcome, sizeof r->outcome);
    r->events_bytes = get(c, 8);
}

static void put_bytes(cur *c, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put(c, b[i], 1);
}

int xmt_tp_encode(const xmt_tp_msg *m, uint8_t *buf, size_t cap)
{
    cur c = {.p = buf, .len = cap};
    put(&c, XMT_TP_MAGIC, 4);
    put(&c, XMT_TP_VERSION, 2);
    put(&c, m->type, 2);
    put(&c, m->seq, 4);
    put(&c, 0, 4); /* the payload length, filled in below */
    switch (m->type) {
    case XMT_TP_HELLO:
        put(&c, m->u.hello.version, 4);
        put(&c, (uint32_t)m->u.hello.pid, 4);
        put(&c, (uint32_t)m->u.hello.device, 4);
        break;
    case XMT_TP_READY:
        put(&c, (uint32_t)m->u.ready.status, 4);
        put(&c, (uint32_t)m->u.ready.pid, 4);
        put(&c, (uint32_t)m->u.ready.device, 4);
        put(&c, m->u.ready.has_uuid ? 1 : 0, 1);
        put_bytes(&c, m->u.ready.uuid, 16);
        put_str(&c, m->u.ready.name);
        break;
    case XMT_TP_PING:
    case XMT_TP_PONG: put(&c, m->u.token, 8); break;
    case XMT_TP_SHUTDOWN: break;
    case XMT_TP_ERROR:
        put(&c, (uint32_t)m->u.error.code, 4);
        put_str(&c, m->u.error.text);
        break;
    case XMT_TP_TUNE:
        put(&c, m->u.tune.request_bytes, 8);
        put(&c, m->u.tune.image_bytes, 8);
        put(&c, m->u.tune.staging_bytes, 8);
        break;
    case XMT_TP_NOTE: put_strn(&c, m->u.note.text, XMT_TP_TEXT); break;
    case XMT_TP_RESULT: put_result(&c, &m->u.result); break;
    case XMT_TP_DECIDED: put(&c, (uint64_t)m->u.decided, 8); break;
    default: return -1;
    }
    if (c.bad || c.at > XMT_TP_MAX) return -1;
    size_t body = c.at - XMT_TP_HEADER;
    for (int i = 0; i < 4; i++)
        buf[12 + i] = (uint8_t)(body >> (8 * i));
    return (int)c.at;
}

static int fail(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (cap) vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* The payload of each type: its fields, and that nothing is left over. */
static int decode_body(cur *c, xmt_tp_msg *m)
{
    switch (m->type) {
    case XMT_TP_HELLO:
        m->u.hello.version = (uint32_t)get(c, 4);
        m->u.hello.pid = (int32_t)get(c, 4);
        m->u.hello.device = (int32_t)get(c, 4);
        break;
    case XMT_TP_READY:
        m->u.ready.status = (int32_t)get(c, 4);
        m->u.ready.pid = (int32_t)get(c, 4);
        m->u.ready.device = (int32_t)get(c, 4);
        m->u.ready.has_uuid = get(c, 1) != 0;
        for (int i = 0; i < 16; i++)
            m->u.ready.uuid[i] = (uint8_t)get(c, 1);
        get_str(c, m->u.ready.name);
        break;
    case XMT_TP_PING:
    case XMT_TP_PONG: m->u.token = get(c, 8); break;
    case XMT_TP_ERROR:
        m->u.error.code = (int32_t)get(c, 4);
        get_str(c, m->u.error.text);
        break;
    case XMT_TP_SHUTDOWN: break;
    case XMT_TP_TUNE:
        m->u.tune.request_bytes = get(c, 8);
        m->u.tune.image_bytes = get(c, 8);
        m->u.tune.staging_bytes = get(c, 8);
        break;
    case XMT_TP_NOTE: get_strn(c, m->u.note.text, XMT_TP_TEXT); break;
    case XMT_TP_RESULT: get_result(c, &m->u.result); break;
    case XMT_TP_DECIDED: m->u.decided = (int64_t)get(c, 8); break;
    default: c->bad = 1;
    }
    return c->bad || c->at != c->len ? -1 : 0;
}

int xmt_tp_decode(const uint8_t *buf, size_t len, xmt_tp_msg *m, char *err, size_t errcap)
{
    memset(m, 0, sizeof *m);
    if (len < XMT_TP_HEADER)
        return fail(err, errcap, "short message: %zu bytes, the header alone is %d", len,
                    XMT_TP_HEADER);
    if (len > XMT_TP_MAX)
        return fail(err, errcap, "oversize message: %zu bytes, at most %d", len, XMT_TP_MAX);
    cur c = {.r = buf, .len = len};
    uint32_t magic = (uint32_t)get(&c, 4);
    unsigned version = (unsigned)get(&c, 2);
    m->type = (uint16_t)get(&c, 2);
    m->seq = (uint32_t)get(&c, 4);
    size_t body = (size_t)get(&c, 4);
    if (magic != XMT_TP_MAGIC)
        return fail(err, errcap, "not an xmatune trial message (magic %#x)", (unsigned)magic);
    if (version != XMT_TP_VERSION)
        return fail(err, errcap, "protocol version %u, this side speaks %d", version,
                    XMT_TP_VERSION);
    if (body != len - XMT_TP_HEADER)
        return fail(err, errcap, "payload length %zu, but %zu bytes came", body,
                    len - XMT_TP_HEADER);
    int known = (m->type >= XMT_TP_HELLO && m->type <= XMT_TP_ERROR) ||
                (m->type >= XMT_TP_TUNE && m->type <= XMT_TP_DECIDED);
    if (!known) return fail(err, errcap, "unknown message type %u", (unsigned)m->type);
    if (decode_body(&c, m) != 0) {
        char t[32];
        return fail(err, errcap, "malformed %s payload (%zu bytes)",
                    xmt_tp_type_name(m->type, t, sizeof t), body);
    }
    return 0;
}

int xmt_tp_send(int fd, const xmt_tp_msg *m, const int *fds, int nfds)
{
    uint8_t buf[XMT_TP_MAX];
    int n = xmt_tp_encode(m, buf, sizeof buf);
    if (n < 0 || nfds < 0 || nfds > XMT_TP_MAX_FDS) {
        errno = EINVAL;
        return -1;
    }
    struct iovec iov = {buf, (size_t)n};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int) * XMT_TP_MAX_FDS)];
    } ctl;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > 0) {
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.space;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        struct cmsghdr *h = CMSG_FIRSTHDR(&mh);
        h->cmsg_level = SOL_SOCKET;
        h->cmsg_type = SCM_RIGHTS;
        h->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(h), fds, sizeof(int) * (size_t)nfds);
    }
    ssize_t w;
    do
        w = sendmsg(fd, &mh, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    return w == n ? 0 : -1;
}

static long now_ms(void)
{
    return (long)(xmt_now_ns() / 1000000);
} /* whole milliseconds */

/* Waits until fd is readable. 0, XMT_TP_TIMEOUT, or XMT_TP_GONE (poll failed). */
static int wait_readable(int fd, int timeout_ms)
{
    long end = now_ms() + timeout_ms;
    for (;;) {
        int left = timeout_ms < 0 ? -1 : (int)(end - now_ms());
        if (timeout_ms >= 0 && left < 0) left = 0;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, left);
        if (r > 0) return 0; /* readable, or hung up: recvmsg tells which */
        if (r == 0) return XMT_TP_TIMEOUT;
        if (errno != EINTR) return XMT_TP_GONE;
    }
}

/* Keeps the descriptors a message carried (close-on-exec), or closes them. */
static void take_fds(struct msghdr *mh, int *fds, int *nfds)
{
    if (nfds) *nfds = 0;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(mh); h; h = CMSG_NXTHDR(mh, h)) {
        if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
        size_t n = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int d;
            memcpy(&d, CMSG_DATA(h) + i * sizeof(int), sizeof d);
            if (fds && nfds && *nfds < XMT_TP_MAX_FDS)
                fds[(*nfds)++] = d;
            else
                close(d);
        }
    }
}

int xmt_tp_recv(int fd, xmt_tp_msg *m, int *fds, int *nfds, int timeout_ms, char *err,
                size_t errcap)
{
    if (nfds) *nfds = 0;
    int w = wait_readable(fd, timeout_ms);
    if (w == XMT_TP_TIMEOUT) {
        fail(err, errcap, "no message within %d ms", timeout_ms);
        return w;
    }
    uint8_t buf[XMT_TP_MAX + 1];
    struct iovec iov = {buf, sizeof buf};
    union {
        struct cmsghdr h;
        char space[CMSG_SPACE(sizeof(int) * XMT_TP_MAX_FDS)];
    } ctl;
    struct msghdr mh = {.msg_iov = &iov,
                        .msg_iovlen = 1,
                        .msg_control = ctl.space,
                        .msg_controllen = sizeof ctl.space};
    ssize_t n = -1;
    if (w == 0) do
            n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
    if (n <= 0) {
        fail(err, errcap, "%s", n == 0 ? "the peer closed the channel" : strerror(errno));
        return XMT_TP_GONE;
    }
    take_fds(&mh, fds, nfds);
    if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
        fail(err, errcap, "oversize message: more than %d bytes", XMT_TP_MAX);
        return XMT_TP_BAD;
    }
    return xmt_tp_decode(buf, (size_t)n, m, err, errcap) == 0 ? 0 : XMT_TP_BAD;
}

const char *xmt_tp_type_name(unsigned type, char *buf, size_t cap)
{
    static const char *const names[] = {NULL,   "HELLO",    "READY", "PING",
                                        "PONG", "SHUTDOWN", "ERROR"};
    static const char *const later[] = {"TUNE", "NOTE", "RESULT", "DECIDED"};
    if (type >= XMT_TP_HELLO && type <= XMT_TP_ERROR) return names[type];
    if (type >= XMT_TP_TUNE && type <= XMT_TP_DECIDED) return later[type - XMT_TP_TUNE];
    snprintf(buf, cap, "type %u", type);
    return buf;
}

void xmt_tp_uuid_hex(const uint8_t uuid[16], char *out)
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", uuid[i]);
}
