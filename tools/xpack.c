#include <stdio.h>
int main(void) { puts("xpack: being written"); return 0; }
