/*
 * commands: the subcommands of the xmatune command besides `check` (see commands.c).
 * Each takes its own argv (argv[0] is the subcommand's name) and returns the exit status.
 */
#ifndef XMT_COMMANDS_H
#define XMT_COMMANDS_H

#include <jansson.h>

/* Calls fn for every line of a JSON Lines file (the object is borrowed). Returns how many
 * lines were not JSON or were refused by fn (non-zero), or -1, having said why, when the
 * file cannot be opened. */
int read_jsonl(const char *path, int (*fn)(json_t *e, void *ud), void *ud);

int cmd_report(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_discover(int argc, char **argv); /* discover.c */

#endif
