/* xmatune.c - the xmatune command: one table of subcommands, each a function taking its
 * own argv and living in a file of its own (check.c, discover.c, run.c, report.c,
 * cache_cmd.c, options_cmd.c). Every subcommand answers --help (its usage on stdout,
 * exit 0); `xmatune help CMD` is `xmatune CMD --help`; `xmatune man` writes the manual
 * page from this table and each subcommand's own --help, so that the two cannot differ.
 */
#include "autotune_cmd.h"
#include "cache_cmd.h"
#include "check.h"
#include "discover.h"
#include "options.h"
#include "options_cmd.h"
#include "report.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef XMATUNE_VERSION
#define XMATUNE_VERSION "unknown"
#endif
/* Where cmake --install puts README.md and docs/ (CMAKE_INSTALL_FULL_DOCDIR). */
#ifndef XMATUNE_DOCDIR
#define XMATUNE_DOCDIR "/usr/local/share/doc/xmatune"
#endif

typedef int (*cmd_fn)(int argc, char **argv);
typedef struct {
    const char *name;
    cmd_fn fn;
    const char *summary;
} subcommand;

static int cmd_help(int argc, char **argv);
static int cmd_man(int argc, char **argv);

/* Add a subcommand here: name, function, one-line summary for `xmatune help` and the
 * manual page. */
