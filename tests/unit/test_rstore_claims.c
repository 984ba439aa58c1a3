/*
 * test_rstore_claims: a claim in the remote tier against a real redis-server (common/rstore.c):
 * renewing or releasing a claim touches it only while it is still its owner's. Process A's
 * claim expires and process B takes the key just before A's late renew or release reaches the
 * server: A must leave B's claim as it is. The moment is made exact by a stand-in between A and
 * the server (a relay), which lets B take the claim right before A's command that would change
 * it goes through. Skipped (77) when redis-server is not installed (scripts/deps.sh installs
 * it).
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rstore.h"

#define KEY "t:claim:0123456789abcdef0123456789abcdef"

static pid_t server_pid;
static int server_port;

/* A TCP port nobody listens on now (the kernel's choice for port 0). */
static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &l) != 0)
        abort();
    close(s);
    return ntohs(a.sin_port);
}

static xmt_rstore *connect_to(int port)
{
    xmt_rstore_url u;
    char url[64], why[512];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d/t", port);
    if (xmt_rstore_url_parse(url, &u, why, sizeof why) != 0) abort();
    return xmt_rstore_connect(&u, NULL, 5000, why, sizeof why);
}

static void start_server(void)
{
    server_port = free_port();
    char port[16];
    snprintf(port, sizeof port, "%d", server_port);
    server_pid = fork();
    if (server_pid == 0) {
        int null = open("/dev/null", 0);
        dup2(null, 1);
        dup2(null, 2);
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 1000; i++) { /* up to 10 s for the server to listen */
        xmt_rstore *s = connect_to(server_port);
        if (s) {
            xmt_rstore_close(s);
            return;
        }
        usleep(10000);
    }
    abort();
}

static void stop_server(void)
{
    if (server_pid > 0) {
        kill(server_pid, SIGKILL);
        waitpid(server_pid, NULL, 0);
    }
}

/* The relay: one client (A) to the server; before it forwards A's first command that would
 * renew or delete a claim (PEXPIRE, DEL, a script), B takes the key: A's claim is gone (as if
 * it expired) and B's is there. */
static struct {
    int listen_fd, port;
    pthread_t thread;
} relay;

static int takes_claim(const char *buf, size_t n)
{
    /* a DEL or PEXPIRE, or a script that reads the claim before it changes it (not the one
     * that takes a claim: SET NX) */
    static const char *verbs[] = {"\r\nDEL\r\n", "\r\nPEXPIRE\r\n", "redis.call('get'"};
    for (size_t v = 0; v < sizeof verbs / sizeof verbs[0]; v++)
        if (memmem(buf, n, verbs[v], strlen(verbs[v]))) return 1;
    return 0;
}

static void b_takes_the_key(void)
{
    xmt_rstore *b = connect_to(server_port);
    if (!b) abort();
    if (xmt_rstore_del(b, KEY) != 0 || xmt_rstore_claim(b, KEY, "B", 60000) != 1) abort();
    xmt_rstore_close(b);
}

static void *relay_main(void *arg)
{
    (void)arg;
    int c = accept(relay.listen_fd, NULL, NULL);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)server_port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (c < 0 || s < 0 || connect(s, (struct sockaddr *)&a, sizeof a) != 0) abort();
    int armed = 1;
    char buf[65536];
    for (;;) {
        struct pollfd p[2] = {{c, POLLIN, 0}, {s, POLLIN, 0}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(p[i].fd, buf, sizeof buf);
            if (n <= 0) goto out;
            if (i == 0 && armed && takes_claim(buf, (size_t)n)) {
                armed = 0;
                b_takes_the_key();
            }
            if (write(p[i ^ 1].fd, buf, (size_t)n) != n) goto out;
        }
    }
out:
    close(c);
    close(s);
    return NULL;
}

