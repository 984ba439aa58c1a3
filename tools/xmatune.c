/* xmatune.c - the xmatune command: one table of subcommands, each a function taking its
 * own argv and living in a file of its own (check.c, discover.c, run.c, report.c,
 * cache_cmd.c, options_cmd.c).
 */
#include "cache_cmd.h"
#include "check.h"
#include "discover.h"
#include "options_cmd.h"
#include "report.h"
#include "run.h"

#include <stdio.h>
#include <string.h>

typedef int (*cmd_fn)(int argc, char **argv);
typedef struct {
    const char *name;
    cmd_fn fn;
    const char *summary;
} subcommand;

static int cmd_help(int argc, char **argv);

/* Add a subcommand here: name, function, one-line summary for `xmatune help`. */
static const subcommand commands[] = {
    {"check", cmd_check, "validate policy files and summarise each entry"},
    {"discover", cmd_discover,
     "run a program in discover mode: its kernels, shapes, a policy stub"},
    {"run", cmd_run, "run a program under the shim (xmatune run --tune --policy P -- ./app)"},
    {"report", cmd_report, "print a log (XMATUNE_LOG) as tables: tunings, kernels"},
    {"cache", cmd_cache, "the on-disk cache: list, show, prune, clear, export, import"},
    {"options", cmd_options, "print the XMATUNE_* variables as a Markdown table"},
    {"help", cmd_help, "list the subcommands"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("usage: xmatune COMMAND [ARGS]\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        printf("  %-8s %s\n", commands[i].name, commands[i].summary);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cmd_help(0, NULL);
        return 2;
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "xmatune: unknown command '%s'\n", argv[1]);
    cmd_help(0, NULL);
    return 2;
}
