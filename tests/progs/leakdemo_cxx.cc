// SPDX-License-Identifier: GPL-2.0
// leakdemo_cxx: a C++ process (libstdc++ mapped) that allocates with new and
// new[] and sleeps; built g++ -O0 -g by tests/host/test_memtrack_leak.sh.
// Prints "ra 0x..." : a return address inside demo::make_ints(int), for the
// demangling check.
#include <cstdio>
#include <cstdlib>
#include <new>
#include <unistd.h>

namespace demo {
void *ra;

__attribute__((noinline)) void note()
{
	ra = __builtin_return_address(0);
}

__attribute__((noinline)) int *make_ints(int n)
{
	int *p = new int[n];

	note();
	return p;
}
} // namespace demo

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 30;
	int *one = new int(1);
	int *many = demo::make_ints(100);
	long *nothrow = new (std::nothrow) long[10];

	(void)many;
	(void)nothrow;
	delete one;
	std::printf("ra %p\n", demo::ra);
	std::fflush(stdout);
	sleep(seconds);
	return 0;
}