/* A connection of A's through a fresh relay, KEY unclaimed. */
static xmt_rstore *a_through_relay(void)
{
    xmt_rstore *d = connect_to(server_port);
    ck_assert_int_eq(xmt_rstore_del(d, KEY), 0);
    xmt_rstore_close(d);
    relay.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    ck_assert_int_eq(bind(relay.listen_fd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(getsockname(relay.listen_fd, (struct sockaddr *)&a, &l), 0);
    ck_assert_int_eq(listen(relay.listen_fd, 1), 0);
    relay.port = ntohs(a.sin_port);
    ck_assert_int_eq(pthread_create(&relay.thread, NULL, relay_main, NULL), 0);
    xmt_rstore *s = connect_to(relay.port);
    ck_assert_ptr_nonnull(s);
    return s;
}

static void relay_done(xmt_rstore *a)
{
    xmt_rstore_close(a);
    pthread_join(relay.thread, NULL);
    close(relay.listen_fd);
}

/* The claim's value ("" when none) and its time to live in ms (-2: no key). */
static long claim_now(char *val, size_t cap)
{
    xmt_rstore *d = connect_to(server_port);
    ck_assert_ptr_nonnull(d);
    char *v = NULL;
    size_t n = 0;
    val[0] = 0;
    if (xmt_rstore_get(d, KEY, &v, &n) == 1) {
        snprintf(val, cap, "%.*s", (int)n, v);
        free(v);
    }
    xmt_rstore_close(d);
    redisContext *c = redisConnect("127.0.0.1", server_port);
    ck_assert(c && !c->err);
    redisReply *r = redisCommand(c, "PTTL %s", KEY);
    ck_assert(r && r->type == REDIS_REPLY_INTEGER);
    long ttl = (long)r->integer;
    freeReplyObject(r);
    redisFree(c);
    return ttl;
}

/* Without a race: the owner renews and releases its own claim; another's is left alone. */
START_TEST(own_claim_renewed_and_released)
{
    xmt_rstore *a = connect_to(server_port);
    ck_assert_ptr_nonnull(a);
    char v[64];
    ck_assert_int_eq(xmt_rstore_del(a, KEY), 0);
    ck_assert_int_eq(xmt_rstore_claim(a, KEY, "A", 1000), 1);
    ck_assert_int_eq(xmt_rstore_claim(a, KEY, "B", 1000), 0); /* NX: A holds it */
    ck_assert_int_eq(xmt_rstore_renew(a, KEY, "A", 60000), 1);
    ck_assert_int_gt(claim_now(v, sizeof v), 30000);
    ck_assert_str_eq(v, "A");
    ck_assert_int_eq(xmt_rstore_renew(a, KEY, "B", 100), 0);
    ck_assert_int_eq(xmt_rstore_release(a, KEY, "B"), 0);
    ck_assert_int_gt(claim_now(v, sizeof v), 30000);
    ck_assert_str_eq(v, "A");
    ck_assert_int_eq(xmt_rstore_release(a, KEY, "A"), 1);
    ck_assert_int_eq(claim_now(v, sizeof v), -2);
    ck_assert_int_eq(xmt_rstore_release(a, KEY, "A"), 0); /* gone: nothing to do */
    ck_assert_int_eq(xmt_rstore_renew(a, KEY, "A", 1000), 0);
    ck_assert_int_eq(claim_now(v, sizeof v), -2);
    xmt_rstore_close(a);
}
END_TEST

/* A's claim expired and B took the key right before A's late release: B's claim stays. */
START_TEST(late_release_leaves_anothers_claim)
{
    xmt_rstore *a = a_through_relay();
    char v[64];
    ck_assert_int_eq(xmt_rstore_claim(a, KEY, "A", 60000), 1);
    ck_assert_int_eq(xmt_rstore_release(a, KEY, "A"), 0); /* not A's any more */
    ck_assert_int_gt(claim_now(v, sizeof v), 30000);
    ck_assert_str_eq(v, "B");
    relay_done(a);
}
END_TEST

/* The same before A's late renewal: B's claim keeps its own time to live, and A learns that
 * the claim is no longer its own. */
START_TEST(late_renewal_leaves_anothers_claim)
{
    xmt_rstore *a = a_through_relay();
    char v[64];
    ck_assert_int_eq(xmt_rstore_claim(a, KEY, "A", 60000), 1);
    ck_assert_int_eq(xmt_rstore_renew(a, KEY, "A", 500), 0); /* not A's any more */
    ck_assert_int_gt(claim_now(v, sizeof v), 30000);         /* B's 60 s, not A's 0.5 s */
    ck_assert_str_eq(v, "B");
    relay_done(a);
}
END_TEST

static void listed(void *ud, const char *hash)
{
    char *got = ud;
    snprintf(got + strlen(got), 200 - strlen(got), "%s;", hash);
}

/* The claims' index lists the HASH of each live claim: put there by the claim, kept by a
 * renewal, taken out by the release; a claim that expired is dropped from it. */
START_TEST(index_follows_claims)
{
    xmt_rstore *a = connect_to(server_port);
    ck_assert_ptr_nonnull(a);
    const char *hash = KEY + strlen(KEY) - 32;
    char got[200] = "", want[64];
    snprintf(want, sizeof want, "%s;", hash);
    ck_assert_int_eq(xmt_rstore_del(a, KEY), 0);
    ck_assert_int_eq(xmt_rstore_del(a, "t:claims"), 0);
    ck_assert_int_eq(xmt_rstore_live_claims(a, "t", 100, listed, got), 0);
    ck_assert_int_eq(xmt_rstore_claim(a, KEY, "A", 60000), 1);
    ck_assert_int_eq(xmt_rstore_live_claims(a, "t", 100, listed, got), 1);
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(xmt_rstore_renew(a, KEY, "A", 60000), 1);
    got[0] = 0;
    ck_assert_int_eq(xmt_rstore_live_claims(a, "t", 100, listed, got), 1);
    ck_assert_str_eq(got, want);
    ck_assert_int_eq(xmt_rstore_release(a, KEY, "B"), 0); /* not B's: listed still */
    got[0] = 0;
    ck_assert_int_eq(xmt_rstore_live_claims(a, "t", 100, listed, got), 1);
    ck_assert_int_eq(xmt_rstore_release(a, KEY, "A"), 1);
    got[0] = 0;
    ck_assert_int_eq(xmt_rstore_live_claims(a, "t", 100, listed, got), 0);
    ck_assert_str_eq(got, "");
    /* a claim of 100 ms that nobody renews: gone from the index once it expired */
    ck_assert_int_eq(xmt_rstore_claim(a, KEY, "A", 100), 1);
    char v[64];
    while (claim_now(v, sizeof v) != -2)
        usleep(10000);
    ck_assert_int_eq(xmt_rstore_live_claims(a, "t", 100, listed, got), 0);
    xmt_rstore_close(a);
}
END_TEST

int main(void)
{
    if (system("command -v redis-server >/dev/null 2>&1") != 0) {
        printf("redis-server is not installed (scripts/deps.sh installs it): skipped\n");
        return 77;
    }
    signal(SIGPIPE, SIG_IGN);
    start_server();
    Suite *s = suite_create("rstore_claims");
    TCase *tc = tcase_create("rstore_claims");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, own_claim_renewed_and_released);
    tcase_add_test(tc, late_release_leaves_anothers_claim);
    tcase_add_test(tc, late_renewal_leaves_anothers_claim);
    tcase_add_test(tc, index_follows_claims);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_NOFORK); /* one server for every test */
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    stop_server();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
