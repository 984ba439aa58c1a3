/*
 * options_cmd: `xmatune options`, the XMATUNE_* variables as a Markdown table, from the
 * shim's own options table (common/options.c).
 */
#include "options_cmd.h"

#include <stdio.h>
#include <string.h>

#include "options.h"

int cmd_options(int argc, char **argv)
{
    if (argc > 1) {
        int help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
        if (!help) fprintf(stderr, "xmatune options: unexpected argument %s\n", argv[1]);
        fprintf(help ? stdout : stderr,
                "usage: xmatune options\n"
                "Prints every XMATUNE_* variable the shim reads (name, default, meaning) as a\n"
                "Markdown table, from the shim's own options table.\n");
        return help ? 0 : 2;
    }
    xmt_options_markdown(stdout);
    return 0;
}
