/*
 * Unit tests of the shim-helper protocol (common/trialproto.c) and of the LD_PRELOAD
 * rewriting the helper's spawn uses (common/preload.c): every message type round-trips;
 * malformed input (short, oversize, other version, bad lengths, unknown types) is refused
 * with a message saying why, never a crash; the socket layer passes descriptors, reports
 * a closed peer as gone (never SIGPIPE), a silent one as a timeout.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "preload.h"
#include "trialproto.h"

static xmt_tp_msg roundtrip(const xmt_tp_msg *m)
{
    uint8_t buf[XMT_TP_MAX];
    int n = xmt_tp_encode(m, buf, sizeof buf);
    ck_assert_int_gt(n, XMT_TP_HEADER - 1);
    xmt_tp_msg d;
    char err[200] = "";
    ck_assert_msg(xmt_tp_decode(buf, (size_t)n, &d, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(d.type, m->type);
    ck_assert_uint_eq(d.seq, m->seq);
    return d;
}

START_TEST(every_type_round_trips)
{
    xmt_tp_msg m = {.type = XMT_TP_DECIDED, .seq = 6};
    m.u.decided = 35;
    ck_assert_int_eq(roundtrip(&m).u.decided, 35);

    m = (xmt_tp_msg){.type = XMT_TP_HELLO, .seq = 7};
    m.u.hello = (xmt_tp_hello){XMT_TP_VERSION, 1234, 3};
    xmt_tp_msg d = roundtrip(&m);
    ck_assert_int_eq(d.u.hello.pid, 1234);
    ck_assert_int_eq(d.u.hello.device, 3);
    ck_assert_uint_eq(d.u.hello.version, XMT_TP_VERSION);

    m = (xmt_tp_msg){.type = XMT_TP_READY, .seq = 8};
    m.u.ready.status = -5;
    m.u.ready.pid = 99;
    m.u.ready.has_uuid = 1;
    for (int i = 0; i < 16; i++)
        m.u.ready.uuid[i] = (uint8_t)(0xf0 + i);
    snprintf(m.u.ready.name, sizeof m.u.ready.name, "NVIDIA H200");
    d = roundtrip(&m);
    ck_assert_int_eq(d.u.ready.status, -5);
    ck_assert_int_eq(d.u.ready.pid, 99);
    ck_assert_int_eq(d.u.ready.has_uuid, 1);
    ck_assert_mem_eq(d.u.ready.uuid, m.u.ready.uuid, 16);
    ck_assert_str_eq(d.u.ready.name, "NVIDIA H200");
    char hex[33];
    xmt_tp_uuid_hex(d.u.ready.uuid, hex);
    ck_assert_str_eq(hex, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");

    m = (xmt_tp_msg){.type = XMT_TP_PING, .seq = 9};
    m.u.token = 0x0123456789abcdefull;
    ck_assert(roundtrip(&m).u.token == 0x0123456789abcdefull);
    m.type = XMT_TP_PONG;
    ck_assert(roundtrip(&m).u.token == 0x0123456789abcdefull);
    m = (xmt_tp_msg){.type = XMT_TP_SHUTDOWN, .seq = 10};
    roundtrip(&m);
    m = (xmt_tp_msg){.type = XMT_TP_ERROR, .seq = 11};
    m.u.error.code = 38;
    snprintf(m.u.error.text, sizeof m.u.error.text, "TUNE: no image");
    d = roundtrip(&m);
    ck_assert_int_eq(d.u.error.code, 38);
    ck_assert_str_eq(d.u.error.text, "TUNE: no image");

    m = (xmt_tp_msg){.type = XMT_TP_TUNE, .seq = 12};
    m.u.tune = (xmt_tp_tune){1234, 1ull << 33, 6ull << 21};
    d = roundtrip(&m);
    ck_assert(d.u.tune.request_bytes == 1234 && d.u.tune.image_bytes == 1ull << 33 &&
              d.u.tune.staging_bytes == 6ull << 21);
    m = (xmt_tp_msg){.type = XMT_TP_NOTE, .seq = 13};
    memset(m.u.note.text, 'x', sizeof m.u.note.text - 1); /* the longest note */
    d = roundtrip(&m);
    ck_assert_uint_eq(strlen(d.u.note.text), XMT_TP_TEXT - 1);
    m = (xmt_tp_msg){.type = XMT_TP_RESULT, .seq = 14};
    m.u.result = (xmt_tp_result){.status = 0,
                                 .choice = -1,
                                 .time_ms = 0.125,
                                 .spent_ms = 42.5,
                                 .storable = 1,
                                 .exiting = 1,
                                 .uninformative = 1,
                                 .reference = 1,
                                 .culprit = 7,
                                 .culprit_error = 700,
                                 .culprit_unsorted = 1,
                                 .events_bytes = 99};
    snprintf(m.u.result.label, sizeof m.u.result.label, "BLOCK=512");
    snprintf(m.u.result.why, sizeof m.u.result.why, "an illegal address");
    snprintf(m.u.result.data, sizeof m.u.result.data, "0123456789abcdef");
    d = roundtrip(&m);
    ck_assert(d.u.result.choice == -1 && d.u.result.time_ms == 0.125 &&
              d.u.result.spent_ms == 42.5 && d.u.result.storable && d.u.result.exiting &&
              d.u.result.reference && d.u.result.culprit == 7 && d.u.result.culprit_error == 700 &&
              d.u.result.events_bytes == 99 && d.u.result.uninformative &&
              d.u.result.culprit_unsorted);
    ck_assert_str_eq(d.u.result.label, "BLOCK=512");
    ck_assert_str_eq(d.u.result.data, "0123456789abcdef");
    ck_assert_str_eq(d.u.result.why, "an illegal address");
}
END_TEST

