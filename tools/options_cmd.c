/*
 * options_cmd: `xmatune options`, the XMATUNE_* variables as a Markdown table, from the
 * shim's own options table (common/options.c).
 */
#include "options_cmd.h"

#include <stdio.h>

#include "options.h"

int cmd_options(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    xmt_options_markdown(stdout);
    return 0;
}
