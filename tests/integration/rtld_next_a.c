/* rtld_next_a: defines probe() (returns 1) and asks for the *next* probe from inside
 * this library. Correct dlsym(RTLD_NEXT) semantics find rtld_next_b's probe (2): the
 * search starts after the caller. If the shim's dlsym made itself the caller, the search
 * would start after the shim and find this library's own probe (1). */
#include <dlfcn.h>

int probe(void)
{
    return 1;
}

int call_next_probe(void)
{
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "probe");
    return next ? next() : -1;
}