/* A valid PING's bytes, to break one way or another. */
static int ping_bytes(uint8_t *buf)
{
    xmt_tp_msg m = {.type = XMT_TP_PING, .seq = 1};
    return xmt_tp_encode(&m, buf, XMT_TP_MAX);
}

static void refused(const uint8_t *buf, size_t len, const char *why)
{
    xmt_tp_msg d;
    char err[200] = "";
    ck_assert_int_eq(xmt_tp_decode(buf, len, &d, err, sizeof err), -1);
    ck_assert_msg(strstr(err, why) != NULL, "expected '%s' in '%s'", why, err);
}

START_TEST(malformed_messages_are_refused_with_a_reason)
{
    uint8_t buf[XMT_TP_MAX + 64];
    int n = ping_bytes(buf);
    for (int len = 0; len < XMT_TP_HEADER; len++)
        refused(buf, (size_t)len, "short message");
    refused(buf, (size_t)n - 1, "payload length 8, but 7 bytes came");
    refused(buf, XMT_TP_MAX + 1, "oversize message");
    n = ping_bytes(buf);
    buf[0] ^= 0xff;
    refused(buf, (size_t)n, "not an xmatune trial message");
    n = ping_bytes(buf);
    buf[4] = XMT_TP_VERSION + 1;
    char other[64];
    snprintf(other, sizeof other, "protocol version %d, this side speaks %d", XMT_TP_VERSION + 1,
             XMT_TP_VERSION);
    refused(buf, (size_t)n, other);
    n = ping_bytes(buf);
    buf[6] = 42;
    refused(buf, (size_t)n, "unknown message type 42");
    /* the payload does not match its type: a PING of 4 bytes (length says 4) */
    n = ping_bytes(buf);
    buf[12] = 4;
    refused(buf, (size_t)n - 4, "malformed PING payload (4 bytes)");
    /* a READY whose name claims more bytes than came */
    xmt_tp_msg m = {.type = XMT_TP_READY};
    snprintf(m.u.ready.name, sizeof m.u.ready.name, "gpu");
    n = xmt_tp_encode(&m, buf, sizeof buf);
    buf[n - 5] = 200; /* the name's u16 length */
    refused(buf, (size_t)n, "malformed READY payload");
    /* every truncation of a READY is refused, never read past */
    n = xmt_tp_encode(&m, buf, sizeof buf);
    for (int len = XMT_TP_HEADER; len < n; len++) {
        buf[12] = (uint8_t)(len - XMT_TP_HEADER);
        refused(buf, (size_t)len, "malformed READY payload");
    }
}
END_TEST

START_TEST(unused_types_are_refused_and_named)
{
    uint8_t buf[64];
    int n = ping_bytes(buf);
    buf[6] = 20; /* after DECIDED: no such type */
    xmt_tp_msg d;
    char err[200];
    ck_assert_int_eq(xmt_tp_decode(buf, (size_t)n, &d, err, sizeof err), -1);
    char t[32];
    ck_assert_str_eq(xmt_tp_type_name(XMT_TP_TUNE, t, sizeof t), "TUNE");
    ck_assert_str_eq(xmt_tp_type_name(XMT_TP_RESULT, t, sizeof t), "RESULT");
    ck_assert_str_eq(xmt_tp_type_name(XMT_TP_DECIDED, t, sizeof t), "DECIDED");
    ck_assert_str_eq(xmt_tp_type_name(99, t, sizeof t), "type 99");
    xmt_tp_msg m = {.type = 15};
    ck_assert_int_eq(xmt_tp_encode(&m, buf, sizeof buf), -1);
    m.type = XMT_TP_READY; /* too small a buffer */
    ck_assert_int_eq(xmt_tp_encode(&m, buf, 20), -1);
}
END_TEST

