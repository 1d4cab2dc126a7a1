// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libmemtrack's JSON string writer (json.c): exact bytes for
 * ASCII, every control character, '"' and '\', 2-, 3- and 4-byte UTF-8
 * passing through, each kind of ill-formed UTF-8 as U+FFFD, NULL as null,
 * mt_json_print() and mt_json_snprint() giving the same bytes, and
 * snprint's truncation.  Prints "PASS name" or "FAIL name: why" per test;
 * exits 1 if any failed.
 *
 * For tests/host/test_libmemtrack.sh, which checks the output against
 * Python's json module: "--dump" prints each case as "HEX<tab>JSON" (HEX:
 * its input bytes), "--stdin" reads lines of hex and prints each as JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libmemtrack.h"

#define FFFD "\xef\xbf\xbd"

static int failures;

/* in: n bytes (string literals may hold NULs); want: the exact output */
#define CASE(name, in, want) { name, in, sizeof(in) - 1, want }

static const struct {
	const char *name;
	const char *in;
	size_t n;
	const char *want;
} cases[] = {
	CASE("ascii", "hello, world/~ {}[]:'", "\"hello, world/~ {}[]:'\""),
	CASE("empty", "", "\"\""),
	CASE("control-chars",
	     "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"
	     "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f",
	     "\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007"
	     "\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f"
	     "\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017"
	     "\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\""),
	CASE("quote-backslash", "a\"b\\c\\\"", "\"a\\\"b\\\\c\\\\\\\"\""),
	CASE("del-passes", "a\x7f" "b", "\"a\x7f" "b\""),
	CASE("utf8-2-byte", "sl\xc3\xa9" "p", "\"sl\xc3\xa9" "p\""),
	CASE("utf8-3-byte", "\xe2\x82\xac" "5", "\"\xe2\x82\xac" "5\""),
	CASE("utf8-4-byte", "\xf0\x9f\x98\x80!", "\"\xf0\x9f\x98\x80!\""),
	CASE("utf8-comm", "sl\xc3\xa9\xe2\x82\xacp", "\"sl\xc3\xa9\xe2\x82\xacp\""),
	/* U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF */
	CASE("utf8-boundaries",
	     "\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf"
	     "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf",
	     "\"\xc2\x80\xdf\xbf\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf"
	     "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf\""),
	CASE("stray-continuation", "a\x80" "b\xbf", "\"a" FFFD "b" FFFD "\""),
	CASE("stray-continuations", "\x80\x80\xbf", "\"" FFFD FFFD FFFD "\""),
	CASE("continuation-after-char", "\xc3\xa9\xa9", "\"\xc3\xa9" FFFD "\""),
	CASE("overlong-2-byte", "\xc0\x80\xc1\xbf", "\"" FFFD FFFD FFFD FFFD "\""),
	CASE("overlong-3-byte", "\xe0\x80\x80\xe0\x9f\xbf",
	     "\"" FFFD FFFD FFFD FFFD FFFD FFFD "\""),
	CASE("overlong-4-byte", "\xf0\x80\x80\x80\xf0\x8f\xbf\xbf",
	     "\"" FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD "\""),
	CASE("surrogates", "\xed\xa0\x80" "x\xed\xbf\xbf",
	     "\"" FFFD FFFD FFFD "x" FFFD FFFD FFFD "\""),
	CASE("surrogate-pair-cesu", "\xed\xa0\xbd\xed\xb8\x80",
	     "\"" FFFD FFFD FFFD FFFD FFFD FFFD "\""),
	CASE("beyond-10ffff", "\xf4\x90\x80\x80",
	     "\"" FFFD FFFD FFFD FFFD "\""),
	CASE("truncated-2-byte-at-end", "ab\xc3", "\"ab" FFFD "\""),
	CASE("truncated-3-byte-at-end", "\xe2\x82", "\"" FFFD "\""),
	CASE("truncated-4-byte-at-end", "\xf0\x9f\x98", "\"" FFFD "\""),
	CASE("truncated-before-ascii", "\xe2\x82" "A\xf0\x9f" "\"",
	     "\"" FFFD "A" FFFD "\\\"\""),
	CASE("truncated-before-lead", "\xe2\xc3\xa9\xf0\x9f\x98\xe2\x82\xac",
	     "\"" FFFD "\xc3\xa9" FFFD "\xe2\x82\xac\""),
	CASE("bytes-f5-ff",
	     "\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff",
	     "\"" FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD FFFD "\""),
	CASE("latin1-comm", "caf\xe9 \xff", "\"caf" FFFD " " FFFD "\""),
};