static const subcommand commands[] = {
    {"check", cmd_check, "validate policy files and summarise each entry"},
    {"discover", cmd_discover,
     "run a program in discover mode: its kernels, shapes, a policy stub"},
    {"run", cmd_run, "run a program under the shim (xmatune run --tune --policy P -- ./app)"},
    {"autotune", cmd_autotune,
     "run a program tuned with no policy; --write-policy writes what auto did"},
    {"report", cmd_report, "print a log (XMATUNE_LOG) as tables: tunings, kernels"},
    {"cache", cmd_cache, "the on-disk cache: list, show, prune, clear, export, import"},
    {"options", cmd_options, "print the XMATUNE_* variables as a Markdown table"},
    {"help", cmd_help, "list the subcommands, or print one's usage (help CMD)"},
    {"man", cmd_man, "write this command's manual page (troff) to stdout"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const subcommand *find_command(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(name, commands[i].name)) return &commands[i];
    return NULL;
}

static void print_list(FILE *f)
{
    fprintf(f, "usage: xmatune COMMAND [ARGS]   (xmatune COMMAND --help for its usage)\n"
               "       xmatune --help | --version\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

/* `xmatune help [CMD]`: the list, or CMD's own --help. */
static int cmd_help(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") && strcmp(argv[1], "-h")) {
        const subcommand *c = find_command(argv[1]);
        if (!c || argc > 2) {
            fprintf(stderr, "xmatune help: %s\n",
                    c ? "give one command" : "unknown command (see the list below)");
            print_list(stderr);
            return 2;
        }
        char *hargv[] = {(char *)c->name, "--help", NULL};
        return c->fn(2, hargv);
    }
    print_list(stdout);
    return 0;
}

/* Writes text as troff: a line starting with '.' or '\'' kept from being a request,
 * backslashes escaped; with md, Markdown's `code` in bold (the options table's texts). */
static void troff_write(FILE *out, const char *text, int md)
{
    int bol = 1, code = 0;
    for (const char *p = text; *p; p++) {
        if (bol && (*p == '.' || *p == '\'')) fputs("\\&", out);
        if (md && *p == '`')
            fputs((code = !code) ? "\\fB" : "\\fR", out);
        else if (*p == '\\')
            fputs("\\e", out);
        else if (*p == '-')
            fputs("\\-", out);
        else
            fputc(*p, out);
        bol = *p == '\n';
    }
    if (code) fputs("\\fR", out);
}

static void troff_text(FILE *out, const char *text)
{
    troff_write(out, text, 0);
}

/* The ENVIRONMENT section: every variable of the shim's options table (common/options.c,
 * the one place they are named and documented), then the command's own. */
static void man_environment(FILE *out)
{
    fputs(".SH ENVIRONMENT\nThe shim reads these once, when the program first asks for a CUDA "
          "entry point; a bad value is said and the default kept (for XMATUNE_MODE: off), where "
          "a flag of \\fBrun\\fR that sets one refuses it. "
          "\\fBxmatune options\\fR prints them as a table.\n",
          out);
    const char *name, *def, *doc;
    for (size_t i = 0; xmt_option_doc(i, &name, &def, &doc); i++) {
        fprintf(out, ".TP\n.B %s\n", name);
        troff_write(out, doc, 1);
        if (def && *def) {
            fputs(" (default \\fB", out);
            troff_text(out, def);
            fputs("\\fR)", out);
        } else if (def) {
            fputs(" (default empty)", out);
        }
        fputs("\n", out);
    }
    fputs(".TP\n.B XMATUNE_SHIM\nfor \\fBrun\\fR, \\fBdiscover\\fR and \\fBautotune\\fR: the "
          "libxmatune.so to preload instead of the one found beside this command\n",
          out);
}

/* Runs a subcommand's --help with stdout going into a temporary file, and returns what it
 * printed (malloc'd; NULL on failure). */
static char *help_text(const subcommand *c)
{
    FILE *tmp = tmpfile();
    if (!tmp) return NULL;
    (void)fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    char *text = NULL;
    if (saved >= 0 && dup2(fileno(tmp), STDOUT_FILENO) >= 0) {
        char *hargv[] = {(char *)c->name, "--help", NULL};
        c->fn(2, hargv);
        int flushed = fflush(stdout) == 0;
        int back = dup2(saved, STDOUT_FILENO) >= 0;
        off_t n = flushed && back ? lseek(fileno(tmp), 0, SEEK_END) : -1;
        if (n >= 0 && (text = calloc(1, (size_t)n + 1)) &&
            pread(fileno(tmp), text, (size_t)n, 0) != (ssize_t)n) {
            free(text);
            text = NULL;
        }
    }
    if (saved >= 0) close(saved);
    (void)fclose(tmp);
    return text;
}

/* `xmatune man`: the manual page, from the table above and each subcommand's --help. */
static int cmd_man(int argc, char **argv)
{
    if (argc > 1) {
        int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
        fprintf(help ? stdout : stderr,
                "usage: xmatune man > xmatune.1\n"
                "Writes the manual page (troff), made from the subcommands' table and each\n"
                "subcommand's --help; cmake --install puts it in share/man/man1.\n");
        return help ? 0 : 2;
    }
    printf(".TH XMATUNE 1 \"\" \"xmatune %s\" \"User Commands\"\n"
           ".SH NAME\nxmatune \\- tune the launch configuration of CUDA kernels in an "
           "unmodified program\n"
           ".SH SYNOPSIS\n.B xmatune\n.I COMMAND\n[\\fIARGS\\fR]\n.br\n.B xmatune\n"
           "\\-\\-help | \\-\\-version\n"
           ".SH DESCRIPTION\nxmatune runs a program with libxmatune.so preloaded: kernels a "
           "policy file describes are benchmarked once per lookup key and launched with the "
           "winning configuration. The XMATUNE_* variables are listed under ENVIRONMENT "
           "below and by \\fBxmatune options\\fR; the documentation is in ",
           XMATUNE_VERSION);
    troff_text(stdout, XMATUNE_DOCDIR "/README.md");
    printf(" and ");
    troff_text(stdout, XMATUNE_DOCDIR "/docs/");
    printf(".\n.SH COMMANDS\n");
    for (size_t i = 0; i < NCOMMANDS; i++) {
        printf(".SS %s\n", commands[i].name);
        troff_text(stdout, commands[i].summary);
        printf(".\n");
        if (commands[i].fn == cmd_man || commands[i].fn == cmd_help) continue;
        char *text = help_text(&commands[i]);
        if (!text) {
            fprintf(stderr, "xmatune man: cannot capture %s --help\n", commands[i].name);
            return 1;
        }
        printf(".PP\n.nf\n");
        troff_text(stdout, text);
        printf(".fi\n");
        free(text);
    }
    printf(".SH EXIT STATUS\n0 success, 1 an error, 2 a usage mistake; \\fBrun\\fR and "
           "\\fBdiscover\\fR return the program's own status (127: it did not start).\n");
    man_environment(stdout);
    printf(".SH FILES\n.TP\n.B ");
    troff_text(stdout, XMATUNE_DOCDIR);
    printf("\nthe documentation: README.md, and docs/ with the policy language (policy.md), "
           "tuning (tuning.md), the log (log.md) and the cache (cache.md)\n");
    return ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_list(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) return cmd_help(1, argv);
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("xmatune %s\n", XMATUNE_VERSION);
        return 0;
    }
    const subcommand *c = find_command(argv[1]);
    if (c) return c->fn(argc - 1, argv + 1);
    fprintf(stderr, "xmatune: unknown command '%s'\n", argv[1]);
    print_list(stderr);
    return 2;
}