START_TEST(the_socket_passes_fds_and_reports_gone_and_timeout)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    char err[200];
    xmt_tp_msg m = {.type = XMT_TP_PING, .seq = 5}, d;
    ck_assert_int_eq(xmt_tp_recv(sv[1], &d, NULL, NULL, 10, err, sizeof err), XMT_TP_TIMEOUT);
    ck_assert(strstr(err, "no message within 10 ms") != NULL);
    int pipefd[2];
    ck_assert_int_eq(pipe(pipefd), 0);
    ck_assert_int_eq(xmt_tp_send(sv[0], &m, &pipefd[1], 1), 0);
    int fds[XMT_TP_MAX_FDS], nfds = -1;
    ck_assert_int_eq(xmt_tp_recv(sv[1], &d, fds, &nfds, -1, err, sizeof err), 0);
    ck_assert_int_eq(nfds, 1);
    ck_assert(fcntl(fds[0], F_GETFD) & FD_CLOEXEC);
    ck_assert_int_eq(write(fds[0], "x", 1), 1);
    char c;
    ck_assert_int_eq(read(pipefd[0], &c, 1), 1);
    close(fds[0]);
    close(pipefd[0]);
    close(pipefd[1]);
    /* an oversize datagram is refused, and the next message still reads */
    uint8_t big[XMT_TP_MAX + 100] = {0};
    ck_assert_int_eq(send(sv[0], big, sizeof big, 0), (ssize_t)sizeof big);
    ck_assert_int_eq(xmt_tp_recv(sv[1], &d, NULL, NULL, -1, err, sizeof err), XMT_TP_BAD);
    ck_assert(strstr(err, "oversize") != NULL);
    ck_assert_int_eq(xmt_tp_send(sv[0], &m, NULL, 0), 0);
    ck_assert_int_eq(xmt_tp_recv(sv[1], &d, NULL, NULL, -1, err, sizeof err), 0);
    /* the peer gone: the reader sees it, the writer gets EPIPE and no SIGPIPE */
    close(sv[0]);
    ck_assert_int_eq(xmt_tp_recv(sv[1], &d, NULL, NULL, -1, err, sizeof err), XMT_TP_GONE);
    ck_assert(strstr(err, "closed") != NULL);
    signal(SIGPIPE, SIG_DFL);
    ck_assert_int_eq(xmt_tp_send(sv[1], &m, NULL, 0), -1);
    ck_assert_int_eq(errno, EPIPE);
    close(sv[1]);
}
END_TEST

START_TEST(preload_without_the_shim_keeps_the_rest)
{
    char out[256];
    ck_assert_int_eq(
        xmt_preload_without("/b/shim/libxmatune.so", "/b/shim/libxmatune.so", out, sizeof out), 0);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(xmt_preload_without("/usr/lib/libasan.so.8:/b/libxmatune.so other.so",
                                         "/b/libxmatune.so", out, sizeof out),
                     0);
    ck_assert_str_eq(out, "/usr/lib/libasan.so.8:other.so");
    /* by file name too (a relative or other path to the shim), and never a lookalike */
    ck_assert_int_eq(xmt_preload_without("libxmatune.so::/x/libxmatune.so.old: a.so ", "/y/z.so",
                                         out, sizeof out),
                     0);
    ck_assert_str_eq(out, "/x/libxmatune.so.old:a.so");
    ck_assert_int_eq(xmt_preload_without(NULL, NULL, out, sizeof out), 0);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(xmt_preload_without("aaaa:bbbb", NULL, out, 6), -1);
    ck_assert_uint_eq(xmt_preload_sanitizer_first("/l/libasan.so.8:/b/libxmatune.so"), 15);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("trialproto");
    TCase *t = tcase_create("all");
    tcase_add_test(t, every_type_round_trips);
    tcase_add_test(t, malformed_messages_are_refused_with_a_reason);
    tcase_add_test(t, unused_types_are_refused_and_named);
    tcase_add_test(t, the_socket_passes_fds_and_reports_gone_and_timeout);
    tcase_add_test(t, preload_without_the_shim_keeps_the_rest);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed ? 1 : 0;
}
