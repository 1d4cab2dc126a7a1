// SPDX-License-Identifier: GPL-2.0
/*
 * scan: blocks in each of valgrind's/LeakSanitizer's classes, for --scan.
 *   definitely lost: a tree's root (no pointer to it anywhere) ...
 *   indirectly lost: ... and its 6 children, reachable only from the root;
 *   definitely lost: a 3-block cycle nobody points to (each block is
 *                    pointed to, but only from inside the cycle: valgrind
 *                    reports one definitely, two indirectly lost);
 *   possibly lost:   a block only pointed to from its interior (+16);
 *   still reachable: a block a global points to.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

void *volatile fixture_sink;

struct node {
	struct node *left, *right, *next;
	char pad[40];
};

static struct node *volatile reachable;
static char *volatile interior;

NOINLINE static struct node *mk(void)
{
	struct node *n = calloc(1, sizeof(*n));		/* LEAK(tree_and_cycle): 10 x 64 */

	escape(n);
	return n;
}

NOINLINE static void build(void)
{
	struct node *root = mk(), *c1 = mk(), *c2 = mk();
	struct node *a = mk(), *b = mk(), *c = mk();

	root->left = c1;
	root->right = c2;
	c1->left = mk();
	c1->right = mk();
	c2->left = mk();
	c2->right = mk();				/* 7-node tree: 1 + 6 */
	root = NULL;
	a->next = b;
	b->next = c;
	c->next = a;					/* the 3-block cycle */
	escape(root);
	escape(a);
	a = b = c = NULL;
	reachable = malloc(64);				/* LEAK(reachable): 1 x 64 */
	interior = (char *)malloc(64) + 16;		/* LEAK(possibly): 1 x 64 */
	(void)root;
}

/*
 * Clear the dead stack slots below main's frame that held the pointers:
 * build()'s frame lies there, and the stdio calls that follow reuse it
 * without overwriting every slot (a stale one would make the tree's root
 * reachable to a scan done while the fixture waits).
 */
NOINLINE static void scrub_stack(void)
{
	volatile char scrub[4096];

	memset((char *)scrub, 0, sizeof(scrub));
	escape((void *)scrub);
}

int main(void)
{
	fixture_wait("ready");
	build();
	fixture_sink = NULL;
	scrub_stack();
	fixture_wait("done");
	return 0;
}
