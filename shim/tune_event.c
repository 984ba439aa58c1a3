/*
 * tune_event: (moved from tuner.c)
 */
#include "tune_event.h"

static json_t *dims_json(const xmt_dims *d)
{
    return json_pack("{s[iii]s[iii]si}", "grid", (int)d->grid.x, (int)d->grid.y, (int)d->grid.z,
                     "block", (int)d->block.x, (int)d->block.y, (int)d->block.z, "shared",
                     (int)d->shared);
}

static json_t *times_json(const cand_t *c)
{
    json_t *a = json_array();
    for (int i = 0; i < c->ntimes; i++)
        json_array_append_new(a, json_real(c->times[i]));
    return a;
}

