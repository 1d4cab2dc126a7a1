// SPDX-License-Identifier: GPL-2.0
/*
 * The classic C++ leaks: a leaked temporary workspace, a destructor that
 * forgets a member, a static data member never released, a global pointer
 * reallocated repeatedly without freeing the old block, and new T[10] freed
 * with delete (a mismatched deallocation); plus the operator new variants
 * (nothrow, aligned, sized/aligned delete) used correctly.
 */
#include <cstddef>
#include <cstdio>
#include <new>
#include "common.h"

void *volatile fixture_sink;

struct Item {
	int v[4];
};

NOINLINE static void workspace(int n)
{
	double *tmp = new double[n];			// LEAK(workspace): 1 x 800

	for (int i = 0; i < n; i++)
		tmp[i] = i;
	fixture_sink = tmp;				// forgot delete[]
}

class Holder {
public:
	NOINLINE Holder() : kept(new Item), lost(new Item[4])	// LEAK(member): 1 x 64
	{
		escape(lost);
	}
	~Holder() { delete kept; }			// forgets lost
private:
	Item *kept;					// FREED
	Item *lost;
};

struct Registry {
	static Item *table;
};
Item *Registry::table;

NOINLINE static void static_member(void)
{
	escape(Registry::table = new Item[8]);		// LEAK(static_member): 1 x 128
}

static Item *volatile g_buffer;

NOINLINE static void global_realloc(void)
{
	for (int i = 1; i <= 5; i++)
		escape(g_buffer = new Item[i * 2]);	// LEAK(global_realloc): 5 x 96
	/* 32+64+96+128+160 = 480 = 5 x 96 bytes: 4 blocks lost, the last reachable */
}

NOINLINE static void mismatch(void)
{
	Item *a = new Item[10];				// MISMATCH(new_array_delete): 1 x 160 by new[]

	escape(a);
	delete a;					// MISMATCH_FREE(new_array_delete): delete
	escape(NULL);		/* no tail call: this frame calls the delete */
}

NOINLINE static void variants(void)
{
	Item *n = new (std::nothrow) Item;		// FREED
	Item *al = new (std::align_val_t(64)) Item;	// FREED

	delete n;
	::operator delete(al, sizeof(Item), std::align_val_t(64));
	fixture_sink = new (std::nothrow) Item[3];	// LEAK(nothrow_array): 1 x 48
}

int main()
{
	fixture_wait("ready");
	workspace(100);
	{
		Holder h;
	}
	static_member();
	global_realloc();
	mismatch();
	variants();
	fixture_wait("done");
	return 0;
}
