// SPDX-License-Identifier: GPL-2.0
/*
 * A program that dlopens a library by a bare name its RUNPATH
 * ($ORIGIN/plug) alone finds, after a line on stdin: memtrack-leak -p's
 * hook must load it as the program would.  Prints "ready", then "done"
 * after the library's leak, and exits at the next line.  Built here, not in
 * the guest: a guest of another architecture has no compiler.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
	void (*leak)(void);
	char l[16];
	void *h;

	puts("ready");
	fflush(stdout);
	if (!fgets(l, sizeof(l), stdin))
		return 1;
	h = dlopen("libplug.so", RTLD_NOW);	/* from the RUNPATH alone */
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&leak = dlsym(h, "plug_leak");
	leak();
	puts("done");
	fflush(stdout);
	if (!fgets(l, sizeof(l), stdin))
		return 1;
	return 0;
}
