/*
 * run: `xmatune run`, a program under the shim without typing LD_PRELOAD (see run.c).
 */
#ifndef XMT_RUN_H
#define XMT_RUN_H

int cmd_run(int argc, char **argv);

/* cmd_run's first half: its options (argv as for cmd_run, argv[0] "run") checked and put
 * into the environment, LD_PRELOAD included, before anything starts. Returns the index of
 * PROGRAM in argv, or -1 with *status the exit status (0 after --help; 2 a usage mistake,
 * 1 a path or the shim missing: said). */
int run_prepare(int argc, char **argv, int *status);

/* 1 when run's option opt ("--iterations") takes the next argument as its value. */
int run_option_takes_value(const char *opt);

/* cmd_run's second half: execs argv[0] (searched in PATH). Returns only when it cannot,
 * having said "xmatune run: PROGRAM: why": 127. */
int run_exec(char **argv);

#endif
