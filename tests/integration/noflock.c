/*
 * noflock: preloaded before the shim in a test, makes flock(2) fail with ENOLCK, as it
 * does on some network file systems, so that the cache's fallback (append without
 * compaction or claims, said once) can be tested on any machine.
 */
#include <errno.h>

int flock(int fd, int op);

int flock(int fd, int op)
{
    (void)fd;
    (void)op;
    errno = ENOLCK;
    return -1;
}
