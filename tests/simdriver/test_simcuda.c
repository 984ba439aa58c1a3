#include "simcuda.h"
int main(void){return 0;}
