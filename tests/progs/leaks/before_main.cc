// SPDX-License-Identifier: GPL-2.0
/*
 * Leaks made before main: by a constructor function and by a C++ static
 * initializer.  Only a tracer present from the program's first allocation
 * sees them (memtrack-leak -- CMD); the one in main is there for both ways.
 */
#include <cstdlib>
#include "common.h"

void *volatile fixture_sink;

NOINLINE static void *early_leak(void)
{
	void *p = malloc(200);				// LEAK(constructor): 1 x 200

	escape(p);		/* no tail call: this frame calls malloc */
	return p;
}

__attribute__((constructor)) static void early(void)
{
	escape(early_leak());
}

struct Table {
	NOINLINE Table() : cells(new int[30])		// LEAK(static_init): 1 x 120
	{
		escape(cells);
	}
	int *cells;					// never deleted
};

static Table table;

int main()
{
	fixture_wait("ready");
	fixture_sink = malloc(24);			// LEAK(in_main): 1 x 24
	escape(table.cells);
	fixture_wait("done");
	return 0;
}
