#!/usr/bin/perl
# perlload.pl N: the leak benchmark's real program, Debian's perl (built with
# usemymalloc=n, so every string, array and hash buffer comes from glibc's
# malloc/realloc/free).  Prints "ready", then runs one timed phase per line
# read on stdin and exits at end of input.  A phase builds a hash of N
# entries, each a string key, an array, a string and a small hash, sorts the
# keys, and drops it all again (about 8 allocator calls per entry); then
# prints the phase's elapsed time in ns.
use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);

$| = 1;
my $n = shift // 5000;
print "ready\n";
while (defined(my $line = <STDIN>)) {
	my $t0 = clock_gettime(CLOCK_MONOTONIC);
	my %h;
	for my $i (1 .. $n) {
		my $k = "key$i" x (1 + $i % 7);
		$h{$k} = [ $i, "v" x ($i % 200), { a => $i } ];
	}
	my @keys = sort { $h{$a}[0] <=> $h{$b}[0] } keys %h;
	%h = ();
	printf "%d\n", (clock_gettime(CLOCK_MONOTONIC) - $t0) * 1e9;
}
