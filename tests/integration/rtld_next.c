/* rtld_next: checks that a program's dlsym(RTLD_NEXT, ...) keeps its meaning under the
 * shim (see rtld_next_a.c). Prints "next=2" and exits 0 when it does. */
#include <stdio.h>

int call_next_probe(void);

int main(void)
{
    int v = call_next_probe();
    printf("next=%d\n", v);
    return v == 2 ? 0 : 1;
}
