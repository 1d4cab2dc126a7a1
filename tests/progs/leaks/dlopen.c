// SPDX-License-Identifier: GPL-2.0
/*
 * A leak in a library loaded after the tracer attached (dlopen): "ready",
 * then on a line it loads libdlleak.so from its own directory and says
 * "loaded", on the next line it calls the library's leaking function and
 * says "done", and exits on a third.  The leak is in lib/dlleak.c.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include "common.h"

void *volatile fixture_sink;

int main(void)
{
	char exe[PATH_MAX], lib[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void (*leak)(void);
	void *h;

	if (n < 0)
		return 1;
	exe[n] = '\0';
	snprintf(lib, sizeof(lib), "%s/libdlleak.so", dirname(exe));
	fixture_wait("ready");
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&leak = dlsym(h, "dl_leak");
	if (!leak)
		return 1;
	fixture_wait("loaded");
	leak();
	fixture_wait("done");
	return 0;
}
