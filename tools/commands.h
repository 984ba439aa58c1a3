/*
 * commands: the subcommands of the xmatune command besides `check` (see commands.c).
 * Each takes its own argv (argv[0] is the subcommand's name) and returns the exit status.
 */
#ifndef XMT_COMMANDS_H
#define XMT_COMMANDS_H

int cmd_report(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_options(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_discover(int argc, char **argv); /* discover.c */

#endif
