// SPDX-License-Identifier: LGPL-2.1
/*
 * System memory without the module: /proc/meminfo (kB) and /proc/vmstat
 * (event counts since boot) into the fields of struct memtrack_summary they
 * correspond to, and those it has none for into struct mt_sysinfo.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "libmemtrack.h"
#include "internal.h"
#include "source.h"

#define SUM(f)	offsetof(struct mt_sysinfo, sum.f)
#define SI(f)	offsetof(struct mt_sysinfo, f)

struct field {
	const char *name;
	size_t off;			/* of a u64 in the destination */
};

/* The module's FilePages is Cached + Buffers + SwapCached in meminfo. */
static const struct field meminfo_fields[] = {
	{ "MemTotal", SUM(mem_total) },
	{ "MemFree", SUM(mem_free) },
	{ "Cached", SUM(file_pages) },
	{ "Buffers", SUM(file_pages) },
	{ "SwapCached", SUM(file_pages) },
	{ "Active(anon)", SUM(active_anon) },
	{ "Inactive(anon)", SUM(inactive_anon) },
	{ "Active(file)", SUM(active_file) },
	{ "Inactive(file)", SUM(inactive_file) },
	{ "Unevictable", SUM(unevictable) },
	{ "Dirty", SUM(dirty) },
	{ "Writeback", SUM(writeback) },
	{ "AnonPages", SUM(anon_pages) },
	{ "Mapped", SUM(mapped) },
	{ "Shmem", SUM(shmem) },
	{ "SReclaimable", SUM(slab_reclaimable) },
	{ "SUnreclaim", SUM(slab_unreclaimable) },
	{ "PageTables", SUM(page_tables) },
	{ "AnonHugePages", SUM(anon_huge) },
	{ "SwapFree", SUM(swap_free) },
	{ "SwapTotal", SI(swap_total) },
	{ "Buffers", SI(buffers) },
	{ "MemAvailable", SI(mem_available) },
};

/*
 * A name ending in '_' matches every counter with that prefix (per zone);
 * pgscan_anon/file would count the same pages twice, so those are by name.
 */
static const struct field vmstat_fields[] = {
	{ "pgscan_kswapd", SUM(reclaim_scanned) },
	{ "pgscan_direct", SUM(reclaim_scanned) },
	{ "pgscan_khugepaged", SUM(reclaim_scanned) },
	{ "pgsteal_kswapd", SUM(reclaim_reclaimed) },
	{ "pgsteal_direct", SUM(reclaim_reclaimed) },
	{ "pgsteal_khugepaged", SUM(reclaim_reclaimed) },
	{ "allocstall_", SUM(direct_reclaim_stalls) },
	{ "pgalloc_", SUM(page_allocs) },
	{ "pgfree", SUM(page_frees) },
	{ "oom_kill", SUM(oom_kills) },
	{ "pgfault", SI(pgfault) },
	{ "pgmajfault", SI(pgmajfault) },
};

static bool field_match(const char *pattern, const char *name)
{
	size_t n = strlen(pattern);

	if (pattern[n - 1] == '_')
		return !strncmp(pattern, name, n);
	return !strcmp(pattern, name);
}

/* "name: value" or "name value" lines: adds value * scale to each field. */
static int read_fields(const char *path, const struct field *fields,
		       size_t nr, void *dst, unsigned int scale)
{
	char line[256], name[64];
	unsigned long long v;
	FILE *f;
	size_t i;

	f = fopen(path, "re");
	if (!f)
		return mt_seterr(-errno, "%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^: ]%*[: ]%llu", name, &v) != 2)
			continue;
		for (i = 0; i < nr; i++)
			if (field_match(fields[i].name, name))
				*(uint64_t *)((char *)dst + fields[i].off) +=
					v * scale;
	}
	fclose(f);
	return 0;
}

int mt_proc_meminfo(struct mt_sysinfo *si)
{
	struct mt_sysinfo tmp = { 0 };
	int err;

	err = read_fields("/proc/meminfo", meminfo_fields,
			  sizeof(meminfo_fields) / sizeof(meminfo_fields[0]),
			  &tmp, 1024);
	if (err)
		return err;
	if (!tmp.sum.mem_total)
		return mt_seterr(-EBADMSG, "/proc/meminfo: no MemTotal");
	si->swap_total = tmp.swap_total;
	si->buffers = tmp.buffers;
	si->mem_available = tmp.mem_available;
	si->sum.nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	memcpy(&si->sum.mem_total, &tmp.sum.mem_total,
	       offsetof(struct memtrack_summary, page_alloc_failures) -
	       offsetof(struct memtrack_summary, mem_total));
	return 0;
}

int mt_proc_vmstat(struct mt_sysinfo *si)
{
	return read_fields("/proc/vmstat", vmstat_fields,
			   sizeof(vmstat_fields) / sizeof(vmstat_fields[0]),
			   si, 1);
}
