/*
 * drvtime: the sums of the trial helper's driver calls (see drvtime.h; the wrappers that
 * add to them are trial/drvwrap.c).
 */
#include "drvtime.h"

static xmt_drvtime sums;
static int installed;

void xmt_drvtime_start(void)
{
    installed = 1;
}

void xmt_drvtime_add(int i, double ms)
{
    sums.ms[i] += ms;
    sums.calls[i]++;
}

void xmt_drvtime_polled_wait(double ms)
{
    if (!installed) return;
    sums.ms[XMT_DT_POLLED_WAITS] += ms;
    sums.calls[XMT_DT_POLLED_WAITS]++;
}

int xmt_drvtime_read(xmt_drvtime *out)
{
    if (!installed) return -1;
    *out = sums;
    return 0;
}

void xmt_drvtime_since(const xmt_drvtime *then, const xmt_drvtime *now, xmt_drvtime *d)
{
    for (int i = 0; i < XMT_DT_COUNT; i++) {
        d->calls[i] = now->calls[i] - then->calls[i];
        d->ms[i] = now->ms[i] - then->ms[i];
    }
}

const char *xmt_drvtime_name(int i)
{
    static const char *const names[] = {
#define XMT_DRVTIME_NAME(name) #name,
        XMT_DRVTIME_FUNCS(XMT_DRVTIME_NAME)
#undef XMT_DRVTIME_NAME
            "polled_waits"};
    return i >= 0 && i < XMT_DT_COUNT ? names[i] : "?";
}
