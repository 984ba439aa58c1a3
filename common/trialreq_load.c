/*
 * trialreq_load: the trial request's decoder entry point (see trialreq.h): the text parsed
 * by jansson's loader, then read by trialreq.c's walk. Apart from trialreq.c because the
 * loader must never be linked into the shim (tests/unit/shim_no_loader.sh): this file is in
 * libxmtcommon_tools.a, which the helper and the tests link and the shim does not.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "trialreq.h"

int xmt_trialreq_decode(const char *text, size_t len, xmt_trialreq *q, char *err, size_t errcap)
{
    memset(q, 0, sizeof *q);
    json_error_t e;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);
    if (!root) {
        if (errcap)
            snprintf(err, errcap, "the request is not JSON (at byte %d: %s)", e.position, e.text);
        return -1;
    }
    int r = xmt_trialreq_from_json(root, q, err, errcap);
    json_decref(root);
    return r;
}
