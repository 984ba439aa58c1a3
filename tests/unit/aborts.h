/*
 * aborts: the unit tests' check that an invariant checker fires (shim/base/invariant.h): run
 * something in a child process with its stderr read back. Header-only, for the test
 * programs that include it (test_shim.c, test_kernels.c).
 */
#ifndef XMT_TEST_ABORTS_H
#define XMT_TEST_ABORTS_H

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs fn(arg) in a child process with its stderr read back: 1 when the child aborted
 * saying "xmatune: invariant broken: " and, in what follows, want (what it said goes to
 * stderr when not). */
static inline int aborts_saying_fn(void (*fn)(int), int arg, const char *want)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    fflush(stderr);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(p[1], 2);
        close(p[0]);
        fn(arg);
        _exit(0);
    }
    close(p[1]);
    char buf[1024];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf - 1 && (r = read(p[0], buf + n, sizeof buf - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = 0;
    close(p[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    const char *said = strstr(buf, "xmatune: invariant broken: ");
    if (!said || !strstr(said, want)) fprintf(stderr, "aborts_saying: got: %s\n", buf);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT && said && strstr(said, want);
}

#endif
