/*
 * logread: the tools' log reader and collector (see logread.h).
 */
#include "logread.h"

#include <stdio.h>
#include <stdlib.h>

int xmt_log_read(const char *path, int (*fn)(json_t *e, void *ud), void *ud)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int bad = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t err;
        json_t *e = json_loads(line, 0, &err);
        if (!e || fn(e, ud) != 0) bad++;
        json_decref(e);
    }
    free(line);
    (void)fclose(f); /* read only */
    return bad;
}

static int collect(json_t *e, void *ud)
{
    json_t **lists = ud;
    int kind = xmt_event_of(e);
    if (kind >= 0 && lists[kind]) json_array_append(lists[kind], e);
    return 0;
}

int xmt_log_collect(const char *path, json_t *lists[XMT_EV_COUNT])
{
    return xmt_log_read(path, collect, lists);
}
