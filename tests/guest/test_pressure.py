#!/usr/bin/env python3
"""memtrack.ko under memory pressure: direct reclaim, failed page allocations
and the OOM killer.  Needs a small guest (tests/vm/run --mem 256): a process
that keeps allocating drives the machine through reclaim into OOM.

memtrack's numbers are checked against the kernel's own tracepoint hits,
counted independently through tracefs, and against /proc/vmstat.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mtlib import *  # noqa: E402,F403

FAILED_ALLOC = "pfn == 18446744073709551615"


@test
def oom_kill_direct_reclaim_and_failures():
    # The test must survive; the hog must be the victim.
    with open("/proc/self/oom_score_adj", "w") as f:
        f.write("-1000")
    s0, v0 = summary(), vmstat()
    with TraceCount([("oom", "mark_victim", None),
                     ("vmscan", "mm_vmscan_direct_reclaim_end", None),
                     ("kmem", "mm_page_alloc", FAILED_ALLOC)]) as tc:
        hog = subprocess.Popen(["sh", "-c", f"echo 1000 > /proc/self/oom_score_adj; "
                                f"exec {TESTBIN}/hog"])
        hog.wait(timeout=600)
    s1, v1 = summary(), vmstat()

    check(hog.returncode == -9, f"hog ended with {hog.returncode}, not SIGKILL")
    kills = summary_int("OomKills", s1) - summary_int("OomKills", s0)
    check(kills >= 1, "no OOM kill counted")
    check(kills == tc.counts["mark_victim"],
          f"OomKills grew by {kills}, mark_victim fired {tc.counts['mark_victim']} times")
    check(v1["oom_kill"] - v0["oom_kill"] == kills,
          f"/proc/vmstat oom_kill grew by {v1['oom_kill'] - v0['oom_kill']}, memtrack {kills}")
    victims = [dict(re.findall(r"(\w+)=(\S+)", v)) for v in s1.get("Victim", [])]
    mine = [v for v in victims if int(v["pid"]) == hog.pid]
    check(mine, f"hog pid {hog.pid} not among victims {victims}")
    check(mine[0]["comm"] == "hog", f"victim comm {mine[0]['comm']}")
    check(int(mine[0]["rss_kb"]) > 64 * 1024, f"victim rss {mine[0]['rss_kb']} kB")

    stalls = (summary_int("DirectReclaimStalls", s1) -
              summary_int("DirectReclaimStalls", s0))
    check(stalls > 0, "no direct reclaim stall counted")
    check(stalls == tc.counts["mm_vmscan_direct_reclaim_end"],
          f"DirectReclaimStalls grew by {stalls}, tracepoint fired "
          f"{tc.counts['mm_vmscan_direct_reclaim_end']} times")
    fails = (summary_int("PageAllocFailures", s1) -
             summary_int("PageAllocFailures", s0))
    check(fails == tc.counts["mm_page_alloc"],
          f"PageAllocFailures grew by {fails}, failed mm_page_alloc fired "
          f"{tc.counts['mm_page_alloc']} times")

    r = row(hog.pid, state="X")
    check(r is not None, "hog not listed as exited")
    check(r["oom_victim"] == 1, "hog row not flagged oom_victim")
    check(r["reclaim_stalls"] > 0 and r["reclaim_ns"] > 0,
          f"hog reclaim_stalls {r['reclaim_stalls']} reclaim_ns {r['reclaim_ns']}")
    check(r["rss_peak"] > 64 << 20, f"hog rss_peak {r['rss_peak']}")


if __name__ == "__main__":
    sys.exit(run_tests(sys.argv))
