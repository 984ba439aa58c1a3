/* rtld_next_b: the probe() that dlsym(RTLD_NEXT) from rtld_next_a must find. */
int probe(void)
{
    return 2;
}