#define NR_CASES MT_ARRAY_SIZE(cases)

/* mt_json_print()'s output for s, malloc'ed */
static char *printed(const char *s)
{
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	if (!f) {
		perror("open_memstream");
		exit(1);
	}
	mt_json_print(f, s);
	fclose(f);
	return out;
}

static void test_cases(void)
{
	char buf[256], *p;
	size_t i, n;

	for (i = 0; i < NR_CASES; i++) {
		n = mt_json_snprint(buf, sizeof(buf), cases[i].in, cases[i].n);
		if (n != strlen(cases[i].want) || strcmp(buf, cases[i].want)) {
			printf("FAIL %s: snprint '%s' (%zu), want '%s'\n",
			       cases[i].name, buf, n, cases[i].want);
			failures++;
			continue;
		}
		/* print stops at a NUL: the same for a case without one */
		p = printed(cases[i].in);
		if (strlen(cases[i].in) == cases[i].n && strcmp(p, buf)) {
			printf("FAIL %s: print '%s', snprint '%s'\n",
			       cases[i].name, p, buf);
			failures++;
		} else {
			printf("PASS %s\n", cases[i].name);
		}
		free(p);
	}
}

static void test_null(void)
{
	const char *name = "null";
	char buf[8], *p = printed(NULL);
	size_t n = mt_json_snprint(buf, sizeof(buf), NULL, 3);

	if (strcmp(p, "null") || n != 4 || strcmp(buf, "null")) {
		printf("FAIL %s: print '%s', snprint '%s' (%zu)\n", name, p,
		       buf, n);
		failures++;
	} else {
		printf("PASS %s\n", name);
	}
	free(p);
}

/* snprintf's contract: the whole length returned, the rest cut, terminated */
static void test_truncation(void)
{
	const char *name = "snprint-truncates-like-snprintf";
	const char *in = "\xc3\xa9\n\x80";	/* "é\n" FFFD: 2+2+3 + quotes */
	char buf[16];
	size_t n1, n5, n0;

	memset(buf, 'x', sizeof(buf));
	n1 = mt_json_snprint(buf, 1, in, strlen(in));
	if (n1 != 9 || buf[0] || buf[1] != 'x') {
		printf("FAIL %s: len 1: %zu '%s'\n", name, n1, buf);
		failures++;
		return;
	}
	memset(buf, 'x', sizeof(buf));
	n5 = mt_json_snprint(buf, 5, in, strlen(in));
	n0 = mt_json_snprint(NULL, 0, in, strlen(in));
	if (n5 != 9 || n0 != 9 || strcmp(buf, "\"\xc3\xa9\\") ||
	    buf[5] != 'x')
		printf("FAIL %s: len 5: %zu '%s', len 0: %zu\n", name, n5, buf,
		       n0);
	else
		printf("PASS %s\n", name);
}

static void print_hex(const char *s, size_t n)
{
	while (n--)
		printf("%02x", (unsigned char)*s++);
}

static int dump(void)
{
	char buf[256];
	size_t i;

	for (i = 0; i < NR_CASES; i++) {
		print_hex(cases[i].in, cases[i].n);
		mt_json_snprint(buf, sizeof(buf), cases[i].in, cases[i].n);
		printf("\t%s\n", buf);
	}
	return 0;
}

/* Each line of hex from stdin as a JSON line through mt_json_print(). */
static int from_stdin(void)
{
	char *line = NULL, *s;
	size_t cap = 0, i, n;
	unsigned int c;
	ssize_t len;

	while ((len = getline(&line, &cap, stdin)) > 0) {
		n = (size_t)len / 2;
		s = malloc(n + 1);
		if (!s)
			return 1;
		for (i = 0; i < n && sscanf(line + 2 * i, "%2x", &c) == 1; i++)
			s[i] = (char)c;
		s[i] = '\0';
		mt_json_print(stdout, s);
		putchar('\n');
		free(s);
	}
	free(line);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--dump"))
		return dump();
	if (argc > 1 && !strcmp(argv[1], "--stdin"))
		return from_stdin();
	test_cases();
	test_null();
	test_truncation();
	return failures ? 1 : 0;
}
